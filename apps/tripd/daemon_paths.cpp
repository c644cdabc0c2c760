// tripd's daemon: the paths' control connections, client and server side (docs/trip.md §3, §4,
// §7): handshakes within their bounds, sessions installed and replaced, keepalives, reconnects.
#include <random>

#include "daemon_internal.hpp"
#include "pqot/common/printable.hpp"
#include "pqot/crypto/secure.hpp"
#include "pqot/trip/handshake.hpp"

namespace pqot::tripd {

using asio::use_awaitable;

namespace {

// Closes `conn` when the handshake deadline passes; cancelled when the handshake is done.
class HandshakeDeadline {
 public:
  HandshakeDeadline(asio::io_context& io, std::shared_ptr<ControlConnection> conn, Clock::duration limit)
      : timer_(std::make_shared<asio::steady_timer>(io, limit)) {
    timer_->async_wait([conn, t = timer_](std::error_code ec) {
      if (!ec) conn->abort();
    });
  }
  ~HandshakeDeadline() { timer_->cancel(); }
  HandshakeDeadline(const HandshakeDeadline&) = delete;
  HandshakeDeadline& operator=(const HandshakeDeadline&) = delete;

 private:
  std::shared_ptr<asio::steady_timer> timer_;
};

// The handshake bounds count per source prefix (an IPv4 /24, an IPv6 /64): one host, or one
// attacker with a block of addresses, is one source.
std::string source_prefix(const asio::ip::address& a) {
  if (a.is_v4()) {
    auto b = a.to_v4().to_bytes();
    b[3] = 0;
    return asio::ip::address_v4(b).to_string() + "/24";
  }
  auto b = a.to_v6().to_bytes();
  for (std::size_t i = 8; i < b.size(); ++i) b[i] = 0;
  return asio::ip::address_v6(b).to_string() + "/64";
}

// How often a PING goes over an otherwise silent control connection, so that relays, NATs and
// firewalls do not drop it as idle (docs/trip.md §3).
constexpr Clock::duration kPingInterval = std::chrono::seconds(15);

std::string peer_text(const ControlConnection& c) {
  return c.remote().address().to_string() + ":" + std::to_string(c.remote().port());
}

// Reads the next frame; a CLOSE from the peer ends the handshake with its reason.
asio::awaitable<trip::FrameReader::Frame> expect(ControlConnection& c, trip::FrameType type, const char* what) {
  trip::FrameReader::Frame f = co_await c.read_frame();
  if (f.type == trip::FrameType::close) {
    const trip::Close close = trip::decode_close(f.body);
    throw std::runtime_error(std::string("the peer closed (") + trip::close_code_name(close.code) +
                             "): " + common::printable(close.reason));
  }
  if (f.type != type) throw trip::HandshakeError(trip::CloseCode::protocol, std::string("expected ") + what);
  co_return f;
}

}  // namespace

void Daemon::bind_path(Path& p) {
  const tcp::endpoint ep(resolve_address(io_, *p.config.listen, "path " + p.config.name), p.config.listen->port);
  // Port 0 (tests) takes the port TCP is given for UDP too, which something else may hold over
  // UDP: then another port is tried.
  for (int attempt = 1;; ++attempt) {
    std::error_code ec;
    p.acceptor.emplace(io_);
    p.acceptor->open(ep.protocol(), ec);
    if (!ec) p.acceptor->set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) p.acceptor->bind(ep, ec);
    if (!ec) p.acceptor->listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      p.acceptor->close(ec);
      throw std::runtime_error("path " + p.config.name + ": cannot listen on TCP " + ep.address().to_string() + ":" +
                               std::to_string(ep.port()) + ": " + ec.message());
    }
    p.bound_port = p.acceptor->local_endpoint().port();
    try {
      open_udp(p.data, udp::endpoint(ep.address(), p.bound_port), "path " + p.config.name);
      return;
    } catch (...) {
      p.acceptor->close(ec);
      p.data.close(ec);
      if (ep.port() != 0 || attempt == 16) throw;
    }
  }
}

