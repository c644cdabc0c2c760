// The scrape endpoint of the daemons (docs/metrics.md): a minimal, bounded HTTP/1.1 server on Asio
// for `GET /metrics` and `GET /healthz`. Its request-head parser is src/metrics/http_request.hpp.
#pragma once

#include <asio/io_context.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace pqot::metrics {

struct MetricsHttpOptions {
  std::chrono::milliseconds deadline{5000};  ///< per connection, from accept to close
  std::size_t max_connections = 16;          ///< more are accepted and closed at once
  std::size_t max_request_head = 8192;       ///< bytes up to the blank line; more: 431
};

/// The scrape endpoint: `GET /metrics`, `GET /healthz` (docs/metrics.md). One response per
/// connection, then the connection is closed. Everything runs on one strand of `io`; run `io`
/// from any number of threads. Destroy the server before `io`.
class MetricsHttpServer {
 public:
  /// `host` is an IP address (IPv6 with or without brackets); port 0 picks a free port. `render`
  /// returns the /metrics page and `healthy` decides /healthz (always healthy when empty); both
  /// are called on a thread running `io`, never concurrently, and never after stop() returns.
  MetricsHttpServer(asio::io_context& io, std::string host, std::uint16_t port,
                    std::function<std::string()> render, std::function<bool()> healthy = {},
                    MetricsHttpOptions options = {});
  ~MetricsHttpServer();
  MetricsHttpServer(const MetricsHttpServer&) = delete;
  MetricsHttpServer& operator=(const MetricsHttpServer&) = delete;

  /// Binds, listens and starts accepting. Throws std::runtime_error naming host:port (and may
  /// then be called again). Not concurrently with stop().
  void start();
  /// Closes the listener and every open connection; idempotent, callable from any thread (but
  /// not from inside render or healthy). A stopped server cannot be started again.
  void stop();
  /// The bound port (after start()).
  std::uint16_t port() const;

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace pqot::metrics
