#include "bench_telemetry_device.hpp"

#include <chrono>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "pqot/crypto/random.hpp"
#include "pqot/pki/enrol.hpp"
#include "pqot/srup/identity.hpp"
#include "pqot/srup/meter_channels.hpp"
#include "pqot/srup/status.hpp"
#include "pqot/srup/topics.hpp"

namespace pqot::srup_tool {

namespace {

namespace fs = std::filesystem;

// As srup-device (apps/srup-device/agent_telemetry.cpp): keys and Checkpoints live as long as
// an epoch may, readings are history.
constexpr std::uint32_t kBenchKeyLifetimeMs = 24 * 3600 * 1000;
constexpr std::uint32_t kBenchReadingLifetimeMs = 3600 * 1000;
constexpr std::chrono::seconds kBenchJoinRetry{3};

std::uint64_t bench_now_ms() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

void bench_write_file(const fs::path& p, std::string_view text, fs::perms perms) {
  {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!out.flush()) throw std::runtime_error("bench-telemetry: cannot write " + p.string());
  }
  fs::permissions(p, perms, fs::perm_options::replace);
}

// A 3-phase meter's reading with every channel of docs/srup-pq.md 5.3 (26 values), as the
// built-in meter model of srup-device sends with phases = 3.
srup::Reading bench_reading(std::uint64_t n, std::uint64_t now_ms) {
  srup::Reading r;
  r.timestamp_ms = now_ms;
  r.channels.reserve(srup::meter::kChannels.size());
  const double wobble = static_cast<double>(n % 97) / 97.0;
  for (const auto& c : srup::meter::kChannels) {
    const double base = 1.0 + static_cast<double>((c.channel >> 4) & 0xF) * 37.5;
    if (c.float64) {
      r.channels.push_back({c.channel, base * 1000.0 + static_cast<double>(n)});
    } else {
      r.channels.push_back({c.channel, static_cast<float>(base + wobble)});
    }
  }
  return r;
}

}  // namespace

bool BenchFlow::acquire() {
  std::unique_lock lock(m_);
  if (published_.load() - opened_ >= window_ && !stopped_) {
    const auto t0 = std::chrono::steady_clock::now();
    cv_.wait(lock, [&] { return stopped_ || published_.load() - opened_ < window_; });
    waited_us_ += static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count());
  }
  if (stopped_) return false;
  published_.fetch_add(1);
  return true;
}

void BenchFlow::set_opened(std::uint64_t opened) {
  {
    std::lock_guard lock(m_);
    opened_ = opened;
  }
  cv_.notify_all();
}

void BenchFlow::stop() {
  {
    std::lock_guard lock(m_);
    stopped_ = true;
  }
  cv_.notify_all();
}

BenchDevice::BenchDevice(const BenchDeviceOptions& o, const BenchC2& c2, const BenchBroker& broker)
    : id_(o.id),
      checkpoint_messages_(o.checkpoint_messages),
      to_device_(srup::topic_to_device(o.id)),
      from_device_(srup::topic_from_device(o.id)),
      telemetry_topic_(srup::topic_telemetry(o.id)) {
  fs::create_directories(o.dir);
  fs::permissions(o.dir, fs::perms::owner_all, fs::perm_options::replace);
  srup::LoadedIdentity identity = srup::make_identity(o.id, o.suite, srup::random_seeds(o.suite));
  const std::string username = "dev-" + srup::id_text(o.id);
  const pki::KeyAndRequest request = pki::make_key_and_request(username);
  bench_write_file(o.dir / "broker.key", std::string_view(request.key_pem.data(), request.key_pem.size()),
                   fs::perms::owner_read | fs::perms::owner_write);

  // docs/srup-mqtt.md 4.1, as `srup c2 enrol` does it.
  const nlohmann::json enrolled = c2.control({{"cmd", "enrol"},
                                              {"public_identity", srup::encode_public_identity(identity.pub)},
                                              {"csr", request.csr_pem},
                                              {"type", "bench-meter"},
                                              {"join", "simple"}});
  bench_write_file(o.dir / "broker.crt", enrolled.at("certificate").get<std::string>(),
                   fs::perms::owner_read | fs::perms::owner_write);
  const std::string c2_pub = enrolled.at("c2_public_identity").get<std::string>();
  const srup::PublicIdentity c2_identity =
      srup::decode_public_identity(crypto::ByteView(reinterpret_cast<const std::uint8_t*>(c2_pub.data()), c2_pub.size()));

  public_keys_ = {identity.pub.keys.signature_public, identity.pub.keys.kem_public};
  state_ = std::make_unique<srup::StateStore>(o.dir / "state.db");
  endpoint_ = std::make_unique<srup::Endpoint>(std::move(identity.self), *state_);
  endpoint_->enrol(c2_identity.id, c2_identity.keys);
  join_token_.resize(16);
  crypto::random_bytes(join_token_);

  mqtt::ClientOptions mo;
  mo.host = "127.0.0.1";
  mo.port = broker.port();
  mo.client_id = username;
  mo.tls = {broker.ca_file(), (o.dir / "broker.crt").string(), (o.dir / "broker.key").string()};
  mo.clean_session = true;
  mo.reconnect_min = std::chrono::milliseconds(50);
  mo.reconnect_max = std::chrono::milliseconds(500);
  mo.max_queued = 100'000;  // the flow window bounds what is in flight, not this queue
  client_ = std::make_unique<mqtt::Client>(mo);
  client_->on_message([this](const mqtt::Message& m) { on_message(m); });
  client_->subscribe(to_device_, 1);
  client_->start();
}

