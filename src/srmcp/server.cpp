// SRMCP v2 server: control connections, handshake, data-link offers and request handling.
// Section numbers refer to docs/srmcp.md.
#include "pqot/srmcp/server.hpp"

#include <spdlog/spdlog.h>

#include <mutex>
#include <set>

#include "endpoint.hpp"
#include "pqot/srmcp/json_text.hpp"
#include "pqot/common/byte_io.hpp"
#include "pqot/crypto/error.hpp"
#include "pqot/crypto/kem.hpp"
#include "pqot/crypto/random.hpp"
#include "pqot/srmcp/tls.hpp"

namespace pqot::srmcp {

namespace {

using Clock = std::chrono::steady_clock;
using asio::awaitable;
using asio::use_awaitable;

constexpr auto kServerReassemblyAge = std::chrono::seconds(5);  // §8.2

std::string hex64(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::uint64_t random_u64() {
  std::uint64_t v = 0;
  while (v == 0) crypto::random_bytes({reinterpret_cast<std::uint8_t*>(&v), sizeof(v)});
  return v;
}

Json status_body(const std::string& message) { return Json{{"message", message}}; }

// Request types with their own counters and latency histograms (ServerStats::by_type).
constexpr std::array<std::pair<MessageType, const char*>, 9> kCountedTypes = {{
    {MessageType::read, "read"},
    {MessageType::write, "write"},
    {MessageType::browse, "browse"},
    {MessageType::subscribe, "subscribe"},
    {MessageType::unsubscribe, "unsubscribe"},
    {MessageType::ping, "ping"},
    {MessageType::close, "close"},
    {MessageType::link_request, "link_request"},
    {MessageType::link_close, "link_close"},
}};
constexpr std::size_t kTypeSlots = kCountedTypes.size() + 1;  // + "other"

std::size_t type_slot(MessageType t) {
  for (std::size_t i = 0; i < kCountedTypes.size(); ++i) {
    if (kCountedTypes[i].first == t) return i;
  }
  return kCountedTypes.size();
}

}  // namespace

class ServerSession;

struct Server::Impl : std::enable_shared_from_this<Server::Impl> {
  Impl(asio::io_context& io_, ServerConfig config_, std::shared_ptr<NodeStore> nodes_,
       std::vector<asio::io_context*> contexts_)
      : io(io_), contexts(std::move(contexts_)), config(std::move(config_)), acceptor(io_), nodes_(std::move(nodes_)) {
    if (contexts.empty()) contexts.push_back(&io);
  }

  // The node store, replaced as a whole by a reload (set_nodes). Sessions keep their copy and
  // look at the generation before each request, so the hot path takes no lock.
  std::shared_ptr<NodeStore> nodes() {
    std::lock_guard lock(nodes_mutex_);
    return nodes_;
  }
  void set_nodes(std::shared_ptr<NodeStore> n) {
    std::lock_guard lock(nodes_mutex_);
    nodes_ = std::move(n);
    nodes_generation.fetch_add(1, std::memory_order_release);
  }
  std::atomic<std::uint64_t> nodes_generation{0};

  asio::io_context& io;
  std::vector<asio::io_context*> contexts;  // sessions are spread over these, round robin
  std::size_t next_context = 0;             // used only by accept_loop
  ServerConfig config;
  std::optional<asio::ssl::context> tls;
  Tcp::acceptor acceptor;
  bool stopping = false;

  std::mutex mutex;  // guards sessions and used_ports
  std::set<std::shared_ptr<ServerSession>> sessions;
  std::set<std::uint16_t> used_ports;

  std::atomic<std::uint64_t> sessions_total{0};
  std::atomic<std::uint64_t> links_active{0};
  std::atomic<std::uint64_t> requests{0};
  std::atomic<std::uint64_t> errors{0};
  std::atomic<std::uint64_t> closed_on_error{0};
  std::atomic<std::uint32_t> pending_offers{0};
  std::array<std::atomic<std::uint64_t>, kStatusSlots> responses_by_status{};
  std::array<std::atomic<std::uint64_t>, kTypeSlots> requests_by_type{};
  std::array<LatencyHistogram, kTypeSlots> latency_by_type;