void Daemon::start_path(Path& p) {
  if (p.config.is_client()) {
    spawn(client_loop(p), p.shared_from_this());
    return;
  }
  spawn(accept_loop(p), p.shared_from_this());
  spawn(path_receive(p), p.shared_from_this());
  std::error_code ec;
  const auto ep = p.acceptor->local_endpoint(ec);
  spdlog::info("path {}: listening on {}:{} (TCP and UDP)", p.config.name, ep.address().to_string(), p.bound_port);
}

void Daemon::stop_path(Path& p, const std::string& why) {
  p.stopping = true;
  std::error_code ec;
  for (auto& weak : p.connections) {
    if (auto c = weak.lock()) c->close(trip::CloseCode::shutdown, why);
  }
  p.connections.clear();
  if (p.connecting) p.connecting->abort();
  p.keepalive_timer.cancel();
  p.retry_timer.cancel();
  p.grace_timer.cancel();
  p.current.reset();  // keys wiped now
  p.previous.reset();
  if (p.acceptor) p.acceptor->close(ec);
  p.data.close(ec);
}

// ---- client side -----------------------------------------------------------------------------

asio::awaitable<void> Daemon::client_loop(Path& p) {
  std::mt19937_64 jitter(boot_ ^ p.config.number);
  auto backoff = config_.limits.reconnect_min;
  while (!ending(p)) {
    const auto began = Clock::now();
    try {
      co_await client_connect(p);
    } catch (const std::exception& e) {
      if (ending(p)) co_return;
      ++p.counters.handshake_failures;
      if (p.log_limit.allow().log) spdlog::warn("path {}: {}", p.config.name, e.what());
    }
    p.connecting.reset();
    if (ending(p)) co_return;
    // A session that lasted starts the backoff again from its minimum.
    if (Clock::now() - began > config_.limits.reconnect_max) backoff = config_.limits.reconnect_min;
    const double f = std::uniform_real_distribution<double>(0.8, 1.2)(jitter);
    p.retry_timer.expires_after(std::chrono::duration_cast<Clock::duration>(backoff * f));
    std::error_code ec;
    co_await p.retry_timer.async_wait(asio::redirect_error(use_awaitable, ec));
    backoff = std::min(backoff * 2, config_.limits.reconnect_max);
  }
}