BenchDevice::~BenchDevice() {
  if (client_) client_->stop();  // no handler runs after this
}

std::string BenchDevice::error() const {
  std::lock_guard lock(mu_);
  return error_;
}

void BenchDevice::fail(const std::string& what) {
  if (error_.empty()) error_ = "device " + srup::id_text(id_) + ": " + what;
}

void BenchDevice::publish(const std::string& topic, const srup::Bytes& payload) {
  for (int attempt = 0;; ++attempt) {
    const mqtt::PublishResult r = client_->publish(topic, payload, 1);
    if (r) return;
    if (r.error != mqtt::PublishError::queue_full || attempt > 10'000) {
      throw std::runtime_error(std::string("publish refused: ") + mqtt::to_string(r.error));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void BenchDevice::publish_outgoing(const std::vector<srup::Outgoing>& out) {
  for (const srup::Outgoing& o : out) {
    publish(o.type == srup::MessageType::telemetry_key ? srup::topic_telemetry_key(id_, o.recipient) : telemetry_topic_,
            o.wire);
  }
}

void BenchDevice::join_step() {
  if (joined_.load() || client_->subscription_result(to_device_).value_or(0x80) >= 0x80) return;
  std::lock_guard lock(mu_);
  const auto now = std::chrono::steady_clock::now();
  if (join_sent_ && now - *join_sent_ < kBenchJoinRetry) return;
  join_sent_ = now;
  try {
    // docs/srup-mqtt.md 4.2: a new envelope each time, the same token.
    publish(from_device_, endpoint_->make(kTelemetryBenchC2, srup::MessageType::join_request,
                                          srup::JoinRequest{public_keys_}, from_device_, join_token_));
  } catch (const std::exception& e) {
    fail(std::string("join request: ") + e.what());
  }
}

void BenchDevice::on_message(const mqtt::Message& m) {
  std::lock_guard lock(mu_);
  try {
    const srup::Inbound in = endpoint_->receive(m.payload, m.topic, from_device_);
    switch (in.kind) {
      case srup::Inbound::Kind::reply:
        publish(from_device_, in.reply);
        return;
      case srup::Inbound::Kind::in_progress:
        return;
      case srup::Inbound::Kind::message: {
        const auto* r = std::get_if<srup::Response>(&in.body);
        if (r == nullptr || in.header.token != join_token_) return;
        if (r->status == static_cast<std::uint8_t>(srup::Status::join_success)) {
          joined_ = true;
        } else {
          fail("the join was answered " + std::string(srup::status_name(r->status)));
        }
        return;
      }
      case srup::Inbound::Kind::execute:
        break;
    }
    if (in.header.type != srup::MessageType::reader_set) {
      publish(from_device_, endpoint_->answer(in.header, static_cast<std::uint8_t>(srup::Status::action_unknown),
                                              "a bench device obeys no commands", from_device_));
      return;
    }
    if (!telemetry_) {
      const std::uint64_t self = id_;
      srup::TelemetryPolicy policy;
      policy.checkpoint_messages = checkpoint_messages_;
      telemetry_ = std::make_unique<srup::TelemetrySender>(
          endpoint_->identity(), 1,
          [this, self](srup::MessageType type, std::uint64_t recipient) {
            srup::Header h;
            h.sequence = state_->next_sequence(self, recipient);
            h.timestamp_ms = bench_now_ms();
            h.lifetime_ms = type == srup::MessageType::telemetry ? kBenchReadingLifetimeMs : kBenchKeyLifetimeMs;
            h.topic = srup::topic_tag(type == srup::MessageType::telemetry_key ? srup::topic_telemetry_key(self, recipient)
                                                                              : srup::topic_telemetry(self));
            return h;
          },
          policy);
    }
    publish_outgoing(telemetry_->set_readers(std::get<srup::ReaderSet>(in.body), bench_now_ms()));
    publish(from_device_, endpoint_->answer(in.header, static_cast<std::uint8_t>(srup::Status::action_success), "",
                                            from_device_));
    ready_ = true;
  } catch (const std::exception& e) {
    fail(std::string("from the C2: ") + e.what());
  }
}

void BenchDevice::send_reading() {
  std::lock_guard lock(mu_);
  if (!telemetry_) return;
  try {
    const std::uint64_t now = bench_now_ms();
    const srup::Bytes body =
        srup::encode_body(srup::MessageType::telemetry, endpoint_->suite(), bench_reading(readings_++, now));
    publish_outgoing(telemetry_->seal(body, now));
  } catch (const std::exception& e) {
    fail(std::string("telemetry: ") + e.what());
  }
}

}  // namespace pqot::srup_tool
