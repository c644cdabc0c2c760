// The relay (docs/trip.md §9) on loopback: echo and source servers behind it, clients in front.
// The relay runs on its own thread; the tests read its stats on that thread (RelayRunner::call).
#include <gtest/gtest.h>

#include <asio.hpp>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <future>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "../support/refused_port.hpp"
#include "../support/wait.hpp"
#include "tripd/relay.hpp"

namespace {

using pqot::test::eventually;
using pqot::tripd::Relay;
using pqot::tripd::RelayConfig;
using pqot::tripd::RelayStats;
using Tcp = asio::ip::tcp;
using Udp = asio::ip::udp;
using Bytes = std::vector<std::uint8_t>;
using namespace std::chrono_literals;

const asio::ip::address_v4 kLoopback = asio::ip::address_v4::loopback();
constexpr auto kClientPatience = 30s;  // for one exchange of a client with the relay

Bytes pattern(std::size_t n, std::uint32_t seed) {
  Bytes b(n);
  for (auto& x : b) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<std::uint8_t>(seed >> 24);
  }
  return b;
}

RelayConfig relay_config(std::uint16_t forward_port) {
  RelayConfig c;
  c.name = "test";
  c.listen = {"127.0.0.1", 0};  // any free port (the configuration parser refuses 0)
  c.forward = {"127.0.0.1", forward_port};
  return c;
}

std::size_t open_descriptors() {
  return static_cast<std::size_t>(std::distance(
      std::filesystem::directory_iterator("/proc/self/fd"), std::filesystem::directory_iterator()));
}

// A relay on its own io_context and thread.
class RelayRunner {
 public:
  explicit RelayRunner(RelayConfig c) : relay_(io_, std::move(c)) {}
  RelayRunner(const RelayRunner&) = delete;
  RelayRunner& operator=(const RelayRunner&) = delete;
  ~RelayRunner() {
    if (!thread_.joinable()) return;
    call([this] { relay_.stop(); });
    work_.reset();
    thread_.join();  // returns only once stop() left no handler pending
  }
  void start() {
    relay_.start();
    work_.emplace(io_.get_executor());
    thread_ = std::thread([this] { io_.run(); });
  }
  template <class F>
  auto call(F f) -> decltype(f()) {
    std::packaged_task<decltype(f())()> task(std::move(f));
    auto result = task.get_future();
    asio::post(io_, [&task] { task(); });
    return result.get();
  }
  RelayStats stats() {
    return call([this] { return relay_.stats(); });
  }
  void stop() {
    call([this] { relay_.stop(); });
  }
  std::uint16_t port() const { return relay_.port(); }
  Tcp::endpoint tcp() const { return {kLoopback, port()}; }
  Udp::endpoint udp() const { return {kLoopback, port()}; }

 private:
  asio::io_context io_;
  Relay relay_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
  std::thread thread_;
};

// A TCP server on its own thread that hands each connection to `handler`.
class TcpServer {
 public:
  using Handler = std::function<asio::awaitable<void>(Tcp::socket)>;
  explicit TcpServer(Handler handler) : handler_(std::move(handler)) {
    acceptor_.open(Tcp::v4());
    acceptor_.bind({kLoopback, 0});
    acceptor_.listen();
    asio::co_spawn(io_, accept_loop(), asio::detached);
    thread_ = std::thread([this] { io_.run(); });
  }
  TcpServer(const TcpServer&) = delete;
  TcpServer& operator=(const TcpServer&) = delete;
  ~TcpServer() {
    io_.stop();
    thread_.join();
  }
  std::uint16_t port() const { return acceptor_.local_endpoint().port(); }

 private:
  asio::awaitable<void> accept_loop() {
    for (;;) {
      asio::error_code ec;
      Tcp::socket s =
          co_await acceptor_.async_accept(asio::redirect_error(asio::use_awaitable, ec));
      if (ec) co_return;
      asio::co_spawn(io_, handler_(std::move(s)), asio::detached);
    }
  }
  asio::io_context io_;
  Tcp::acceptor acceptor_{io_};
  Handler handler_;
  std::thread thread_;
};