asio::awaitable<void> Daemon::client_connect(Path& p) {
  const common::HostPort& to = *p.config.connect;
  tcp::socket socket(io_);
  auto conn = std::make_shared<ControlConnection>(std::move(socket), *client_tls_);
  p.connecting = conn;
  track(p, conn);
  const auto ended = [&] {
    if (ending(p) || conn->closed()) throw std::runtime_error("handshake ended (deadline or stop)");
  };
  std::unique_ptr<trip::Session> session;
  {
    HandshakeDeadline deadline(io_, conn, config_.limits.handshake_timeout);
    tcp::resolver resolver(io_);
    const auto endpoints = co_await resolver.async_resolve(to.host, std::to_string(to.port), use_awaitable);
    ended();  // an abort during the resolve closed a socket that async_connect would open again
    co_await asio::async_connect(conn->tls().lowest_layer(), endpoints, use_awaitable);
    ended();
    asio::error_code ignored;
    conn->tls().lowest_layer().set_option(asio::socket_base::keep_alive(true), ignored);
    std::error_code ec;
    conn->note_remote();
    const tcp::endpoint remote = conn->remote();
    channel::set_server_identity(conn->tls(), p.config.server_name);
    co_await conn->tls().async_handshake(asio::ssl::stream_base::client, use_awaitable);
    ended();
    // The name was checked by TLS; the role says the certificate is a TRIP daemon's, not another
    // service's from the same CA that names the host (docs/trip.md §3).
    const channel::Principal server = channel::peer_principal(conn->tls());
    if (std::find(server.roles.begin(), server.roles.end(), "trip") == server.roles.end()) {
      const std::string why = "the server's certificate '" + common::printable(server.identity) + "' has no organizational unit 'trip'";
      conn->close(trip::CloseCode::not_allowed, why);
      throw std::runtime_error(why);
    }
    trip::ClientHandshake hs(config_.session.kem, boot_, p.config.number, p.flows);
    co_await conn->write_frame(trip::FrameType::client_hello, hs.hello_body());
    const auto sh = co_await expect(*conn, trip::FrameType::server_hello, "SERVER_HELLO");
    crypto::Bytes exporter = channel::tls_exporter(conn->tls(), trip::kExporterLabel);
    std::optional<trip::SessionAgreement> agreement;
    try {
      agreement.emplace(hs.finish(sh.body, exporter));
    } catch (const trip::HandshakeError& e) {
      crypto::secure_wipe(exporter);
      conn->close(e.code(), e.what());  // the server's operator sees why too
      throw;
    } catch (...) {
      crypto::secure_wipe(exporter);
      throw;
    }
    crypto::secure_wipe(exporter);
    const auto ready = co_await expect(*conn, trip::FrameType::ready, "READY");
    ended();
    if (!trip::ready_matches(agreement->keys, ready.body)) {
      conn->close(trip::CloseCode::protocol, "READY does not match: the two sides hold different keys");
      throw std::runtime_error("READY does not match");
    }
    // The session takes its keys; the agreement's copies are wiped as it goes (docs/trip.md §5).
    session = std::make_unique<trip::Session>(trip::SessionRole::client, *agreement, Clock::now());
    agreement.reset();
    // The datagrams take the route the control connection took (docs/trip.md §1). The socket
    // of the session before is kept when the route is the same, so that the copies still in
    // flight towards it arrive and authenticate under that session (§4.4).
    const udp::endpoint peer(remote.address(), remote.port());
    std::error_code same_ec;
    if (!p.data.is_open() || p.data.remote_endpoint(same_ec) != peer || same_ec) {
      if (p.data.is_open()) p.data.close(ec);
      p.data.open(peer.protocol(), ec);
      if (!ec) p.data.connect(peer, ec);
      if (!ec) p.data.non_blocking(true, ec);
      if (ec) throw std::runtime_error("cannot open UDP to " + peer.address().to_string() + ": " + ec.message());
      spawn(path_receive(p), p.shared_from_this());
    }
  }
  ended();
  std::error_code ec;
  const std::uint8_t number = session->number();
  const std::uint64_t server_boot = session->peer_boot();
  if (!install(p, std::move(session), conn)) throw std::runtime_error("the session was not installed");
  p.current->peer = p.data.remote_endpoint(ec);
  send_keepalive(p);  // at once: the server learns where to send (docs/trip.md §7)
  spdlog::info("path {}: session {} up with {} (server boot {:016x})", p.config.name, number, peer_text(*conn), server_boot);
  co_await control_loop(p, conn);
}

// ---- server side ------------------------------------------------------------------------------

asio::awaitable<void> Daemon::accept_loop(Path& p) {
  for (;;) {
    tcp::socket socket(io_);
    try {
      co_await p.acceptor->async_accept(socket, use_awaitable);
    } catch (const std::system_error& e) {
      if (ending(p) || e.code() == asio::error::operation_aborted) co_return;
      continue;  // EMFILE and the like: the next accept may do
    }
    std::error_code ec;
    if (ending(p)) {  // accepted just before a reload or stop() ended the path
      socket.close(ec);
      co_return;
    }
    const auto source = socket.remote_endpoint(ec).address();
    auto conn = std::make_shared<ControlConnection>(std::move(socket), *server_tls_);
    std::weak_ptr<ControlConnection> weak = conn;
    auto [verdict, ticket] = p.handshakes->admit(source_prefix(source), [weak] {
      if (auto c = weak.lock()) c->abort();  // a newcomer took this idle handshake's place
    });
    if (!ticket) {
      ++p.counters.busy;
      if (p.log_limit.allow().log) {
        spdlog::warn("path {}: connection from {} refused: {} handshakes in progress", p.config.name, source.to_string(),
                     verdict == common::HandshakeSlots::Verdict::source_full ? "its source holds its share of" : "the path holds its");
      }
      conn->abort();
      continue;
    }
    track(p, conn);
    spawn(serve(p, conn, std::make_shared<common::HandshakeSlots::Ticket>(std::move(ticket))), p.shared_from_this());
  }
}

