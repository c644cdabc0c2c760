// A lock-free latency histogram with fixed buckets for the Prometheus metrics of the daemons
// (docs/metrics.md); written out by MetricsWriter::histogram (writer.hpp).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>

namespace pqot::metrics {

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

}  // namespace pqot::metrics
