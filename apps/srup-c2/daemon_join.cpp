// srup-c2's joins: simple, human (a code typed by an operator) and observed (a second device
// confirms the code), then the device's readers (docs/srup-mqtt.md 4.2).
#include <spdlog/spdlog.h>

#include "daemon_internal.hpp"
#include "pqot/crypto/random.hpp"
#include "pqot/srup/status.hpp"
#include "pqot/srup/topics.hpp"

namespace pqot::srup_c2 {

namespace {

constexpr std::uint8_t kJoinSuccess = static_cast<std::uint8_t>(srup::Status::join_success);
constexpr std::uint8_t kJoinRefused = static_cast<std::uint8_t>(srup::Status::join_refused);
constexpr std::uint8_t kJoinFailed = static_cast<std::uint8_t>(srup::Status::join_failed);

srup::MessageType request_type_of(JoinMode m) {
  switch (m) {
    case JoinMode::simple: return srup::MessageType::join_request;
    case JoinMode::human: return srup::MessageType::human_join_request;
    case JoinMode::observed: return srup::MessageType::observed_join_request;
  }
  return srup::MessageType::join_request;
}

}  // namespace

bool is_join_step(srup::MessageType t) {
  return t == srup::MessageType::human_join_response || t == srup::MessageType::observed_join_response;
}

void Daemon::on_join_request(const Device& d, const srup::Inbound& in) {
  const srup::Header& h = in.header;
  if (d.state == DeviceState::joined) {  // a retry whose answer was lost: idempotent
    return reply_to_device(d.id, h, kJoinSuccess, "already joined");
  }
  const srup::PublicKeys* keys = nullptr;
  std::uint64_t observer = 0;
  if (const auto* j = std::get_if<srup::JoinRequest>(&in.body)) keys = &j->keys;
  if (const auto* o = std::get_if<srup::ObservedJoinRequest>(&in.body)) {
    keys = &o->keys;
    observer = o->observer;
  }
  if (keys == nullptr) return refuse("BAD_REQUEST", d.id, "join request without keys");
  if (keys->signature_public != d.identity.keys.signature_public || keys->kem_public != d.identity.keys.kem_public) {
    refuse("BAD_REQUEST", d.id, "join request keys differ from the enrolled ones");
    return reply_to_device(d.id, h, kJoinRefused, "keys differ from the enrolled ones");
  }
  if (h.type != request_type_of(d.join_mode)) {
    return reply_to_device(d.id, h, kJoinRefused,
                           std::string("enrolled for the ") + to_string(d.join_mode) + " join");
  }
  if (const auto it = joins_.find(d.id); it != joins_.end() && it->second.token == h.token) {
    return;  // the same join still running: its answer comes when it ends
  }
  JoinInProgress join;
  join.mode = h.type;
  join.token = h.token;
  join.started_ms = now_ms();
  try {
    switch (d.join_mode) {
      case JoinMode::simple:
        joins_[d.id] = join;
        return finish_join(d.id, kJoinSuccess, "");
      case JoinMode::human: {
        srup::OneTimeCode code;
        crypto::random_bytes(code.code);
        registry_->set_join_code(d.id, code.code, now_ms(), "join");
        joins_[d.id] = join;
        send_command(d.id, srup::MessageType::human_join_response, code, 0, nullptr, nullptr, {});
        spdlog::info("device {} asks to join: its code is on its display; confirm with `srup c2 join-code {} CODE`",
                     srup::id_text(d.id), srup::id_text(d.id));
        return;
      }
      case JoinMode::observed: {
        const auto obs = registry_->device(observer);
        if ((d.observer && *d.observer != observer) || !obs || obs->state != DeviceState::joined) {
          return reply_to_device(d.id, h, kJoinRefused, "the observer is not a joined device enrolled for this join");
        }
        srup::OneTimeCode code;
        crypto::random_bytes(code.code);
        join.observer = observer;
        joins_[d.id] = join;
        // The observer is asked once the device has shown the code (its 0x50 to the Observed Join
        // Response): before that there is nothing to observe.
        const std::uint64_t joining = d.id;
        const crypto::Bytes join_token = h.token;
        send_command(d.id, srup::MessageType::observed_join_response, code, 0, nullptr,
                     [this, joining, observer, join_token, code](const OutboxEntry& e) {
                       const auto it = joins_.find(joining);
                       if (it == joins_.end() || it->second.token != join_token) return;  // that join ended
                       if (e.status != kJoinSuccess) {
                         return finish_join(joining, kJoinFailed, "the device could not show the code");
                       }
                       try {
                         // The answer must carry this request's token to end this join (an earlier
                         // join's request may still be pending at the observer).
                         crypto::Bytes v(16);
                         crypto::random_bytes(v);
                         it->second.observation_token = v;
                         send_command(observer, srup::MessageType::observation_request,
                                      srup::ObservationRequest{joining, code.code}, 0, nullptr,
                                      [this, joining](const OutboxEntry& a) { on_observation_answer(joining, a); }, v);
                       } catch (const std::exception& ex) {
                         spdlog::error("observation request to {}: {}", srup::id_text(observer), ex.what());
                         finish_join(joining, kJoinFailed, "the C2 could not ask the observer");
                       }
                     },
                     {});
        return;
      }
    }
  } catch (const std::exception& e) {
    spdlog::error("join of {}: {}", srup::id_text(d.id), e.what());
    joins_.erase(d.id);
    reply_to_device(d.id, h, kJoinFailed, "the C2 could not run the join");
  }
}

void Daemon::on_observation_answer(std::uint64_t joining, const OutboxEntry& e) {
  const auto it = joins_.find(joining);
  if (it == joins_.end() || !e.status) return;
  if (e.device != it->second.observer || e.token != it->second.observation_token) {
    // The answer to another join's Observation Request (the device asked again since): it says
    // nothing about the code this join sent.
    spdlog::info("observation answer from {} for an earlier join of {}: ignored", srup::id_text(e.device),
                 srup::id_text(joining));
    return;
  }
  switch (static_cast<srup::Status>(*e.status)) {
    case srup::Status::observed_join_valid: return finish_join(joining, kJoinSuccess, "observed");
    case srup::Status::observed_join_invalid: return finish_join(joining, kJoinRefused, "the observer saw another code");
    default: return finish_join(joining, kJoinFailed, "the observer could not observe");
  }
}

void Daemon::join_code_entered(const JoinCode& request, const ControlServer::Reply& reply) {
  const auto d = registry_->device(request.device);
  if (!d) return reply(format_error(ControlErrorCode::not_found, "no device " + srup::id_text(request.device)));
  if (d->state != DeviceState::pending || d->join_mode != JoinMode::human) {
    return reply(format_error(ControlErrorCode::conflict, "device " + srup::id_text(request.device) +
                                                              " is not waiting for a human join"));
  }
  switch (registry_->check_join_code(request.device, request.code, now_ms())) {
    case JoinCodeCheck::accepted:
      if (joins_.count(request.device) == 0) {
        // The code matched, but this C2 restarted since it sent it: the device's next retry
        // starts a new join, and the answer goes with it.
        return reply(format_error(ControlErrorCode::conflict,
                                  "the code matched, but the join it belongs to was lost in a restart; "
                                  "confirm the new code the device will show"));
      }
      finish_join(request.device, kJoinSuccess, "code confirmed");
      return reply(format_result({{"device", srup::id_text(request.device)}, {"state", "joined"}}));
    case JoinCodeCheck::wrong:
      return reply(format_error(ControlErrorCode::bad_request, "wrong code"));
    case JoinCodeCheck::exhausted:
      finish_join(request.device, kJoinRefused, "too many wrong codes");
      return reply(format_error(ControlErrorCode::conflict, "too many wrong codes: the join is refused"));
    case JoinCodeCheck::expired:
      return reply(format_error(ControlErrorCode::conflict, "the code expired; the device must ask again"));
    case JoinCodeCheck::none:
      return reply(format_error(ControlErrorCode::conflict, "no code was sent to this device"));
  }
}

void Daemon::finish_join(std::uint64_t device, std::uint8_t status, const std::string& why) {
  const auto it = joins_.find(device);
  if (it == joins_.end()) return;
  const crypto::Bytes token = it->second.token;
  joins_.erase(it);
  if (status == kJoinSuccess) {
    const Device d = registry_->set_state(device, DeviceState::joined, now_ms(), "join");
    enrol_peer(d);
    spdlog::info("device {} joined ({})", srup::id_text(device), why.empty() ? to_string(d.join_mode) : why);
  } else {
    spdlog::warn("join of {} refused: {}", srup::id_text(device), why);
  }
  reply_with_token(device, token, status, why);
  if (status == kJoinSuccess) send_reader_set(device);
}

void Daemon::send_reader_set(std::uint64_t device) {
  srup::ReaderSet set;
  std::vector<srup::Reader> readers;
  readers.push_back({identity_.self.id, identity_.self.suite, identity_.self.kem_public});
  for (const std::uint64_t m : registry_->readers_of(device)) {
    if (const auto mon = registry_->monitor(m)) readers.push_back({m, mon->identity.keys.suite, mon->identity.keys.kem_public});
  }
  std::sort(readers.begin(), readers.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  if (readers.size() > srup::kMaxReaders) readers.resize(srup::kMaxReaders);
  set.readers = std::move(readers);
  try {
    send_command(device, srup::MessageType::reader_set, set, 0, nullptr, nullptr, {});
  } catch (const std::exception& e) {
    spdlog::error("reader set for {}: {}", srup::id_text(device), e.what());
  }
}

}  // namespace pqot::srup_c2