asio::awaitable<void> Daemon::serve(Path& p, std::shared_ptr<ControlConnection> conn,
                                     std::shared_ptr<common::HandshakeSlots::Ticket> slot) {
  const auto source = conn->remote().address();
  const auto ended = [&] {
    if (ending(p) || conn->closed()) throw std::runtime_error("handshake ended (deadline, eviction or stop)");
  };
  try {
    std::unique_ptr<trip::Session> session;
    {
      HandshakeDeadline deadline(io_, conn, config_.limits.handshake_timeout);
      co_await conn->tls().async_handshake(asio::ssl::stream_base::server, use_awaitable);
      ended();
      const channel::Principal who = channel::peer_principal(conn->tls());
      const bool has_role = std::find(who.roles.begin(), who.roles.end(), "trip") != who.roles.end();
      const bool listed = std::find(p.config.peers.begin(), p.config.peers.end(), who.identity) != p.config.peers.end();
      if (!has_role || !listed) {
        const std::string why = "certificate '" + common::printable(who.identity) + "' is not allowed on path " + p.config.name +
                                (has_role ? "" : " (no organizational unit 'trip')");
        conn->close(trip::CloseCode::not_allowed, why);
        throw std::runtime_error(why);
      }
      const auto ch = co_await expect(*conn, trip::FrameType::client_hello, "CLIENT_HELLO");
      ended();
      trip::ServerOffer offer;
      offer.accept_kems = config_.session.accept_kems;
      offer.keepalive_ms = config_.session.keepalive_ms;
      offer.dead_after_ms = config_.session.dead_after_ms;
      offer.key_update_datagrams = config_.session.key_update_datagrams;
      offer.key_update_seconds = config_.session.key_update_seconds;
      crypto::Bytes exporter = channel::tls_exporter(conn->tls(), trip::kExporterLabel);
      std::optional<trip::ServerAnswer> answer;
      try {
        // The number is taken now: two handshakes of one path in flight never share one (§4.3).
        answer.emplace(trip::answer_client_hello(ch.body, exporter, offer, p.flows, boot_, p.next_session++));
      } catch (const trip::HandshakeError& e) {
        crypto::secure_wipe(exporter);
        conn->close(e.code(), e.what());
        throw;
      }
      crypto::secure_wipe(exporter);
      co_await conn->write_frame(trip::FrameType::server_hello, answer->body);
      const channel::Digest ready = trip::ready_body(answer->agreement.keys);
      co_await conn->write_frame(trip::FrameType::ready, ready);
      ended();
      session = std::make_unique<trip::Session>(trip::SessionRole::server, answer->agreement, Clock::now());
      answer.reset();  // the agreement's copies of the keys are wiped (docs/trip.md §5)
    }
    slot->release();
    const std::uint8_t number = session->number();
    const std::uint64_t client_boot = session->peer_boot();
    if (!install(p, std::move(session), conn)) throw std::runtime_error("the session was not installed");
    spdlog::info("path {}: session {} up with {} (client boot {:016x})", p.config.name, number, peer_text(*conn), client_boot);
    co_await control_loop(p, conn);
  } catch (const std::exception& e) {
    slot->release();
    conn->abort();
    if (!ending(p)) {
      ++p.counters.handshake_failures;
      if (p.log_limit.allow().log) spdlog::warn("path {}: connection from {}: {}", p.config.name, source.to_string(), e.what());
    }
  }
}

// ---- both sides -------------------------------------------------------------------------------

asio::awaitable<void> Daemon::control_loop(Path& p, std::shared_ptr<ControlConnection> conn) {
  try {
    for (;;) {
      const auto f = co_await conn->read_frame();
      if (f.type == trip::FrameType::ping && f.body.size() == trip::kPingBodySize) {
        conn->send(trip::FrameType::pong, f.body);
      } else if (f.type == trip::FrameType::pong && f.body.size() == trip::kPingBodySize) {
      } else if (f.type == trip::FrameType::close) {
        const trip::Close c = trip::decode_close(f.body);
        spdlog::info("path {}: the peer closed the session ({}): {}", p.config.name, trip::close_code_name(c.code), common::printable(c.reason));
        break;
      } else {
        conn->close(trip::CloseCode::protocol, "unexpected control frame");
        break;
      }
    }
  } catch (const std::exception& e) {
    if (!ending(p) && !conn->closed()) spdlog::info("path {}: control connection ended: {}", p.config.name, e.what());
  }
  conn->abort();
  retire(p, conn.get());
}

