// Latency histogram (docs/metrics.md): relaxed atomic bucket counters.
#include "pqot/metrics/histogram.hpp"

#include <algorithm>

namespace pqot::metrics {

void LatencyHistogram::observe(std::chrono::nanoseconds latency) noexcept {
  const std::int64_t ns = std::max<std::int64_t>(latency.count(), 0);
  // The first bound >= ns: `le` is inclusive.
  const auto it = std::lower_bound(kBoundsNs.begin(), kBoundsNs.end(), ns);
  const auto index = static_cast<std::size_t>(it - kBoundsNs.begin());
  buckets_[index].fetch_add(1, std::memory_order_relaxed);
  sum_ns_.fetch_add(static_cast<std::uint64_t>(ns), std::memory_order_relaxed);
}

LatencyHistogram::Snapshot LatencyHistogram::snapshot() const noexcept {
  Snapshot s;
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < kBucketCount; ++i) {
    total += buckets_[i].load(std::memory_order_relaxed);
    s.cumulative[i] = total;
  }
  s.count = total;
  // Division of two exact doubles rounds once: 12'300'000 ns prints as 0.0123.
  s.sum_seconds = static_cast<double>(sum_ns_.load(std::memory_order_relaxed)) / 1e9;
  return s;
}

}  // namespace pqot::metrics
