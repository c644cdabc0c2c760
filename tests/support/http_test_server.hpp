// A small HTTP server for the tests that download updates (docs/srup-device.md, "Updates"):
// fixed replies per path on 127.0.0.1, one connection at a time, on its own thread.
#pragma once

#include <asio.hpp>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <initializer_list>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

namespace pqot::test {

/// What the server does for one path: send `head_and_body`, then either close, or (stall) wait
/// until the test ends before closing.
struct DevhttpReply {
  std::string bytes;
  bool stall = false;
};

/// An HTTP server on 127.0.0.1, one connection at a time, on its own thread.
class DevhttpServer {
 public:
  explicit DevhttpServer(std::initializer_list<std::pair<const std::string, DevhttpReply>> routes)
      : routes_(routes), acceptor_(io_, asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
    port_ = acceptor_.local_endpoint().port();
    thread_ = std::thread([this] { serve(); });
  }
  ~DevhttpServer() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    // Wake the blocking accept.
    try {
      asio::io_context io;
      asio::ip::tcp::socket s(io);
      s.connect(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_));
    } catch (const std::exception&) {
    }
    thread_.join();
  }
  std::uint16_t port() const { return port_; }
  std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port_) + path; }
  int requests() const { return requests_; }

 private:
  void serve() {
    for (;;) {
      asio::ip::tcp::socket s(io_);
      asio::error_code ec;
      acceptor_.accept(s, ec);
      {
        std::lock_guard lock(mu_);
        if (stop_) return;
      }
      if (ec) continue;
      std::string req;
      char buf[4096];
      while (req.find("\r\n\r\n") == std::string::npos && req.size() < 65536) {
        const std::size_t n = s.read_some(asio::buffer(buf), ec);
        if (ec) break;
        req.append(buf, n);
      }
      ++requests_;
      const auto sp1 = req.find(' ');
      const auto sp2 = req.find(' ', sp1 + 1);
      const std::string path = sp1 == std::string::npos ? "" : req.substr(sp1 + 1, sp2 - sp1 - 1);
      const auto it = routes_.find(path);
      const DevhttpReply reply = it != routes_.end() ? it->second : DevhttpReply{"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"};
      asio::write(s, asio::buffer(reply.bytes), ec);
      if (reply.stall) {
        std::unique_lock lock(mu_);
        cv_.wait_for(lock, std::chrono::seconds(30), [this] { return stop_; });
      }
      s.close(ec);
    }
  }

  std::map<std::string, DevhttpReply> routes_;
  asio::io_context io_;
  asio::ip::tcp::acceptor acceptor_;
  std::uint16_t port_ = 0;
  std::atomic<int> requests_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

inline std::string devhttp_ok(const std::string& body) {
  return "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

}  // namespace pqot::test
