// Prometheus text exposition format 0.0.4 (docs/metrics.md): values, names, escaping, families.
#include "pqot/metrics/writer.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>

namespace pqot::metrics {

// ---- values and names ---------------------------------------------------------------------------

std::string format_metric_value(std::int64_t value) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof(buf), value);
  return std::string(buf, r.ptr);
}

std::string format_metric_value(std::uint64_t value) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof(buf), value);
  return std::string(buf, r.ptr);
}

std::string format_metric_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  // The shortest round-trip digits, as "d.ddde±XX"; then fixed notation for exponents -4..20
  // (the bounds print as the Go client prints them: "5e-05", "0.0001", "2.5").
  char buf[40];
  const auto r = std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::scientific);
  const std::string_view sci(buf, static_cast<std::size_t>(r.ptr - buf));
  const std::size_t e_pos = sci.find('e');
  int exponent = 0;
  std::from_chars(sci.data() + e_pos + (sci[e_pos + 1] == '+' ? 2 : 1), sci.data() + sci.size(),
                  exponent);
  if (exponent < -4 || exponent > 20) return std::string(sci);

  std::string out;
  std::string digits;
  for (char c : sci.substr(0, e_pos)) {
    if (c == '-') {
      out += '-';
    } else if (c != '.') {
      digits += c;
    }
  }
  if (exponent < 0) {
    out += "0.";
    out.append(static_cast<std::size_t>(-exponent - 1), '0');
    out += digits;
  } else {
    const auto int_digits = static_cast<std::size_t>(exponent) + 1;
    if (digits.size() <= int_digits) {
      out += digits;
      out.append(int_digits - digits.size(), '0');
    } else {
      out.append(digits, 0, int_digits);
      out += '.';
      out.append(digits, int_digits);
    }
  }
  return out;
}

namespace {

bool is_alpha_(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// [a-zA-Z_:][a-zA-Z0-9_:]*
bool valid_metric_name(std::string_view name) {
  if (name.empty() || !(is_alpha_(name[0]) || name[0] == ':')) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return is_alpha_(c) || is_digit(c) || c == ':'; });
}

// [a-zA-Z_][a-zA-Z0-9_]*, and names starting with "__" are reserved for Prometheus.
bool valid_label_name(std::string_view name) {
  if (name.empty() || !is_alpha_(name[0]) || name.starts_with("__")) return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return is_alpha_(c) || is_digit(c); });
}

void append_escaped(std::string& out, std::string_view text, bool quote) {
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (quote && c == '"') {
      out += "\\\"";
    } else {
      out += c;
    }
  }
}

void append_labels(std::string& out, const MetricLabels& labels, std::string_view le = {}) {
  if (labels.empty() && le.empty()) return;
  out += '{';
  bool first = true;
  for (const auto& [name, value] : labels) {
    if (!first) out += ',';
    first = false;
    out += name;
    out += "=\"";
    append_escaped(out, value, true);
    out += '"';
  }
  if (!le.empty()) {
    if (!first) out += ',';
    out += "le=\"";
    out += le;
    out += '"';
  }
  out += '}';
}

void check_labels(const MetricLabels& labels, bool histogram) {
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const std::string& name = labels[i].first;
    if (!valid_label_name(name)) throw std::logic_error("invalid metric label name '" + name + "'");
    if (histogram && name == "le") throw std::logic_error("label 'le' is reserved in histograms");
    for (std::size_t j = 0; j < i; ++j) {
      if (labels[j].first == name)
        throw std::logic_error("metric label '" + name + "' given twice");
    }
  }
}

const char* type_name(MetricType type) {
  switch (type) {
    case MetricType::counter:
      return "counter";
    case MetricType::gauge:
      return "gauge";
    case MetricType::histogram:
      return "histogram";
    case MetricType::untyped:
      return "untyped";
  }
  return "untyped";
}

}  // namespace

// ---- MetricsWriter ------------------------------------------------------------------------------

void MetricsWriter::family(std::string_view name, std::string_view help, MetricType type) {
  if (!valid_metric_name(name))
    throw std::logic_error("invalid metric name '" + std::string(name) + "'");
  if (!families_.emplace(name).second) {
    throw std::logic_error("metric family '" + std::string(name) + "' written twice");
  }
  family_ = name;
  type_ = type;
  out_ += "# HELP ";
  out_ += name;
  out_ += ' ';
  append_escaped(out_, help, false);
  out_ += "\n# TYPE ";
  out_ += name;
  out_ += ' ';
  out_ += type_name(type);
  out_ += '\n';
}

void MetricsWriter::check_family(std::string_view name, bool histogram) const {
  if (family_.empty() || name != family_ || (type_ == MetricType::histogram) != histogram) {
    throw std::logic_error("metric sample '" + std::string(name) + "' outside its family");
  }
}

void MetricsWriter::sample(std::string_view name, const MetricLabels& labels, double value) {
  write_sample(name, labels, format_metric_value(value));
}

void MetricsWriter::write_sample(std::string_view name, const MetricLabels& labels,
                                 std::string_view value) {
  check_family(name, false);
  check_labels(labels, false);
  out_ += name;
  append_labels(out_, labels);
  out_ += ' ';
  out_ += value;
  out_ += '\n';
}

void MetricsWriter::histogram(std::string_view name, const MetricLabels& labels,
                              const LatencyHistogram::Snapshot& snapshot) {
  check_family(name, true);
  check_labels(labels, true);
  for (std::size_t i = 0; i < LatencyHistogram::kBucketCount; ++i) {
    const bool inf = i == LatencyHistogram::kBoundsSeconds.size();
    out_ += name;
    out_ += "_bucket";
    append_labels(out_, labels,
                  inf ? "+Inf" : format_metric_value(LatencyHistogram::kBoundsSeconds[i]));
    out_ += ' ';
    out_ += format_metric_value(snapshot.cumulative[i]);
    out_ += '\n';
  }
  const auto line = [&](std::string_view suffix, const std::string& value) {
    out_ += name;
    out_ += suffix;
    append_labels(out_, labels);
    out_ += ' ';
    out_ += value;
    out_ += '\n';
  };
  line("_sum", format_metric_value(snapshot.sum_seconds));
  line("_count", format_metric_value(snapshot.count));
}

}  // namespace pqot::metrics
