// The TRIP relay (docs/trip.md §9): TCP pairs copied byte for byte with a bounded buffer per
// direction, UDP associations per client address, one sweep timer for both.
#include "tripd/relay.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <asio.hpp>
#include <chrono>
#include <list>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "pqot/common/log_limiter.hpp"

namespace pqot::tripd {

namespace {

using asio::awaitable;
using asio::use_awaitable;

std::string text_of(const common::HostPort& hp) {
  const bool v6 = hp.host.find(':') != std::string::npos;
  return (v6 ? "[" + hp.host + "]" : hp.host) + ":" + std::to_string(hp.port);
}

template <class Endpoint>
std::string text_of(const Endpoint& ep) {
  const auto a = ep.address();
  return (a.is_v6() ? "[" + a.to_string() + "]" : a.to_string()) + ":" + std::to_string(ep.port());
}

}  // namespace

struct Relay::Impl : std::enable_shared_from_this<Relay::Impl> {
  // Names of this class's own, not of the namespace: tripd_net's files share a unity batch.
  using Tcp = asio::ip::tcp;
  using Udp = asio::ip::udp;
  using Clock = std::chrono::steady_clock;
  static constexpr std::size_t kMaxDatagram = 65'535;
  static constexpr int kDatagramsPerWake = 64;  // then other sockets get their turn
  static constexpr auto kAcceptPause = std::chrono::milliseconds(100);
  static constexpr int kPortZeroTries = 16;  // port 0: a free TCP port whose UDP twin is free too

  // One TCP connection and its twin towards `forward`. Each direction owns one buffer of at most
  // `max_buffer` bytes: it is read into only once the other side has taken all of it, so a slow
  // reader pauses reading from its peer instead of growing a queue.
  struct Direction {
    std::unique_ptr<std::uint8_t[]> buffer;  // allocated at the first read
    std::size_t held = 0;
    bool done = false;  // EOF read and passed on as a shutdown of the other side
  };

  struct TcpPair {
    TcpPair(Tcp::socket c, Tcp::socket s) : client(std::move(c)), server(std::move(s)) {}
    Tcp::socket client;
    Tcp::socket server;
    Direction up;    // client → forward
    Direction down;  // forward → client
    Clock::time_point last_activity = Clock::now();
    bool connected = false;
    bool closed = false;
  };

  // One UDP client address: its own socket connected to `forward`.
  struct Association {
    explicit Association(asio::io_context& io) : socket(io) {}
    Udp::socket socket;
    Udp::endpoint client;
    Clock::time_point last_activity = Clock::now();
    std::list<std::shared_ptr<Association>>::iterator lru;  // its place in lru below
    bool closed = false;
  };

  Impl(asio::io_context& io_, RelayConfig config_)
      : io(io_),
        config(std::move(config_)),
        acceptor(io),
        accept_pause(io),
        udp(io),
        sweep_timer(io),
        datagram(kMaxDatagram) {}

  asio::io_context& io;
  const RelayConfig config;
  Tcp::acceptor acceptor;
  asio::steady_timer accept_pause;  // after a failed accept (e.g. out of descriptors)
  Udp::socket udp;
  asio::steady_timer sweep_timer;
  std::vector<Tcp::endpoint> forward_tcp;  // resolved once, in start()
  Udp::endpoint forward_udp;
  std::uint16_t bound_port = 0;
  bool started = false;
  bool closed = false;

  std::set<std::shared_ptr<TcpPair>> pairs;
  std::map<Udp::endpoint, std::shared_ptr<Association>> associations;
  std::list<std::shared_ptr<Association>> lru;  // front: idle longest
  std::vector<std::uint8_t> datagram;           // one receive buffer: everything runs on `io`
  RelayStats stats;

  // One limiter per refusal kind, so that a flood of one kind does not hide the others.
  common::LogLimiter log_refused, log_connect, log_evicted, log_dropped;

  void open_listeners();
  void close_all();
  void note(common::LogLimiter& limiter, const std::string& what);
  Clock::duration sweep_period() const {
    return std::max<Clock::duration>(config.idle / 4, std::chrono::milliseconds(1));
  }

