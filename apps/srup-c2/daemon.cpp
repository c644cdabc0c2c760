// srup-c2's core: construction, the run loop, and what arrives from the broker (docs/srup-c2.md).
#include "daemon.hpp"

#include <spdlog/spdlog.h>

#include <cstdlib>

#include "daemon_internal.hpp"
#include "pqot/common/clock.hpp"
#include "pqot/metrics/http_server.hpp"
#include "pqot/srup/status.hpp"
#include "pqot/srup/topics.hpp"

namespace pqot::srup_c2 {

namespace {

// What a queue drop's log line says, naming the configuration key of the bound.
const char* queue_drop_text(common::ShareBudget::Verdict v) {
  using V = common::ShareBudget::Verdict;
  switch (v) {
    case V::key_items: return "over its share of the queue ([queue] max_messages_per_device)";
    case V::key_bytes: return "over its share of the queue ([queue] max_bytes_per_device)";
    case V::total_items: return "the queue is full ([queue] max_messages)";
    case V::total_bytes: return "the queue is full ([queue] max_bytes)";
    case V::admitted: break;
  }
  return "?";
}

mqtt::ClientOptions broker_options(const C2Config& c, const std::string& username) {
  mqtt::ClientOptions o;
  o.host = c.broker.host;
  o.port = c.broker.port;
  o.client_id = username;
  o.tls = {c.broker.ca.string(), c.broker.cert.string(), c.broker.key.string()};
  o.keepalive = std::chrono::seconds(c.broker.keepalive_s);
  o.reconnect_min = c.broker.reconnect_min;
  o.reconnect_max = c.broker.reconnect_max;
  o.max_queued = c.commands.outbox_max_total + 1000;  // every pending command once, and answers
  // Nothing larger than an envelope is SRUP-PQ (docs/srup-pq.md 6, step 1): the broker is told so
  // (Maximum Packet Size) and the client drops what still comes (srup_c2_mqtt_oversized_drops_total).
  // The dynsec plugin's answers to our commands are a few KiB.
  o.max_payload = srup::kMaxEnvelope;
  return o;
}

common::ShareLimits queue_limits(const C2Config& c) {
  return {c.queue.max_messages, c.queue.max_bytes, c.queue.max_messages_per_device, c.queue.max_bytes_per_device};
}

common::ShareLimits provisional_limits(const C2Config& c) {
  const auto& t = c.telemetry;
  return {t.provisional_max, t.provisional_max_bytes, t.provisional_max_per_device, t.provisional_max_bytes_per_device};
}

srup::LoadedIdentity load_c2_identity(const std::filesystem::path& dir) {
  try {
    return srup::load_identity(dir);
  } catch (const std::exception& e) {
    throw std::runtime_error("cannot load the C2's identity from " + dir.string() + ": " + e.what() +
                             " (make one with `srup keygen --dir " + dir.string() + " --id ID`)");
  }
}

}  // namespace

Daemon::Daemon(C2Config config)
    : config_(std::move(config)),
      identity_(load_c2_identity(config_.identity_dir())),
      username_("c2-" + srup::id_text(identity_.self.id)),
      outbox_timer_(io_),
      housekeeping_timer_(io_),
      signals_(io_),
      provisional_budget_(provisional_limits(config_)),
      queue_(queue_limits(config_)) {
  registry_ = std::make_unique<Registry>(config_.registry_db(), config_.registry_limits());
  state_ = std::make_unique<srup::StateStore>(config_.state_db());
  srup::EndpointOptions eo;
  eo.is_c2 = true;
  eo.lifetime_ms = static_cast<std::uint32_t>(config_.commands.lifetime.count());
  eo.command_lifetime_ms = static_cast<std::uint32_t>(
      std::min<std::int64_t>(std::chrono::milliseconds(config_.commands.expire_after).count(), srup::kMaxLifetimeMs));
  endpoint_ = std::make_unique<srup::Endpoint>(identity_.self, *state_, eo);
  telemetry_ = std::make_unique<srup::TelemetryReader>(identity_.self.id, [this](std::uint64_t id) {
    const auto it = telemetry_peers_.find(id);
    return it == telemetry_peers_.end() ? nullptr : &it->second;
  });
  // Every device that may still talk to us: pending ones may join, joined ones everything else.
  for (const DeviceState s : {DeviceState::pending, DeviceState::joined, DeviceState::resigned}) {
    DeviceFilter f;
    f.state = s;
    f.limit = kRegistryPage;
    for (;;) {
      const auto page = registry_->list_devices(f);
      for (const Device& d : page) enrol_peer(d);
      if (page.size() < f.limit) break;
      f.after_id = page.back().id;
    }
  }
  restore_telemetry_keys();
  if (const char* crash = std::getenv("SRUP_C2_TEST_CRASH_AT"); crash != nullptr && *crash != '\0') {
    test_crash_at_ = crash;
    spdlog::warn("test fault hook armed: the process ends at {}", test_crash_at_);
  }
  mqtt_ = std::make_unique<mqtt::Client>(broker_options(config_, username_));
  dynsec_ = std::make_unique<mqtt::DynsecAdmin>(*mqtt_);
  ControlServerOptions co;
  co.socket = config_.control.socket;
  co.max_clients = config_.control.max_clients;
  co.request_max_bytes = config_.control.request_max_bytes;
  co.idle_timeout = config_.control.idle_timeout;
  control_ = std::make_unique<ControlServer>(io_, co, [this](ControlRequest r, ControlServer::Reply reply) {
    on_control(std::move(r), std::move(reply));
  });
  if (config_.metrics.listen) {
    metrics_server_ = std::make_unique<metrics::MetricsHttpServer>(
        io_, config_.metrics.listen->host, config_.metrics.listen->port, [this] { return metrics_page(); },
        [this] { return connected_.load(); });
  }
}

Daemon::~Daemon() {
  if (mqtt_) mqtt_->stop();
}

std::uint64_t Daemon::now_ms() const { return common::unix_time_ms(); }

void Daemon::enrol_peer(const Device& d) {
  endpoint_->enrol(d.id, d.identity.keys);
  if (d.state == DeviceState::joined) telemetry_peers_[d.id] = d.identity.keys;
}

void Daemon::run() {
  signals_.add(SIGINT);
  signals_.add(SIGTERM);
  signals_.async_wait([this](std::error_code ec, int sig) {
    if (!ec) {
      spdlog::info("signal {}: stopping", sig);
      stop();
    }
  });
  mqtt_->on_message([this](const mqtt::Message& m) { on_message(m); });
  mqtt_->on_connection([this](const mqtt::ConnectionEvent& e) {
    asio::post(io_, [this, e] { on_connection(e); });
  });
  mqtt_->on_suback([this](const mqtt::SubackEvent& e) {
    if (!e.granted()) {
      asio::post(io_, [this, e] {
        ++counters_.broker_refusals;
        spdlog::error("the broker refused our subscription to {} (0x{:02x}): is {} the broker's dynsec admin?",
                      e.filter, e.result, username_);
      });
    }
  });
  mqtt_->on_puback([this](const mqtt::PubackEvent& e) {
    if (!e.accepted()) {
      asio::post(io_, [this, e] {
        ++counters_.broker_refusals;
        if (log_limiter_.allow().log) spdlog::warn("the broker refused a publish (reason 0x{:02x})", e.reason_code);
      });
    }
  });
  mqtt_->subscribe(srup::filter_all_from_devices());
  mqtt_->subscribe(srup::filter_all_telemetry());
  mqtt_->subscribe(srup::filter_all_telemetry_keys(identity_.self.id));
  control_->start();
  if (metrics_server_) metrics_server_->start();
  mqtt_->start();
  spdlog::info("srup-c2 {} ({}) started: broker {}:{}, control socket {}, {} devices known", srup::id_text(identity_.self.id),
               srup::suite_info(identity_.self.suite).name, config_.broker.host, config_.broker.port,
               config_.control.socket.string(), endpoint_->peer_count());
  take_due_follow_ups();
  sweep_outbox();
  housekeeping();
  // A handler that throws loses its own work, not the daemon: asio lets run() go on after an
  // exception, and what a peer sent must never be able to stop the C2 (docs/srup-c2.md).
  for (;;) {
    try {
      io_.run();
      break;
    } catch (const std::exception& e) {
      ++counters_.refusals["INTERNAL"];
      if (log_limiter_.allow().log) spdlog::error("internal error in a handler (the daemon carries on): {}", e.what());
    }
  }
  mqtt_->stop();
  state_->flush();
  spdlog::info("srup-c2 stopped");
}

void Daemon::stop() {
  asio::post(io_, [this] {
    if (stopping_) return;
    stopping_ = true;
    control_->stop();
    if (metrics_server_) metrics_server_->stop();
    outbox_timer_.cancel();
    housekeeping_timer_.cancel();
    signals_.cancel();
    for (auto& [token, w] : waiters_) w->timer.cancel();
    waiters_.clear();
    io_.stop();
  });
}

void Daemon::seen(std::uint64_t device) {
  const std::uint64_t now = now_ms();
  last_seen_[device] = now;
  std::uint64_t& saved = last_seen_saved_[device];
  if (now - saved >= kLastSeenSaveMs) {
    registry_->touch(device, now);
    saved = now;
  }
}

void Daemon::housekeeping() {
  try {
    state_->flush();
    const PruneCounts p = registry_->prune(now_ms());
    (void)p;
    for (const srup::EnvelopeRef& r : telemetry_->take_unconfirmed()) {
      ++counters_.telemetry_dropped;
      drop_provisional(r.sender, r.sequence);
    }
    expire_provisional(now_ms());
  } catch (const std::exception& e) {
    spdlog::error("housekeeping: {}", e.what());
  }
  housekeeping_timer_.expires_after(std::chrono::seconds(1));
  housekeeping_timer_.async_wait([this](std::error_code ec) {
    if (!ec) housekeeping();
  });
}

void Daemon::on_connection(const mqtt::ConnectionEvent& e) {
  switch (e.kind) {
    case mqtt::ConnectionEvent::Kind::connected:
      connected_ = true;
      spdlog::info("connected to the broker (session {})", e.session_present ? "kept" : "new: subscriptions sent again");
      sweep_outbox(/*after_reconnect=*/true);
      break;
    case mqtt::ConnectionEvent::Kind::disconnected:
      connected_ = false;
      spdlog::warn("disconnected from the broker: {}", e.reason);
      break;
    case mqtt::ConnectionEvent::Kind::connect_failed:
      connected_ = false;
      if (log_limiter_.allow().log) spdlog::warn("cannot connect to the broker: {}", e.reason);
      break;
  }
}

void Daemon::on_message(const mqtt::Message& m) {
  if (dynsec_->handle(m)) return;
  // Bounded hand-over to our thread, per device (the topic's ID, read before any cryptography) and
  // in all, counted and in bytes: past a bound a message is dropped and counted (a device's request
  // is retried by the device, a command's answer by our outbox). One device that floods fills its
  // own share only.
  const auto parts = srup::parse_topic(m.topic);
  const std::uint64_t device = parts ? parts->device : 0;
  const std::size_t bytes = m.payload.size() + m.topic.size();
  const common::ShareBudget::Verdict verdict = queue_.admit(device, bytes);
  if (verdict != common::ShareBudget::Verdict::admitted) {
    overloaded_[static_cast<std::size_t>(verdict)].fetch_add(1);
    if (const auto permit = queue_log_limiter_.allow(); permit.log) {
      const common::ShareBudget::Usage mine = queue_.of(device);
      const common::ShareBudget::Usage all = queue_.total();
      spdlog::warn("dropped a message of {} bytes from {}: {} ({} messages, {} bytes of it waiting; {} and {} in all){}",
                   bytes, device == 0 ? std::string("?") : srup::id_text(device), queue_drop_text(verdict), mine.items,
                   mine.bytes, all.items, all.bytes,
                   permit.suppressed ? fmt::format(" ({} similar lines left out)", permit.suppressed) : std::string());
    }
    return;
  }
  asio::post(io_, [this, m, device, bytes] {
    struct Release {
      common::ShareBudget& q;
      std::uint64_t device;
      std::size_t bytes;
      ~Release() { q.release(device, bytes); }
    } release{queue_, device, bytes};
    try {
      dispatch(m);
    } catch (const std::exception& e) {
      refuse("INTERNAL", 0, e.what());
    }
  });
}

void Daemon::dispatch(const mqtt::Message& m) {
  const auto parts = srup::parse_topic(m.topic);
  if (!parts) return refuse("MALFORMED", 0, "a message on a topic outside the binding");
  const crypto::Bytes payload(m.payload.begin(), m.payload.end());
  switch (parts->kind) {
    case srup::TopicParts::Kind::from_device:
      return handle_from_device(parts->device, m.topic, payload);
    case srup::TopicParts::Kind::telemetry:
      return handle_telemetry(parts->device, m.topic, payload);
    case srup::TopicParts::Kind::telemetry_key:
      if (parts->reader == identity_.self.id) return handle_telemetry_key(parts->device, m.topic, payload);
      return refuse("WRONG_RECIPIENT", parts->device, "a telemetry key for another reader");
    case srup::TopicParts::Kind::to_device:
      return;  // our own commands (we do not subscribe to them)
  }
}

void Daemon::refuse(std::string_view reason, std::uint64_t device, std::string_view what) {
  // srup::Refused::what() starts with its reason: say it once.
  if (what.starts_with(reason) && what.substr(reason.size()).starts_with(": ")) what.remove_prefix(reason.size() + 2);
  ++counters_.refusals[std::string(reason)];
  if (const auto permit = log_limiter_.allow(); permit.log) {
    spdlog::warn("refused from {}: {}: {}{}", device == 0 ? std::string("?") : srup::id_text(device), reason, what,
                 permit.suppressed ? fmt::format(" ({} similar lines left out)", permit.suppressed) : std::string());
  }
}

// The envelope's sender must be the device whose topic it came on: checked on the clear header
// before any cryptography (a registered device publishing on another's topic, if a broker let it).
bool Daemon::sender_matches_topic(const crypto::Bytes& payload, std::uint64_t device) {
  if (payload.size() > srup::kMaxEnvelope) {
    refuse("MALFORMED", device, "over 65,535 bytes");
    return false;
  }
  try {
    const srup::EnvelopeView v = srup::parse_envelope(payload);
    if (v.header.sender != device) {
      refuse("WRONG_TOPIC", device, "sender " + srup::id_text(v.header.sender) + " on this device's topic");
      return false;
    }
  } catch (const srup::Refused& r) {
    refuse(srup::to_string(r.reason()), device, r.what());
    return false;
  }
  return true;
}

void Daemon::handle_from_device(std::uint64_t device, const std::string& topic, const crypto::Bytes& payload) {
  if (!sender_matches_topic(payload, device)) return;
  srup::Inbound in;
  bool answer = false;
  try {
    // An answer is recorded in the replay window only after the outbox stored it (on_answer): a
    // crash between the two must not make the device's journalled copy a REPLAY.
    in = endpoint_->receive_unrecorded(payload, topic, srup::topic_to_device(device));
    answer = in.header.type == srup::MessageType::response || in.header.type == srup::MessageType::data;
    if (!answer) endpoint_->record(in.header);
  } catch (const srup::Refused& r) {
    return refuse(srup::to_string(r.reason()), device, r.what());
  } catch (const std::exception& e) {
    return refuse("INTERNAL", device, e.what());
  }
  const auto d = registry_->device(device);
  if (!d || d->state == DeviceState::deregistered) {
    return refuse("UNKNOWN_SENDER", device, "not in the registry");
  }
  if (d->state == DeviceState::resigned) {
    // A resigned device keeps its keys here only to hear its retried Resign Request answered again.
    if (in.header.type != srup::MessageType::resign_request) {
      return refuse("BAD_REQUEST", device, "a resigned device may only repeat its Resign Request");
    }
    return reply_to_device(device, in.header, static_cast<std::uint8_t>(srup::Status::resign_success), "");
  }
  seen(device);
  const std::string type(srup::to_string(in.header.type));
  ++counters_.received_by_type[type];
  using T = srup::MessageType;
  const bool join_step = in.header.type == T::join_request || in.header.type == T::human_join_request ||
                         in.header.type == T::observed_join_request || in.header.type == T::response;
  if (d->state == DeviceState::pending && !join_step) {
    return refuse("BAD_REQUEST", device, type + " from a device that has not joined");
  }
  switch (in.header.type) {
    case T::join_request:
    case T::human_join_request:
    case T::observed_join_request:
      return on_join_request(*d, in);
    case T::response:
    case T::data:
      return on_answer(*d, in);
    case T::resign_request:
    case T::deregister_request:
      if (d->state != DeviceState::joined) return refuse("BAD_REQUEST", device, type + " from a device not joined");
      return on_device_leaves(*d, in);
    default:
      return refuse("BAD_REQUEST", device, type + " is not sent to the C2 on this topic");
  }
}

}  // namespace pqot::srup_c2
