// srup-device's core: construction, the MQTT side, and the commands (docs/srup-mqtt.md 4.3-4.5).
#include "agent.hpp"

#include <spdlog/spdlog.h>

#include "pqot/common/clock.hpp"
#include "pqot/common/printable.hpp"
#include "pqot/metrics/http_server.hpp"
#include "pqot/srup/topics.hpp"

namespace pqot::srup_device {

namespace {

mqtt::ClientOptions broker_options(const DeviceConfig& c, std::uint64_t id) {
  mqtt::ClientOptions o;
  o.host = c.broker.host;
  o.port = c.broker.port;
  o.client_id = "dev-" + srup::id_text(id);
  o.tls = {c.broker.ca, c.broker.cert, c.broker.key};
  o.keepalive = std::chrono::seconds(c.broker.keepalive_s);
  o.reconnect_min = std::chrono::milliseconds(c.broker.reconnect_min_ms);
  o.reconnect_max = std::chrono::milliseconds(c.broker.reconnect_max_ms);
  return o;
}

template <typename F>
auto load_or_explain(const std::string& what, F&& f) {
  try {
    return f();
  } catch (const std::exception& e) {
    throw std::runtime_error("cannot load " + what + ": " + e.what());
  }
}

}  // namespace

Agent::Agent(DeviceConfig config)
    : config_(std::move(config)),
      identity_(load_or_explain("the device identity from " + config_.device.state_dir,
                                [&] { return srup::load_identity(config_.device.state_dir); })),
      c2_(load_c2(config_)),
      join_timer_(io_),
      telemetry_timer_(io_),
      observe_timer_(io_),
      leave_deadline_(io_),
      key_timer_(io_),
      signals_(io_),
      interval_ms_(config_.telemetry.interval_ms),
      started_ms_(common::unix_time_ms()) {
  if (c2_.keys.suite != identity_.self.suite) {
    throw std::runtime_error("the C2's suite differs from this device's: sealed messages need one suite");
  }
  state_ = std::make_unique<srup::StateStore>(std::filesystem::path(config_.device.state_dir) / "state.db");
  srup::EndpointOptions eo;
  eo.is_c2 = false;
  endpoint_ = std::make_unique<srup::Endpoint>(identity_.self, *state_, eo);
  endpoint_->enrol(c2_.id, c2_.keys);  // only the C2 is ever enrolled: nobody else is obeyed
  mqtt_ = std::make_unique<mqtt::Client>(broker_options(config_, identity_.self.id));
  runner_ = std::make_unique<ActionRunner>(config_.actions, config_.limits.max_concurrent_actions);
  runner_->register_builtin("log", [](const srup::Value& arg) {
    spdlog::info("action log: {}", common::printable(srup::to_text(arg), 1024));
    return ActionResult{srup::Status::action_success, "logged", {}, 0};
  });
  runner_->register_builtin("reboot-simulated", [](const srup::Value&) {
    spdlog::warn("action reboot-simulated: a real device would reboot now");
    return ActionResult{srup::Status::action_success, "reboot simulated", {}, 0};
  });
  runner_->register_builtin("set-interval", [this](const srup::Value& arg) {
    const auto* ms = std::get_if<std::uint32_t>(&arg);
    if (ms == nullptr || *ms < 100 || *ms > 3'600'000) {
      return ActionResult{srup::Status::action_failed, "set-interval takes a uint32 of 100..3600000 ms", {}, 0};
    }
    asio::post(io_, [this, v = *ms] { interval_ms_ = v; });
    return ActionResult{srup::Status::action_success, "interval " + std::to_string(*ms) + " ms", {}, 0};
  });
  fetcher_ = std::make_unique<UpdateFetcher>(config_.update, *runner_);
  if (const auto n = fetcher_->swept())
    spdlog::info("updates: removed {} file(s) an earlier run left in {}", n, config_.update.dir);
  if (config_.telemetry.enabled) {
    if (config_.telemetry.source == TelemetrySource::model) {
      model_ = std::make_unique<MeterModel>(config_.telemetry.phases, config_.telemetry.seed, common::unix_time_ms());
    } else {
      modbus_ = std::make_unique<ModbusMeter>(config_.telemetry.modbus);
    }
  }
  membership_ = load_membership();
  if (config_.metrics.listen) {
    metrics_server_ = std::make_unique<metrics::MetricsHttpServer>(
        io_, config_.metrics.listen->host, config_.metrics.listen->port, [this] { return metrics_page(); },
        [this] { return connected_.load(); });
  }
}

Agent::~Agent() {
  if (mqtt_) mqtt_->stop();
}

std::uint64_t Agent::now_ms() const { return common::unix_time_ms(); }

void Agent::run() {
  start_mqtt();
  spdlog::info("srup-device {} started (C2 {}, {})", srup::id_text(identity_.self.id), srup::id_text(c2_.id),
               membership_name());
  telemetry_start();
  // A handler that throws loses its own work, not the agent (asio lets run() go on).
  for (;;) {
    try {
      io_.run();
      break;
    } catch (const std::exception& e) {
      refuse("INTERNAL", std::string("a handler failed: ") + e.what());
    }
  }
  mqtt_->stop();
  state_->flush();
  spdlog::info("srup-device stopped");
}

void Agent::start_mqtt() {
  signals_.add(SIGINT);
  signals_.add(SIGTERM);
  signals_.async_wait([this](std::error_code ec, int) {
    if (!ec) stop();
  });
  mqtt_->on_message([this](const mqtt::Message& m) {
    if (queued_.fetch_add(1) >= kMaxQueuedMessages) {  // bounded hand-over to our thread
      queued_.fetch_sub(1);
      overloaded_.fetch_add(1);
      return;
    }
    asio::post(io_, [this, topic = m.topic, payload = crypto::Bytes(m.payload.begin(), m.payload.end())] {
      queued_.fetch_sub(1);
      on_message(topic, payload);
    });
  });
  mqtt_->on_connection([this](const mqtt::ConnectionEvent& e) { asio::post(io_, [this, e] { on_connection(e); }); });
  mqtt_->on_suback([this](const mqtt::SubackEvent& e) {
    asio::post(io_, [this, e] {
      if (!e.granted()) {
        ++counters_.broker_refusals;
        spdlog::error("the broker refused our subscription to {} (0x{:02x}): is this device registered?", e.filter, e.result);
        return;
      }
      // Ask to join only once the C2's answer can reach us: before the first SUBACK, a broker
      // without a session for us would drop it.
      if (!subscribed_) {
        subscribed_ = true;
        if (leaving_) {
          send_leave_request();
        } else if (membership_ == Membership::unjoined || membership_ == Membership::joining) {
          send_join_request();
        }
      }
    });
  });
  mqtt_->on_puback([this](const mqtt::PubackEvent& e) {
    if (!e.accepted()) {
      asio::post(io_, [this, e] {
        ++counters_.broker_refusals;
        if (log_limiter_.allow().log) spdlog::warn("the broker refused a publish (reason 0x{:02x})", e.reason_code);
      });
    }
  });
  mqtt_->subscribe(srup::topic_to_device(identity_.self.id));
  if (metrics_server_) metrics_server_->start();
  mqtt_->start();
}

void Agent::stop() {
  asio::post(io_, [this] {
    if (stopping_) return;
    stopping_ = true;
    if (metrics_server_) metrics_server_->stop();
    join_timer_.cancel();
    telemetry_timer_.cancel();
    observe_timer_.cancel();
    leave_deadline_.cancel();
    key_timer_.cancel();
    signals_.cancel();
    io_.stop();
  });
}

void Agent::on_connection(const mqtt::ConnectionEvent& e) {
  connected_ = e.kind == mqtt::ConnectionEvent::Kind::connected;
  if (e.kind == mqtt::ConnectionEvent::Kind::connected) {
    spdlog::info("connected to the broker (session {})", e.session_present ? "kept" : "new");
  } else if (log_limiter_.allow().log) {
    spdlog::warn("broker: {}", e.reason.empty() ? "disconnected" : common::printable(e.reason));
  }
}

// Every refusal is counted; the log line is rate-limited (docs/srup-mqtt.md section 5), so a
// flood of forgeries costs a counter increment, not a disk full of log.
void Agent::refuse(std::string_view reason, std::string_view what) {
  // srup::Refused::what() starts with its reason: say it once.
  if (what.starts_with(reason) && what.substr(reason.size()).starts_with(": ")) what.remove_prefix(reason.size() + 2);
  ++counters_.refusals[std::string(reason)];
  if (const auto permit = log_limiter_.allow(); permit.log) {
    spdlog::warn("refused: {}: {}{}", reason, common::printable(what),
                 permit.suppressed ? fmt::format(" ({} similar lines left out)", permit.suppressed) : std::string());
  }
}

void Agent::publish(const std::string& topic, const crypto::Bytes& wire) {
  const auto r = mqtt_->publish(topic, std::span<const std::uint8_t>(wire));
  if (!r && log_limiter_.allow().log) spdlog::warn("publish on {} not queued: {}", topic, mqtt::to_string(r.error));
}

void Agent::on_message(const std::string& topic, const crypto::Bytes& payload) {
  if (topic != srup::topic_to_device(identity_.self.id)) return refuse("WRONG_TOPIC", topic);
  srup::Inbound in;
  try {
    in = endpoint_->receive(payload, topic, srup::topic_from_device(identity_.self.id));
  } catch (const srup::Refused& r) {
    return refuse(srup::to_string(r.reason()), r.what());
  } catch (const std::exception& e) {
    return refuse("INTERNAL", e.what());
  }
  switch (in.kind) {
    case srup::Inbound::Kind::reply:
      // A repeated command (the C2's retransmission, or someone's replay) is answered from the
      // journal and never run again (docs/srup-pq.md 7.3).
      ++counters_.answers_resent;
      spdlog::debug("a repeated command (sequence {}) answered from the journal", in.header.sequence);
      return publish(srup::topic_from_device(identity_.self.id), in.reply);
    case srup::Inbound::Kind::in_progress:
      return;
    case srup::Inbound::Kind::message:
      if (in.header.type == srup::MessageType::response && leaving_) return on_leave_answer(in);
      if (in.header.type == srup::MessageType::response) return on_join_answer(in);
      return refuse("BAD_REQUEST", std::string(srup::to_string(in.header.type)) + " is not sent to a device");
    case srup::Inbound::Kind::execute:
      // While it leaves its C2 (srup-device --resign) the device runs nothing: the C2 hears why.
      if (leaving_) return answer(in.header, srup::Status::action_failed, "the device is leaving its C2");
      return execute(in);
  }
}

void Agent::answer(const srup::Header& command, srup::Status status, const std::string& detail) {
  try {
    publish(srup::topic_from_device(identity_.self.id),
            endpoint_->answer(command, static_cast<std::uint8_t>(status), detail.substr(0, srup::kMaxDetail),
                              srup::topic_from_device(identity_.self.id)));
  } catch (const std::exception& e) {
    spdlog::error("cannot answer a command: {}; its next retry is answered INTERRUPTED", e.what());
    try {
      endpoint_->abandon(command);
    } catch (const std::exception&) {
    }
  }
}

void Agent::answer_data(const srup::Header& command, const srup::Data& data) {
  publish(srup::topic_from_device(identity_.self.id),
          endpoint_->answer_with(command, srup::MessageType::data, data, srup::topic_from_device(identity_.self.id)));
}

std::optional<srup::Value> Agent::data_value(const std::string& id) const {
  if (id == "interval_ms") return srup::Value{interval_ms_};
  if (id == "type") return srup::Value{config_.device.type};
  if (id == "uptime_s") return srup::Value{static_cast<std::uint64_t>((now_ms() - started_ms_) / 1000)};
  if (id == "telemetry_epoch") return srup::Value{telemetry_ ? telemetry_->epoch() : 0u};
  return std::nullopt;
}

void Agent::execute(const srup::Inbound& in) {
  const srup::Header h = in.header;
  using T = srup::MessageType;
  // Only a joined device acts on commands; a joining one only shows its code.
  const bool join_step = h.type == T::human_join_response || h.type == T::observed_join_response;
  if (membership_ != Membership::joined && !join_step) {
    return answer(h, srup::Status::action_failed, "not joined");
  }
  switch (h.type) {
    case T::action: {
      const auto& a = std::get<srup::Action>(in.body);
      auto done = [this, h](ActionResult r) { asio::post(io_, [this, h, r] { answer(h, r.status, r.detail); }); };
      if (auto now = runner_->start(a.action_id, a.argument, done)) answer(h, now->status, now->detail);
      return;
    }
    case T::data: {
      const auto& d = std::get<srup::Data>(in.body);
      if (std::holds_alternative<std::monostate>(d.value)) {  // a request
        if (const auto v = data_value(d.data_id)) return answer_data(h, srup::Data{d.data_id, *v});
        return answer(h, srup::Status::data_type_unknown, "no data " + d.data_id.substr(0, 64));
      }
      if (d.data_id == "interval_ms") {
        const auto* ms = std::get_if<std::uint32_t>(&d.value);
        if (ms == nullptr || *ms < 100 || *ms > 3'600'000) {
          return answer(h, srup::Status::action_failed, "interval_ms takes a uint32 of 100..3600000");
        }
        interval_ms_ = *ms;
        return answer(h, srup::Status::action_success, "interval " + std::to_string(*ms) + " ms");
      }
      return answer(h, srup::Status::data_type_unknown, "no settable data " + d.data_id.substr(0, 64));
    }
    case T::id_request:
      return answer_data(h, srup::Data{"IDENTIFICATION_RESPONSE",
                                       srup::Value{std::string(config_.device.type.empty() ? "device" : config_.device.type) +
                                                   " " + srup::id_text(identity_.self.id) + " pqot-srup-device/" +
                                                   PQOT_VERSION_STRING}});
    case T::update_initiate: {
      const auto& u = std::get<srup::UpdateInitiate>(in.body);
      auto done = [this, h](UpdateResult r) { asio::post(io_, [this, h, r] { answer(h, r.status, r.detail); }); };
      if (auto now = fetcher_->initiate(h.token, u.url, u.digest, done)) answer(h, now->status, now->detail);
      return;
    }
    case T::update_activate: {
      auto done = [this, h](UpdateResult r) { asio::post(io_, [this, h, r] { answer(h, r.status, r.detail); }); };
      if (auto now = fetcher_->activate(h.token, done)) answer(h, now->status, now->detail);
      return;
    }
    case T::human_join_response:
    case T::observed_join_response:
      show_code(std::get<srup::OneTimeCode>(in.body).code);
      return answer(h, srup::Status::join_success, "code shown");
    case T::observation_request:
      return observe(h, std::get<srup::ObservationRequest>(in.body));
    case T::reader_set:
      return on_reader_set(in);
    case T::terminate_command:
      answer(h, srup::Status::resign_success, "left the C2");
      return set_membership(Membership::left);
    case T::deregister_command:
      answer(h, srup::Status::deregister_success, "deregistered");
      return set_membership(Membership::left);
    case T::join_command:
      return on_join_command(h, std::get<srup::JoinCommand>(in.body));
    default:
      return answer(h, srup::Status::bad_request, std::string(srup::to_string(h.type)) + " is not a device command");
  }
}

}  // namespace pqot::srup_device