  // TCP
  void accept_next();
  void on_accept(Tcp::socket socket);
  void close_pair(const std::shared_ptr<TcpPair>& p);
  // `self` is `this`, owned by the coroutine's frame: a Relay destroyed while the loop runs on
  // leaves its Impl to the last coroutine that ends.
  awaitable<void> run_pair(std::shared_ptr<Impl> self, std::shared_ptr<TcpPair> p);
  awaitable<void> pump(std::shared_ptr<Impl> self, std::shared_ptr<TcpPair> p, bool upstream);

  // UDP
  void wait_listen();
  void drain_listen();
  void from_client(const Udp::endpoint& client, std::size_t n);
  std::shared_ptr<Association> associate(const Udp::endpoint& client);
  void wait_association(const std::shared_ptr<Association>& a);
  void drain_association(const std::shared_ptr<Association>& a);
  void drop(std::shared_ptr<Association> a);  // by value: callers pass lru's own element
  void touch(Association& a);

  void sweep();
};

void Relay::Impl::note(common::LogLimiter& limiter, const std::string& what) {
  if (const auto permit = limiter.allow(); permit.log) {
    spdlog::warn("relay {}: {}{}", config.name, what,
                 permit.suppressed ? fmt::format(" ({} similar lines left out)", permit.suppressed)
                                   : std::string());
  }
}

// Binds TCP and UDP on one port; throws std::system_error (the caller names the address).
void Relay::Impl::open_listeners() {
  Tcp::resolver resolver(io);
  const auto listen = resolver.resolve(config.listen.host, std::to_string(config.listen.port),
                                       Tcp::resolver::passive | Tcp::resolver::numeric_service);
  const Tcp::endpoint tcp_ep = listen.begin()->endpoint();
  for (int attempt = 0;; ++attempt) {
    asio::error_code ec;
    acceptor.open(tcp_ep.protocol());
    acceptor.set_option(Tcp::acceptor::reuse_address(true));
    acceptor.bind(tcp_ep);
    bound_port = acceptor.local_endpoint().port();
    udp.open(tcp_ep.protocol() == Tcp::v4() ? Udp::v4() : Udp::v6());
    udp.bind(Udp::endpoint(tcp_ep.address(), bound_port), ec);
    if (!ec) break;
    acceptor.close();
    udp.close();
    // With a fixed port the UDP error is the answer; with port 0 another free port may suit both.
    if (config.listen.port != 0 || attempt + 1 == kPortZeroTries)
      throw std::system_error(ec, "UDP");
  }
  acceptor.listen(asio::socket_base::max_listen_connections);
  udp.non_blocking(true);
}

void Relay::Impl::close_all() {
  closed = true;
  asio::error_code ec;
  acceptor.close(ec);
  udp.close(ec);
  accept_pause.cancel();
  sweep_timer.cancel();
  for (const auto& p : std::vector(pairs.begin(), pairs.end())) close_pair(p);
  while (!lru.empty()) drop(lru.front());
}

// ---------------------------------------------------------------------------------------------
// TCP

void Relay::Impl::accept_next() {
  acceptor.async_accept([self = shared_from_this()](asio::error_code ec, Tcp::socket socket) {
    if (self->closed || ec == asio::error::operation_aborted) return;
    if (ec) {  // out of descriptors, say: pause instead of spinning
      self->note(self->log_refused, "accept failed: " + ec.message());
      self->accept_pause.expires_after(kAcceptPause);
      self->accept_pause.async_wait([self](asio::error_code wait_ec) {
        if (!wait_ec && !self->closed) self->accept_next();
      });
      return;
    }
    self->on_accept(std::move(socket));
    self->accept_next();
  });
}

void Relay::Impl::on_accept(Tcp::socket socket) {
  asio::error_code ec;
  if (pairs.size() >= config.max_connections) {
    ++stats.tcp_refused;
    const auto peer = socket.remote_endpoint(ec);
    note(log_refused, "closed a new TCP connection" +
                          (ec ? std::string() : " from " + text_of(peer)) + ": " +
                          std::to_string(config.max_connections) + " are open (max_connections)");
    socket.close(ec);
    return;
  }
  ++stats.tcp_accepted;
  auto p = std::make_shared<TcpPair>(std::move(socket), Tcp::socket(io));
  pairs.insert(p);
  asio::co_spawn(io, run_pair(shared_from_this(), p), asio::detached);
}

void Relay::Impl::close_pair(const std::shared_ptr<TcpPair>& p) {
  if (p->closed) return;
  p->closed = true;
  asio::error_code ec;
  p->client.close(ec);  // pending operations end with operation_aborted
  p->server.close(ec);
  pairs.erase(p);
}

awaitable<void> Relay::Impl::run_pair(std::shared_ptr<Impl> self, std::shared_ptr<TcpPair> p) {
  asio::error_code ec;
  co_await asio::async_connect(p->server, forward_tcp, asio::redirect_error(use_awaitable, ec));
  if (p->closed) co_return;  // stop(), or the sweep gave up on the connect
  if (ec) {
    ++stats.tcp_connect_failures;
    note(log_connect, "cannot connect to " + text_of(config.forward) + ": " + ec.message() +
                          "; closed the client's connection");
    close_pair(p);
    co_return;
  }
  p->connected = true;
  p->last_activity = Clock::now();
  p->client.set_option(Tcp::no_delay(true), ec);  // the daemons' control frames are small
  p->server.set_option(Tcp::no_delay(true), ec);
  asio::co_spawn(io, pump(self, p, true), asio::detached);
  asio::co_spawn(io, pump(std::move(self), p, false), asio::detached);
}

// Copies one direction until EOF (then half-closes the other side) or an error (then closes both).
awaitable<void> Relay::Impl::pump([[maybe_unused]] std::shared_ptr<Impl> self,
                                  std::shared_ptr<TcpPair> p, bool upstream) {
  Tcp::socket& from = upstream ? p->client : p->server;
  Tcp::socket& to = upstream ? p->server : p->client;
  Direction& d = upstream ? p->up : p->down;
  const Direction& other = upstream ? p->down : p->up;
  std::uint64_t& forwarded = upstream ? stats.tcp_bytes_to_forward : stats.tcp_bytes_to_client;
  if (!d.buffer) d.buffer = std::make_unique_for_overwrite<std::uint8_t[]>(config.max_buffer);
  asio::error_code read_ec;
  asio::error_code write_ec;
  while (!p->closed) {
    const std::size_t n =
        co_await from.async_read_some(asio::buffer(d.buffer.get(), config.max_buffer),
                                      asio::redirect_error(use_awaitable, read_ec));
    if (read_ec) break;
    d.held = n;
    stats.tcp_buffered += n;
    stats.tcp_buffer_peak = std::max<std::uint64_t>(stats.tcp_buffer_peak, n);
    p->last_activity = Clock::now();
    std::size_t sent = 0;
    while (sent < n && !write_ec) {
      const std::size_t w =
          co_await to.async_write_some(asio::buffer(d.buffer.get() + sent, n - sent),
                                       asio::redirect_error(use_awaitable, write_ec));
      sent += w;
      d.held -= w;
      stats.tcp_buffered -= w;
      forwarded += w;
      p->last_activity = Clock::now();  // a slow reader that still reads is not idle
    }
    if (write_ec) break;
  }
  stats.tcp_buffered -= d.held;
  d.held = 0;
  if (p->closed) co_return;
  if (read_ec == asio::error::eof && !write_ec) {
    asio::error_code ec;
    to.shutdown(Tcp::socket::shutdown_send, ec);  // pass the FIN on, after every byte before it
    d.done = true;
    if (!ec && !other.done) co_return;  // the other direction still flows
  }
  close_pair(p);
}

// ---------------------------------------------------------------------------------------------
// UDP: readiness waits, then non-blocking receives into the one buffer; sends never wait.

void Relay::Impl::wait_listen() {
  udp.async_wait(Udp::socket::wait_read, [self = shared_from_this()](asio::error_code ec) {
    if (ec || self->closed) return;
    self->drain_listen();
    self->wait_listen();
  });
}

void Relay::Impl::drain_listen() {
  for (int i = 0; i < kDatagramsPerWake; ++i) {
    Udp::endpoint client;
    asio::error_code ec;
    const std::size_t n = udp.receive_from(asio::buffer(datagram), client, 0, ec);
    if (ec) return;  // would_block: all read; anything else: the next wait tells
    from_client(client, n);
  }
}

void Relay::Impl::from_client(const Udp::endpoint& client, std::size_t n) {
  std::shared_ptr<Association> a;
  if (const auto it = associations.find(client); it != associations.end()) {
    a = it->second;
  } else {
    a = associate(client);
    if (!a) return;
  }
  touch(*a);
  asio::error_code ec;
  a->socket.send(asio::buffer(datagram.data(), n), 0, ec);
  if (ec) {  // would_block (never queued), or `forward` refused an earlier one (ICMP)
    ++stats.udp_send_drops;
    note(log_dropped, "dropped a datagram to " + text_of(forward_udp) + ": " + ec.message());
    return;
  }
  ++stats.udp_datagrams_to_forward;
  stats.udp_bytes_to_forward += n;
}

std::shared_ptr<Relay::Impl::Association> Relay::Impl::associate(const Udp::endpoint& client) {
  if (associations.size() >= config.max_associations) {
    const auto idlest = lru.front();
    ++stats.udp_associations_evicted;
    note(log_evicted, "forgot UDP client " + text_of(idlest->client) + ", idle longest, for " +
                          text_of(client) + ": " + std::to_string(config.max_associations) +
                          " associations (max_associations)");
    drop(idlest);
  }
  auto a = std::make_shared<Association>(io);
  asio::error_code ec;
  a->socket.open(forward_udp.protocol(), ec);
  if (!ec) a->socket.connect(forward_udp, ec);
  if (!ec) a->socket.non_blocking(true, ec);
  if (ec) {
    ++stats.udp_send_drops;
    note(log_dropped, "dropped a datagram from " + text_of(client) + ": no socket towards " +
                          text_of(forward_udp) + ": " + ec.message());
    a->socket.close(ec);
    return nullptr;
  }
  a->client = client;
  a->lru = lru.insert(lru.end(), a);
  associations.emplace(client, a);
  wait_association(a);
  return a;
}

void Relay::Impl::wait_association(const std::shared_ptr<Association>& a) {
  a->socket.async_wait(Udp::socket::wait_read, [self = shared_from_this(), a](asio::error_code ec) {
    if (ec || a->closed) return;
    self->drain_association(a);
    if (!a->closed) self->wait_association(a);
  });
}

void Relay::Impl::drain_association(const std::shared_ptr<Association>& a) {
  for (int i = 0; i < kDatagramsPerWake; ++i) {
    asio::error_code ec;
    const std::size_t n = a->socket.receive(asio::buffer(datagram), 0, ec);
    if (ec == asio::error::connection_refused) continue;  // an ICMP error from `forward`: read on
    if (ec) return;
    touch(*a);
    udp.send_to(asio::buffer(datagram.data(), n), a->client, 0, ec);
    if (ec) {
      ++stats.udp_send_drops;
      note(log_dropped, "dropped a datagram to " + text_of(a->client) + ": " + ec.message());
      continue;
    }
    ++stats.udp_datagrams_to_client;
    stats.udp_bytes_to_client += n;
  }
}

void Relay::Impl::touch(Association& a) {
  a.last_activity = Clock::now();
  lru.splice(lru.end(), lru, a.lru);
}

// A reference could be lru's own element, which this erases.
// NOLINTNEXTLINE(performance-unnecessary-value-param)
void Relay::Impl::drop(std::shared_ptr<Association> a) {
  if (a->closed) return;
  a->closed = true;
  asio::error_code ec;
  a->socket.close(ec);
  associations.erase(a->client);
  lru.erase(a->lru);
}

// ---------------------------------------------------------------------------------------------
// The sweep: every idle/4, so a connection or association goes between `idle` and 1.25 × `idle`
// after its last byte.

void Relay::Impl::sweep() {
  const auto cutoff = Clock::now() - config.idle;
  while (!lru.empty() && lru.front()->last_activity <= cutoff) {
    ++stats.udp_associations_expired;
    drop(lru.front());
  }
  for (const auto& p : std::vector(pairs.begin(), pairs.end())) {
    if (p->last_activity > cutoff) continue;
    if (p->connected) {
      ++stats.tcp_idle_closed;
    } else {
      ++stats.tcp_connect_failures;
      note(log_connect, "gave up connecting to " + text_of(config.forward) + " after " +
                            std::to_string(config.idle.count()) + " ms (idle_ms)");
    }
    close_pair(p);
  }
  sweep_timer.expires_after(sweep_period());
  sweep_timer.async_wait([self = shared_from_this()](asio::error_code ec) {
    if (!ec && !self->closed) self->sweep();
  });
}

// ---------------------------------------------------------------------------------------------

Relay::Relay(asio::io_context& io, RelayConfig config) {
  // The parser's ranges, checked again for configurations built in code: a zero here would spin
  // (max_buffer), evict from nothing (max_associations) or drop everything at once (idle).
  if (config.max_buffer == 0 || config.max_associations == 0 || config.idle <= Millis(0)) {
    throw std::invalid_argument("relay " + config.name +
                                ": max_buffer, max_associations and idle must be positive");
  }
  impl_ = std::make_shared<Impl>(io, std::move(config));
}

Relay::~Relay() {
  try {
    stop();
  } catch (const std::exception&) {
    // Only allocation (the list of pairs to close) or logging can fail here; destroying `io`
    // then closes what is left.
  }
}

void Relay::start() {
  using Tcp = Impl::Tcp;
  using Udp = Impl::Udp;
  Impl& s = *impl_;
  if (s.started) throw std::logic_error("relay " + s.config.name + ": start() twice");
  const std::string where = text_of(s.config.listen);
  try {
    Tcp::resolver resolver(s.io);
    const std::string port = std::to_string(s.config.forward.port);
    for (const auto& r :
         resolver.resolve(s.config.forward.host, port, Tcp::resolver::numeric_service)) {
      s.forward_tcp.push_back(r.endpoint());
    }
    Udp::resolver udp_resolver(s.io);
    s.forward_udp =
        udp_resolver.resolve(s.config.forward.host, port, Udp::resolver::numeric_service)
            .begin()
            ->endpoint();
  } catch (const std::system_error& e) {
    throw std::runtime_error("relay " + s.config.name + ": cannot resolve forward " +
                             text_of(s.config.forward) + ": " + e.what());
  }
  try {
    s.open_listeners();
  } catch (const std::system_error& e) {
    asio::error_code ignored;
    s.acceptor.close(ignored);
    s.udp.close(ignored);
    s.bound_port = 0;
    throw std::runtime_error("relay " + s.config.name + ": cannot listen on " + where + ": " +
                             e.what());
  }
  s.started = true;
  spdlog::info("relay {}: {} (TCP and UDP) → {}", s.config.name,
               text_of(s.acceptor.local_endpoint()), text_of(s.config.forward));
  s.accept_next();
  s.wait_listen();
  s.sweep();
}

void Relay::stop() {
  if (!impl_->started || impl_->closed) return;
  impl_->close_all();
  spdlog::info("relay {}: stopped", impl_->config.name);
}

std::uint16_t Relay::port() const {
  return impl_->bound_port;
}

RelayStats Relay::stats() const {
  RelayStats s = impl_->stats;
  s.tcp_open = impl_->pairs.size();
  s.udp_associations_open = impl_->associations.size();
  return s;
}

}  // namespace pqot::tripd
