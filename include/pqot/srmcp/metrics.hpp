// Prometheus metrics for the daemons (docs/metrics.md): a lock-free latency histogram, a writer of
// the text exposition format 0.0.4, and a minimal HTTP/1.1 server for the scrape endpoint.
#pragma once

#include <array>
#include <asio/io_context.hpp>
#include <atomic>
#include <chrono>
#include <concepts>
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace pqot::srmcp {

// ---- LatencyHistogram ---------------------------------------------------------------------------

/// Latencies in fixed buckets from 50 µs to 5 s. observe() is lock-free (relaxed atomics) and may
/// be called from any number of threads; snapshot() may run concurrently with it.
class LatencyHistogram {
 public:
  /// Upper bounds in seconds; a bucket includes its bound (Prometheus `le`). +Inf follows.
  static constexpr std::array<double, 16> kBoundsSeconds = {
      0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
      0.025,   0.05,   0.1,     0.25,   0.5,   1,      2.5,   5};
  /// The same bounds in nanoseconds: observe() compares integers, so a value equal to a bound is
  /// counted in that bucket exactly.
  static constexpr std::array<std::int64_t, 16> kBoundsNs = {
      50'000,      100'000,       250'000,       500'000,      1'000'000,   2'500'000,
      5'000'000,   10'000'000,    25'000'000,    50'000'000,   100'000'000, 250'000'000,
      500'000'000, 1'000'000'000, 2'500'000'000, 5'000'000'000};
  static constexpr std::size_t kBucketCount = kBoundsSeconds.size() + 1;  ///< with +Inf

  struct Snapshot {
    /// cumulative[i]: observations <= kBoundsSeconds[i]; the last entry is +Inf and equals count.
    std::array<std::uint64_t, kBucketCount> cumulative{};
    double sum_seconds = 0;
    std::uint64_t count = 0;
  };

  /// Counts one observation; negative durations count as 0.
  void observe(std::chrono::nanoseconds latency) noexcept;
  /// The counts so far. count always equals the +Inf bucket; sum_seconds may lag or lead the
  /// counts by the observations in flight while it is taken (as in the Prometheus client
  /// libraries).
  Snapshot snapshot() const noexcept;

 private:
  static_assert(std::atomic<std::uint64_t>::is_always_lock_free);
  std::array<std::atomic<std::uint64_t>, kBucketCount> buckets_{};  // not cumulative
  std::atomic<std::uint64_t> sum_ns_{0};
};

// ---- MetricsWriter ------------------------------------------------------------------------------

enum class MetricType { counter, gauge, histogram, untyped };

/// Label (name, value) pairs, written in this order.
using MetricLabels = std::vector<std::pair<std::string, std::string>>;

/// A sample value as the text format spells it: integers as integers, doubles in the shortest
/// form that parses back to the same double (fixed notation for exponents -4..20, else
/// scientific, e.g. "0.0001", "5e-05", "1e+21"), and "NaN", "+Inf", "-Inf".
std::string format_metric_value(double value);
std::string format_metric_value(std::int64_t value);
std::string format_metric_value(std::uint64_t value);

/// Builds a page in the Prometheus text exposition format 0.0.4. Every sample belongs to the
/// family declared last. Metric and label names are chosen by the programmer, not by users, so a
/// bad name, a sample outside its family or a family declared twice throws std::logic_error.
class MetricsWriter {
 public:
  /// `# HELP` (escaped: backslash, newline) and `# TYPE` lines; starts a family.
  void family(std::string_view name, std::string_view help, MetricType type);
  /// One sample of the current (counter, gauge or untyped) family; label values are escaped.
  void sample(std::string_view name, const MetricLabels& labels, double value);
  template <std::integral T>
  void sample(std::string_view name, const MetricLabels& labels, T value) {
    if constexpr (std::is_signed_v<T>) {
      write_sample(name, labels, format_metric_value(static_cast<std::int64_t>(value)));
    } else {
      write_sample(name, labels, format_metric_value(static_cast<std::uint64_t>(value)));
    }
  }
  /// `name_bucket{...,le="..."}` (cumulative, ending with +Inf), `name_sum`, `name_count` of the
  /// current histogram family. `labels` must not contain `le`.
  void histogram(std::string_view name, const MetricLabels& labels,
                 const LatencyHistogram::Snapshot& snapshot);

  const std::string& text() const noexcept { return out_; }
  std::string take() noexcept { return std::move(out_); }

 private:
  void write_sample(std::string_view name, const MetricLabels& labels, std::string_view value);
  void check_family(std::string_view name, bool histogram) const;

  std::string out_;
  std::string family_;  // the family being written
  MetricType type_ = MetricType::untyped;
  std::set<std::string, std::less<>> families_;
};

// ---- MetricsHttpServer --------------------------------------------------------------------------

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

}  // namespace pqot::srmcp