// Sends back what it reads; at EOF shuts down its side and waits for the peer to close.
asio::awaitable<void> echo(Tcp::socket s) {
  Bytes buffer(65536);
  asio::error_code ec;
  for (;;) {
    const std::size_t n = co_await s.async_read_some(asio::buffer(buffer),
                                                     asio::redirect_error(asio::use_awaitable, ec));
    if (ec) break;
    co_await asio::async_write(s, asio::buffer(buffer.data(), n),
                               asio::redirect_error(asio::use_awaitable, ec));
    if (ec) co_return;
  }
  s.shutdown(Tcp::socket::shutdown_send, ec);
  co_await s.async_read_some(asio::buffer(buffer), asio::redirect_error(asio::use_awaitable, ec));
}

// Sends `n` bytes of pattern(n, 7), then EOF.
asio::awaitable<void> source(Tcp::socket s, std::size_t n) {
  const Bytes data = pattern(n, 7);
  asio::error_code ec;
  co_await asio::async_write(s, asio::buffer(data), asio::redirect_error(asio::use_awaitable, ec));
  s.shutdown(Tcp::socket::shutdown_send, ec);
  Bytes sink(4096);
  co_await s.async_read_some(asio::buffer(sink), asio::redirect_error(asio::use_awaitable, ec));
}

struct Exchange {
  Bytes received;
  bool eof = false;  // the peer's FIN arrived (not a reset)
};

// Writes `out` (then shuts down the sending side if `then_shutdown`) while reading until EOF, an
// error or `expect` bytes; at most kClientPatience.
Exchange exchange(asio::io_context& io, Tcp::socket& s, const Bytes& out, bool then_shutdown,
                  std::size_t expect = std::numeric_limits<std::size_t>::max()) {
  Exchange r;
  Bytes chunk(65536);
  asio::error_code ignored;
  if (!out.empty()) {
    asio::async_write(s, asio::buffer(out), [&](asio::error_code ec, std::size_t) {
      if (!ec && then_shutdown) s.shutdown(Tcp::socket::shutdown_send, ignored);
    });
  } else if (then_shutdown) {
    s.shutdown(Tcp::socket::shutdown_send, ignored);
  }
  std::function<void()> read_next = [&] {
    if (r.received.size() >= expect) return;
    s.async_read_some(asio::buffer(chunk), [&](asio::error_code ec, std::size_t n) {
      r.received.insert(r.received.end(), chunk.begin(),
                        chunk.begin() + static_cast<std::ptrdiff_t>(n));
      if (ec) {
        r.eof = ec == asio::error::eof;
        return;
      }
      read_next();
    });
  };
  read_next();
  io.restart();
  io.run_for(kClientPatience);
  if (!io.stopped()) {  // out of patience: end what is pending
    s.cancel(ignored);
    io.restart();
    io.run();
  }
  return r;
}

Tcp::socket connect(asio::io_context& io, const Tcp::endpoint& to) {
  Tcp::socket s(io);
  s.connect(to);
  return s;
}

// Echoes one message through `s`: whether it came back whole.
bool echoes(asio::io_context& io, Tcp::socket& s, std::uint32_t seed) {
  const Bytes out = pattern(1000, seed);
  return exchange(io, s, out, false, out.size()).received == out;
}

TEST(TripRelay, Section9_TcpBytesRoundTripExactlyBothWays) {
  TcpServer server(echo);
  RelayRunner relay(relay_config(server.port()));
  relay.start();
  asio::io_context io;
  Tcp::socket s = connect(io, relay.tcp());
  const Bytes small = pattern(1, 1);
  EXPECT_EQ(exchange(io, s, small, false, 1).received, small);
  const Bytes big = pattern(1 << 20, 2);  // more than max_buffer: the relay pauses and resumes
  const Exchange r = exchange(io, s, big, true);
  EXPECT_EQ(r.received.size(), big.size());
  EXPECT_TRUE(r.received == big);
  EXPECT_TRUE(r.eof);
  const RelayStats st = relay.stats();
  EXPECT_EQ(st.tcp_accepted, 1u);
  EXPECT_EQ(st.tcp_bytes_to_forward, big.size() + 1);
  EXPECT_EQ(st.tcp_bytes_to_client, big.size() + 1);
}

