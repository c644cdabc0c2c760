// srup monitor: follows the telemetry of chosen devices through the broker as an authorized reader
// (docs/srup-tool.md, "srup monitor"; docs/srup-mqtt.md 4.6): opens each Telemetry Key sealed to
// it, decrypts the readings, checks them against the devices' Checkpoints, and prints a live
// table, JSON lines or CSV. Refusals are counted by reason and summed up at the end.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <deque>
#include <iomanip>
#include <iostream>
#include <map>
#include <mutex>

#include "cli.hpp"
#include "pqot/common/clock.hpp"
#include "pqot/mqtt/client.hpp"
#include "pqot/srup/identity.hpp"
#include "pqot/srup/reading_json.hpp"
#include "pqot/srup/reading_text.hpp"
#include "pqot/srup/state.hpp"
#include "pqot/srup/telemetry.hpp"
#include "pqot/srup/telemetry_key_store.hpp"
#include "pqot/srup/topics.hpp"

namespace pqot::srup_tool {

namespace {

struct MonitorOptions {
  std::string state;
  std::string host = "127.0.0.1";
  unsigned port = 8883;
  std::string ca, cert, key;
  std::vector<std::string> device_pubs;
  std::string format = "table";
  unsigned count = 0;       // stop after this many readings (0: run until stopped)
  double duration_s = 0;    // stop after this long (0: run until stopped)
};

std::atomic<bool> g_monitor_stop{false};
extern "C" void monitor_on_signal(int) { g_monitor_stop = true; }

// Messages from the client's thread, handled on the main thread (bounded: the oldest go first).
class MonitorQueue {
 public:
  static constexpr std::size_t kMax = 10'000;
  void push(mqtt::Message m) {
    std::lock_guard lock(mu_);
    if (q_.size() >= kMax) {
      q_.pop_front();
      ++dropped_;
    }
    q_.push_back(std::move(m));
    cv_.notify_one();
  }
  std::optional<mqtt::Message> pop(std::chrono::milliseconds wait) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, wait, [&] { return !q_.empty(); });
    if (q_.empty()) return std::nullopt;
    mqtt::Message m = std::move(q_.front());
    q_.pop_front();
    return m;
  }
  std::uint64_t dropped() const {
    std::lock_guard lock(mu_);
    return dropped_;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<mqtt::Message> q_;
  std::uint64_t dropped_ = 0;
};

class Monitor {
 public:
  explicit Monitor(const MonitorOptions& o) : o_(o) {
    self_ = srup::load_identity(o.state);
    state_ = std::make_unique<srup::StateStore>(std::filesystem::path(o.state) / "monitor.db");
    for (const std::string& file : o.device_pubs) {
      const srup::PublicIdentity pub = srup::load_public_identity(file);
      devices_[pub.id] = pub.keys;
    }
    reader_ = std::make_unique<srup::TelemetryReader>(self_.self.id, [this](std::uint64_t id) {
      const auto it = devices_.find(id);
      return it == devices_.end() ? nullptr : &it->second;
    });
    keys_ = std::make_unique<srup::TelemetryKeyStore>(std::filesystem::path(o.state) / "telemetry-keys");
  }

  int run() {
    mqtt::ClientOptions co;
    co.host = o_.host;
    co.port = static_cast<std::uint16_t>(o_.port);
    co.client_id = "mon-" + srup::id_text(self_.self.id);
    co.tls = {o_.ca, o_.cert, o_.key};
    mqtt::Client client(co);
    client.on_message([this](const mqtt::Message& m) { queue_.push(m); });
    client.on_suback([this](const mqtt::SubackEvent& e) {
      std::lock_guard lock(err_mu_);
      if (e.granted()) {
        std::cerr << "srup monitor: subscribed to " << e.filter << "\n";
        return;
      }
      ++subscribe_refused_;
      std::cerr << "srup monitor: the broker refused " << e.filter << " (not authorized: srup c2 authorize "
                << srup::id_text(self_.self.id) << " DEVICE)\n";
    });
    // The key topic first: the broker takes one connection's SUBSCRIBEs in order, so once a reading
    // arrives the subscription its key comes on is in place too.
    for (const auto& [id, keys] : devices_) {
      client.subscribe(srup::topic_telemetry_key(id, self_.self.id));
      client.subscribe(srup::topic_telemetry(id));
    }
    if (o_.format == "csv") std::cout << "device,sequence,timestamp_ms,channel,value,status\n";
    restore_keys();
    client.start();
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(static_cast<std::int64_t>(o_.duration_s * 1000));
    while (!g_monitor_stop) {
      if (o_.duration_s > 0 && std::chrono::steady_clock::now() >= deadline) break;
      if (o_.count > 0 && readings_ >= o_.count) break;
      if (auto m = queue_.pop(std::chrono::milliseconds(200))) handle(*m);
      state_->flush();
    }
    client.stop();
    state_->flush();
    summary();
    return 0;
  }

