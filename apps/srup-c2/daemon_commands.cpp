// srup-c2's commands: sealed, stored in the outbox, published and retransmitted until answered
// (docs/srup-mqtt.md 4.3, 4.4, 4.7); answers matched by (device, token).
#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>

#include "daemon_internal.hpp"
#include "pqot/crypto/random.hpp"
#include "pqot/srup/status.hpp"
#include "pqot/srup/topics.hpp"

namespace pqot::srup_c2 {

namespace {

constexpr std::size_t kTokenBytes = 16;
constexpr std::size_t kDuePerSweep = 200;  // retransmissions per sweep; the rest next time

std::string status_name_or_hex(std::uint8_t status) {
  if (srup::status_of(status)) return std::string(srup::status_name(status));
  char buf[8];
  std::snprintf(buf, sizeof(buf), "0x%02x", status);
  return buf;
}

}  // namespace

nlohmann::json Daemon::command_json(const OutboxEntry& e) {
  nlohmann::json j = {{"token", crypto::to_hex(e.token)},
                      {"device", srup::id_text(e.device)},
                      {"type", std::string(srup::to_string(static_cast<srup::MessageType>(e.type)))},
                      {"state", to_string(e.state)},
                      {"created_ms", e.created_ms},
                      {"attempts", e.attempts}};
  if (e.state == OutboxState::answered && e.status) {
    j["answer"] = {{"type", "response"},
                   {"status", *e.status},
                   {"status_name", status_name_or_hex(*e.status)},
                   {"detail", e.detail.value_or("")}};
    if (e.finished_ms) j["answered_ms"] = *e.finished_ms;
  }
  if (e.follow_up && e.follow_up_state) {
    j["follow_up"] = {{"step", to_string(*e.follow_up)}, {"state", to_string(*e.follow_up_state)}};
  }
  return j;
}

std::string waiter_key(std::uint64_t device, const crypto::Bytes& token) {
  return srup::id_text(device) + ":" + crypto::to_hex(token);
}

NewCommand Daemon::make_command(std::uint64_t device, srup::MessageType type, const srup::Body& body,
                                const crypto::Bytes& token) {
  const std::uint64_t now = now_ms();
  NewCommand c;
  c.device = device;
  c.token = token;
  c.type = static_cast<std::uint8_t>(type);
  c.envelope = endpoint_->make(device, type, body, srup::topic_to_device(device), token);
  c.created_ms = now;
  c.expires_ms = now + static_cast<std::uint64_t>(std::chrono::milliseconds(config_.commands.expire_after).count());
  c.next_attempt_ms = now + static_cast<std::uint64_t>(config_.commands.retry_initial.count());
  return c;
}

crypto::Bytes Daemon::send_command(std::uint64_t device, srup::MessageType type, const srup::Body& body,
                                   std::uint32_t wait_ms, ControlServer::Reply reply,
                                   std::function<void(const OutboxEntry&)> then, crypto::Bytes token,
                                   std::optional<FollowUp> follow_up, std::uint64_t follow_up_arg) {
  if (token.empty()) {
    token.resize(kTokenBytes);
    crypto::random_bytes(token);
  }
  NewCommand c = make_command(device, type, body, token);
  c.follow_up = follow_up;
  c.follow_up_arg = follow_up_arg;
  const std::int64_t row = registry_->outbox_add(c);  // durable before it is published
  publish_to_device(device, c.envelope);
  ++counters_.sent_by_type[std::string(srup::to_string(type))];
  if (then || (reply && wait_ms > 0)) {
    auto w = std::make_shared<Waiter>(io_);
    w->row = row;
    w->reply = std::move(reply);
    w->then = std::move(then);
    const std::string key = waiter_key(device, token);
    waiters_.emplace(key, w);
    if (w->reply && wait_ms > 0) {
      w->timer.expires_after(std::chrono::milliseconds(wait_ms));
      w->timer.async_wait([this, w, key](std::error_code ec) {
        if (ec) return;
        // Not answered in time: the control client hears "pending"; a `then` stays armed.
        if (auto e = registry_->outbox_entry(w->row); e && w->reply) w->reply(format_result(command_json(*e)));
        w->reply = nullptr;
        if (!w->then) std::erase_if(waiters_, [&](const auto& kv) { return kv.second == w; });
      });
    }
  }
  if (reply && wait_ms == 0) reply(format_result(command_json(*registry_->outbox_entry(row))));
  return token;
}

void Daemon::publish_to_device(std::uint64_t device, const crypto::Bytes& envelope) {
  const auto r = mqtt_->publish(srup::topic_to_device(device), std::span<const std::uint8_t>(envelope));
  if (!r && log_limiter_.allow().log) {
    spdlog::warn("publish to {} not queued ({}); the outbox retries it", srup::id_text(device), mqtt::to_string(r.error));
  }
}

void Daemon::reply_to_device(std::uint64_t device, const srup::Header& request, std::uint8_t status,
                             const std::string& detail) {
  reply_with_token(device, request.token, status, detail);
}

void Daemon::reply_with_token(std::uint64_t device, const crypto::Bytes& token, std::uint8_t status,
                              const std::string& detail) {
  try {
    const crypto::Bytes rsp = endpoint_->make(device, srup::MessageType::response,
                                              srup::Response{status, detail}, srup::topic_to_device(device), token);
    publish_to_device(device, rsp);
    ++counters_.sent_by_type["response"];
  } catch (const std::exception& e) {
    spdlog::error("cannot answer {}: {}", srup::id_text(device), e.what());
  }
}

void Daemon::on_answer(const Device& d, const srup::Inbound& in) {
  const std::uint64_t now = now_ms();
  Answer a;
  a.device = d.id;
  a.token = in.header.token;
  a.received_ms = now;
  a.sequence = in.header.sequence;
  std::optional<nlohmann::json> data_answer;
  if (const auto* r = std::get_if<srup::Response>(&in.body)) {
    a.status = r->status;
    a.detail = r->detail;
  } else {
    const auto& data = std::get<srup::Data>(in.body);
    a.status = static_cast<std::uint8_t>(srup::Status::action_success);
    a.detail = data.data_id + "=" + srup::to_text(data.value);
    if (a.detail.size() > kMaxDetailLength) a.detail.resize(kMaxDetailLength);
    // A value whose JSON text exceeds the registry's bound (a string of control bytes grows six
    // times when escaped) is stored as its type and size: the answer must still reach its command.
    nlohmann::json value = value_json(data.value);
    std::string value_text = value.dump();
    if (value_text.size() > kMaxValueLength) {
      value = nlohmann::json{{"type", value.is_object() ? value.value("type", "") : ""}, {"truncated", true}, {"json_bytes", value_text.size()}};
      value_text = value.dump();
    }
    data_answer = nlohmann::json{{"type", "data"}, {"id", data.data_id}, {"value", value}};
    a.data = std::make_pair(data.data_id, value_text);
  }
  test_crash_point("before-answer-stored", d.id, a.token);
  // The outbox first, then the replay window (docs/srup-c2.md, "Outbox"): a C2 that dies between
  // the two has the answer, and a second copy of the envelope is recognised by its sequence number.
  const AnswerOutcome outcome = registry_->outbox_record_answer(a);
  test_crash_point("after-answer-stored", d.id, a.token);
  try {
    endpoint_->record(in.header);
  } catch (const std::exception& e) {
    if (log_limiter_.allow().log) spdlog::warn("answer from {} stored, its number not recorded: {}", srup::id_text(d.id), e.what());
  }
  if (outcome.match == AnswerMatch::duplicate) return;  // stored before: it changes nothing
  if (outcome.match == AnswerMatch::unmatched) {
    // Not an answer to a pending command: a late answer, or Data the device reports by itself
    // (already stored).
    if (!data_answer) ++counters_.answers_unmatched;
    return;
  }
  const OutboxEntry& entry = *outcome.entry;
  counters_.round_trip.observe(std::chrono::milliseconds(now - entry.created_ms));
  if (d.state == DeviceState::pending && !is_join_step(static_cast<srup::MessageType>(entry.type))) {
    return;  // cannot happen: only join steps are sent to pending devices
  }
  if (entry.follow_up_state == FollowUpState::due) take_follow_up(entry, /*publish=*/true);
  nlohmann::json j = command_json(entry);
  if (data_answer) j["answer"] = *data_answer;
  auto [lo, hi] = waiters_.equal_range(waiter_key(d.id, entry.token));
  std::vector<std::shared_ptr<Waiter>> done;
  for (auto it = lo; it != hi; ++it) done.push_back(it->second);
  waiters_.erase(lo, hi);
  for (const auto& w : done) {
    w->timer.cancel();
    if (w->then) w->then(entry);
    if (w->reply) w->reply(format_result(j));
  }
}

void Daemon::take_follow_up(const OutboxEntry& e, bool publish) {
  if (!e.follow_up || e.follow_up_state != FollowUpState::due) return;
  const std::string dev = srup::id_text(e.device);
  try {
    switch (*e.follow_up) {
      case FollowUp::activate: {
        // 0x00 (downloaded, digest checked) -> Update Activate with the same token (docs/srup-mqtt.md
        // 4.4), stored in the transaction that marks the step done.
        const NewCommand c = make_command(e.device, srup::MessageType::update_activate, srup::Empty{}, e.token);
        if (!registry_->outbox_follow_up_send(e.row, c)) return;
        ++counters_.sent_by_type[std::string(srup::to_string(srup::MessageType::update_activate))];
        if (publish) publish_to_device(e.device, c.envelope);
        spdlog::info("update of {}: downloaded, activating", dev);
        return;
      }
      case FollowUp::resign:
      case FollowUp::rehome: {
        const std::string actor =
            *e.follow_up == FollowUp::rehome ? "join-command c2-" + srup::id_text(e.follow_up_arg) : "terminate";
        if (!registry_->outbox_follow_up_resign(e.row, now_ms(), actor)) return;
        telemetry_peers_.erase(e.device);  // its keys stay with the endpoint, as for a Resign Request
        if (*e.follow_up == FollowUp::rehome) {
          spdlog::info("device {} re-homed to C2 {}", dev, srup::id_text(e.follow_up_arg));
        } else {
          spdlog::info("device {} terminated: resigned", dev);
        }
        return;
      }
    }
  } catch (const std::exception& ex) {
    // Still due in the registry: taken at the next start.
    spdlog::error("follow-up {} of {}: {}", to_string(*e.follow_up), dev, ex.what());
  }
}

void Daemon::take_due_follow_ups() {
  std::size_t taken = 0;
  try {
    // Pages of due rows; a step that fails stays due (logged), so stop when a page made no progress.
    for (std::int64_t first = 0;;) {
      const auto due = registry_->outbox_follow_ups_due(Registry::kMaxListLimit);
      if (due.empty() || due.front().row == first) break;
      first = due.front().row;
      for (const OutboxEntry& e : due) take_follow_up(e, /*publish=*/false);
      taken += due.size();
    }
  } catch (const std::exception& e) {
    spdlog::error("follow-up steps at start: {}", e.what());
  }
  if (taken > 0) spdlog::info("follow-up steps taken at start (answers stored before the restart): {}", taken);
}

void Daemon::test_crash_point(const char* point, std::uint64_t device, const crypto::Bytes& token) {
  if (test_crash_at_.empty() || !test_crash_at_.starts_with(std::string(point) + ":")) return;
  const auto rows = registry_->outbox_by_token(token, 1);
  if (rows.empty() || rows.front().device != device) return;
  const std::string type(srup::to_string(static_cast<srup::MessageType>(rows.front().type)));
  if (test_crash_at_ != std::string(point) + ":" + type) return;
  std::fprintf(stdout, "test fault hook: ending at %s\n", test_crash_at_.c_str());
  std::fflush(stdout);
  std::_Exit(86);
}

void Daemon::sweep_outbox(bool after_reconnect) {
  outbox_timer_.cancel();
  const std::uint64_t now = now_ms();
  try {
    counters_.commands_expired += registry_->outbox_expire(now);
    // After a reconnect every pending command goes out again at once (a killed broker may have
    // lost it); otherwise only those whose backoff has passed.
    const std::vector<OutboxEntry> due = after_reconnect
                                             ? registry_->outbox_list(std::nullopt, OutboxState::pending, Registry::kMaxListLimit)
                                             : registry_->outbox_due(now, kDuePerSweep);
    for (const OutboxEntry& e : due) {
      if (e.expires_ms <= now) continue;
      if (e.attempts > 0 || after_reconnect) ++counters_.retransmissions;
      publish_to_device(e.device, e.envelope);
      const auto base = static_cast<std::uint64_t>(config_.commands.retry_initial.count());
      const auto cap = static_cast<std::uint64_t>(config_.commands.retry_max.count());
      const std::uint64_t backoff = std::min(cap, base << std::min<std::uint32_t>(e.attempts + 1, 20));
      registry_->outbox_attempted(e.row, now + backoff);
    }
  } catch (const std::exception& e) {
    spdlog::error("outbox: {}", e.what());
  }
  outbox_timer_.expires_after(std::chrono::milliseconds(250));
  outbox_timer_.async_wait([this](std::error_code ec) {
    if (!ec) sweep_outbox(false);
  });
}

void Daemon::on_device_leaves(const Device& d, const srup::Inbound& in) {
  if (in.header.type == srup::MessageType::resign_request) {
    registry_->set_state(d.id, DeviceState::resigned, now_ms(), "device");
    reply_to_device(d.id, in.header, static_cast<std::uint8_t>(srup::Status::resign_success), "");
    // It runs nothing more: what was still pending for it is cancelled, not retried for an hour.
    for (const OutboxEntry& e : registry_->outbox_list(d.id, OutboxState::pending, kMaxListLimit)) {
      registry_->outbox_cancel(e.row, now_ms());
    }
    telemetry_peers_.erase(d.id);  // its keys stay with the endpoint: a retried request is answered again
    forget_provisional(d.id);
    spdlog::info("device {} resigned", srup::id_text(d.id));
    return;
  }
  reply_to_device(d.id, in.header, static_cast<std::uint8_t>(srup::Status::deregister_success), "");
  // The broker drops it after the answer has been handed to the client.
  deregister(d.id, "device", nullptr);
}

}  // namespace pqot::srup_c2