TEST(TripRelay, Section9_HalfCloseDeliversEverythingThenEof) {
  TcpServer server(echo);
  RelayRunner relay(relay_config(server.port()));
  relay.start();
  asio::io_context io;
  Tcp::socket s = connect(io, relay.tcp());
  const Bytes out = pattern(300'000, 3);
  const Exchange r = exchange(io, s, out, true);  // FIN right after the last byte
  EXPECT_TRUE(r.received == out);
  EXPECT_TRUE(r.eof);
  EXPECT_TRUE(eventually([&] { return relay.stats().tcp_open == 0; }));  // both directions done
}

TEST(TripRelay, Section9_PastMaxConnectionsANewOneIsClosedAtOnce) {
  TcpServer server(echo);
  RelayConfig c = relay_config(server.port());
  c.max_connections = 2;
  RelayRunner relay(c);
  relay.start();
  asio::io_context io;
  Tcp::socket hostile = connect(io, relay.tcp());  // holds a slot and sends little
  Tcp::socket legit = connect(io, relay.tcp());
  ASSERT_TRUE(echoes(io, hostile, 10));
  ASSERT_TRUE(echoes(io, legit, 11));
  Tcp::socket third = connect(io, relay.tcp());
  const Exchange refused = exchange(io, third, {}, false);
  EXPECT_TRUE(refused.received.empty());  // closed without a byte (a FIN or a reset)
  EXPECT_EQ(relay.stats().tcp_refused, 1u);
  EXPECT_TRUE(echoes(io, hostile, 12));
  EXPECT_TRUE(echoes(io, legit, 13));
  // The hostile client leaves: its slot is free for the next one.
  hostile.close();
  ASSERT_TRUE(eventually([&] { return relay.stats().tcp_open == 1; }));
  Tcp::socket next = connect(io, relay.tcp());
  EXPECT_TRUE(echoes(io, next, 14));
  EXPECT_TRUE(echoes(io, legit, 15));
  const RelayStats st = relay.stats();
  EXPECT_EQ(st.tcp_accepted, 3u);
  EXPECT_EQ(st.tcp_refused, 1u);
}

TEST(TripRelay, Section9_ASlowReaderPausesReadingAtMaxBuffer) {
  constexpr std::size_t kTotal = 10u << 20;
  TcpServer server([](Tcp::socket s) { return source(std::move(s), kTotal); });
  RelayConfig c = relay_config(server.port());
  c.max_buffer = std::size_t{64} * 1024;
  RelayRunner relay(c);
  relay.start();
  asio::io_context io;
  Tcp::socket s(io);
  s.open(Tcp::v4());
  s.set_option(asio::socket_base::receive_buffer_size(64 * 1024));  // no window autotuning
  s.connect(relay.tcp());
  // Reading nothing: wait until the relay holds bytes it cannot pass on and stops moving.
  std::uint64_t last = 0;
  int unchanged = 0;
  ASSERT_TRUE(eventually([&] {
    const RelayStats st = relay.stats();
    unchanged = st.tcp_bytes_to_client == last && st.tcp_buffered > 0 ? unchanged + 1 : 0;
    last = st.tcp_bytes_to_client;
    return unchanged >= 20;
  }));
  RelayStats st = relay.stats();
  EXPECT_LE(st.tcp_buffer_peak, c.max_buffer);
  EXPECT_LE(st.tcp_buffered, c.max_buffer);
  EXPECT_LT(st.tcp_bytes_to_client, kTotal);  // the rest waits in the server and the kernels
  const Exchange r = exchange(io, s, {}, false);
  EXPECT_EQ(r.received.size(), kTotal);
  EXPECT_TRUE(r.received == pattern(kTotal, 7));
  EXPECT_TRUE(r.eof);
  st = relay.stats();
  EXPECT_LE(st.tcp_buffer_peak, c.max_buffer);
  EXPECT_EQ(st.tcp_bytes_to_client, kTotal);
}

TEST(TripRelay, Section9_AnIdleConnectionIsClosed) {
  TcpServer server(echo);
  RelayConfig c = relay_config(server.port());
  c.idle = 1s;
  RelayRunner relay(c);
  relay.start();
  asio::io_context io;
  Tcp::socket s = connect(io, relay.tcp());
  ASSERT_TRUE(echoes(io, s, 20));
  const Exchange r = exchange(io, s, {}, false);  // returns when the relay closes
  EXPECT_TRUE(r.received.empty());
  EXPECT_TRUE(r.eof);
  EXPECT_TRUE(eventually([&] { return relay.stats().tcp_idle_closed == 1; }));
  EXPECT_EQ(relay.stats().tcp_open, 0u);
}

TEST(TripRelay, Section9_AFailedConnectClosesTheClient) {
  const pqot::test::RefusedPort closed;
  RelayRunner relay(relay_config(closed.port()));
  relay.start();
  asio::io_context io;
  Tcp::socket s = connect(io, relay.tcp());
  const Exchange r = exchange(io, s, {}, false);
  EXPECT_TRUE(r.received.empty());
  EXPECT_TRUE(eventually([&] { return relay.stats().tcp_connect_failures == 1; }));
  EXPECT_EQ(relay.stats().tcp_open, 0u);
}

// ---------------------------------------------------------------------------------------------
// UDP

// Sends every datagram back to where it came from.
class UdpEcho {
 public:
  explicit UdpEcho(std::uint16_t port = 0) {
    socket_.open(Udp::v4());
    socket_.bind({kLoopback, port});
    asio::co_spawn(io_, loop(), asio::detached);
    thread_ = std::thread([this] { io_.run(); });
  }
  UdpEcho(const UdpEcho&) = delete;
  UdpEcho& operator=(const UdpEcho&) = delete;
  ~UdpEcho() {
    io_.stop();
    thread_.join();
  }
  std::uint16_t port() const { return socket_.local_endpoint().port(); }

 private:
  asio::awaitable<void> loop() {
    Bytes buffer(65536);
    for (;;) {
      Udp::endpoint from;
      asio::error_code ec;
      const std::size_t n = co_await socket_.async_receive_from(
          asio::buffer(buffer), from, asio::redirect_error(asio::use_awaitable, ec));
      if (ec == asio::error::operation_aborted) co_return;
      if (!ec) socket_.send_to(asio::buffer(buffer.data(), n), from, 0, ec);
    }
  }
  asio::io_context io_;
  Udp::socket socket_{io_};
  std::thread thread_;
};

struct UdpClient {
  explicit UdpClient(asio::io_context& io_) : io(io_), socket(io_, Udp::endpoint(kLoopback, 0)) {}
  // Sends `out` to `to` and waits for one datagram: it, and where it came from.
  std::optional<Bytes> ask(const Udp::endpoint& to, const Bytes& out,
                           Udp::endpoint* from = nullptr) {
    socket.send_to(asio::buffer(out), to);
    Bytes in(65536);
    std::optional<Bytes> got;
    Udp::endpoint sender;
    socket.async_receive_from(asio::buffer(in), sender, [&](asio::error_code ec, std::size_t n) {
      if (!ec) got = Bytes(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(n));
    });
    io.restart();
    io.run_for(kClientPatience);
    if (!io.stopped()) {
      socket.cancel();
      io.restart();
      io.run();
    }
    if (from != nullptr) *from = sender;
    return got;
  }
  asio::io_context& io;
  Udp::socket socket;
};

Bytes text(const std::string& s) {
  return Bytes(s.begin(), s.end());
}

TEST(TripRelay, Section9_UdpClientsGetOnlyTheirOwnReplies) {
  UdpEcho server;
  RelayRunner relay(relay_config(server.port()));
  relay.start();
  asio::io_context io;
  UdpClient one(io);
  UdpClient two(io);
  for (int i = 0; i < 10; ++i) {
    Udp::endpoint from;
    EXPECT_EQ(one.ask(relay.udp(), text("one " + std::to_string(i)), &from),
              text("one " + std::to_string(i)));
    EXPECT_EQ(from, relay.udp());  // replies come from the listen address
    EXPECT_EQ(two.ask(relay.udp(), text("two " + std::to_string(i))),
              text("two " + std::to_string(i)));
  }
  const RelayStats st = relay.stats();
  EXPECT_EQ(st.udp_associations_open, 2u);
  EXPECT_EQ(st.udp_datagrams_to_forward, 20u);
  EXPECT_EQ(st.udp_datagrams_to_client, 20u);
  EXPECT_EQ(st.udp_bytes_to_forward, st.udp_bytes_to_client);
}

TEST(TripRelay, Section9_PastMaxAssociationsTheIdlestIsForgotten) {
  UdpEcho server;
  RelayConfig c = relay_config(server.port());
  c.max_associations = 2;
  RelayRunner relay(c);
  relay.start();
  asio::io_context io;
  UdpClient a(io);
  UdpClient b(io);
  UdpClient third(io);
  ASSERT_TRUE(a.ask(relay.udp(), text("a1")));
  ASSERT_TRUE(b.ask(relay.udp(), text("b1")));
  ASSERT_TRUE(a.ask(relay.udp(), text("a2")));  // now b is the idlest
  EXPECT_EQ(third.ask(relay.udp(), text("c1")), text("c1"));
  RelayStats st = relay.stats();
  EXPECT_EQ(st.udp_associations_evicted, 1u);
  EXPECT_EQ(st.udp_associations_open, 2u);
  EXPECT_EQ(a.ask(relay.udp(), text("a3")), text("a3"));  // a kept its association
  EXPECT_EQ(relay.stats().udp_associations_evicted, 1u);
  EXPECT_EQ(b.ask(relay.udp(), text("b2")), text("b2"));  // b comes back and pushes out the idlest
  st = relay.stats();
  EXPECT_EQ(st.udp_associations_evicted, 2u);
  EXPECT_EQ(st.udp_associations_open, 2u);
}

TEST(TripRelay, Section9_AnIdleAssociationExpires) {
  UdpEcho server;
  RelayConfig c = relay_config(server.port());
  c.idle = 1s;
  RelayRunner relay(c);
  relay.start();
  asio::io_context io;
  UdpClient a(io);
  ASSERT_EQ(a.ask(relay.udp(), text("before")), text("before"));
  EXPECT_TRUE(eventually([&] {
    const RelayStats st = relay.stats();
    return st.udp_associations_expired == 1 && st.udp_associations_open == 0;
  }));
  EXPECT_EQ(a.ask(relay.udp(), text("after")), text("after"));  // a new association
  EXPECT_EQ(relay.stats().udp_associations_open, 1u);
}

TEST(TripRelay, Section9_TheLargestDatagramIsRelayedWhole) {
  UdpEcho server;
  RelayRunner relay(relay_config(server.port()));
  relay.start();
  asio::io_context io;
  UdpClient a(io);
  const Bytes big =
      pattern(65'507, 5);  // the most UDP over IPv4 carries (65,535 - IP - UDP headers)
  EXPECT_EQ(a.ask(relay.udp(), big), big);
  EXPECT_EQ(relay.stats().udp_bytes_to_client, big.size());
}

TEST(TripRelay, StartNamesTheAddressItCannotBind) {
  asio::io_context io;
  Tcp::acceptor taken(io, {kLoopback, 0});
  RelayConfig c = relay_config(9);
  c.listen.port = taken.local_endpoint().port();
  Relay relay(io, c);
  try {
    relay.start();
    FAIL() << "start() bound a port in use";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("127.0.0.1:" + std::to_string(c.listen.port)),
              std::string::npos)
        << e.what();
  }
  relay.stop();
}

TEST(TripRelay, DestroyedWhileConnectionsAreOpenOnARunningLoop) {
  TcpServer server(echo);
  asio::io_context relay_io;
  auto relay = std::make_unique<Relay>(relay_io, relay_config(server.port()));
  relay->start();
  const Tcp::endpoint at(kLoopback, relay->port());
  auto work = asio::make_work_guard(relay_io);
  std::thread loop([&] { relay_io.run(); });
  asio::io_context io;
  Tcp::socket s = connect(io, at);
  EXPECT_TRUE(echoes(io, s, 30));
  std::promise<void> destroyed;
  asio::post(relay_io, [&] {
    relay.reset();  // the loop runs on: the connection's handlers end after the Relay
    destroyed.set_value();
  });
  destroyed.get_future().wait();
  work.reset();
  loop.join();
  EXPECT_TRUE(exchange(io, s, {}, false).received.empty());  // closed by the relay
}

TEST(TripRelay, LimitsThatCannotWorkAreRefused) {
  asio::io_context io;
  RelayConfig c = relay_config(9);
  c.max_buffer = 0;
  EXPECT_THROW(Relay(io, c), std::invalid_argument);
  c = relay_config(9);
  c.max_associations = 0;
  EXPECT_THROW(Relay(io, c), std::invalid_argument);
  c = relay_config(9);
  c.idle = std::chrono::milliseconds(0);
  EXPECT_THROW(Relay(io, c), std::invalid_argument);
}

TEST(TripRelay, StopWhileTrafficFlowsLeavesNoSocketOpen) {
  TcpServer tcp_server(echo);
  UdpEcho udp_server(tcp_server.port());  // `forward` is one port for both
  RelayConfig c = relay_config(tcp_server.port());
  RelayRunner relay(c);
  const std::size_t before = open_descriptors();
  relay.start();
  {
    asio::io_context io;
    std::vector<Tcp::socket> clients;
    clients.reserve(3);  // pending operations hold references to the sockets
    const Bytes out = pattern(8u << 20, 9);
    std::vector<Bytes> in(3, Bytes(65536));
    std::function<void(std::size_t)> read_next = [&](std::size_t i) {
      clients[i].async_read_some(asio::buffer(in[i]), [&, i](asio::error_code ec, std::size_t) {
        if (!ec) read_next(i);
      });
    };
    for (std::size_t i = 0; i < 3; ++i) {
      clients.push_back(connect(io, relay.tcp()));
      asio::async_write(clients[i], asio::buffer(out), [](asio::error_code, std::size_t) {});
      read_next(i);
    }
    std::thread client_thread([&] { io.run(); });
    asio::io_context udp_io;
    std::vector<std::unique_ptr<UdpClient>> udp_clients;
    for (int i = 0; i < 3; ++i) {
      udp_clients.push_back(std::make_unique<UdpClient>(udp_io));
      for (int k = 0; k < 20; ++k)
        udp_clients.back()->socket.send_to(asio::buffer(pattern(1000, 40 + k)), relay.udp());
    }
    const bool flowing = eventually([&] {
      const RelayStats st = relay.stats();
      return st.tcp_bytes_to_client > (1u << 20) && st.udp_associations_open == 3 &&
             st.udp_datagrams_to_client > 0;
    });
    relay.stop();  // while the clients still write and read
    const RelayStats st = relay.stats();
    EXPECT_TRUE(flowing);
    EXPECT_EQ(st.tcp_open, 0u);
    EXPECT_EQ(st.udp_associations_open, 0u);
    EXPECT_TRUE(eventually([&] { return relay.stats().tcp_buffered == 0; }));
    client_thread.join();  // the relay closed every connection: the clients' I/O ends
  }
  // The clients are gone and the echo server's connections end with them: only the relay's own
  // sockets could still be open.
  EXPECT_TRUE(eventually([&] { return open_descriptors() == before; }))
      << open_descriptors() << " vs " << before;
}

}  // namespace
