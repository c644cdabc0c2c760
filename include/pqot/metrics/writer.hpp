// A writer of the Prometheus text exposition format 0.0.4 (docs/metrics.md): metric families,
// samples with labels, histograms. No I/O: the page is a string for any transport.
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "pqot/metrics/histogram.hpp"

namespace pqot::metrics {

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

}  // namespace pqot::metrics
