// srup-c2's control requests (docs/srup-c2.md, "Control socket"): enrolment with the broker's CA
// and registration at the broker, listings, commands, monitors, backup.
#include <spdlog/spdlog.h>

#include <fstream>

#include "daemon_internal.hpp"
#include "pqot/mqtt/dynsec_commands.hpp"
#include "pqot/pki/enrol.hpp"
#include "pqot/srup/status.hpp"
#include "pqot/srup/topics.hpp"

namespace pqot::srup_c2 {

namespace {

using nlohmann::json;
namespace dynsec = mqtt::dynsec;

std::string read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// A dynsec error that means "already as we want it".
bool harmless(const mqtt::DynsecResult& r) {
  if (r.ok) return true;
  const bool create = r.command.rfind("create", 0) == 0 || r.command.rfind("add", 0) == 0;
  const bool remove = r.command.rfind("delete", 0) == 0 || r.command.rfind("remove", 0) == 0;
  // mosquitto 2.0.11 answers addClientRole for a role the client has already with "Internal error"
  // (its role list refuses the duplicate; a missing client or role is "... not found"): a device
  // another C2 on the same broker registered before (re-homing, docs/srup-mqtt.md 4.2).
  const bool duplicate_role = r.command == "addClientRole" && r.error == "Internal error";
  return (create && r.error.find("already") != std::string::npos) ||
         (remove && r.error.find("not found") != std::string::npos) || duplicate_role;
}

}  // namespace

json Daemon::device_json(const Device& d) {
  json j = {{"id", srup::id_text(d.id)},
            {"username", d.username},
            {"type", d.type},
            {"state", to_string(d.state)},
            {"join", to_string(d.join_mode)},
            {"suite", std::string(srup::suite_info(d.identity.keys.suite).name)},
            {"enrolled_ms", d.enrolled_ms},
            {"online", last_seen_.count(d.id) != 0 && now_ms() - last_seen_.at(d.id) < kOnlineWindowMs},
            {"outbox_pending", registry_->outbox_pending(d.id)}};
  if (d.observer) j["observer"] = srup::id_text(*d.observer);
  if (d.joined_ms) j["joined_ms"] = *d.joined_ms;
  if (const auto it = last_seen_.find(d.id); it != last_seen_.end()) {
    j["last_seen_ms"] = it->second;
  } else if (d.last_seen_ms) {
    j["last_seen_ms"] = *d.last_seen_ms;
  }
  if (d.cert_serial) j["certificate_serial"] = *d.cert_serial;
  if (d.cert_not_after_ms) j["certificate_not_after_ms"] = *d.cert_not_after_ms;
  return j;
}

json Daemon::status_json() {
  return {{"id", srup::id_text(identity_.self.id)},
          {"username", username_},
          {"suite", std::string(srup::suite_info(identity_.self.suite).name)},
          {"broker", {{"host", config_.broker.host}, {"port", config_.broker.port}, {"connected", connected_.load()}}},
          {"devices",
           {{"pending", registry_->count_devices(DeviceState::pending)},
            {"joined", registry_->count_devices(DeviceState::joined)},
            {"resigned", registry_->count_devices(DeviceState::resigned)},
            {"deregistered", registry_->count_devices(DeviceState::deregistered)}}},
          {"outbox_pending", registry_->outbox_pending(std::nullopt)},
          {"joins_in_progress", joins_.size()}};
}

void Daemon::on_control(ControlRequest request, ControlServer::Reply reply) {
  try {
    std::visit(
        [&](auto& r) {
          using R = std::decay_t<decltype(r)>;
          if constexpr (std::is_same_v<R, StatusRequest>) {
            reply(format_result(status_json()));
          } else if constexpr (std::is_same_v<R, ListDevices>) {
            DeviceFilter f;
            if (r.state) f.state = parse_device_state(*r.state);
            f.limit = kRegistryPage;
            json list = json::array();
            for (;;) {
              const auto page = registry_->list_devices(f);
              for (const Device& d : page) list.push_back(device_json(d));
              if (page.size() < f.limit || list.size() >= kMaxListLimit) break;
              f.after_id = page.back().id;
            }
            reply(format_result({{"devices", list}}));
          } else if constexpr (std::is_same_v<R, ShowDevice>) {
            const auto d = registry_->device(r.device);
            if (!d) return reply(format_error(ControlErrorCode::not_found, "no device " + srup::id_text(r.device)));
            json j = device_json(*d);
            json readers = json::array();
            for (const std::uint64_t m : registry_->readers_of(d->id)) readers.push_back(srup::id_text(m));
            j["monitors"] = readers;
            reply(format_result(j));
          } else if constexpr (std::is_same_v<R, Enrol>) {
            enrol(r, reply);
          } else if constexpr (std::is_same_v<R, JoinCode>) {
            join_code_entered(r, reply);
          } else if constexpr (std::is_same_v<R, SendCommand>) {
            control_command(r, reply);
          } else if constexpr (std::is_same_v<R, Authorize>) {
            authorize(r, reply);
          } else if constexpr (std::is_same_v<R, ListCommands>) {
            json list = json::array();
            for (const OutboxEntry& e : registry_->outbox_list(r.device, r.state ? parse_outbox_state(*r.state) : std::nullopt, r.limit)) {
              list.push_back(command_json(e));
            }
            reply(format_result({{"commands", list}}));
          } else if constexpr (std::is_same_v<R, ShowCommand>) {
            const auto rows = registry_->outbox_by_token(crypto::from_hex(r.token_hex), 8);
            if (rows.empty()) return reply(format_error(ControlErrorCode::not_found, "no command with token " + r.token_hex));
            json j = command_json(rows.front());  // the newest (an update's Activate, after its Initiate)
            if (rows.size() > 1) {
              json earlier = json::array();
              for (std::size_t i = 1; i < rows.size(); ++i) earlier.push_back(command_json(rows[i]));
              j["earlier"] = earlier;
            }
            reply(format_result(j));
          } else if constexpr (std::is_same_v<R, History>) {
            json list = json::array();
            if (r.kind == "data") {
              for (const DataRecord& x : registry_->data(r.device, r.limit)) {
                list.push_back({{"received_ms", x.received_ms}, {"id", x.data_id}, {"value", json::parse(x.value_json, nullptr, false)}});
              }
            } else if (r.kind == "telemetry") {
              for (const Reading& x : registry_->readings(r.device, r.limit)) {
                list.push_back({{"received_ms", x.received_ms}, {"sequence", x.seq}, {"reading", json::parse(x.reading_json, nullptr, false)}});
              }
            } else {
              for (const Event& x : registry_->events_of(device_username(r.device), r.limit)) {
                list.push_back({{"at_ms", x.at_ms}, {"actor", x.actor}, {"action", x.action}, {"detail", x.detail}});
              }
            }
            reply(format_result({{r.kind, list}}));
          } else if constexpr (std::is_same_v<R, Backup>) {
            registry_->backup(r.path);
            reply(format_result({{"path", r.path}}));
          }
        },
        request);
  } catch (const ControlError& e) {
    reply(format_error(e.code(), e.what()));
  } catch (const RegistryFull& e) {
    reply(format_error(ControlErrorCode::busy, e.what()));
  } catch (const TransitionError& e) {
    reply(format_error(ControlErrorCode::conflict, e.what()));
  } catch (const std::invalid_argument& e) {
    reply(format_error(ControlErrorCode::bad_request, e.what()));
  } catch (const std::exception& e) {
    spdlog::error("control request failed: {}", e.what());
    reply(format_error(ControlErrorCode::internal, e.what()));
  }
}

void Daemon::control_command(const SendCommand& r, const ControlServer::Reply& reply) {
  const auto d = registry_->device(r.device);
  if (!d) return reply(format_error(ControlErrorCode::not_found, "no device " + srup::id_text(r.device)));
  if (r.type == srup::MessageType::deregister_command) {
    if (d->state == DeviceState::deregistered) {
      return reply(format_error(ControlErrorCode::conflict, "device " + srup::id_text(r.device) + " is deregistered already"));
    }
    return deregister(r.device, "control", reply);
  }
  if (d->state != DeviceState::joined) {
    return reply(format_error(ControlErrorCode::conflict, "device " + srup::id_text(r.device) + " is " +
                                                              to_string(d->state) + ", not joined"));
  }
  // The step an answer triggers is kept in the command's outbox row, so a restart does not lose it
  // (docs/srup-c2.md, "Follow-up steps"): Update Activate after 0x00 (docs/srup-mqtt.md 4.4); the
  // device resigned after its Terminate's 0x70, or after a Join Command's 0x50 (re-homing, 4.2: it
  // obeys us no more, and what we still had pending for it is cancelled).
  std::optional<FollowUp> follow_up;
  std::uint64_t follow_up_arg = 0;
  if (r.type == srup::MessageType::update_initiate && r.activate) follow_up = FollowUp::activate;
  if (r.type == srup::MessageType::terminate_command) follow_up = FollowUp::resign;
  if (r.type == srup::MessageType::join_command) {
    const auto& j = std::get<srup::JoinCommand>(r.body);
    if (j.c2_id == identity_.self.id) {
      return reply(format_error(ControlErrorCode::bad_request, "the new C2 is this C2"));
    }
    if (j.suite != d->identity.keys.suite) {
      return reply(format_error(ControlErrorCode::bad_request,
                                "the new C2's suite differs from the device's: sealed messages need one suite"));
    }
    follow_up = FollowUp::rehome;
    follow_up_arg = j.c2_id;
  }
  send_command(r.device, r.type, r.body, r.wait_ms, reply, nullptr, {}, follow_up, follow_up_arg);
}

void Daemon::authorize(const Authorize& r, const ControlServer::Reply& reply) {
  const auto mon = registry_->monitor(r.monitor);
  if (!mon || mon->state != MonitorState::active) {
    return reply(format_error(ControlErrorCode::not_found, "no active monitor " + srup::id_text(r.monitor)));
  }
  const auto d = registry_->device(r.device);
  if (!d || d->state == DeviceState::deregistered) {
    return reply(format_error(ControlErrorCode::not_found, "no device " + srup::id_text(r.device)));
  }
  if (r.allow && d->identity.keys.suite != mon->identity.keys.suite) {
    return reply(format_error(ControlErrorCode::bad_request,
                              "the monitor's suite differs from the device's: Telemetry Keys are sealed within one suite"));
  }
  // The broker's ACLs first (a revoked monitor loses the topics before it loses the key), then the
  // registry, then the device's Reader Set (which rotates its telemetry key).
  const std::string role = monitor_username(r.monitor);
  std::vector<json> commands;
  for (const dynsec::Acl& acl : monitor_acls_for(r.monitor, r.device)) {
    commands.push_back(r.allow ? dynsec::add_role_acl(role, acl) : dynsec::remove_role_acl(role, acl.type, acl.topic));
  }
  run_dynsec(std::move(commands), [this, r, reply](std::string error) {
    if (!error.empty()) return reply(format_error(ControlErrorCode::unavailable, "broker: " + error));
    try {  // the device or the monitor may have changed state while the broker answered
      if (r.allow) {
        registry_->allow_read(r.monitor, r.device, now_ms(), "control");
      } else {
        registry_->revoke_read(r.monitor, r.device, now_ms(), "control");
      }
    } catch (const std::exception& e) {
      return reply(format_error(ControlErrorCode::conflict, e.what()));
    }
    const auto d2 = registry_->device(r.device);
    if (d2 && d2->state == DeviceState::joined) send_reader_set(r.device);
    reply(format_result({{"monitor", srup::id_text(r.monitor)}, {"device", srup::id_text(r.device)}, {"allowed", r.allow}}));
  });
}

std::vector<dynsec::Acl> Daemon::device_acls(std::uint64_t device) const {
  using T = dynsec::AclType;
  const std::string mine = "srup/" + srup::id_text(device) + "/";
  return {{T::publish_client_send, mine + "dev", true, 0},
          {T::publish_client_send, mine + "tm", true, 0},
          {T::publish_client_send, mine + "tk/+", true, 0},
          {T::subscribe_pattern, mine + "c2", true, 0},
          {T::publish_client_receive, mine + "c2", true, 0}};
}

std::vector<dynsec::Acl> Daemon::monitor_acls_for(std::uint64_t monitor, std::uint64_t device) const {
  using T = dynsec::AclType;
  const std::string tm = srup::topic_telemetry(device);
  const std::string tk = srup::topic_telemetry_key(device, monitor);
  return {{T::subscribe_pattern, tm, true, 0},
          {T::publish_client_receive, tm, true, 0},
          {T::subscribe_pattern, tk, true, 0},
          {T::publish_client_receive, tk, true, 0}};
}

void Daemon::run_dynsec(std::vector<json> commands, std::function<void(std::string)> done) {
  if (commands.empty()) return done({});
  json first = std::move(commands.front());
  commands.erase(commands.begin());
  dynsec_->submit(std::move(first), [this, rest = std::move(commands), done = std::move(done)](const mqtt::DynsecResult& r) mutable {
    // On the client's thread (or inside submit): continue on ours.
    asio::post(io_, [this, r, rest = std::move(rest), done = std::move(done)]() mutable {
      if (!harmless(r)) return done(r.command + ": " + r.error);
      run_dynsec(std::move(rest), std::move(done));
    });
  });
}

void Daemon::enrol(const Enrol& r, const ControlServer::Reply& reply) {
  if (!config_.enrolment.ca_cert || !config_.enrolment.ca_key) {
    return reply(format_error(ControlErrorCode::unavailable,
                              "enrolment needs [enrolment] ca_cert and ca_key in the configuration"));
  }
  const srup::PublicIdentity pub = decode_identity(crypto::as_bytes(r.public_identity));
  if (pub.keys.suite != identity_.self.suite) {
    return reply(format_error(ControlErrorCode::bad_request,
                              std::string("the identity's suite is ") + std::string(srup::suite_info(pub.keys.suite).name) +
                                  ", the C2's " + std::string(srup::suite_info(identity_.self.suite).name) +
                                  ": make the identity with `srup keygen --suite` of the C2's suite"));
  }
  const std::string username = r.monitor ? monitor_username(pub.id) : device_username(pub.id);
  pki::IssuedCertificate cert;
  try {
    cert = pki::issue_client_certificate({*config_.enrolment.ca_cert, *config_.enrolment.ca_key}, r.csr, username,
                                         config_.enrolment.cert_days);
  } catch (const std::exception& e) {
    return reply(format_error(ControlErrorCode::bad_request, std::string("certificate request: ") + e.what()));
  }
  const std::string ca_pem = read_text_file(*config_.enrolment.ca_cert);
  // The registry first (it refuses duplicates and enforces the bounds), then the broker; if the
  // broker cannot register it, the enrolment is undone.
  json result;
  if (r.monitor) {
    const Monitor m = registry_->enrol_monitor(r.public_identity, now_ms(), "control");
    result = {{"id", srup::id_text(m.id)}, {"username", m.username}, {"state", to_string(m.state)}};
  } else {
    NewDevice nd;
    nd.type = r.type;
    nd.identity_pem = r.public_identity;
    nd.join_mode = *parse_join_mode(r.join);
    nd.observer = r.observer;
    const Device d = registry_->enrol_device(nd, now_ms(), "control");
    registry_->set_certificate(d.id, cert.serial_hex, cert.not_after_ms, now_ms(), "control");
    enrol_peer(d);
    result = {{"id", srup::id_text(d.id)}, {"username", d.username}, {"state", to_string(d.state)}};
  }
  result["certificate"] = cert.pem;
  result["certificate_not_after"] = cert.not_after;
  result["ca"] = ca_pem;
  result["c2_public_identity"] = srup::encode_public_identity(identity_.pub);
  const std::vector<dynsec::Acl> acls = r.monitor ? std::vector<dynsec::Acl>{} : device_acls(pub.id);
  const std::uint64_t id = pub.id;
  const bool monitor = r.monitor;
  run_dynsec(dynsec::register_identity(username, acls), [this, id, monitor, username, result, reply](std::string error) {
    if (!error.empty()) {
      spdlog::error("enrolment of {}: the broker did not register it: {}", username, error);
      if (monitor) {
        registry_->revoke_monitor(id, now_ms(), "enrol-undo");
      } else {
        registry_->set_state(id, DeviceState::deregistered, now_ms(), "enrol-undo");
        endpoint_->remove(id);
      }
      return reply(format_error(ControlErrorCode::unavailable, "the broker did not register " + username + ": " + error));
    }
    spdlog::info("enrolled {} (registered at the broker)", username);
    reply(format_result(result));
  });
}

void Daemon::deregister(std::uint64_t device, const std::string& actor, ControlServer::Reply reply) {
  auto finish = [this, device, actor, reply](const OutboxEntry*) {
    run_dynsec(dynsec::deregister_identity(device_username(device)), [this, device, actor, reply](std::string error) {
      try {
        for (const OutboxEntry& e : registry_->outbox_list(device, OutboxState::pending, kMaxListLimit)) {
          registry_->outbox_cancel(e.row, now_ms());
        }
        const auto d = registry_->device(device);
        if (d && d->state != DeviceState::deregistered) registry_->set_state(device, DeviceState::deregistered, now_ms(), actor);
      } catch (const std::exception& e) {
        spdlog::error("deregistering {}: {}", srup::id_text(device), e.what());
      }
      telemetry_peers_.erase(device);
      forget_provisional(device);
      endpoint_->remove(device);
      joins_.erase(device);
      if (!error.empty()) spdlog::error("deregistering {} at the broker: {}", srup::id_text(device), error);
      spdlog::info("device {} deregistered ({})", srup::id_text(device), actor);
      if (reply) {
        if (!error.empty()) return reply(format_error(ControlErrorCode::unavailable, "deregistered here; the broker: " + error));
        reply(format_result({{"device", srup::id_text(device)}, {"state", "deregistered"}}));
      }
    });
  };
  const auto d = registry_->device(device);
  if (!d || d->state != DeviceState::joined || actor == "device") return finish(nullptr);
  // Tell a joined device first (it answers 0x80), then drop it at the broker whatever happens.
  try {
    send_command(device, srup::MessageType::deregister_command, srup::Empty{}, 0, nullptr, nullptr, {});
  } catch (const std::exception& e) {
    spdlog::warn("deregister command to {}: {}", srup::id_text(device), e.what());
  }
  auto timer = std::make_shared<asio::steady_timer>(io_, kDeregisterGrace);
  timer->async_wait([timer, finish](std::error_code) { finish(nullptr); });
}

}  // namespace pqot::srup_c2