  void count_response(Status s) {
    responses_by_status[std::min<std::size_t>(static_cast<std::size_t>(s), kStatusSlots - 1)].fetch_add(
        1, std::memory_order_relaxed);
  }
  void count_request(MessageType t, Clock::time_point arrived) {
    const auto slot = type_slot(t);
    requests_by_type[slot].fetch_add(1, std::memory_order_relaxed);
    latency_by_type[slot].observe(Clock::now() - arrived);
  }

 private:
  std::mutex nodes_mutex_;
  std::shared_ptr<NodeStore> nodes_;

 public:

  awaitable<void> accept_loop();
  void forget(const std::shared_ptr<ServerSession>& s) {
    std::lock_guard lock(mutex);
    sessions.erase(s);
  }
  std::optional<std::uint16_t> reserve_port(std::mt19937_64& rng);
  std::size_t active_sessions() {
    std::lock_guard lock(mutex);
    return sessions.size();
  }
  void release_port(std::uint16_t port) {
    std::lock_guard lock(mutex);
    used_ports.erase(port);
  }
};

// One client session (§1): the control connection, its data links, subscriptions. Every member is
// used only from `strand`.
class ServerSession : public std::enable_shared_from_this<ServerSession> {
 public:
  ServerSession(std::shared_ptr<Server::Impl> server, asio::strand<asio::io_context::executor_type> strand)
      : server_(std::move(server)), strand_(std::move(strand)) {}

  awaitable<void> run(Tcp::socket socket);
  void shutdown() {
    asio::post(strand_, [self = shared_from_this()] { self->close(); });
  }

 private:
  struct Subscription {
    std::vector<std::string> ids;
    std::chrono::milliseconds interval;
    bool on_change = false;
    std::map<std::string, Json> last;
    std::shared_ptr<asio::steady_timer> timer;
  };

  awaitable<bool> handshake(Link& control);
  awaitable<void> read_loop(std::shared_ptr<Link> link);
  void handle(Link& link, Message m);
  // The response body (JSON text), or nullopt when a backend answers later (deferred_reply).
  std::optional<std::string> dispatch(const MessageHeader& h, const Json& body, Clock::time_point arrived);
  NodeStore::TextDone deferred_reply(std::uint32_t tid, MessageType type, Clock::time_point arrived);
  NodeStore& nodes();
  void reply(std::uint32_t tid, MessageType type, Status status, const Json& body);
  void reply_text(std::uint32_t tid, MessageType type, Status status, std::string_view text);
  Json open_link_offer(std::uint32_t tid);
  awaitable<void> serve_offer(std::shared_ptr<Tcp::acceptor> acceptor, std::uint16_t port, std::uint32_t link_id,
                              Bytes token);
  Json subscribe(const SubscribeRequest& request);
  awaitable<void> run_subscription(std::uint64_t id);
  void close();

