// SRMCP v2 client. Section numbers refer to docs/srmcp.md.
#include "pqot/srmcp/client.hpp"

#include <future>
#include <set>
#include <thread>

#include "endpoint.hpp"
#include "pqot/srmcp/json_text.hpp"
#include "pqot/channel/tls_resumption.hpp"
#include "pqot/common/byte_io.hpp"
#include "pqot/common/printable.hpp"
#include "pqot/crypto/error.hpp"
#include "pqot/crypto/kem.hpp"
#include "pqot/crypto/random.hpp"

namespace pqot::srmcp {

using asio::awaitable;
using asio::use_awaitable;

struct Client::Impl : std::enable_shared_from_this<Client::Impl> {
  // The client's own io_context in blocking mode. First member, hence destroyed last: the sockets
  // and timers of the other members belong to it.
  std::unique_ptr<asio::io_context> own_io;

  Impl(asio::io_context& io_, ClientOptions options_)
      : io(io_), strand(asio::make_strand(io_)), options(std::move(options_)) {}

  // A response as it arrived: its status and body bytes (compact records or JSON text; an ERROR's
  // and a local failure's body is JSON {"message": ...}).
  struct RawResponse {
    Status status = Status::ok;
    std::string body;
  };
  struct Pending {
    explicit Pending(asio::strand<asio::io_context::executor_type>& s) : timer(s) {}
    asio::steady_timer timer;
    std::optional<RawResponse> result;
  };

  asio::io_context& io;
  asio::strand<asio::io_context::executor_type> strand;
  ClientOptions options;
  std::shared_ptr<asio::ssl::context> tls;
  std::optional<Endpoint> endpoint;
  std::optional<Key> link_key;
  std::set<std::uint32_t> used_link_ids;  // one entry per link ever offered in this session
  SessionInfo session;  // written before connect() returns, read-only afterwards
  std::atomic<std::uint64_t> rotations{0};
  std::atomic<std::uint64_t> link_failures{0};
  // §7: the newest ticket of this session's control connection, offered on each data link.
  std::shared_ptr<channel::TicketSlot> tickets = channel::TicketSlot::create();
  std::atomic<std::uint64_t> links_resumed{0};
  std::atomic<std::uint64_t> links_full{0};
  std::uint32_t timestamp_window_ms = 30000;  // from SERVER_HELLO (§10)
  std::map<std::uint32_t, std::shared_ptr<Pending>> pending;
  std::uint32_t next_tid = 1;
  std::function<void(const Json&)> notification_handler;
  std::function<void(const Notification&)> notification_values_handler;
  BodyEncoding encoding = BodyEncoding::json;  // chosen by the server (§4)
  bool connected = false;
  bool closed = false;

  // Blocking mode only (own_io is declared first, below, so that it is destroyed last).
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::thread thread;
  std::future<void> thread_done;
  std::shared_ptr<asio::steady_timer> rotation_timer;

  // `control`: the session's control connection (watched for tickets, never resumed); otherwise a
  // data link, which offers the ticket held.
  awaitable<std::shared_ptr<FramedStream>> open_tls(std::uint16_t port, bool control);
  awaitable<void> handshake(std::shared_ptr<Link> link0);
  awaitable<void> open_data_link();
  awaitable<void> open_data_links(unsigned count);
  awaitable<void> rotate_links();
  awaitable<void> read_loop(std::shared_ptr<Link> link);
  void deliver(Message m);
  // (owns body: it outlives the caller's). `on`: send on this link rather than a random one.
  awaitable<RawResponse> request_raw(MessageType type, std::string body, std::shared_ptr<Link> on = nullptr);
  awaitable<Response> request(MessageType type, Json body, std::shared_ptr<Link> on = nullptr);
  awaitable<ReadReply> read_values(std::vector<std::string> ids);
  awaitable<WriteReply> write_values(std::vector<std::pair<std::string, Value>> values);
  awaitable<void> connect();  // the bodies of the public coroutines, on the strand
  awaitable<void> close();
  void shutdown();