 private:
  void refuse(std::string reason) { ++refused_[std::move(reason)]; }

  // docs/srup-mqtt.md 4.6: the last key of each followed device, so that the readings the broker
  // queued while the monitor was down decrypt at once. Keys of devices not followed this time stay.
  void restore_keys() {
    const std::uint64_t now = common::unix_time_ms();
    const auto peers = [this](std::uint64_t id) {
      const auto it = devices_.find(id);
      return it == devices_.end() ? nullptr : &it->second;
    };
    keys_->restore(
        *reader_, self_.self, peers, now,
        [this](std::uint64_t device, const std::string& why) {
          refuse("STORED_KEY");
          std::lock_guard lock(err_mu_);
          std::cerr << "srup monitor: the stored telemetry key of " << srup::id_text(device) << " is dropped: " << why
                    << "\n";
        },
        srup::UnknownDevices::keep);
    for (const auto& [id, keys] : devices_) {
      for (const std::uint32_t epoch : reader_->epochs(id)) print_key(id, epoch, "stored");
    }
  }

  void accept_key(const srup::Opened& key, const crypto::Bytes& payload, std::uint64_t now) {
    const std::uint64_t device = key.header.sender;
    const std::vector<std::uint32_t> before = reader_->epochs(device);
    reader_->add_key(key, now);
    const std::uint32_t epoch = reader_->epochs(device).front();
    if (!before.empty() && before.front() == epoch) return;  // the same key again (resent)
    print_key(device, epoch, "broker");
    try {
      keys_->save(device, payload);
    } catch (const std::exception& e) {
      std::lock_guard lock(err_mu_);
      std::cerr << "srup monitor: cannot keep the telemetry key of " << srup::id_text(device) << ": " << e.what()
                << "\n";
    }
  }

  void print_key(std::uint64_t device, std::uint32_t epoch, const char* source) {
    if (o_.format == "json") {
      std::cout << "{\"device\":\"" << srup::id_text(device) << "\",\"key\":{\"epoch\":" << epoch
                << ",\"source\":\"" << source << "\"}}\n";
    } else if (o_.format == "table") {
      std::cout << srup::id_text(device) << "  key epoch " << epoch << " (" << source << ")\n";
    }
    std::cout.flush();
  }

  void handle(const mqtt::Message& m) {
    const auto parts = srup::parse_topic(m.topic);
    if (!parts || devices_.count(parts->device) == 0) return refuse("UNKNOWN_TOPIC");
    const crypto::Bytes payload(m.payload.begin(), m.payload.end());
    const std::uint64_t now = common::unix_time_ms();
    try {
      const srup::EnvelopeView v = srup::parse_envelope(payload);
      if (v.header.sender != parts->device) return refuse("WRONG_TOPIC");
      if (parts->kind == srup::TopicParts::Kind::telemetry_key) {
        const srup::Opened key = srup::open_protected(payload, m.topic, now, self_.self, [this](std::uint64_t id) {
          const auto it = devices_.find(id);
          return it == devices_.end() ? nullptr : &it->second;
        });
        if (!state_->accept({key.header.sender, key.header.recipient}, key.header.sequence)) return refuse("REPLAY");
        return accept_key(key, payload, now);
      }
      if (v.header.type == srup::MessageType::checkpoint) {
        if (!state_->would_accept({parts->device, 0}, v.header.sequence)) return refuse("REPLAY");
        const srup::CheckpointReport r = reader_->checkpoint(payload, m.topic, now);
        state_->accept({parts->device, 0}, v.header.sequence);
        return print_checkpoint(r);
      }
      srup::TelemetryReading t = reader_->open(payload, m.topic, now);
      if (!state_->accept_batched({parts->device, 0}, t.opened.header.sequence)) return refuse("REPLAY");
      const auto body = srup::decode_body(srup::MessageType::telemetry, t.opened.header.suite, t.opened.body);
      ++readings_;
      print_reading(parts->device, t.epoch, t.opened.header.sequence, std::get<srup::Reading>(body));
    } catch (const srup::Refused& r) {
      refuse(std::string(srup::to_string(r.reason())));
    } catch (const std::length_error&) {
      refuse("BOUND");  // a key from more devices than a reader holds (kMaxTelemetrySenders)
    }
  }

