// The request services of a server session (§9): checks every request passes (timestamp, phase),
// then BROWSE, READ, WRITE, SUBSCRIBE, UNSUBSCRIBE, PING, CLOSE, LINK_REQUEST and LINK_CLOSE.
// Runs on the session's strand.
#include "pqot/srmcp/compact.hpp"
#include "pqot/srmcp/json_text.hpp"
#include "server_impl.hpp"

namespace pqot::srmcp {

namespace {
// A JSON request body: it must be an object (§9.1).
Json json_object_body(ByteView raw, const Limits& limits, std::uint32_t tid) {
  Json body = parse_json_body(raw, limits, tid);
  if (!body.is_object()) throw ProtocolError(Action::reply, Status::bad_request, "body must be a JSON object", tid);
  return body;
}

// The ERROR body (§9): {"message": text}.
std::string error_body(std::string_view message) {
  std::string text = "{\"message\":";
  append_json_string(text, message);
  text += '}';
  return text;
}
}  // namespace

void ServerSession::handle(Link& link, const Message& m) {
  if (closing_) return;  // after CLOSE (§9) nothing more is answered
  const MessageHeader& h = m.header;
  const auto arrived = Clock::now();
  ++server_->requests;
  const std::uint32_t skew = clock_skew_s(h.timestamp_s);
  if (outside_window(skew, server_->config.timestamp_window_ms)) {
    reply_error(h.tid, Status::stale_timestamp, "timestamp differs from the server clock by " + std::to_string(skew) + " s");
    return;
  }
  if (h.response || h.tid == 0) {
    reply_error(h.tid, Status::wrong_phase, "not a request");
    return;
  }
  try {
    scratch_.reply_body.clear();
    if (dispatch(link, h, m.body, arrived, scratch_.reply_body)) {
      reply_text(h.tid, h.type, Status::ok, scratch_.reply_body);
      server_->count_request(h.type, arrived);
    }
    if (h.type == MessageType::close) close_gracefully();
  } catch (const ProtocolError& e) {
    reply_error(h.tid, e.status(), e.what());
    server_->count_request(h.type, arrived);
  } catch (const Json::exception& e) {
    // (e.what() may quote the offending bytes: reply_error makes them printable.)
    reply_error(h.tid, Status::bad_request, std::string("bad request body: ") + e.what());
    server_->count_request(h.type, arrived);
  }
  // Whatever the request did, even if it failed halfway, the scratch buffers keep only their
  // usual size, and a LINK_REQUEST's reply (it holds the link's bind token) is wiped.
  scratch_.release_excess(h.type == MessageType::link_request);
}

NodeStore& ServerSession::nodes() {
  const auto generation = server_->nodes_generation.load(std::memory_order_acquire);
  if (generation != nodes_generation_) {
    nodes_ = server_->nodes();
    nodes_generation_ = generation;
  }
  return *nodes_;
}

// Where a backend's late answer goes: back onto the session's strand, as the reply to `tid`. The
// `ops` node operations it stood for stop counting against max_backend_ops.
NodeStore::TextDone ServerSession::deferred_reply(std::uint32_t tid, MessageType type, Clock::time_point arrived,
                                                  std::size_t ops) {
  backend_ops_ += ops;
  return [self = shared_from_this(), tid, type, arrived, ops](std::string text) {
    asio::post(self->strand_, [self, tid, type, arrived, ops, text = std::move(text)] {
      self->backend_ops_ -= std::min(self->backend_ops_, ops);
      self->reply_text(tid, type, Status::ok, text);
      self->server_->count_request(type, arrived);
      self->wake_readers();
    });
  };
}

bool ServerSession::dispatch(Link& link, const MessageHeader& h, ByteView raw, Clock::time_point arrived,
                             std::string& out) {
  const Limits& limits = endpoint_->limits();
  auto& nodes = this->nodes();
  const bool compact = has_compact_body(encoding_, h.type);
  // The hot paths: READ and WRITE bodies are written directly (JSON text or compact records),
  // without a Json value in between; the operations count against max_backend_ops only while a
  // backend is waited for (deferred_reply, made only then).
  if (h.type == MessageType::read) {
    if (compact) {
      compact::decode_read_request_into(raw, limits, h.tid, scratch_.read_ids);
    } else {
      scratch_.read_ids = decode_read(json_object_body(raw, limits, h.tid), limits, h.tid).ids;
    }
    const std::size_t ops = scratch_.read_ids.size();
    bool waits = false;
    const bool now = nodes.read_body(scratch_.read_ids, principal_, encoding_, out, [&] {
      waits = true;
      return deferred_reply(h.tid, h.type, arrived, ops);
    });
    if (now && waits) backend_ops_ -= ops;
    return now;
  }
  if (h.type == MessageType::write) {
    const auto values = compact ? compact::decode_write_request(raw, limits, h.tid).values
                                : decode_write(json_object_body(raw, limits, h.tid), limits, h.tid).values;
    bool waits = false;
    const bool now = nodes.write_body(values, principal_, encoding_, out, [&] {
      waits = true;
      return deferred_reply(h.tid, h.type, arrived, values.size());
    });
    if (now && waits) backend_ops_ -= values.size();
    return now;
  }
  // CLOSE's body is not read (§9.1).
  const Json body = h.type == MessageType::close ? Json::object() : json_object_body(raw, limits, h.tid);
  switch (h.type) {
    case MessageType::browse: {
      const auto r = decode_browse(body, h.tid);
      out = to_json_text(nodes.browse(r.root, r.depth, principal_));
      return true;
    }
    case MessageType::subscribe:
      out = to_json_text(subscribe(decode_subscribe(body, limits, h.tid)));
      return true;
    case MessageType::unsubscribe:
      unsubscribe(decode_unsubscribe(body, h.tid), h.tid);
      out = "{}";
      return true;
    case MessageType::ping:
      out = to_json_text(Json{{"server_time_ms", std::chrono::duration_cast<std::chrono::milliseconds>(
                                                     std::chrono::system_clock::now().time_since_epoch())
                                                     .count()}});
      return true;
    case MessageType::close:
      out = "{}";
      return true;
    case MessageType::link_request:
      out = to_json_text(open_link_offer(h.tid));
      return true;
    case MessageType::link_close:
      out = to_json_text(close_link(link, decode_link_close(body, h.tid), h.tid));
      return true;
    default:
      throw ProtocolError(Action::reply, Status::wrong_phase,
                          "message type " + std::to_string(static_cast<int>(h.type)) + " is not a request", h.tid);
  }
}

// An ERROR reply (§9). The message may quote what the peer sent: only its printable form goes out,
// so that the body is always valid JSON (and the text safe to show).
void ServerSession::reply_error(std::uint32_t tid, Status status, std::string_view message) {
  reply_text(tid, MessageType::error, status, error_body(common::printable(message)));
}

void ServerSession::reply_text(std::uint32_t tid, MessageType type, Status status, std::string_view text) {
  if (closed_ || !endpoint_ || endpoint_->usable_links() == 0) return;
  if (status != Status::ok) ++server_->errors;
  server_->count_response(status);
  MessageHeader h{type, true, status, tid};
  try {
    endpoint_->send(h, crypto::as_bytes(text), server_->config.limits.max_segments);
  } catch (const ProtocolError& e) {
    if (e.action() == Action::close) {
      close();
      return;
    }
    // The response does not fit (§12): say so instead.
    const std::string msg = error_body(e.what());
    endpoint_->send(MessageHeader{MessageType::error, true, e.status(), tid}, crypto::as_bytes(msg));
  }
}

}  // namespace pqot::srmcp
