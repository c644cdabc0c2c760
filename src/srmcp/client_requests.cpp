// SRMCP v2 client transactions (docs/srmcp.md §8.1, §9, §9.2, §10): requests with their tids,
// the session's one deadline sweep, responses and notifications as they arrive, and the typed and
// JSON forms of READ and WRITE.
#include "client_impl.hpp"
#include "pqot/common/printable.hpp"
#include "pqot/srmcp/json_text.hpp"

namespace pqot::srmcp {

namespace {

// The body of a local failure: JSON {"message": ...}.
Bytes message_text(std::string_view message) {
  std::string text = "{\"message\":";
  append_json_string(text, common::printable(message));
  text += '}';
  return Bytes(text.begin(), text.end());
}

// The message of an ERROR body ({"message": ...}), or a description of a body that is not one.
std::string error_message(ByteView body, const Limits& limits) {
  try {
    const Json j = parse_json_body(body, limits, 0);
    if (j.is_object() && j.contains("message") && j["message"].is_string())
      return j["message"].get<std::string>();
  } catch (const std::exception&) {
  }
  return "unparsable error body";
}

// A READ's ids and a WRITE's values from a JSON body of §9.1's schema (std::invalid_argument or a
// Json exception otherwise).
std::vector<std::string> json_ids(const Json& body) {
  std::vector<std::string> ids;
  for (const auto& id : body.at("ids")) ids.push_back(id.get<std::string>());
  return ids;
}

std::vector<std::pair<std::string, Value>> json_values(const Json& body) {
  std::vector<std::pair<std::string, Value>> values;
  for (const auto& v : body.at("values")) {
    Value value = from_json(v.at("value"));
    if (std::holds_alternative<std::monostate>(value))
      throw std::invalid_argument("a value is null");
    values.emplace_back(v.at("id").get<std::string>(), std::move(value));
  }
  return values;
}

// Typed entries from the JSON responses of §9.1 (a JSON session's answer to the typed API).
std::vector<NodeReading> readings_of(const Json& body) {
  std::vector<NodeReading> out;
  for (const auto& v : body.at("values")) {
    NodeReading e;
    e.id = v.at("id").get<std::string>();
    e.status = static_cast<Status>(v.at("status").get<int>());
    e.ts_ms = v.value("ts_ms", std::int64_t{0});
    if (v.contains("type")) e.type = parse_type_name(v["type"].get<std::string>());
    if (e.status == Status::ok) e.value = from_json(v.at("value"));
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<WriteOutcome> outcomes_of(const Json& body) {
  std::vector<WriteOutcome> out;
  for (const auto& v : body.at("values")) {
    WriteOutcome e;
    e.id = v.at("id").get<std::string>();
    e.status = static_cast<Status>(v.at("status").get<int>());
    if (e.status == Status::ok) e.stored = from_json(v.at("value"));
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace

void Client::Impl::deliver(Message m) {
  const MessageHeader& h = m.header;
  if (!h.response) return;
  // §10: responses and notifications outside the timestamp window are not believed.
  const std::uint32_t skew = clock_skew_s(h.timestamp_s);
  const bool stale = outside_window(skew, timestamp_window_ms);
  if (h.type == MessageType::notification && h.tid == 0) {
    if ((!notification_handler && !notification_values_handler) || stale) return;
    try {
      if (has_compact_body(encoding, h.type)) {
        const Notification n = compact::decode_notification(m.body, options.limits);
        if (notification_values_handler) notification_values_handler(n);
        if (notification_handler) notification_handler(to_json(n));
      } else {
        const Json j = parse_json_body(m.body, options.limits, 0);
        if (notification_handler) notification_handler(j);
        if (notification_values_handler) {
          Notification n;
          n.subscription = j.at("subscription").get<std::uint64_t>();
          n.values = readings_of(j);
          notification_values_handler(n);
        }
      }
    } catch (const std::exception&) {
      // A malformed notification is dropped.
    }
    return;
  }
  auto it = pending.find(h.tid);
  if (it == pending.end()) return;  // late: its deadline already passed
  if (stale) {
    it->second->result = RawResponse{Status::stale_timestamp,
                                     message_text("response timestamp differs from this clock by " +
                                                  std::to_string(skew) + " s")};
  } else {
    it->second->result = RawResponse{h.status, std::move(m.body)};
  }
  it->second->wake.cancel();
}

void Client::Impl::arm_sweep(std::chrono::steady_clock::time_point at) {
  if (sweep_armed || closed) return;
  if (!sweep) sweep.emplace(strand);
  sweep_armed = true;
  sweep->expires_at(at);
  sweep->async_wait([self = shared_from_this()](const asio::error_code&) { self->on_sweep(); });
}

// Ends the requests past their deadline and re-arms at the earliest deadline left. With a
// steady stream of requests it runs about once per deadline, not once per request.
void Client::Impl::on_sweep() {
  sweep_armed = false;
  if (closed) return;
  const auto now = std::chrono::steady_clock::now();
  auto next = std::chrono::steady_clock::time_point::max();
  for (auto& [tid, p] : pending) {
    if (p->result) continue;
    if (p->deadline <= now) {
      p->expired = true;
      p->wake.cancel();  // no result: request_raw answers TIMEOUT
    } else {
      next = std::min(next, p->deadline);
    }
  }
  if (next != std::chrono::steady_clock::time_point::max()) arm_sweep(next);
}

awaitable<Client::Impl::RawResponse> Client::Impl::request_raw(MessageType type, std::string body,
                                                               std::shared_ptr<Link> on) {
  auto self = shared_from_this();
  if (closed || !endpoint) co_return RawResponse{Status::internal, message_text("not connected")};
  if (spare_pending.capacity() < kSparePending) spare_pending.reserve(kSparePending);
  std::uint32_t tid = next_tid++;
  while (tid == 0 || pending.contains(tid))
    tid = next_tid++;  // (after 2^32 requests: skip one still waiting)
  std::shared_ptr<Pending> p;
  if (spare_pending.empty()) {
    p = std::make_shared<Pending>(strand);
    pending.emplace(tid, p);
  } else {
    PendingMap::node_type node = std::move(spare_pending.back());
    spare_pending.pop_back();
    node.key() = tid;
    p = node.mapped();
    p->result.reset();
    p->expired = false;
    pending.insert(std::move(node));
  }
  p->wake.expires_at(std::chrono::steady_clock::time_point::max());
  p->deadline = std::chrono::steady_clock::now() + options.deadline;
  // Returns the entry's node for reuse once the request is over, whichever way it ends.
  struct Release {
    Impl& impl;
    std::uint32_t tid;
    ~Release() {
      PendingMap::node_type node = impl.pending.extract(tid);
      // (capacity reserved above: this push_back never allocates, hence never throws)
      if (node && impl.spare_pending.size() < kSparePending)
        impl.spare_pending.push_back(std::move(node));
    }
  } release{*this, tid};
  arm_sweep(p->deadline);
  try {
    if (on) {
      endpoint->send_on(*on, MessageHeader{type, false, Status::ok, tid}, crypto::as_bytes(body));
    } else {
      endpoint->send(MessageHeader{type, false, Status::ok, tid}, crypto::as_bytes(body), 1);
    }
  } catch (const ProtocolError& e) {
    co_return RawResponse{e.status(), message_text(e.what())};
  }
  // (Nothing ran between the send and here: on the strand, a response, the sweep and a shutdown
  // all come after this wait has begun, so their cancel() always finds it.)
  if (!p->result && !p->expired && !closed) {
    asio::error_code ec;
    co_await p->wake.async_wait(asio::redirect_error(use_awaitable, ec));
  }
  if (p->result) co_return std::move(*p->result);
  if (closed) co_return RawResponse{Status::internal, message_text("connection closed")};
  co_return RawResponse{
      Status::timeout,
      message_text("no response within " + std::to_string(options.deadline.count()) + " ms")};
}

awaitable<Response> Client::Impl::request(MessageType type, Json body, std::shared_ptr<Link> on) {
  auto self = shared_from_this();
  const bool compact = has_compact_body(encoding, type);
  std::string text;
  std::vector<std::string> ids;  // what a compact response's entries answer, in order
  try {
    if (compact && type == MessageType::read) {
      ids = json_ids(body);
      compact::encode_read_request(ids, text);
    } else if (compact && type == MessageType::write) {
      const auto values = json_values(body);
      for (const auto& v : values) ids.push_back(v.first);
      compact::encode_write_request(values, text);
    } else {
      text = to_json_text(body);
    }
  } catch (const std::exception& e) {
    co_return Response{Status::bad_request,
                       Json{{"message", std::string("request not sent: ") + e.what()}}};
  }
  RawResponse raw = co_await request_raw(type, std::move(text), std::move(on));
  Response r;
  r.status = raw.status;
  try {
    const ByteView bytes = raw.body;
    if (raw.status == Status::ok && compact && type == MessageType::read) {
      r.body = to_json(compact::decode_read_response(bytes, ids, options.limits));
    } else if (raw.status == Status::ok && compact && type == MessageType::write) {
      r.body = to_json(compact::decode_write_response(bytes, ids, options.limits));
    } else {
      r.body = parse_json_body(bytes, options.limits, 0);
    }
  } catch (const std::exception&) {
    r.status = Status::bad_request;
    r.body = Json{{"message", "unparsable response body"}};
  }
  co_return r;
}

// The tail READ and WRITE share: send the encoded body, turn an ERROR into its message, and decode
// an OK body with `decode` into one entry per id (anything else: "unparsable response body").
// `ids` and what `decode` refers to belong to the caller's frame, which awaits this to the end.
template <class Reply, class Decode>
awaitable<Reply> Client::Impl::typed_exchange(MessageType type, std::string text,
                                              const std::vector<std::string>& ids, Decode decode) {
  auto self = shared_from_this();
  Reply reply;
  RawResponse raw = co_await request_raw(type, std::move(text));
  reply.status = raw.status;
  if (raw.status != Status::ok) {
    reply.message = error_message(raw.body, options.limits);
    co_return reply;
  }
  try {
    reply.values = decode(ByteView(raw.body));
    if (reply.values.size() != ids.size()) throw std::invalid_argument("entry count");
  } catch (const std::exception&) {
    reply = Reply{Status::bad_request, "unparsable response body", {}};
  }
  co_return reply;
}

namespace {

template <class Reply>
Reply not_sent(const std::exception& e) {
  return Reply{Status::bad_request, std::string("request not sent: ") + e.what(), {}};
}

}  // namespace

awaitable<ReadReply> Client::Impl::read_values(std::vector<std::string> ids) {
  const bool compact = encoding == BodyEncoding::compact;
  std::string text;
  try {
    if (compact) {
      compact::encode_read_request(ids, text);
    } else {
      text = to_json_text(Json{{"ids", ids}});
    }
  } catch (const std::exception& e) {
    co_return not_sent<ReadReply>(e);
  }
  co_return co_await typed_exchange<ReadReply>(
      MessageType::read, std::move(text), ids, [&](ByteView bytes) {
        return compact ? compact::decode_read_response(bytes, ids, options.limits)
                       : readings_of(parse_json_body(bytes, options.limits, 0));
      });
}

awaitable<WriteReply> Client::Impl::write_values(
    std::vector<std::pair<std::string, Value>> values) {
  const bool compact = encoding == BodyEncoding::compact;
  std::string text;
  try {
    if (compact) {
      compact::encode_write_request(values, text);
    } else {
      Json list = Json::array();
      for (const auto& [id, v] : values) {
        if (std::holds_alternative<std::monostate>(v))
          throw std::invalid_argument("a value to write is missing");
        list.push_back(Json{{"id", id}, {"value", to_json(v)}});
      }
      text = to_json_text(Json{{"values", std::move(list)}});
    }
  } catch (const std::exception& e) {
    co_return not_sent<WriteReply>(e);
  }
  std::vector<std::string> ids;
  ids.reserve(values.size());
  for (const auto& v : values) ids.push_back(v.first);
  co_return co_await typed_exchange<WriteReply>(
      MessageType::write, std::move(text), ids, [&](ByteView bytes) {
        return compact ? compact::decode_write_response(bytes, ids, options.limits)
                       : outcomes_of(parse_json_body(bytes, options.limits, 0));
      });
}

}  // namespace pqot::srmcp
