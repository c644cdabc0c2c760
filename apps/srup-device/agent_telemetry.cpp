// srup-device's telemetry (docs/srup-mqtt.md 4.6; docs/srup-pq.md section 5): the C2's Reader Set,
// a key epoch per reader set, readings sealed once for all readers, Checkpoints.
#include <spdlog/spdlog.h>

#include <fstream>

#include "agent.hpp"
#include "pqot/common/files.hpp"
#include "pqot/srup/status.hpp"
#include "pqot/srup/topics.hpp"

namespace pqot::srup_device {

namespace {

// Lifetimes of what the device publishes: a Telemetry Key and a Checkpoint are needed for as long
// as the epoch lasts (a reader that comes back late still needs them); readings are history.
constexpr std::uint32_t kKeyLifetimeMs = 24 * 3600 * 1000;
constexpr std::uint32_t kReadingLifetimeMs = 3600 * 1000;

}  // namespace

std::filesystem::path Agent::key_epoch_file() const {
  return std::filesystem::path(config_.device.state_dir) / "telemetry-epoch";
}

std::uint32_t Agent::next_key_epoch() {
  // Section 5.1: epochs rise across restarts. The last one used is written before the new one is.
  std::uint32_t last = 0;
  if (std::ifstream in(key_epoch_file()); in) in >> last;
  const std::uint32_t next = last + 1;
  common::replace_file(key_epoch_file().string(), std::to_string(next) + "\n", 0600);
  persisted_epoch_ = next;
  return next;
}

void Agent::publish_outgoing(const std::vector<srup::Outgoing>& out) {
  // A rotation (a new Reader Set, the key's count or age used up) moved the sender to a new epoch:
  // it is written down before anything of it leaves, so that a restart starts above it (5.1;
  // a reader refuses another key under an epoch it holds).
  if (telemetry_ && telemetry_->epoch() > persisted_epoch_) {
    try {
      common::replace_file(key_epoch_file().string(), std::to_string(telemetry_->epoch()) + "\n", 0600);
      persisted_epoch_ = telemetry_->epoch();
    } catch (const std::exception& e) {
      spdlog::error("telemetry: cannot write the key epoch ({}): after a restart readers may refuse the new key "
                    "until the next rotation",
                    e.what());
    }
  }
  for (const srup::Outgoing& o : out) {
    const std::string topic = o.type == srup::MessageType::telemetry_key
                                  ? srup::topic_telemetry_key(identity_.self.id, o.recipient)
                                  : srup::topic_telemetry(identity_.self.id);
    publish(topic, o.wire);
  }
}

void Agent::make_telemetry_sender() {
  const std::uint64_t self = identity_.self.id;
  telemetry_ = std::make_unique<srup::TelemetrySender>(
      identity_.self, next_key_epoch(), [this, self](srup::MessageType type, std::uint64_t recipient) {
        srup::Header h;
        h.sequence = state_->next_sequence(self, recipient);
        h.timestamp_ms = now_ms();
        h.lifetime_ms = type == srup::MessageType::telemetry ? kReadingLifetimeMs : kKeyLifetimeMs;
        h.topic = srup::topic_tag(type == srup::MessageType::telemetry_key ? srup::topic_telemetry_key(self, recipient)
                                                                          : srup::topic_telemetry(self));
        return h;
      });
}

void Agent::on_reader_set(const srup::Inbound& in) {
  const auto& set = std::get<srup::ReaderSet>(in.body);
  try {
    if (!telemetry_) make_telemetry_sender();
    publish_outgoing(telemetry_->set_readers(set, now_ms()));
    save_readers(set);
    answer(in.header, srup::Status::action_success, std::to_string(set.readers.size()) + " readers");
    spdlog::info("telemetry readers: {} (key epoch {})", set.readers.size(), telemetry_->epoch());
  } catch (const std::invalid_argument& e) {
    answer(in.header, srup::Status::action_failed, e.what());
  }
}

std::filesystem::path Agent::readers_file() const {
  return std::filesystem::path(config_.device.state_dir) / "telemetry-readers";
}

// The Reader Set survives a restart (public keys only; TK does not: docs/srup-pq.md 5.1), so that
// a restarted device sends its readers a key of a new epoch at once ("at each start", 4.6).
void Agent::save_readers(const srup::ReaderSet& set) {
  try {
    const crypto::Bytes body = srup::encode_body(srup::MessageType::reader_set, identity_.self.suite, set);
    common::replace_file(readers_file().string(),
                         std::string_view(reinterpret_cast<const char*>(body.data()), body.size()), 0600);
  } catch (const std::exception& e) {
    spdlog::error("telemetry: cannot keep the Reader Set ({}): after a restart no key is sent until the C2 sends "
                  "a new one",
                  e.what());
  }
}

void Agent::restore_readers() {
  const std::filesystem::path file = readers_file();
  if (!std::filesystem::exists(file)) return;
  try {
    const auto bytes = common::read_bounded_file<crypto::Bytes>(file.string(), srup::kMaxEnvelope);
    const auto set = std::get<srup::ReaderSet>(srup::decode_body(srup::MessageType::reader_set, identity_.self.suite, bytes));
    make_telemetry_sender();
    publish_outgoing(telemetry_->set_readers(set, now_ms()));
    spdlog::info("telemetry readers restored: {} (key epoch {})", set.readers.size(), telemetry_->epoch());
  } catch (const std::exception& e) {
    telemetry_.reset();
    spdlog::error("telemetry: {} is unusable ({}): no telemetry until the C2 sends a Reader Set", file.string(), e.what());
  }
}

void Agent::telemetry_start() {
  if (membership_ == Membership::joined) restore_readers();
  if (config_.telemetry.enabled) telemetry_tick();
  key_timer_.expires_after(std::chrono::seconds(config_.telemetry.key_resend_s));
  key_timer_.async_wait([this](std::error_code ec) {
    if (!ec) key_resend_tick();
  });
}

// docs/srup-mqtt.md 4.6: a reader that started late or lost its keys reads again within
// key_resend_s. New envelopes (their own sequences) around the same key: no rotation.
void Agent::key_resend_tick() {
  if (stopping_) return;
  if (telemetry_ && membership_ == Membership::joined) {
    try {
      const auto out = telemetry_->resend_keys();
      publish_outgoing(out);
      spdlog::debug("telemetry key epoch {} sent again to {} readers", telemetry_->epoch(), out.size());
    } catch (const std::exception& e) {
      if (log_limiter_.allow().log) spdlog::error("telemetry: resending the key: {}", e.what());
    }
  }
  key_timer_.expires_after(std::chrono::seconds(config_.telemetry.key_resend_s));
  key_timer_.async_wait([this](std::error_code ec) {
    if (!ec) key_resend_tick();
  });
}

void Agent::telemetry_tick() {
  if (stopping_) return;
  if (telemetry_ && membership_ == Membership::joined) {
    const std::uint64_t now = now_ms();
    try {
      publish_outgoing(telemetry_->tick(now));
    } catch (const std::exception& e) {
      spdlog::error("telemetry: {}", e.what());
    }
    if (model_) {
      send_reading(model_->read(now));
    } else if (modbus_) {
      // The meter reads on its own thread; a failed read gives no reading (counted by the meter).
      modbus_->read_async([this](std::optional<srup::Reading> r) {
        if (r) asio::post(io_, [this, reading = std::move(*r)] { send_reading(reading); });
      });
    }
  }
  telemetry_timer_.expires_after(std::chrono::milliseconds(interval_ms_));
  telemetry_timer_.async_wait([this](std::error_code ec) {
    if (!ec) telemetry_tick();
  });
}

void Agent::send_reading(const srup::Reading& reading) {
  if (!telemetry_ || membership_ != Membership::joined) return;
  try {
    const crypto::Bytes body = srup::encode_body(srup::MessageType::telemetry, identity_.self.suite, reading);
    publish_outgoing(telemetry_->seal(body, now_ms()));
  } catch (const std::exception& e) {
    if (log_limiter_.allow().log) spdlog::error("telemetry: {}", e.what());
  }
}

}  // namespace pqot::srup_device
