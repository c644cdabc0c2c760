// SUBSCRIBE, UNSUBSCRIBE and NOTIFICATION (§9) on the server. A subscription samples its nodes
// every interval (interval 0, "on change": every 50 ms, sending only what changed). Bounds: at most
// max_subscriptions per session and max_subscribed_ids ids over all of them; nodes whose backend
// waits (devices) are sampled at most every min_backend_sample, one sample at a time per
// subscription, and not while the session is over max_backend_ops or its send queue is full (that
// tick is skipped; the next one samples again).
#include "pqot/srmcp/compact.hpp"
#include "pqot/srmcp/json_text.hpp"
#include "server_impl.hpp"

namespace pqot::srmcp {

using asio::awaitable;
using asio::use_awaitable;

// A NOTIFICATION body (§9.1 JSON, §9.2 compact) with the entries `changed` of a sample.
std::string ServerSession::notification_body(std::uint64_t subscription,
                                             const std::vector<std::string>& ids,
                                             const std::vector<ReadResult>& results,
                                             const std::vector<std::size_t>& changed) const {
  const auto ts = [](const ReadResult& r) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(r.timestamp.time_since_epoch())
        .count();
  };
  std::string body;
  if (encoding_ == BodyEncoding::compact) {
    compact::begin_notification(body, subscription, changed.size());
    for (const std::size_t i : changed) {
      compact::append_notification_entry(body, ids[i], results[i].status, ts(results[i]),
                                         results[i].value);
    }
    return body;
  }
  Json values = Json::array();
  for (const std::size_t i : changed) {
    const ReadResult& r = results[i];
    Json entry{{"id", ids[i]}, {"status", static_cast<int>(r.status)}, {"ts_ms", ts(r)}};
    if (r.status == Status::ok) entry["value"] = r.value;
    values.push_back(std::move(entry));
  }
  return to_json_text(Json{{"subscription", subscription}, {"values", std::move(values)}});
}

Json ServerSession::subscribe(const SubscribeRequest& request) {
  const auto& cfg = server_->config;
  if (subscriptions_.size() >= cfg.max_subscriptions) {
    server_->refuse(Refusal::subscriptions, peer_,
                    "session " + hex64(session_id_) + ": subscription limit reached");
    throw ProtocolError(
        Action::reply, Status::too_large,
        "at most " + std::to_string(cfg.max_subscriptions) + " subscriptions per session");
  }
  if (subscribed_ids_ + request.ids.size() > cfg.max_subscribed_ids) {
    server_->refuse(Refusal::subscriptions, peer_,
                    "session " + hex64(session_id_) + ": subscribed-id limit reached");
    throw ProtocolError(
        Action::reply, Status::too_large,
        "at most " + std::to_string(cfg.max_subscribed_ids) + " subscribed ids per session");
  }
  Subscription s;
  s.ids = request.ids;
  // Check every id now, so a bad subscription fails at once rather than in notifications.
  if (const auto bad = nodes().check_readable(s.ids, principal_)) {
    throw ProtocolError(Action::reply, bad->second, "cannot subscribe to '" + bad->first + "'");
  }
  s.on_change = request.interval_ms == 0;
  s.interval = std::chrono::milliseconds(s.on_change ? 50 : request.interval_ms);
  s.timer = std::make_shared<asio::steady_timer>(strand_);
  const std::uint64_t id = next_subscription_++;
  subscribed_ids_ += s.ids.size();
  subscriptions_.emplace(id, std::move(s));
  asio::co_spawn(strand_, run_subscription(id), asio::detached);
  return Json{{"subscription", id}};
}

void ServerSession::unsubscribe(std::uint64_t id, std::uint32_t tid) {
  auto it = subscriptions_.find(id);
  if (it == subscriptions_.end()) {
    throw ProtocolError(Action::reply, Status::unknown_subscription, "no such subscription", tid);
  }
  it->second.timer->cancel();
  subscribed_ids_ -= std::min(subscribed_ids_, it->second.ids.size());
  subscriptions_.erase(it);
}

awaitable<void> ServerSession::run_subscription(std::uint64_t id) {
  auto self = shared_from_this();
  const auto& cfg = server_->config;
  while (!closed_) {
    auto it = subscriptions_.find(id);
    if (it == subscriptions_.end()) break;
    auto interval = it->second.interval;
    if (room()) {
      const std::vector<std::string> ids = it->second.ids;
      // Sample every node; backends that wait answer through `box` and wake `waiter`.
      std::vector<ReadResult> results;
      auto box = std::make_shared<std::vector<ReadResult>>();
      auto waiter = std::make_shared<asio::steady_timer>(strand_, Clock::time_point::max());
      const bool now =
          nodes().read_results(ids, principal_, results, [box, waiter, strand = strand_](auto r) {
            asio::post(strand, [box, waiter, r = std::move(r)]() mutable {
              *box = std::move(r);
              waiter->cancel();
            });
          });
      if (!now) {
        backend_ops_ += ids.size();
        asio::error_code ec;
        co_await waiter->async_wait(asio::redirect_error(use_awaitable, ec));
        backend_ops_ -= std::min(backend_ops_, ids.size());
        results = std::move(*box);
        wake_readers();
        interval =
            std::max(interval,
                     std::chrono::duration_cast<std::chrono::milliseconds>(cfg.min_backend_sample));
      }
      it = subscriptions_.find(id);
      if (closed_ || it == subscriptions_.end()) break;
      Subscription& s = it->second;
      std::vector<std::size_t> changed;  // the entries this NOTIFICATION carries
      for (std::size_t i = 0; i < ids.size() && i < results.size(); ++i) {
        const ReadResult& r = results[i];
        // Gone since SUBSCRIBE (a reload): nothing to say about it.
        if (r.status == Status::unknown_node || r.status == Status::not_readable ||
            r.status == Status::access_denied) {
          continue;
        }
        // What "changed" compares: the value, or the failure (a failing node is reported once).
        Json seen = r.status == Status::ok ? r.value : Json{{"status", static_cast<int>(r.status)}};
        auto prev = s.last.find(ids[i]);
        if (s.on_change && prev != s.last.end() && prev->second == seen) continue;
        s.last[ids[i]] = std::move(seen);
        changed.push_back(i);
      }
      if (!changed.empty()) {
        try {
          const std::string text = notification_body(id, ids, results, changed);
          endpoint_->send(MessageHeader{MessageType::notification, true, Status::ok, 0},
                          crypto::as_bytes(text), cfg.limits.max_segments);
        } catch (const std::exception&) {
          // Too large for one message or its encoding, or no link left: nothing to deliver this
          // time.
        }
      }
    }
    it = subscriptions_.find(id);
    if (closed_ || it == subscriptions_.end()) break;
    auto timer = it->second.timer;
    timer->expires_after(interval);
    asio::error_code ec;
    co_await timer->async_wait(asio::redirect_error(use_awaitable, ec));
    if (ec) break;  // unsubscribed or session closed
  }
}

}  // namespace pqot::srmcp
