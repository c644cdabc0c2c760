// TRIP's in-process test harness (tests/trip/): two daemons on one io_context thread, a
// receiver of numbered datagrams, a numbered sender, and configurations of N loopback paths.
#pragma once

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <future>
#include <mutex>
#include <thread>

#include "../support/temp_dir.hpp"
#include "../support/wait.hpp"
#include "pqot/pki/test_pki.hpp"
#include "trip_ports.hpp"
#include "tripd/daemon.hpp"

namespace pqot::tripd::trip_test {

namespace fs = std::filesystem;
using asio::ip::udp;
using test::TempDir;

// Two daemons on one io_context thread; status is read on that thread.
class TripPair {
 public:
  explicit TripPair(const std::string& server_toml, bool server_has_role = true) : guard_(io_.get_executor()) {
    pki::PkiOptions o;
    o.dir = dir_.path() / "pki";
    o.clients = 2;
    o.client_roles[1] = {"trip"};  // client2 has no 'trip' role
    if (server_has_role) o.server_roles = {"trip"};
    pki::create_test_pki(o);
    server_ = std::make_unique<Daemon>(io_, parse_config(identity("server") + server_toml, "b.toml", ""));
    server_->start();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~TripPair() {
    on_io([this] {
      if (client_) client_->stop();
      server_->stop();
    });
    trip_wait_idle([this] { return (!client_ || client_->idle()) && server_->idle(); });
    // A stopped daemon ends its coroutines (docs/tripd.md): one still running is a bug here.
    if (!on_io([this] { return (!client_ || client_->idle()) && server_->idle(); })) ADD_FAILURE() << "a daemon did not become idle";
    guard_.reset();
    io_.stop();
    thread_.join();
  }
  std::string identity(const std::string& who) const {
    const fs::path d = dir_.path() / "pki";
    return "[identity]\nca = \"" + (d / "ca.crt").string() + "\"\ncert = \"" + (d / (who + ".crt")).string() + "\"\nkey = \"" +
           (d / (who + ".key")).string() + "\"\n";
  }
  // Starts the client daemon (on the io thread, as everything else).
  void start_client(const std::string& who, const std::string& toml) {
    on_io([&] {
      client_ = std::make_unique<Daemon>(io_, parse_config(identity(who) + toml, "a.toml", ""));
      client_->start();
    });
  }
  // Polls `idle` on the io thread until true (at most 10 s).
  template <class F>
  void trip_wait_idle(F idle) {
    for (int i = 0; i < 1000 && !on_io(idle); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  template <class F>
  auto on_io(F f) -> decltype(f()) {
    std::packaged_task<decltype(f())()> task(std::move(f));
    auto fut = task.get_future();
    asio::post(io_, [&task] { task(); });
    return fut.get();
  }
  // Stops the client daemon and starts another under the same configuration: a restart (a new boot).
  void restart_client(const std::string& who, const std::string& toml) {
    on_io([&] { client_->stop(); });
    trip_wait_idle([this] { return client_->idle(); });
    ASSERT_TRUE(on_io([this] { return client_->idle(); })) << "the stopped daemon did not become idle";
    on_io([&] {
      client_ = std::make_unique<Daemon>(io_, parse_config(identity(who) + toml, "a.toml", ""));
      client_->start();
    });
  }
  asio::io_context& io() { return io_; }
  Daemon& server() { return *server_; }
  Daemon& client() { return *client_; }
  std::vector<PathStatus> client_paths() {
    return on_io([this] { return client_->paths(); });
  }
  std::vector<PathStatus> server_paths() {
    return on_io([this] { return server_->paths(); });
  }
  std::vector<FlowStatus> server_flows() {
    return on_io([this] { return server_->flows(); });
  }

 private:
  TempDir dir_{"pqot-trip"};
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> guard_;
  std::unique_ptr<Daemon> server_;
  std::unique_ptr<Daemon> client_;
  std::thread thread_;
};

// The project's wait, with twice its patience: two daemons handshake on a loaded machine.
template <class F>
bool trip_eventually(F f, std::chrono::milliseconds limit = 2 * test::kPatience) {
  return test::eventually(f, limit);
}

inline std::string trip_server_paths(int n) {
  std::string s;
  for (int i = 1; i <= n; ++i) {
    s += "[[path]]\nname = \"p" + std::to_string(i) + "\"\nnumber = " + std::to_string(i) +
         "\nlisten = \"127.0.0.1:0\"\npeers = [\"client1\", \"client2\"]\n";
  }
  return s;
}

inline std::string trip_client_paths(TripPair& pair, int n) {
  std::string s;
  for (int i = 1; i <= n; ++i) {
    s += "[[path]]\nname = \"p" + std::to_string(i) + "\"\nnumber = " + std::to_string(i) + "\nconnect = \"127.0.0.1:" +
         std::to_string(pair.server().listen_port("p" + std::to_string(i))) + "\"\n";
  }
  return s + "[limits]\nreconnect_min_ms = 50\nreconnect_max_ms = 200\n";
}

// A receiver of 162-byte datagrams numbered in their first 4 bytes, read by a thread of its own
// as they come (a socket buffer left unread would drop them: the loss would be the test's).
class TripReceiver {
 public:
  TripReceiver() : socket_(io_, udp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
    struct timeval tv{0, 50'000};
    setsockopt(socket_.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    reader_ = std::thread([this] {
      std::array<std::uint8_t, 2048> buf{};
      while (!stop_) {
        // recv(2) itself: asio's blocking receive polls again after SO_RCVTIMEO and never returns.
        const ssize_t n = ::recv(socket_.native_handle(), buf.data(), buf.size(), 0);
        if (n < 0) continue;
        std::lock_guard lock(mutex_);
        got_.push_back(n >= 4 ? (buf[0] << 24 | buf[1] << 16 | buf[2] << 8 | buf[3]) : -1);
        last_ = std::chrono::steady_clock::now();
      }
    });
  }
  ~TripReceiver() {
    stop_ = true;
    reader_.join();
  }
  std::uint16_t port() const { return socket_.local_endpoint().port(); }
  // What arrived, once nothing more came for 300 ms; cleared.
  std::vector<int> drain() {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      std::lock_guard lock(mutex_);
      if (std::chrono::steady_clock::now() - last_ > std::chrono::milliseconds(300)) return std::exchange(got_, {});
    }
  }

 private:
  asio::io_context io_;
  udp::socket socket_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::vector<int> got_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
  std::thread reader_;
};

inline void trip_send_numbered(std::uint16_t port, int from, int to) {
  asio::io_context io;
  udp::socket s(io, udp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  for (int i = from; i < to; ++i) {
    std::array<std::uint8_t, 162> d{};
    for (int b = 0; b < 4; ++b) d[b] = static_cast<std::uint8_t>(i >> (24 - 8 * b));
    s.send_to(asio::buffer(d), udp::endpoint(asio::ip::make_address("127.0.0.1"), port));
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

inline bool trip_all_up(TripPair& pair) {
  const auto cs = pair.client_paths();
  const auto ss = pair.server_paths();
  return std::all_of(cs.begin(), cs.end(), [](const PathStatus& p) { return p.up; }) &&
         std::all_of(ss.begin(), ss.end(), [](const PathStatus& p) { return p.up && p.counters.keepalives_received > 0; });
}

}  // namespace pqot::tripd::trip_test
