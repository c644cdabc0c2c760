// The C2's control socket (docs/srup-c2.md, "Control socket"): a Unix stream socket, mode 0600 in
// the state directory, that only the daemon's own user (or root) may use; one JSON request per
// line, one answer line each, requests of one connection served in order. Bounded: clients at
// once, bytes per request line, idle time per connection.
#pragma once

#include <sys/types.h>

#include <asio.hpp>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "control_protocol.hpp"
#include "pqot/common/log_limiter.hpp"

namespace pqot::srup_c2 {

struct ControlServerOptions {
  std::filesystem::path socket;
  std::size_t max_clients = 8;
  std::size_t request_max_bytes = 64 * 1024;  ///< 1 KiB .. kMaxRequestLine
  /// A connection is closed when it has not completed a request line, or has not taken its
  /// answer, this long after its previous answer (or its start): idle clients, slow writers and
  /// clients that never read cannot hold a slot for longer.
  std::chrono::milliseconds idle_timeout{60'000};
};

struct ControlServerStats {
  std::uint64_t accepted = 0;
  std::uint64_t refused_peer = 0;  ///< another user's connection, closed at once
  std::uint64_t refused_full = 0;  ///< over max_clients, closed at once
  std::uint64_t requests = 0;
  std::uint64_t bad_requests = 0;  ///< lines that did not parse, or were too long
  std::uint64_t too_long = 0;      ///< of those, lines over request_max_bytes (then closed)
  std::uint64_t timed_out = 0;     ///< closed by idle_timeout
};

class ControlServer {
 public:
  /// Sends the answer line (format_result / format_error); call exactly once per request, on the
  /// server's io_context. Calling it after the client went away does nothing.
  using Reply = std::function<void(std::string)>;
  using Handler = std::function<void(ControlRequest, Reply)>;

  ControlServer(asio::io_context& io, ControlServerOptions options, Handler handler);
  ~ControlServer();
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  /// Binds and listens. A socket file left by a process that is gone is replaced; one that
  /// answers (another daemon on the same state directory) or a path that is not a socket is an
  /// error (std::runtime_error naming the path).
  void start();
  /// Closes the listener and every connection, and removes the socket file.
  void stop();

  ControlServerStats stats() const { return stats_; }
  std::size_t clients() const noexcept { return clients_; }

 private:
  class Connection;
  void accept_next();
  /// A refusal or a closed connection, logged at most 10 times per 10 s (every one is counted).
  void note(const std::string& what);

  asio::io_context& io_;
  ControlServerOptions options_;
  Handler handler_;
  asio::local::stream_protocol::acceptor acceptor_;
  std::size_t clients_ = 0;
  ControlServerStats stats_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  std::vector<std::weak_ptr<Connection>> connections_;
  common::LogLimiter log_limiter_;
};

}  // namespace pqot::srup_c2
