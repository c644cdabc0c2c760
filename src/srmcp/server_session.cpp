// One SRMCP session's life on the server: TLS and hello (§2, §4), the read loop of each link,
// backpressure, reassembly expiry (§8.2) and closing. Every function runs on the session's strand.
#include "pqot/crypto/error.hpp"
#include "pqot/crypto/kem.hpp"
#include "pqot/crypto/random.hpp"
#include "pqot/srmcp/json_text.hpp"
#include "server_impl.hpp"

namespace pqot::srmcp {

using asio::awaitable;
using asio::use_awaitable;

namespace {

std::uint64_t random_nonzero_u64() {
  std::uint64_t v = 0;
  while (v == 0) v = crypto::random_u64();
  return v;
}

}  // namespace

// Authenticated clients can open and close sessions in a loop: these lines have their own log
// budget (sessions are counted in the metrics either way).
void ServerSession::log_session_event(const std::string& what) const {
  const auto permit = server_->session_log.allow();
  if (!permit.log) return;
  if (permit.suppressed > 0) {
    spdlog::info(
        "{} more session open/close lines not logged (rate limit; see pqot_srmcp_sessions_total)",
        permit.suppressed);
  }
  spdlog::info("session {} {}", hex64(session_id_), what);
}

ServerSession::ServerSession(std::shared_ptr<Server::Impl> server,
                             asio::strand<asio::io_context::executor_type> strand, std::string peer,
                             std::string source)
    : server_(std::move(server)),
      strand_(std::move(strand)),
      peer_(std::move(peer)),
      source_(std::move(source)) {}

void ServerSession::shutdown() {
  asio::post(strand_, [self = shared_from_this()] { self->close(); });
}

void ServerSession::evict() {
  asio::post(strand_, [self = shared_from_this()] {
    if (!self->opened_) self->close();
  });
}

void ServerSession::close_gracefully() {
  closing_ = true;
  for (const auto& [id, link] : endpoint_->links()) {
    link->draining = true;
    link->stream->close_after_flush(server_->config.send_stall_timeout);
  }
}

awaitable<void> ServerSession::run(Tcp::socket socket) {
  auto self = shared_from_this();
  const auto& cfg = server_->config;
  control_ = std::make_shared<FramedStream>(TlsSocket(std::move(socket), *server_->tls), cfg.limits,
                                            cfg.idle_frame_deadline);
  control_->start_watchdog();
  control_->arm(cfg.handshake_deadline);  // TLS and hello together (§2)
  auto link0 = std::make_shared<Link>();  // the control connection is link 0 (§1)
  link0->stream = control_;
  // TLS: the client certificate is verified here.
  try {
    co_await control_->tls().async_handshake(asio::ssl::stream_base::server, use_awaitable);
  } catch (const std::exception& e) {
    if (!closed_) {
      server_->refuse(
          control_->deadline_passed() ? Refusal::handshake_deadline : Refusal::tls_failed, peer_,
          std::string("TLS handshake failed: ") + e.what());
    }
    co_return;  // finished() closes
  }
  if (closed_) co_return;
  principal_ = channel::peer_principal(control_->tls());
  if (!cfg.allow.empty() &&
      std::find(cfg.allow.begin(), cfg.allow.end(), principal_.identity) == cfg.allow.end()) {
    server_->refuse(Refusal::not_allowed, peer_,
                    "client '" + principal_.identity + "' is not on the allow-list; closed");
    co_return;
  }
  // Only sessions whose client is authenticated count against max_sessions (and per identity).
  if (const auto refusal = server_->try_establish(principal_.identity)) {
    server_->refuse(*refusal, peer_,
                    "session limit reached for client '" + principal_.identity + "'; closed");
    co_return;
  }
  established_ = true;
  try {
    co_await handshake(*link0);
  } catch (const ProtocolError& e) {
    ++server_->closed_on_error;  // a protocol violation in the hello phase (§4)
    if (!closed_)
      server_->refuse(Refusal::hello_failed, peer_, std::string("hello refused: ") + e.what());
    co_return;
  } catch (const std::exception& e) {
    if (!closed_) {
      server_->refuse(
          control_->deadline_passed() ? Refusal::handshake_deadline : Refusal::hello_failed, peer_,
          std::string("hello ended: ") + e.what());
    }
    co_return;
  }
  if (closed_) co_return;
  control_->disarm();
  opened_ = true;
  handshake_ticket_.release();  // the session is open: no longer a handshake in progress
  ++server_->sessions_total;
  ++(encoding_ == BodyEncoding::compact ? server_->sessions_compact : server_->sessions_json);
  log_session_event("opened: client '" + common::printable(principal_.identity) + "' from " +
                    peer_);
  add_link(link0);
  co_await read_loop(link0);  // the session lives as long as its control connection
  close();
  log_session_event("closed");
}

namespace {

template <class T>
bool offered(const std::vector<T>& list, T v) {
  return std::find(list.begin(), list.end(), v) != list.end();
}

[[noreturn]] void hello_fails(const std::string& why) {
  throw ProtocolError(Action::close, Status::bad_request, why);
}

}  // namespace

// The client shares no protocol version (body encoding) or no KEM with this server: HELLO_REFUSED
// says which and what the server accepts, then the connection closes once it is written (§4).
void ServerSession::refuse_hello(FramedStream& control, HelloRefused::Reason reason,
                                 const ClientHello& hello) {
  const auto& cfg = server_->config;
  HelloRefused r;
  r.reason = reason;
  for (auto e : cfg.body_encodings) r.versions.push_back(static_cast<std::uint8_t>(e));
  r.kems = cfg.kem_preference;
  control.send(plain_frame(FrameType::hello_refused, encode(r)));
  hello_refused_ = true;
  if (reason == HelloRefused::Reason::no_common_version) {
    hello_fails("no common body encoding: the client offers " + hello_list_text(hello.versions) +
                ", this server accepts " + hello_list_text(r.versions));
  }
  hello_fails("no common KEM: the client offers " + hello_list_text(hello.kems) +
              ", this server accepts " + hello_list_text(r.kems));
}

// §4: CLIENT_HELLO, optional HELLO_RETRY, SERVER_HELLO, SESSION_READY. Throws ProtocolError{close}
// with the reason when the hello fails.
awaitable<void> ServerSession::handshake(Link& link0) {
  const auto& cfg = server_->config;
  FramedStream& control = *link0.stream;
  RawFrame frame = co_await control.read_frame();
  if (frame.header.type != FrameType::client_hello)
    hello_fails("the first frame is not a CLIENT_HELLO");
  ClientHello hello = parse_client_hello(frame.body);
  // The first of the server's encodings, and of its KEMs, that the client offers.
  std::optional<BodyEncoding> encoding;
  for (BodyEncoding e : cfg.body_encodings) {
    if (offered(hello.versions, static_cast<std::uint8_t>(e))) {
      encoding = e;
      break;
    }
  }
  if (!encoding) refuse_hello(control, HelloRefused::Reason::no_common_version, hello);
  std::optional<KemId> chosen;
  for (KemId k : cfg.kem_preference) {
    if (offered(hello.kems, k)) {
      chosen = k;
      break;
    }
  }
  if (!chosen) refuse_hello(control, HelloRefused::Reason::no_common_kem, hello);
  if (*chosen != hello.kem) {
    control.send(plain_frame(FrameType::hello_retry, encode_hello_retry(*chosen)));
    frame = co_await control.read_frame();
    if (frame.header.type != FrameType::client_hello)
      hello_fails("no CLIENT_HELLO after HELLO_RETRY");
    hello = parse_client_hello(frame.body);
    // The second hello stands on its own (§4): version and KEM list are checked again.
    if (hello.kem != *chosen || !offered(hello.versions, static_cast<std::uint8_t>(*encoding)) ||
        !offered(hello.kems, *chosen)) {
      hello_fails("the CLIENT_HELLO after HELLO_RETRY does not offer what was chosen");
    }
  }
  encoding_ = *encoding;
  const crypto::Kem& kem = crypto::kem_by_name(*kem_name(*chosen));
  crypto::KemEncapsulation enc;
  try {
    enc = kem.encapsulate(hello.ek);  // type and modulus checks first (FIPS 203 §7.2)
  } catch (const crypto::Error& e) {
    throw ProtocolError(Action::close, Status::bad_request,
                        std::string("bad key share: ") + e.what());
  }
  ServerHello sh;
  sh.version = static_cast<std::uint8_t>(encoding_);
  sh.kem = *chosen;
  sh.ct = std::move(enc.ciphertext);
  crypto::random_bytes(sh.server_random);
  sh.session_id = session_id_ = random_nonzero_u64();
  sh.max_frame_body = cfg.limits.max_frame_body;
  sh.max_links = cfg.limits.max_links;
  sh.key_update_messages = cfg.key_update_messages;
  sh.key_update_seconds = cfg.key_update_seconds;
  sh.timestamp_window_ms = cfg.timestamp_window_ms;
  const Bytes sh_body = encode(sh);

  const auto th = transcript_hash(frame.body, sh_body);
  Bytes exporter = channel::tls_exporter(control.tls(), "EXPORTER-SRMCP-v2");
  SessionKeys keys = derive_session_keys(exporter, enc.shared_secret, th);
  crypto::secure_wipe(exporter);
  // Partial messages: at most max_partial_bytes per session (never less than one whole message),
  // max_partial_bytes_per_identity over the sessions of one client identity and
  // max_partial_bytes_total over the server (§8.2).
  const std::size_t partial = std::max<std::size_t>(cfg.max_partial_bytes, cfg.limits.max_message);
  endpoint_.emplace(keys, Direction::server_to_client, cfg.limits, cfg.key_update_messages,
                    std::chrono::seconds(cfg.key_update_seconds), partial,
                    server_->partial_budget_for(principal_.identity));
  endpoint_->set_link_queue_cap(cfg.max_queued_bytes_per_link);
  link_key_ = keys.link;

  // §7: one ticket for this session's data links, queued ahead of SERVER_HELLO, so that the client
  // holds it before it can ask for a link. The session's scope alone can resume it.
  issue_link_ticket();
  control.send(plain_frame(FrameType::server_hello, sh_body));
  // SESSION_READY: the first sealed message, the client's key confirmation (§4).
  const Json ready{{"session_id", hex64(session_id_)},
                   {"identity", principal_.identity},
                   {"roles", principal_.roles},
                   {"max_nodes_per_request", cfg.limits.max_nodes_per_request}};
  const std::string text = to_json_text(ready);
  endpoint_->send_on(link0, MessageHeader{MessageType::session_ready, true, Status::ok, 0},
                     crypto::as_bytes(text));
}

void ServerSession::add_link(std::shared_ptr<Link> link) {
  // A write that completes may make room for a reader paused by backpressure.
  link->stream->on_written([weak = weak_from_this()] {
    if (auto s = weak.lock()) s->wake_readers();
  });
  endpoint_->add_link(std::move(link));
}

// Reads frames until the link ends. Never throws: whatever goes wrong closes the link (or, on the
// control connection, the session), so no session outlives its sockets or the other way round.
awaitable<void> ServerSession::read_loop(std::shared_ptr<Link> link) {
  auto self = shared_from_this();
  try {
    RawFrame frame;  // reused frame after frame
    while (!closed_ && !link->stream->closed()) {
      if (!room() && !co_await wait_for_room()) {  // (the check first spares a coroutine frame)
        server_->refuse(
            Refusal::send_backlog, peer_,
            "session " + hex64(session_id_) + ": client has not read its responses for " +
                std::to_string(server_->config.send_stall_timeout.count()) + " ms; closed");
        close();
        break;
      }
      if (closed_ || link->stream->closed()) break;
      try {
        co_await link->stream->read_frame(frame);
      } catch (const ProtocolError& e) {
        server_->refuse(Refusal::protocol_violation, peer_,
                        "session " + hex64(session_id_) + " link " + std::to_string(link->id) +
                            ": " + e.what());
        ++server_->closed_on_error;
        break;
      } catch (const std::exception&) {
        break;  // connection ended, or a frame deadline passed
      }
      try {
        auto message = endpoint_->on_frame(*link, frame);
        if (message) {
          handle(*link, *message);
          endpoint_->recycle(std::move(message->body));
        }
      } catch (const ProtocolError& e) {
        if (e.action() == Action::close) {
          server_->refuse(Refusal::protocol_violation, peer_,
                          "session " + hex64(session_id_) + " link " + std::to_string(link->id) +
                              ": " + e.what());
          ++server_->closed_on_error;
          break;
        }
        if (e.action() == Action::reply && e.tid() != 0) {
          reply_error(e.tid(), e.status(), e.what());
        } else {
          server_->refusals[static_cast<std::size_t>(
              Refusal::segments_dropped)]++;  // §8.2: counted, link stays
        }
      }
      watch_partial();
    }
  } catch (const std::exception& e) {
    server_->refuse(Refusal::internal_error, peer_,
                    "session " + hex64(session_id_) + ": " + e.what());
    close();
  }
  if (link->id == 0) {
    close();
  } else if (endpoint_ && endpoint_->link(link->id) == link) {
    endpoint_->remove_link(link->id);
    --server_->links_active;
  }
}

// Backpressure: reading pauses while the session has more than max_queued_bytes waiting to be
// written, or max_backend_ops node operations waiting for devices. A client that lets its queue
// stand still for send_stall_timeout is closed; waiting for devices alone never closes a session
// (each device request has its own deadline).
bool ServerSession::room() const {
  const auto& cfg = server_->config;
  return endpoint_->queued_bytes() < cfg.max_queued_bytes && backend_ops_ < cfg.max_backend_ops;
}

awaitable<bool> ServerSession::wait_for_room() {
  if (room()) co_return true;
  const auto& cfg = server_->config;
  auto deadline = Clock::now() + cfg.send_stall_timeout;
  std::size_t queued = endpoint_->queued_bytes();
  while (!closed_ && !room()) {
    if (Clock::now() >= deadline) {
      if (endpoint_->queued_bytes() >= cfg.max_queued_bytes) co_return false;
      deadline = Clock::now() + cfg.send_stall_timeout;  // only devices are slow
    }
    auto t = std::make_shared<asio::steady_timer>(strand_, deadline);
    room_waiters_.push_back(t);
    asio::error_code ec;
    co_await t->async_wait(asio::redirect_error(use_awaitable, ec));
    if (closed_) co_return false;
    // Progress (the queue shrank) restarts the stall clock.
    if (endpoint_->queued_bytes() < queued) deadline = Clock::now() + cfg.send_stall_timeout;
    queued = endpoint_->queued_bytes();
  }
  co_return !closed_;
}

void ServerSession::wake_readers() {
  if (room_waiters_.empty()) return;
  if (!closed_ && !room()) return;
  auto waiters = std::move(room_waiters_);
  room_waiters_.clear();
  for (auto& t : waiters) t->cancel();
}

// Partial messages expire 5 s after their first segment (§8.2), on a timer: not only when another
// frame happens to arrive.
void ServerSession::watch_partial() {
  if (closed_ || !endpoint_) return;
  const auto oldest = endpoint_->oldest_partial();
  if (!oldest) return;
  if (partial_timer_) return;  // armed; it re-arms itself for what is left
  partial_timer_ = std::make_shared<asio::steady_timer>(strand_, *oldest + kServerReassemblyAge);
  partial_timer_->async_wait([self = shared_from_this()](asio::error_code ec) {
    self->partial_timer_.reset();
    if (ec || self->closed_ || !self->endpoint_) return;
    const auto n = self->endpoint_->expire_partial(kServerReassemblyAge);
    self->server_->refusals[static_cast<std::size_t>(Refusal::partial_expired)] += n;
    self->watch_partial();
  });
}

void ServerSession::close() {
  if (closed_) return;
  closed_ = true;
  for (auto& [id, s] : subscriptions_) s.timer->cancel();
  subscriptions_.clear();
  subscribed_ids_ = 0;
  for (auto& [id, offer] : std::map(offers_)) finish_offer(offer);
  if (partial_timer_) partial_timer_->cancel();
  for (auto& t : room_waiters_) t->cancel();
  room_waiters_.clear();
  if (control_) {
    // A HELLO_REFUSED is written before the connection closes (a peer that stops reading: 1 s).
    if (hello_refused_) {
      control_->close_after_flush(std::chrono::seconds(1));
    } else {
      control_->close();
    }
  }
  if (endpoint_) endpoint_->close_all();  // the read loops end and detach their links
  if (resumption_) resumption_->clear();  // its tickets resume nothing any more (§7)
  if (established_) {
    established_ = false;
    server_->release_established(principal_.identity);
  }
  handshake_ticket_.release();
}

}  // namespace pqot::srmcp
