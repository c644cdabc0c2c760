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

void Daemon::start_path(Path& p) {
  if (p.config.is_client()) {
    spawn(client_loop(p));
    return;
  }
  const tcp::endpoint ep(resolve_address(io_, *p.config.listen, "path " + p.config.name), p.config.listen->port);
  std::error_code ec;
  p.acceptor.emplace(io_);
  p.acceptor->open(ep.protocol(), ec);
  if (!ec) p.acceptor->set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) p.acceptor->bind(ep, ec);
  if (!ec) p.acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw std::runtime_error("path " + p.config.name + ": cannot listen on TCP " + ep.address().to_string() + ":" + std::to_string(ep.port()) + ": " + ec.message());
  p.bound_port = p.acceptor->local_endpoint().port();
  const udp::endpoint uep(ep.address(), p.bound_port);
  p.data.open(uep.protocol(), ec);
  if (!ec) p.data.bind(uep, ec);
  if (!ec) p.data.non_blocking(true, ec);
  if (ec) throw std::runtime_error("path " + p.config.name + ": cannot bind UDP port " + std::to_string(p.bound_port) + ": " + ec.message());
  spawn(accept_loop(p));
  spawn(path_receive(p));
  spdlog::info("path {}: listening on {}:{} (TCP and UDP)", p.config.name, ep.address().to_string(), p.bound_port);
}

// ---- client side -----------------------------------------------------------------------------