  std::shared_ptr<Server::Impl> server_;
  asio::strand<asio::io_context::executor_type> strand_;
  Principal principal_;
  std::uint64_t session_id_ = 0;
  std::optional<Endpoint> endpoint_;
  std::optional<Key> link_key_;
  std::uint32_t next_link_id_ = 1;
  std::uint32_t pending_links_ = 0;
  std::shared_ptr<NodeStore> nodes_;
  std::uint64_t nodes_generation_ = ~std::uint64_t{0};
  std::map<std::uint64_t, Subscription> subscriptions_;
  std::uint64_t next_subscription_ = 1;
  bool closed_ = false;
};

// ---- accepting ---------------------------------------------------------------------------------

awaitable<void> Server::Impl::accept_loop() {
  auto self = shared_from_this();
  while (!stopping) {
    // A session lives on one io_context; with one thread per context (srmcpd), its work never
    // crosses threads.
    auto strand = asio::make_strand(*contexts[next_context++ % contexts.size()]);
    Tcp::socket socket(strand);
    asio::error_code ec;
    co_await acceptor.async_accept(socket, asio::redirect_error(use_awaitable, ec));
    if (ec) {
      if (stopping || ec == asio::error::operation_aborted) break;
      spdlog::warn("accept failed: {}", ec.message());
      continue;
    }
    socket.set_option(Tcp::no_delay(true), ec);  // requests are small: never wait for Nagle
    auto session = std::make_shared<ServerSession>(self, strand);
    {
      std::lock_guard lock(mutex);
      sessions.insert(session);
    }
    asio::co_spawn(strand, session->run(std::move(socket)), [self, session](std::exception_ptr) {
      self->forget(session);
    });
  }
}

std::optional<std::uint16_t> Server::Impl::reserve_port(std::mt19937_64& rng) {
  const std::uint32_t span = config.data_port_max - config.data_port_min + 1u;
  std::lock_guard lock(mutex);
  for (int attempt = 0; attempt < 64; ++attempt) {
    const auto port = static_cast<std::uint16_t>(config.data_port_min + rng() % span);
    if (used_ports.insert(port).second) return port;
  }
  return std::nullopt;
}

// ---- session -----------------------------------------------------------------------------------

awaitable<void> ServerSession::run(Tcp::socket socket) {
  auto self = shared_from_this();
  const auto& cfg = server_->config;
  auto control = std::make_shared<FramedStream>(TlsStream(std::move(socket), *server_->tls), cfg.limits,
                                                cfg.idle_frame_deadline);
  control->start_watchdog();
  control->arm(cfg.handshake_deadline);  // TLS and hello together (§2)
  std::string peer = "?";
  auto link0 = std::make_shared<Link>();  // the control connection is link 0 (§1)
  try {
    asio::error_code ec;
    const auto remote = control->tls().lowest_layer().remote_endpoint(ec);
    if (!ec) peer = remote.address().to_string() + ":" + std::to_string(remote.port());
    co_await control->tls().async_handshake(asio::ssl::stream_base::server, use_awaitable);
    principal_ = peer_principal(control->tls());
    if (!cfg.allow.empty() &&
        std::find(cfg.allow.begin(), cfg.allow.end(), principal_.identity) == cfg.allow.end()) {
      spdlog::warn("{}: client '{}' is not on the allow-list; closed", peer, principal_.identity);
      control->close();
      co_return;
    }
    if (server_->active_sessions() > cfg.max_sessions) {
      spdlog::warn("{}: session limit {} reached; closed", peer, cfg.max_sessions);
      control->close();
      co_return;
    }
    link0->stream = control;
    if (!co_await handshake(*link0)) {
      ++server_->closed_on_error;
      control->close();
      co_return;
    }
  } catch (const ProtocolError& e) {
    spdlog::warn("{}: handshake refused: {}", peer, e.what());
    ++server_->closed_on_error;
    control->close();
    co_return;
  } catch (const std::exception& e) {
    spdlog::info("{}: handshake ended: {}", peer, e.what());
    control->close();
    co_return;
  }
  control->disarm();
  ++server_->sessions_total;
  spdlog::info("session {} opened: client '{}' from {}", hex64(session_id_), principal_.identity, peer);
  endpoint_->add_link(link0);
  co_await read_loop(link0);  // the session lives as long as its control connection
  close();
  spdlog::info("session {} closed", hex64(session_id_));
}

// §4: CLIENT_HELLO, optional HELLO_RETRY, SERVER_HELLO, SESSION_READY.
awaitable<bool> ServerSession::handshake(Link& link0) {
  const auto& cfg = server_->config;
  FramedStream& control = *link0.stream;
  RawFrame frame = co_await control.read_frame();
  if (frame.header.type != FrameType::client_hello) co_return false;
  ClientHello hello = parse_client_hello(frame.body);
  if (std::find(hello.versions.begin(), hello.versions.end(), kVersion) == hello.versions.end()) co_return false;
  std::optional<KemId> chosen;
  for (KemId k : cfg.kem_preference) {
    if (std::find(hello.kems.begin(), hello.kems.end(), k) != hello.kems.end()) {
      chosen = k;
      break;
    }
  }
  if (!chosen) co_return false;
  if (*chosen != hello.kem) {
    control.send(plain_frame(FrameType::hello_retry, encode_hello_retry(*chosen)));
    frame = co_await control.read_frame();
    if (frame.header.type != FrameType::client_hello) co_return false;
    hello = parse_client_hello(frame.body);
    if (hello.kem != *chosen) co_return false;
  }
  const crypto::Kem& kem = crypto::kem_by_name(*kem_name(*chosen));
  crypto::KemEncapsulation enc;
  try {
    enc = kem.encapsulate(hello.ek);  // type and modulus checks first (FIPS 203 §7.2)
  } catch (const crypto::Error& e) {
    spdlog::warn("client '{}': bad key share: {}", principal_.identity, e.what());
    co_return false;
  }
  ServerHello sh;
  sh.kem = *chosen;
  sh.ct = std::move(enc.ciphertext);
  crypto::random_bytes(sh.server_random);
  sh.session_id = session_id_ = random_u64();
  sh.max_frame_body = cfg.limits.max_frame_body;
  sh.max_links = cfg.limits.max_links;
  sh.key_update_messages = cfg.key_update_messages;
  sh.key_update_seconds = cfg.key_update_seconds;
  sh.timestamp_window_ms = cfg.timestamp_window_ms;
  const Bytes sh_body = encode(sh);

  const auto th = transcript_hash(frame.body, sh_body);
  Bytes exporter = tls_exporter(control.tls(), "EXPORTER-SRMCP-v2");
  SessionKeys keys = derive_session_keys(exporter, enc.shared_secret, th);
  crypto::secure_wipe(exporter);
  endpoint_.emplace(keys, Direction::server_to_client, cfg.limits, cfg.key_update_messages,
                    std::chrono::seconds(cfg.key_update_seconds));
  link_key_ = keys.link;

  control.send(plain_frame(FrameType::server_hello, sh_body));
  // SESSION_READY: the first sealed message, the client's key confirmation (§4).
  const Json ready{{"session_id", hex64(session_id_)},
                   {"identity", principal_.identity},
                   {"roles", principal_.roles},
                   {"max_nodes_per_request", cfg.limits.max_nodes_per_request}};
  const std::string text = to_json_text(ready);
  endpoint_->send_on(link0, MessageHeader{MessageType::session_ready, true, Status::ok, 0},
                     crypto::as_bytes(text));
  co_return true;
}

awaitable<void> ServerSession::read_loop(std::shared_ptr<Link> link) {
  auto self = shared_from_this();
  while (!closed_ && !link->stream->closed()) {
    RawFrame frame;
    try {
      frame = co_await link->stream->read_frame();
    } catch (const ProtocolError& e) {
      spdlog::warn("session {} link {}: {}; closed", hex64(session_id_), link->id, e.what());
      ++server_->closed_on_error;
      break;
    } catch (const std::exception&) {
      break;  // connection ended, or a frame deadline passed
    }
    try {
      auto message = endpoint_->on_frame(*link, frame);
      if (message) handle(*link, std::move(*message));
    } catch (const ProtocolError& e) {
      if (e.action() == Action::close) {
        spdlog::warn("session {} link {}: {}; closed", hex64(session_id_), link->id, e.what());
        ++server_->closed_on_error;
        break;
      }
      if (e.action() == Action::reply && e.tid() != 0) {
        reply(e.tid(), MessageType::error, e.status(), status_body(e.what()));
      }
      // Action::drop: ignore the segment or message.
    }
    endpoint_->expire_partial(kServerReassemblyAge);
  }
  if (link->id == 0) {
    close();
  } else {
    endpoint_->remove_link(link->id);
    --server_->links_active;
  }
}

void ServerSession::handle(Link& link, Message m) {
  (void)link;
  const MessageHeader& h = m.header;
  const auto arrived = Clock::now();
  ++server_->requests;
  const auto now = unix_time_s();
  const std::uint32_t window_s = (server_->config.timestamp_window_ms + 999) / 1000;
  const std::uint32_t skew = h.timestamp_s > now ? h.timestamp_s - now : now - h.timestamp_s;
  if (skew > window_s) {
    reply(h.tid, MessageType::error, Status::stale_timestamp,
          status_body("timestamp differs from the server clock by " + std::to_string(skew) + " s"));
    return;
  }
  if (h.response || h.tid == 0) {
    reply(h.tid, MessageType::error, Status::wrong_phase, status_body("not a request"));
    return;
  }
  try {
    const Json body = h.type == MessageType::close ? Json::object()
                                                   : parse_json_body(m.body, endpoint_->limits(), h.tid);
    if (!body.is_object()) throw ProtocolError(Action::reply, Status::bad_request, "body must be a JSON object", h.tid);
    if (auto text = dispatch(h, body, arrived)) {
      reply_text(h.tid, h.type, Status::ok, *text);
      server_->count_request(h.type, arrived);
    }
    if (h.type == MessageType::close) close();
  } catch (const ProtocolError& e) {
    reply(h.tid, MessageType::error, e.status(), status_body(e.what()));
    server_->count_request(h.type, arrived);
  } catch (const Json::exception& e) {
    reply(h.tid, MessageType::error, Status::bad_request, status_body(std::string("bad request body: ") + e.what()));
    server_->count_request(h.type, arrived);
  }
}

NodeStore& ServerSession::nodes() {
  const auto generation = server_->nodes_generation.load(std::memory_order_acquire);
  if (generation != nodes_generation_) {
    nodes_ = server_->nodes();
    nodes_generation_ = generation;
  }
  return *nodes_;
}

// Where a backend's late answer goes: back onto the session's strand, as the reply to `tid`.
NodeStore::TextDone ServerSession::deferred_reply(std::uint32_t tid, MessageType type, Clock::time_point arrived) {
  return [self = shared_from_this(), tid, type, arrived](std::string text) {
    asio::post(self->strand_, [self, tid, type, arrived, text = std::move(text)] {
      self->reply_text(tid, type, Status::ok, text);
      self->server_->count_request(type, arrived);
    });
  };
}

std::optional<std::string> ServerSession::dispatch(const MessageHeader& h, const Json& body, Clock::time_point arrived) {
  const Limits& limits = endpoint_->limits();
  auto& nodes = this->nodes();
  switch (h.type) {
    case MessageType::browse: {
      const auto r = decode_browse(body, h.tid);
      return to_json_text(nodes.browse(r.root, r.depth, principal_));
    }
    case MessageType::read: {
      // The hot path: the result is written as text directly, without a Json value in between.
      std::string text;
      text.reserve(512);
      if (nodes.read_text(decode_read(body, limits, h.tid).ids, principal_, text, deferred_reply(h.tid, h.type, arrived))) {
        return text;
      }
      return std::nullopt;
    }
    case MessageType::write: {
      std::string text;
      if (nodes.write_text(decode_write(body, limits, h.tid).values, principal_, text, deferred_reply(h.tid, h.type, arrived))) {
        return text;
      }
      return std::nullopt;
    }
    case MessageType::subscribe:
      return to_json_text(subscribe(decode_subscribe(body, limits, h.tid)));
    case MessageType::unsubscribe: {
      auto it = subscriptions_.find(decode_unsubscribe(body, h.tid));
      if (it == subscriptions_.end()) {
        throw ProtocolError(Action::reply, Status::unknown_subscription, "no such subscription", h.tid);
      }
      it->second.timer->cancel();
      subscriptions_.erase(it);
      return "{}";
    }
    case MessageType::ping:
      return to_json_text(Json{{"server_time_ms", std::chrono::duration_cast<std::chrono::milliseconds>(
                                                      std::chrono::system_clock::now().time_since_epoch())
                                                      .count()}});
    case MessageType::close:
      return "{}";
    case MessageType::link_request:
      return to_json_text(open_link_offer(h.tid));
    case MessageType::link_close: {
      const auto id = decode_link_close(body, h.tid);
      auto link = id == 0 ? nullptr : endpoint_->link(id);
      if (!link) throw ProtocolError(Action::reply, Status::bad_request, "no such data link", h.tid);
      // No new frames on it; close once what is queued has gone out. Its read loop then detaches it.
      link->draining = true;
      link->stream->close_after_flush();
      return "{}";
    }
    default:
      throw ProtocolError(Action::reply, Status::wrong_phase,
                          "message type " + std::to_string(static_cast<int>(h.type)) + " is not a request", h.tid);
  }
}

void ServerSession::reply(std::uint32_t tid, MessageType type, Status status, const Json& body) {
  if (closed_ || !endpoint_ || endpoint_->link_count() == 0) return;
  reply_text(tid, type, status, to_json_text(body));
}

void ServerSession::reply_text(std::uint32_t tid, MessageType type, Status status, std::string_view text) {
  if (closed_ || !endpoint_ || endpoint_->link_count() == 0) return;
  if (status != Status::ok) ++server_->errors;
  server_->count_response(status);
  MessageHeader h{type, true, status, tid};
  try {
    endpoint_->send(h, crypto::as_bytes(text), server_->config.limits.max_segments);
  } catch (const ProtocolError& e) {
    // The response does not fit (§12): say so instead.
    MessageHeader eh{MessageType::error, true, e.status(), tid};
    const std::string msg = to_json_text(status_body(e.what()));
    endpoint_->send(eh, crypto::as_bytes(msg));
  }
}

// ---- data links (§7) ----------------------------------------------------------------------------

Json ServerSession::open_link_offer(std::uint32_t tid) {
  const auto& cfg = server_->config;
  if (endpoint_->link_count() - 1 + pending_links_ >= cfg.limits.max_links) {
    throw ProtocolError(Action::reply, Status::too_many_links,
                        "session link limit of " + std::to_string(cfg.limits.max_links) + " reached", tid);
  }
  if (server_->pending_offers.fetch_add(1) >= cfg.max_pending_links) {
    --server_->pending_offers;
    throw ProtocolError(Action::reply, Status::busy, "too many pending data links on this server", tid);
  }
  std::shared_ptr<Tcp::acceptor> acceptor;
  std::optional<std::uint16_t> port;
  for (int attempt = 0; attempt < 64 && !acceptor; ++attempt) {
    port = server_->reserve_port(endpoint_->rng());
    if (!port) break;
    try {
      auto a = std::make_shared<Tcp::acceptor>(strand_);
      const Tcp::endpoint ep(asio::ip::make_address(cfg.listen_host), *port);
      a->open(ep.protocol());
      // Ports of earlier links linger in TIME_WAIT; a fresh listener may still use them.
      a->set_option(Tcp::acceptor::reuse_address(true));
      a->bind(ep);
      a->listen(1);
      acceptor = std::move(a);
    } catch (const std::system_error& e) {
      spdlog::debug("data-link port {}: {}", *port, e.what());
      server_->release_port(*port);  // in use by something else: try another
    }
  }
  if (!acceptor) {
    --server_->pending_offers;
    throw ProtocolError(Action::reply, Status::busy, "no free data-link port", tid);
  }
  const std::uint32_t link_id = next_link_id_++;
  Bytes token(32);
  crypto::random_secret_bytes(token);
  ++pending_links_;
  asio::co_spawn(strand_, serve_offer(acceptor, *port, link_id, token), asio::detached);
  return Json{{"link_id", link_id},
              {"port", *port},
              {"token", crypto::to_hex(token)},
              {"expires_ms", cfg.offer_lifetime.count()}};
}

awaitable<void> ServerSession::serve_offer(std::shared_ptr<Tcp::acceptor> acceptor, std::uint16_t port,
                                           std::uint32_t link_id, Bytes token) {
  auto self = shared_from_this();
  const auto& cfg = server_->config;
  asio::steady_timer expiry(strand_, cfg.offer_lifetime);
  expiry.async_wait([acceptor](asio::error_code ec) {
    if (!ec) acceptor->close();
  });
  auto finish = [&] {
    expiry.cancel();
    asio::error_code ec;
    acceptor->close(ec);
    server_->release_port(port);
    --server_->pending_offers;
    --pending_links_;
  };
  Tcp::socket socket(strand_);
  asio::error_code ec;
  co_await acceptor->async_accept(socket, asio::redirect_error(use_awaitable, ec));
  finish();  // one connection per offer, whatever happens next
  if (ec || closed_) co_return;
  socket.set_option(Tcp::no_delay(true), ec);

  auto stream = std::make_shared<FramedStream>(TlsStream(std::move(socket), *server_->tls), cfg.limits,
                                               cfg.idle_frame_deadline);
  stream->start_watchdog();
  stream->arm(cfg.handshake_deadline);
  try {
    co_await stream->tls().async_handshake(asio::ssl::stream_base::server, use_awaitable);
    const Principal who = peer_principal(stream->tls());
    if (who.identity != principal_.identity) {
      spdlog::warn("session {}: data link {} presented identity '{}'; refused", hex64(session_id_), link_id,
                   who.identity);
      stream->close();
      co_return;
    }
    RawFrame frame = co_await stream->read_frame();
    if (frame.header.type != FrameType::link_bind || frame.header.link_id != link_id || frame.header.seq != 0) {
      throw ProtocolError(Action::close, Status::bad_request, "first frame is not this link's LINK_BIND");
    }
    crypto::Aes256Gcm bind_key(link_key_->span());
    const Bytes plain = open_frame(bind_key, Direction::client_to_server, frame.header, frame.aad, frame.body);
    const LinkBind bind = parse_link_bind(plain);
    const Bytes exporter = tls_exporter(stream->tls(), "EXPORTER-SRMCP-v2-link");
    const auto expected = link_bind_proof(*link_key_, token, link_id, exporter);
    if (bind.session_id != session_id_ || !crypto::ct_equal(expected, bind.proof)) {
      throw ProtocolError(Action::close, Status::bad_request, "LINK_BIND proof does not verify");
    }
    if (closed_) co_return;
    stream->disarm();
    auto link = std::make_shared<Link>();
    link->id = link_id;
    link->stream = stream;
    link->recv_seq = 1;
    // LINK_READY (§7): seq 0, s2c frame key, plaintext session_id.
    Bytes ready;
    common::ByteWriter(ready).u64(session_id_);
    endpoint_->add_link(link);
    ++server_->links_active;
    link->stream->send(endpoint_->seal_frame_on(*link, FrameType::link_ready, ready));
    spdlog::debug("session {}: data link {} attached on port {}", hex64(session_id_), link_id, port);
    co_await read_loop(link);
  } catch (const std::exception& e) {
    spdlog::warn("session {}: data link {} refused: {}", hex64(session_id_), link_id, e.what());
    stream->close();
  }
}

// ---- subscriptions -------------------------------------------------------------------------------

Json ServerSession::subscribe(const SubscribeRequest& request) {
  Subscription s;
  s.ids = request.ids;
  // Check every id now, so a bad subscription fails at once rather than in notifications.
  if (const auto bad = nodes().check_readable(s.ids, principal_)) {
    throw ProtocolError(Action::reply, bad->second, "cannot subscribe to '" + bad->first + "'");
  }
  // "On change" (0) is sampled every 50 ms.
  s.on_change = request.interval_ms == 0;
  s.interval = std::chrono::milliseconds(s.on_change ? 50 : request.interval_ms);
  s.timer = std::make_shared<asio::steady_timer>(strand_);
  const std::uint64_t id = next_subscription_++;
  subscriptions_.emplace(id, std::move(s));
  asio::co_spawn(strand_, run_subscription(id), asio::detached);
  return Json{{"subscription", id}};
}

awaitable<void> ServerSession::run_subscription(std::uint64_t id) {
  auto self = shared_from_this();
  while (!closed_) {
    auto it = subscriptions_.find(id);
    if (it == subscriptions_.end()) break;
    const std::vector<std::string> ids = it->second.ids;
    // Sample every node; backends that wait answer through `box` and wake `waiter`.
    std::vector<ReadResult> results;
    auto box = std::make_shared<std::vector<ReadResult>>();
    auto waiter = std::make_shared<asio::steady_timer>(strand_, Clock::time_point::max());
    const bool now = nodes().read_results(ids, principal_, results, [box, waiter, strand = strand_](auto r) {
      asio::post(strand, [box, waiter, r = std::move(r)]() mutable {
        *box = std::move(r);
        waiter->cancel();
      });
    });
    if (!now) {
      asio::error_code ec;
      co_await waiter->async_wait(asio::redirect_error(use_awaitable, ec));
      results = std::move(*box);
    }
    it = subscriptions_.find(id);
    if (closed_ || it == subscriptions_.end()) break;
    Subscription& s = it->second;
    Json values = Json::array();
    for (std::size_t i = 0; i < ids.size() && i < results.size(); ++i) {
      const ReadResult& r = results[i];
      // Gone since SUBSCRIBE (a reload): nothing to say about it.
      if (r.status == Status::unknown_node || r.status == Status::not_readable || r.status == Status::access_denied) continue;
      // What "changed" compares: the value, or the failure (a failing node is reported once).
      Json seen = r.status == Status::ok ? r.value : Json{{"status", static_cast<int>(r.status)}};
      auto prev = s.last.find(ids[i]);
      if (s.on_change && prev != s.last.end() && prev->second == seen) continue;
      s.last[ids[i]] = std::move(seen);
      Json entry{{"id", ids[i]},
                 {"status", static_cast<int>(r.status)},
                 {"ts_ms", std::chrono::duration_cast<std::chrono::milliseconds>(r.timestamp.time_since_epoch()).count()}};
      if (r.status == Status::ok) entry["value"] = r.value;
      values.push_back(std::move(entry));
    }
    if (!values.empty()) {
      const std::string text = to_json_text(Json{{"subscription", id}, {"values", values}});
      endpoint_->send(MessageHeader{MessageType::notification, true, Status::ok, 0}, crypto::as_bytes(text),
                      server_->config.limits.max_segments);
    }
    auto timer = s.timer;
    timer->expires_after(s.interval);
    asio::error_code ec;
    co_await timer->async_wait(asio::redirect_error(use_awaitable, ec));
    if (ec) break;  // unsubscribed or session closed
  }
}

void ServerSession::close() {
  if (closed_) return;
  closed_ = true;
  for (auto& [id, s] : subscriptions_) s.timer->cancel();
  subscriptions_.clear();
  if (endpoint_) endpoint_->close_all();  // the read loops end and detach their links
}

// ---- Server --------------------------------------------------------------------------------------

void Server::set_nodes(std::shared_ptr<NodeStore> nodes) { impl_->set_nodes(std::move(nodes)); }

Server::Server(asio::io_context& io, ServerConfig config, std::shared_ptr<NodeStore> nodes,
               std::vector<asio::io_context*> session_contexts)
    : impl_(std::make_shared<Impl>(io, std::move(config), std::move(nodes), std::move(session_contexts))) {}

Server::~Server() { stop(); }

void Server::start() {
  auto& cfg = impl_->config;
  impl_->tls.emplace(make_server_tls(TlsFiles{cfg.ca_file, cfg.cert_file, cfg.key_file}));
  asio::error_code ec;
  const auto address = asio::ip::make_address(cfg.listen_host, ec);
  if (ec) throw std::runtime_error("listen address '" + cfg.listen_host + "' is not an IP address");
  const Tcp::endpoint ep(address, cfg.listen_port);
  try {
    impl_->acceptor.open(ep.protocol());
    impl_->acceptor.set_option(Tcp::acceptor::reuse_address(true));
    impl_->acceptor.bind(ep);
    impl_->acceptor.listen(asio::socket_base::max_listen_connections);
  } catch (const std::system_error& e) {
    throw std::runtime_error("cannot listen on " + cfg.listen_host + ":" + std::to_string(cfg.listen_port) + ": " +
                             e.what());
  }
  asio::co_spawn(impl_->io, impl_->accept_loop(), asio::detached);
}

void Server::stop() {
  if (!impl_ || impl_->stopping) return;
  impl_->stopping = true;
  asio::post(impl_->io, [impl = impl_] {
    asio::error_code ec;
    impl->acceptor.close(ec);
  });
  std::lock_guard lock(impl_->mutex);
  for (const auto& s : impl_->sessions) s->shutdown();
}

std::uint16_t Server::port() const {
  asio::error_code ec;
  return impl_->acceptor.local_endpoint(ec).port();
}

ServerStats Server::stats() const {
  ServerStats s;
  s.sessions_total = impl_->sessions_total;
  {
    std::lock_guard lock(impl_->mutex);
    s.sessions_active = impl_->sessions.size();
  }
  s.links_active = impl_->links_active;
  s.requests = impl_->requests;
  s.errors = impl_->errors;
  s.closed_on_error = impl_->closed_on_error;
  for (std::size_t i = 0; i < kStatusSlots; ++i) s.responses_by_status[i] = impl_->responses_by_status[i].load();
  for (std::size_t i = 0; i < kTypeSlots; ++i) {
    s.by_type.push_back(RequestTypeStats{i < kCountedTypes.size() ? kCountedTypes[i].second : "other",
                                         impl_->requests_by_type[i].load(), impl_->latency_by_type[i].snapshot()});
  }
  return s;
}

}  // namespace pqot::srmcp