  template <class T>
  T run_blocking(awaitable<T> op) {
    if (!own_io) throw std::logic_error("blocking calls need a Client constructed without an io_context");
    return asio::co_spawn(strand, std::move(op), asio::use_future).get();
  }
};

namespace {

[[noreturn]] void fail(Status s, const std::string& what) { throw ClientError(s, what); }

Response expect_ok(Response r, std::string_view what) {
  if (r.status != Status::ok) {
    fail(r.status, std::string(what) + " failed: " + status_name(r.status) +
                       (r.body.contains("message") ? " (" + r.body["message"].get<std::string>() + ")" : ""));
  }
  return r;
}

// HELLO_REFUSED (§4): the server shares no body encoding or no KEM with this client.
[[noreturn]] void refused(const HelloRefused& r, const ClientHello& hello) {
  if (r.reason == HelloRefused::Reason::no_common_version) {
    fail(Status::wrong_phase, "the server refused the hello: no common body encoding (this client offers " +
                                  hello_list_text(hello.versions) + "; the server accepts " + hello_list_text(r.versions) + ")");
  }
  fail(Status::wrong_phase, "the server refused the hello: no common KEM (this client offers " + hello_list_text(hello.kems) +
                                "; the server accepts " + hello_list_text(r.kems) + ")");
}

std::string message_text(std::string_view message) {
  std::string text = "{\"message\":";
  append_json_string(text, common::printable(message));
  text += '}';
  return text;
}

// The message of an ERROR body ({"message": ...}), or a description of a body that is not one.
std::string error_message(const std::string& body, const Limits& limits) {
  try {
    const Json j = parse_json_body(crypto::as_bytes(body), limits, 0);
    if (j.is_object() && j.contains("message") && j["message"].is_string()) return j["message"].get<std::string>();
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
    if (std::holds_alternative<std::monostate>(value)) throw std::invalid_argument("a value is null");
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

// TCP connect and TLS handshake to host:port, bounded by the connect timeout.
awaitable<std::shared_ptr<FramedStream>> Client::Impl::open_tls(std::uint16_t port, bool control) {
  Tcp::socket socket(strand);
  auto stream = std::make_shared<FramedStream>(TlsSocket(std::move(socket), *tls), options.limits,
                                               std::chrono::milliseconds(10000));
  stream->start_watchdog();
  stream->arm(options.connect_timeout);
  // A failure closes the stream, which ends its watchdog: nothing is left running.
  try {
    asio::error_code literal_error;
    const auto address = asio::ip::make_address(options.host, literal_error);
    if (!literal_error) {
      // An IP literal needs no resolver (which would start a thread for getaddrinfo).
      co_await stream->tls().lowest_layer().async_connect(Tcp::endpoint(address, port), use_awaitable);
    } else {
      Tcp::resolver resolver(strand);
      const auto endpoints = co_await resolver.async_resolve(options.host, std::to_string(port), use_awaitable);
      co_await asio::async_connect(stream->tls().lowest_layer(), endpoints, use_awaitable);
    }
    stream->tls().lowest_layer().set_option(Tcp::no_delay(true));
    channel::set_server_identity(stream->tls(), options.host);
    // §7: the control connection always gets a full handshake (fresh certificate checks) and
    // brings the session's ticket, ahead of SERVER_HELLO; a data link offers it.
    if (control) {
      tickets->watch(stream->tls().native_handle());
    } else {
      (void)tickets->offer(stream->tls().native_handle());  // none held (or expired): a full handshake
    }
    co_await stream->tls().async_handshake(asio::ssl::stream_base::client, use_awaitable);
    if (!control) ++(channel::resumed(stream->tls().native_handle()) ? links_resumed : links_full);
  } catch (...) {
    stream->close();
    throw;
  }
  co_return stream;
}

// §4: CLIENT_HELLO (again after HELLO_RETRY), SERVER_HELLO, keys, SESSION_READY.
awaitable<void> Client::Impl::handshake(std::shared_ptr<Link> link0) {
  FramedStream& control = *link0->stream;
  KemId kem_id = options.kems.front();
  ClientHello hello;
  hello.kems = options.kems;
  hello.versions.clear();
  for (BodyEncoding e : options.encodings) hello.versions.push_back(static_cast<std::uint8_t>(e));
  crypto::KemKeyPair kp;
  Bytes hello_body;
  RawFrame frame;
  for (int attempt = 0; attempt < 2; ++attempt) {
    hello.kem = kem_id;
    kp = crypto::kem_by_name(*kem_name(kem_id)).generate_keypair();
    hello.ek = kp.public_key;
    crypto::random_bytes(hello.client_random);
    hello_body = encode(hello);
    control.send(plain_frame(FrameType::client_hello, hello_body));
    frame = co_await control.read_frame();
    if (frame.header.type != FrameType::hello_retry || attempt == 1) break;
    kem_id = parse_hello_retry(frame.body);
    if (std::find(options.kems.begin(), options.kems.end(), kem_id) == options.kems.end()) {
      fail(Status::internal, "server asked for a KEM that was not offered");
    }
  }
  if (frame.header.type == FrameType::hello_refused) refused(parse_hello_refused(frame.body), hello);
  if (frame.header.type != FrameType::server_hello) fail(Status::internal, "handshake: no SERVER_HELLO");
  const ServerHello sh = parse_server_hello(frame.body);
  if (sh.kem != kem_id) fail(Status::internal, "handshake: server answered with another KEM");
  const auto chosen = encoding_of_version(sh.version);
  if (!chosen || std::find(options.encodings.begin(), options.encodings.end(), *chosen) == options.encodings.end()) {
    fail(Status::internal, "handshake: server chose protocol version " + std::to_string(sh.version) +
                               ", which this client did not offer");
  }
  encoding = *chosen;
  const crypto::SecretBytes ss = crypto::kem_by_name(*kem_name(kem_id)).decapsulate(kp.secret_key, sh.ct);
  const auto th = transcript_hash(hello_body, frame.body);
  Bytes exporter = channel::tls_exporter(control.tls(), "EXPORTER-SRMCP-v2");
  const SessionKeys keys = derive_session_keys(exporter, ss, th);
  crypto::secure_wipe(exporter);
  // §4: the announced max_frame_body bounds the frames of both directions on every link.
  if (sh.max_frame_body < 1024 || sh.max_frame_body > kMaxFrameBodyCeiling) {
    fail(Status::internal, "handshake: server announced max_frame_body " + std::to_string(sh.max_frame_body));
  }
  options.limits.max_frame_body = sh.max_frame_body;
  control.set_limits(options.limits);
  timestamp_window_ms = sh.timestamp_window_ms;
  endpoint.emplace(keys, Direction::client_to_server, options.limits, sh.key_update_messages,
                   std::chrono::seconds(sh.key_update_seconds));
  link_key = keys.link;
  session.session_id = sh.session_id;
  session.kem = kem_id;
  session.encoding = encoding;

  // SESSION_READY confirms that both sides hold the same keys.
  frame = co_await control.read_frame();
  auto ready = endpoint->on_frame(*link0, frame);
  if (!ready || ready->header.type != MessageType::session_ready) fail(Status::internal, "handshake: no SESSION_READY");
  const Json info = parse_json_body(ready->body, options.limits, 0);
  session.identity = info.value("identity", "");
  endpoint->add_link(link0);
}

// §7: LINK_REQUEST, connect to the offered port, LINK_BIND, LINK_READY.
awaitable<void> Client::Impl::open_data_link() {
  Response offer = expect_ok(co_await request(MessageType::link_request, Json::object()), "LINK_REQUEST");
  const auto link_id = offer.body.at("link_id").get<std::uint32_t>();
  // §6, §7: ids are assigned 1, 2, 3, ... below 2^31 and never reused; another would reuse a nonce.
  // (Offers may be answered out of order while links open concurrently, hence a set.)
  if (link_id == 0 || link_id > 0x7fffffffu || !used_link_ids.insert(link_id).second) {
    fail(Status::bad_request, "LINK_OFFER: link_id not new");
  }
  const auto port = offer.body.at("port").get<std::uint16_t>();
  const Bytes token = crypto::from_hex(offer.body.at("token").get<std::string>());
  auto stream = co_await open_tls(port, false);
  const Bytes exporter = channel::tls_exporter(stream->tls(), "EXPORTER-SRMCP-v2-link");
  LinkBind bind{session.session_id, link_bind_proof(*link_key, token, link_id, exporter)};
  crypto::Aes256Gcm bind_key(link_key->span());
  stream->send(seal_frame(bind_key, Direction::client_to_server, FrameHeader{FrameType::link_bind, link_id, 0, 0},
                          encode(bind)));
  const RawFrame ready = co_await stream->read_frame();
  auto link = std::make_shared<Link>();
  link->id = link_id;
  link->stream = stream;
  link->send_seq = 1;
  const Bytes plain = endpoint->open_frame_on(*link, ready, FrameType::link_ready);
  common::ByteReader r(plain);
  if (r.u64() != session.session_id) fail(Status::internal, "LINK_READY for another session");
  stream->disarm();
  endpoint->add_link(link);
  asio::co_spawn(strand, read_loop(link), asio::detached);
}

// §7 rotation: every interval, attach a new data link, then retire the oldest one. The old link is
// marked draining at once (no new requests on it); the server answers LINK_CLOSE, flushes and
// closes it, and its read loop here detaches it after reading whatever was still in flight.
awaitable<void> Client::Impl::rotate_links() {
  auto self = shared_from_this();
  rotation_timer = std::make_shared<asio::steady_timer>(strand);
  auto timer = rotation_timer;
  while (!closed) {
    timer->expires_after(options.rotate_interval);
    asio::error_code ec;
    co_await timer->async_wait(asio::redirect_error(use_awaitable, ec));
    if (closed) break;
    std::shared_ptr<Link> oldest;
    std::size_t data_links = 0;
    for (const auto& [id, link] : endpoint->links()) {
      if (id == 0 || link->draining) continue;
      ++data_links;
      if (!oldest || link->attached < oldest->attached) oldest = link;
    }
    try {
      co_await open_data_link();
    } catch (const std::exception&) {
      ++link_failures;
      continue;  // keep the old links; try again next interval
    }
    // Fewer links than wanted (one failed earlier): this one tops up instead of replacing.
    if (!oldest || closed || data_links < options.links) continue;
    // §7.4: LINK_CLOSE travels on the link it closes, as the last frame sent there, so every
    // request sent on it before is read by the server first; the server closes it after that.
    oldest->draining = true;
    Json body;  // (not a braced initializer: GCC 12 mis-compiles those inside coroutines)
    body["link_id"] = oldest->id;
    (void)co_await request(MessageType::link_close, body, oldest);
    ++rotations;
  }
}

// Opens `count` links at once: their TLS handshakes overlap instead of adding up.
awaitable<void> Client::Impl::open_data_links(unsigned count) {
  if (count == 0) co_return;
  auto self = shared_from_this();
  auto done = std::make_shared<asio::steady_timer>(strand, std::chrono::steady_clock::time_point::max());
  auto remaining = std::make_shared<unsigned>(count);
  auto failure = std::make_shared<std::exception_ptr>();
  for (unsigned i = 0; i < count; ++i) {
    asio::co_spawn(strand, open_data_link(), [self, done, remaining, failure](std::exception_ptr e) {
      if (e) {
        ++self->link_failures;
        if (!*failure) *failure = e;
      }
      if (--*remaining == 0) done->cancel();
    });
  }
  asio::error_code ec;
  co_await done->async_wait(asio::redirect_error(use_awaitable, ec));
  // A data link that could not be opened (its offer burned, its port unreachable) does not fail
  // the session: it carries on with the links it got, and rotation tops up later (§7).
  if (*failure && closed) std::rethrow_exception(*failure);
}

awaitable<void> Client::Impl::read_loop(std::shared_ptr<Link> link) {
  auto self = shared_from_this();
  while (!closed && !link->stream->closed()) {
    RawFrame frame;
    try {
      frame = co_await link->stream->read_frame();
    } catch (const std::exception&) {
      break;
    }
    try {
      if (auto m = endpoint->on_frame(*link, frame)) deliver(std::move(*m));
    } catch (const ProtocolError& e) {
      if (e.action() == Action::close) break;
    }
    endpoint->expire_partial(options.deadline);
  }
  if (closed) co_return;
  if (link->id == 0) {
    // The session ends with its control connection: fail everything outstanding.
    shutdown();
  } else {
    endpoint->remove_link(link->id);
  }
}

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
    it->second->result = RawResponse{Status::stale_timestamp, message_text("response timestamp differs from this clock by " +
                                                                             std::to_string(skew) + " s")};
  } else {
    it->second->result = RawResponse{h.status, std::string(m.body.begin(), m.body.end())};
  }
  it->second->timer.cancel();
}

awaitable<Client::Impl::RawResponse> Client::Impl::request_raw(MessageType type, std::string body,
                                                               std::shared_ptr<Link> on) {
  auto self = shared_from_this();
  if (closed || !endpoint) co_return RawResponse{Status::internal, message_text("not connected")};
  std::uint32_t tid = next_tid++;
  if (tid == 0) tid = next_tid++;
  auto p = std::make_shared<Pending>(strand);
  p->timer.expires_after(options.deadline);
  pending[tid] = p;
  try {
    if (on) {
      endpoint->send_on(*on, MessageHeader{type, false, Status::ok, tid}, crypto::as_bytes(body));
    } else {
      endpoint->send(MessageHeader{type, false, Status::ok, tid}, crypto::as_bytes(body), 1);
    }
  } catch (const ProtocolError& e) {
    pending.erase(tid);
    co_return RawResponse{e.status(), message_text(e.what())};
  }
  asio::error_code ec;
  co_await p->timer.async_wait(asio::redirect_error(use_awaitable, ec));
  pending.erase(tid);
  if (p->result) co_return std::move(*p->result);
  if (closed) co_return RawResponse{Status::internal, message_text("connection closed")};
  co_return RawResponse{Status::timeout,
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
    co_return Response{Status::bad_request, Json{{"message", std::string("request not sent: ") + e.what()}}};
  }
  RawResponse raw = co_await request_raw(type, std::move(text), std::move(on));
  Response r;
  r.status = raw.status;
  try {
    const ByteView bytes = crypto::as_bytes(raw.body);
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

awaitable<ReadReply> Client::Impl::read_values(std::vector<std::string> ids) {
  auto self = shared_from_this();
  const bool compact = encoding == BodyEncoding::compact;
  std::string text;
  ReadReply reply;
  try {
    if (compact) {
      compact::encode_read_request(ids, text);
    } else {
      text = to_json_text(Json{{"ids", ids}});
    }
  } catch (const std::exception& e) {
    reply.status = Status::bad_request;
    reply.message = std::string("request not sent: ") + e.what();
    co_return reply;
  }
  RawResponse raw = co_await request_raw(MessageType::read, std::move(text));
  reply.status = raw.status;
  if (raw.status != Status::ok) {
    reply.message = error_message(raw.body, options.limits);
    co_return reply;
  }
  try {
    const ByteView bytes = crypto::as_bytes(raw.body);
    reply.values = compact ? compact::decode_read_response(bytes, ids, options.limits)
                           : readings_of(parse_json_body(bytes, options.limits, 0));
    if (reply.values.size() != ids.size()) throw std::invalid_argument("entry count");
  } catch (const std::exception&) {
    reply = ReadReply{Status::bad_request, "unparsable response body", {}};
  }
  co_return reply;
}

awaitable<WriteReply> Client::Impl::write_values(std::vector<std::pair<std::string, Value>> values) {
  auto self = shared_from_this();
  const bool compact = encoding == BodyEncoding::compact;
  std::string text;
  WriteReply reply;
  std::vector<std::string> ids;
  try {
    if (compact) {
      compact::encode_write_request(values, text);
    } else {
      Json list = Json::array();
      for (const auto& [id, v] : values) {
        if (std::holds_alternative<std::monostate>(v)) throw std::invalid_argument("a value to write is missing");
        list.push_back(Json{{"id", id}, {"value", to_json(v)}});
      }
      text = to_json_text(Json{{"values", std::move(list)}});
    }
  } catch (const std::exception& e) {
    reply.status = Status::bad_request;
    reply.message = std::string("request not sent: ") + e.what();
    co_return reply;
  }
  for (const auto& v : values) ids.push_back(v.first);
  RawResponse raw = co_await request_raw(MessageType::write, std::move(text));
  reply.status = raw.status;
  if (raw.status != Status::ok) {
    reply.message = error_message(raw.body, options.limits);
    co_return reply;
  }
  try {
    const ByteView bytes = crypto::as_bytes(raw.body);
    reply.values = compact ? compact::decode_write_response(bytes, ids, options.limits)
                           : outcomes_of(parse_json_body(bytes, options.limits, 0));
    if (reply.values.size() != ids.size()) throw std::invalid_argument("entry count");
  } catch (const std::exception&) {
    reply = WriteReply{Status::bad_request, "unparsable response body", {}};
  }
  co_return reply;
}

void Client::Impl::shutdown() {
  if (closed) return;
  closed = true;
  if (rotation_timer) rotation_timer->cancel();
  if (endpoint) endpoint->close_all();
  for (auto& [tid, p] : pending) p->timer.cancel();
}

// ---- Client --------------------------------------------------------------------------------------

Client::Client(ClientOptions options) {
  auto io = std::make_unique<asio::io_context>();
  impl_ = std::make_shared<Impl>(*io, std::move(options));
  impl_->own_io = std::move(io);
  impl_->work.emplace(impl_->own_io->get_executor());
  std::promise<void> done;
  impl_->thread_done = done.get_future();
  impl_->thread = std::thread([io = impl_->own_io.get(), done = std::move(done)]() mutable {
    io->run();
    done.set_value();
  });
}

Client::Client(asio::io_context& io, ClientOptions options) : impl_(std::make_shared<Impl>(io, std::move(options))) {}

Client::~Client() {
  if (impl_->own_io) {
    asio::post(impl_->strand, [impl = impl_] { impl->shutdown(); });
    // Let the closed sockets and cancelled timers finish their coroutines (they hold the Impl),
    // so that nothing is left behind; stop hard only if that takes unreasonably long.
    impl_->work.reset();
    if (impl_->thread_done.wait_for(std::chrono::seconds(2)) != std::future_status::ready) impl_->own_io->stop();
    if (impl_->thread.joinable()) impl_->thread.join();
  }
}

// The public coroutines run their body as a separate coroutine on the client's strand and await it.
// (`co_await asio::dispatch(strand)` would not do: a coroutine resumes on the executor it was
// spawned with, so after its first suspension it would leave the strand, which is a data race
// when the caller's io_context has several threads.)
awaitable<void> Client::async_connect() {
  auto impl = impl_;
  co_await asio::co_spawn(impl->strand, impl->connect(), use_awaitable);
}

awaitable<void> Client::Impl::connect() {
  auto impl = shared_from_this();
  if (impl->options.kems.empty()) fail(Status::internal, "no KEM to offer");
  if (impl->options.encodings.empty() || impl->options.encodings.size() > 8) {
    fail(Status::internal, "offer 1..8 body encodings");
  }
  if (!impl->tls) {
    impl->tls = impl->options.tls_context ? impl->options.tls_context
                                          : std::make_shared<asio::ssl::context>(channel::make_client_tls(impl->options.tls));
  }
  auto link0 = std::make_shared<Link>();
  link0->id = 0;
  link0->stream = co_await impl->open_tls(impl->options.port, true);
  try {
    co_await impl->handshake(link0);
  } catch (...) {
    link0->stream->close();  // (ends its watchdog: a failed connect leaves nothing running)
    throw;
  }
  link0->stream->disarm();
  impl->connected = true;
  asio::co_spawn(impl->strand, impl->read_loop(link0), asio::detached);
  co_await impl->open_data_links(impl->options.links);
  impl->session.data_links = impl->endpoint->link_count() - 1;
  if (impl->options.rotate_interval.count() > 0 && impl->options.links > 0) {
    asio::co_spawn(impl->strand, impl->rotate_links(), asio::detached);
  }
}

awaitable<Response> Client::async_request(MessageType type, Json body) {
  auto impl = impl_;
  co_return co_await asio::co_spawn(impl->strand, impl->request(type, std::move(body)), use_awaitable);
}

awaitable<ReadReply> Client::async_read(std::vector<std::string> ids) {
  auto impl = impl_;
  co_return co_await asio::co_spawn(impl->strand, impl->read_values(std::move(ids)), use_awaitable);
}

awaitable<WriteReply> Client::async_write(std::vector<std::pair<std::string, Value>> values) {
  auto impl = impl_;
  co_return co_await asio::co_spawn(impl->strand, impl->write_values(std::move(values)), use_awaitable);
}

awaitable<void> Client::async_close() {
  auto impl = impl_;
  co_await asio::co_spawn(impl->strand, impl->close(), use_awaitable);
}

awaitable<void> Client::Impl::close() {
  auto self = shared_from_this();
  if (!closed && connected) (void)co_await request(MessageType::close, Json::object());
  shutdown();
}

void Client::connect() {
  try {
    impl_->run_blocking(impl_->connect());
  } catch (const ClientError&) {
    throw;
  } catch (const std::exception& e) {
    throw ClientError(Status::internal, std::string("connect to ") + impl_->options.host + ":" +
                                            std::to_string(impl_->options.port) + " failed: " + e.what());
  }
}

Response Client::request(MessageType type, const Json& body) { return impl_->run_blocking(impl_->request(type, body)); }

Json Client::browse(const std::string& root, int depth) {
  Json body = Json::object();
  if (!root.empty()) body["root"] = root;
  if (depth >= 0) body["depth"] = depth;
  return expect_ok(request(MessageType::browse, body), "BROWSE").body;
}

Json Client::read(const std::vector<std::string>& ids) {
  return expect_ok(request(MessageType::read, Json{{"ids", ids}}), "READ").body;
}

Json Client::write(const std::vector<std::pair<std::string, Json>>& values) {
  Json list = Json::array();
  for (const auto& [id, v] : values) list.push_back(Json{{"id", id}, {"value", v}});
  return expect_ok(request(MessageType::write, Json{{"values", list}}), "WRITE").body;
}

std::vector<NodeReading> Client::read_values(const std::vector<std::string>& ids) {
  ReadReply r = impl_->run_blocking(impl_->read_values(ids));
  if (r.status != Status::ok) fail(r.status, "READ failed: " + status_name(r.status) + " (" + r.message + ")");
  return std::move(r.values);
}

std::vector<WriteOutcome> Client::write_values(const std::vector<std::pair<std::string, Value>>& values) {
  WriteReply r = impl_->run_blocking(impl_->write_values(values));
  if (r.status != Status::ok) fail(r.status, "WRITE failed: " + status_name(r.status) + " (" + r.message + ")");
  return std::move(r.values);
}

std::uint64_t Client::subscribe(const std::vector<std::string>& ids, std::chrono::milliseconds interval) {
  const Json body{{"ids", ids}, {"interval_ms", interval.count()}};
  return expect_ok(request(MessageType::subscribe, body), "SUBSCRIBE").body.at("subscription").get<std::uint64_t>();
}

void Client::unsubscribe(std::uint64_t subscription) {
  expect_ok(request(MessageType::unsubscribe, Json{{"subscription", subscription}}), "UNSUBSCRIBE");
}

Json Client::ping() { return expect_ok(request(MessageType::ping, Json::object()), "PING").body; }

void Client::close() { impl_->run_blocking(impl_->close()); }

void Client::on_notification(std::function<void(const Json&)> handler) {
  asio::post(impl_->strand, [impl = impl_, h = std::move(handler)]() mutable { impl->notification_handler = std::move(h); });
}

void Client::on_notification_values(std::function<void(const Notification&)> handler) {
  asio::post(impl_->strand,
             [impl = impl_, h = std::move(handler)]() mutable { impl->notification_values_handler = std::move(h); });
}

SessionInfo Client::info() const {
  SessionInfo i = impl_->session;
  i.rotations = impl_->rotations;
  i.link_failures = impl_->link_failures;
  i.links_resumed = impl_->links_resumed;
  i.links_full_handshake = impl_->links_full;
  return i;
}

}  // namespace pqot::srmcp