asio::awaitable<void> Daemon::client_loop(Path& p) {
  std::mt19937_64 jitter(boot_ ^ p.config.number);
  auto backoff = config_.limits.reconnect_min;
  while (!stopped_) {
    const auto began = Clock::now();
    try {
      co_await client_connect(p);
    } catch (const std::exception& e) {
      if (stopped_) co_return;
      ++p.counters.handshake_failures;
      if (p.log_limit.allow().log) spdlog::warn("path {}: {}", p.config.name, e.what());
    }
    p.connecting.reset();
    if (stopped_) co_return;
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
  trip::SessionAgreement agreement;
  {
    HandshakeDeadline deadline(io_, conn, config_.limits.handshake_timeout);
    tcp::resolver resolver(io_);
    const auto endpoints = co_await resolver.async_resolve(to.host, std::to_string(to.port), use_awaitable);
    co_await asio::async_connect(conn->tls().lowest_layer(), endpoints, use_awaitable);
    std::error_code ec;
    conn->note_remote();
    const tcp::endpoint remote = conn->remote();
    channel::set_server_identity(conn->tls(), p.config.server_name);
    co_await conn->tls().async_handshake(asio::ssl::stream_base::client, use_awaitable);
    trip::ClientHandshake hs(config_.session.kem, boot_, p.config.number, config_.session_flows(p.config));
    co_await conn->write_frame(trip::FrameType::client_hello, hs.hello_body());
    const auto sh = co_await expect(*conn, trip::FrameType::server_hello, "SERVER_HELLO");
    crypto::Bytes exporter = channel::tls_exporter(conn->tls(), trip::kExporterLabel);
    try {
      agreement = hs.finish(sh.body, exporter);
    } catch (...) {
      crypto::secure_wipe(exporter);
      throw;
    }
    crypto::secure_wipe(exporter);
    const auto ready = co_await expect(*conn, trip::FrameType::ready, "READY");
    if (!trip::ready_matches(agreement.keys, ready.body)) {
      conn->close(trip::CloseCode::protocol, "READY does not match: the two sides hold different keys");
      throw std::runtime_error("READY does not match");
    }
    // The datagrams take the route the control connection took (docs/trip.md §1).
    if (p.data.is_open()) p.data.close(ec);
    const udp::endpoint peer(remote.address(), remote.port());
    p.data.open(peer.protocol(), ec);
    if (!ec) p.data.connect(peer, ec);
    if (!ec) p.data.non_blocking(true, ec);
    if (ec) throw std::runtime_error("cannot open UDP to " + peer.address().to_string() + ": " + ec.message());
    spawn(path_receive(p));
  }
  auto session = std::make_unique<trip::Session>(trip::SessionRole::client, agreement, Clock::now());
  std::error_code ec;
  install(p, std::move(session), conn);
  p.current->peer = p.data.remote_endpoint(ec);
  send_keepalive(p);  // at once: the server learns where to send (docs/trip.md §7)
  spdlog::info("path {}: session {} up with {} (server boot {:016x})", p.config.name, agreement.session, peer_text(*conn),
               agreement.server_boot);
  co_await control_loop(p, conn);
}

// ---- server side ------------------------------------------------------------------------------

asio::awaitable<void> Daemon::accept_loop(Path& p) {
  for (;;) {
    tcp::socket socket(io_);
    try {
      co_await p.acceptor->async_accept(socket, use_awaitable);
    } catch (const std::system_error& e) {
      if (stopped_ || e.code() == asio::error::operation_aborted) co_return;
      continue;  // EMFILE and the like: the next accept may do
    }
    std::error_code ec;
    const auto source = socket.remote_endpoint(ec).address();
    if (handshakes_ >= config_.limits.max_handshakes || handshakes_by_source_[source] >= config_.limits.max_handshakes_per_source) {
      ++p.counters.busy;
      if (p.log_limit.allow().log) spdlog::warn("path {}: connection from {} refused: too many handshakes", p.config.name, source.to_string());
      socket.close(ec);
      if (handshakes_by_source_[source] == 0) handshakes_by_source_.erase(source);
      continue;
    }
    auto conn = std::make_shared<ControlConnection>(std::move(socket), *server_tls_);
    spawn(serve(p, conn));
  }
}

asio::awaitable<void> Daemon::serve(Path& p, std::shared_ptr<ControlConnection> conn) {
  const auto source = conn->remote().address();
  ++handshakes_;
  ++handshakes_by_source_[source];
  bool counted = true;
  const auto uncount = [&] {
    if (!counted) return;
    counted = false;
    --handshakes_;
    if (--handshakes_by_source_[source] == 0) handshakes_by_source_.erase(source);
  };
  try {
    trip::SessionAgreement agreement;
    {
      HandshakeDeadline deadline(io_, conn, config_.limits.handshake_timeout);
      co_await conn->tls().async_handshake(asio::ssl::stream_base::server, use_awaitable);
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
      trip::ServerOffer offer;
      offer.accept_kems = config_.session.accept_kems;
      offer.keepalive_ms = config_.session.keepalive_ms;
      offer.dead_after_ms = config_.session.dead_after_ms;
      offer.key_update_datagrams = config_.session.key_update_datagrams;
      offer.key_update_seconds = config_.session.key_update_seconds;
      crypto::Bytes exporter = channel::tls_exporter(conn->tls(), trip::kExporterLabel);
      trip::ServerAnswer answer;
      try {
        answer = trip::answer_client_hello(ch.body, exporter, offer, config_.session_flows(p.config), boot_, p.next_session);
      } catch (const trip::HandshakeError& e) {
        crypto::secure_wipe(exporter);
        conn->close(e.code(), e.what());
        throw;
      }
      crypto::secure_wipe(exporter);
      co_await conn->write_frame(trip::FrameType::server_hello, answer.body);
      const channel::Digest ready = trip::ready_body(answer.agreement.keys);
      co_await conn->write_frame(trip::FrameType::ready, ready);
      agreement = std::move(answer.agreement);
    }
    uncount();
    ++p.next_session;
    install(p, std::make_unique<trip::Session>(trip::SessionRole::server, agreement, Clock::now()), conn);
    spdlog::info("path {}: session {} up with {} (client boot {:016x})", p.config.name, agreement.session, peer_text(*conn),
                 agreement.client_boot);
    co_await control_loop(p, conn);
  } catch (const std::exception& e) {
    uncount();
    conn->abort();
    if (!stopped_) {
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
    if (!stopped_ && !conn->closed()) spdlog::info("path {}: control connection ended: {}", p.config.name, e.what());
  }
  conn->abort();
  retire(p, conn.get());
}

void Daemon::install(Path& p, std::unique_ptr<trip::Session> s, std::shared_ptr<ControlConnection> conn) {
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
  keepalive_tick(p);
}

void Daemon::retire(Path& p, const ControlConnection* conn) {
  if (p.current && p.current->control.get() == conn) {
    p.current->retired = Clock::now();
    p.current->control.reset();
    p.previous = std::move(p.current);
    p.current.reset();
    spdlog::info("path {}: down", p.config.name);
  }
}

void Daemon::keepalive_tick(Path& p) {
  if (!p.current || stopped_) return;
  p.keepalive_timer.expires_after(p.current->session->keepalive_interval());
  p.keepalive_timer.async_wait([this, &p](std::error_code ec) {
    if (ec || !p.current || stopped_) return;
    if (p.current->session->dead(Clock::now())) {
      ++p.counters.sessions_dead;
      spdlog::warn("path {}: no keepalive for {} ms: the session ends", p.config.name, p.current->session->dead_after().count());
      if (p.current->control) p.current->control->close(trip::CloseCode::timeout, "no keepalive within dead_after_ms");
      return;  // the control loop ends and retires it
    }
    send_keepalive(p);
    keepalive_tick(p);
  });
}

void Daemon::send_keepalive(Path& p) {
  if (!p.current || !p.current->peer) return;
  std::array<std::uint8_t, trip::kKeepaliveSize> k{};
  p.current->session->seal_keepalive(k, Clock::now());
  if (send_on(p, k)) ++p.counters.keepalives_sent;
}

}  // namespace pqot::tripd