  void print_reading(std::uint64_t device, std::uint32_t epoch, std::uint64_t seq, const srup::Reading& r) {
    if (o_.format == "json") {
      std::cout << "{\"device\":\"" << srup::id_text(device) << "\",\"epoch\":" << epoch << ",\"sequence\":" << seq
                << ",\"status\":\"provisional\",\"reading\":" << srup::reading_json(r) << "}\n";
    } else if (o_.format == "csv") {
      for (const auto& c : r.channels) {
        std::cout << srup::id_text(device) << "," << seq << "," << r.timestamp_ms << "," << srup::channel_name(c.channel)
                  << "," << srup::value_csv_field(c.value) << ",provisional\n";
      }
    } else {
      std::cout << srup::id_text(device) << "  #" << std::left << std::setw(8) << seq;
      for (const auto& c : r.channels)
        std::cout << " " << srup::channel_name(c.channel) << "=" << srup::value_table_text(c.value);
      std::cout << "\n";
    }
    std::cout.flush();
  }

  void print_checkpoint(const srup::CheckpointReport& r) {
    using V = srup::CheckpointReport::Verdict;
    const char* verdict = r.verdict == V::confirmed ? "confirmed" : r.verdict == V::mismatch ? "MISMATCH" : "incomplete";
    if (r.verdict == V::confirmed) confirmed_ += r.count;
    if (r.verdict == V::mismatch) ++mismatches_;
    const std::uint64_t last = r.first_sequence + r.count - 1;
    if (o_.format == "json") {
      std::cout << "{\"device\":\"" << srup::id_text(r.sender) << "\",\"checkpoint\":{\"epoch\":" << r.epoch
                << ",\"first\":" << r.first_sequence << ",\"count\":" << r.count << ",\"verdict\":\"" << verdict
                << "\",\"missing\":" << r.missing.size() << "}}\n";
    } else if (o_.format == "csv") {
      std::cout << srup::id_text(r.sender) << "," << r.first_sequence << "-" << last << ",,checkpoint,," << verdict << "\n";
    } else {
      std::cout << srup::id_text(r.sender) << "  checkpoint #" << r.first_sequence << ".." << last << ": " << verdict;
      if (r.verdict == V::mismatch) std::cout << "  ALARM: readings in this range were forged by a key holder";
      if (!r.missing.empty()) std::cout << " (" << r.missing.size() << " not received)";
      std::cout << "\n";
    }
    std::cout.flush();
  }

  void summary() {
    std::lock_guard lock(err_mu_);
    std::cerr << "srup monitor: " << readings_ << " readings, " << confirmed_ << " confirmed by checkpoints, "
              << mismatches_ << " checkpoint mismatches";
    if (queue_.dropped() > 0) std::cerr << ", " << queue_.dropped() << " dropped (too many waiting)";
    if (subscribe_refused_ > 0) refused_["BROKER_SUBSCRIBE"] = subscribe_refused_;
    for (const auto& [reason, n] : refused_) std::cerr << ", refused " << reason << ": " << n;
    std::cerr << "\n";
  }

  MonitorOptions o_;
  srup::LoadedIdentity self_;
  std::unique_ptr<srup::StateStore> state_;
  std::map<std::uint64_t, srup::PeerKeys> devices_;
  std::unique_ptr<srup::TelemetryReader> reader_;
  std::unique_ptr<srup::TelemetryKeyStore> keys_;
  std::atomic<std::uint64_t> subscribe_refused_{0};  // SUBACKs refusing a filter (client thread)
  MonitorQueue queue_;
  std::map<std::string, std::uint64_t> refused_;
  std::uint64_t readings_ = 0, confirmed_ = 0, mismatches_ = 0;
  std::mutex err_mu_;
};

}  // namespace

void add_monitor_command(CLI::App& app) {
  auto o = std::make_shared<MonitorOptions>();
  CLI::App* cmd = app.add_subcommand("monitor", "Follow devices' telemetry through the broker as an authorized reader");
  cmd->add_option("--state", o->state, "The monitor's directory: identity.key (srup keygen) and its replay state")->required();
  cmd->add_option("--device-pub", o->device_pubs, "A device's identity.pub to follow (repeatable)")->required();
  cmd->add_option("--host", o->host, "Broker host");
  cmd->add_option("--port", o->port, "Broker port")->check(CLI::Range(1, 65535));
  cmd->add_option("--ca", o->ca, "The broker's CA certificate")->required();
  cmd->add_option("--cert", o->cert, "The monitor's broker certificate (srup c2 enrol-monitor)")->required();
  cmd->add_option("--key", o->key, "Its key (pqot pki csr)")->required();
  cmd->add_option("--format", o->format, "table, json (one object per line) or csv")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  cmd->add_option("--count", o->count, "Stop after this many readings");
  cmd->add_option("--duration", o->duration_s, "Stop after this many seconds");
  cmd->callback([o] {
    std::signal(SIGINT, monitor_on_signal);
    std::signal(SIGTERM, monitor_on_signal);
    Monitor m(*o);
    m.run();
  });
}

}  // namespace pqot::srup_tool