bool Daemon::install(Path& p, std::unique_ptr<trip::Session> s, std::shared_ptr<ControlConnection> conn) {
  if (ending(p)) {
    conn->close(trip::CloseCode::shutdown, stopped_ ? "tripd is stopping" : "the path was stopped by a reload");
    return false;
  }
  for (auto& [id, f] : filter_flows_) {
    if (s->filters(id) && f->filter.boot_retired(s->peer_boot())) {
      // docs/trip.md §8: a boot whose window was dropped never gets a fresh one.
      spdlog::warn("path {}: the peer claims boot {:016x}, whose window of flow {} was dropped: refused", p.config.name,
                   s->peer_boot(), id);
      conn->close(trip::CloseCode::protocol, "this boot's window was dropped: restart to get a new boot");
      return false;
    }
  }
  if (p.current) {
    if (p.current->control) p.current->control->close(trip::CloseCode::replaced, "a newer session of this path replaced it");
    p.current->retired = Clock::now();
    p.previous = std::move(p.current);
  }
  ++p.counters.sessions;
  // Each flow the peer reflects on this session starts (or keeps) the peer's boot (docs/trip.md §8).
  for (auto& [id, f] : filter_flows_) {
    if (s->filters(id)) f->filter.start_boot(s->peer_boot(), Clock::now());
  }
  p.current = LiveSession{std::move(s), std::move(conn), std::nullopt, {}};
  p.last_ping = Clock::now();
  p.loss_samples.clear();  // a new session, a new window
  sample_loss(p);
  arm_grace(p);
  keepalive_tick(p);
  return true;
}

void Daemon::track(Path& p, const std::shared_ptr<ControlConnection>& conn) {
  std::erase_if(p.connections, [](const std::weak_ptr<ControlConnection>& w) { return w.expired(); });
  p.connections.push_back(conn);
}

void Daemon::arm_grace(Path& p) {
  if (!p.previous) return;
  p.grace_timer.expires_at(p.previous->retired + config_.limits.session_grace);
  p.grace_timer.async_wait([this, &p, keep = p.shared_from_this()](std::error_code ec) {
    if (ec || ending(p)) return;
    if (p.previous && Clock::now() - p.previous->retired >= config_.limits.session_grace) p.previous.reset();  // keys wiped
  });
}

void Daemon::retire(Path& p, const ControlConnection* conn) {
  if (p.current && p.current->control.get() == conn) {
    p.current->retired = Clock::now();
    p.current->control.reset();
    p.previous = std::move(p.current);
    p.current.reset();
    arm_grace(p);
    spdlog::info("path {}: down", p.config.name);
  }
}

void Daemon::keepalive_tick(Path& p) {
  if (!p.current || ending(p)) return;
  p.keepalive_timer.expires_after(p.current->session->keepalive_interval());
  p.keepalive_timer.async_wait([this, &p, keep = p.shared_from_this()](std::error_code ec) {
    if (ec || !p.current || ending(p)) return;
    if (p.current->session->dead(Clock::now())) {
      ++p.counters.sessions_dead;
      spdlog::warn("path {}: no keepalive for {} ms: the session ends", p.config.name, p.current->session->dead_after().count());
      const auto conn = p.current->control;
      if (conn) conn->close(trip::CloseCode::timeout, "no keepalive within dead_after_ms");
      retire(p, conn.get());
      return;
    }
    send_keepalive(p);
    sample_loss(p);
    if (p.current->control && Clock::now() - p.last_ping >= kPingInterval) {
      std::array<std::uint8_t, trip::kPingBodySize> token{};
      p.current->control->send(trip::FrameType::ping, token);
      p.last_ping = Clock::now();
    }
    keepalive_tick(p);
  });
}

void Daemon::sample_loss(Path& p) {
  if (!p.current) return;
  std::uint64_t delivered = 0;
  for (const auto& [id, f] : filter_flows_) {
    if (p.current->session->filters(id)) delivered += f->counters.delivered;
  }
  p.loss_samples.push_back({p.counters.won + p.counters.duplicates, delivered});
  if (p.loss_samples.size() > kLossIntervals + 1) p.loss_samples.pop_front();
}

void Daemon::send_keepalive(Path& p) {
  if (!p.current || !p.current->peer) return;
  std::array<std::uint8_t, trip::kKeepaliveSize> k{};
  p.current->session->seal_keepalive(k, Clock::now());
  if (send_on(p, k)) ++p.counters.keepalives_sent;
}

}  // namespace pqot::tripd
