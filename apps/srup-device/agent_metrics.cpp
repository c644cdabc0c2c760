// srup-device's Prometheus page (docs/srup-device.md, "Metrics"; docs/metrics.md for the format).
#include "agent.hpp"
#include "pqot/metrics/writer.hpp"

namespace pqot::srup_device {

std::string Agent::metrics_page() const {
  using metrics::MetricType;
  metrics::MetricsWriter w;
  w.family("srup_device_refusals_total", "Messages refused, by reason (docs/srup-pq.md section 6).", MetricType::counter);
  for (const auto& [reason, n] : counters_.refusals) w.sample("srup_device_refusals_total", {{"reason", reason}}, n);
  w.family("srup_device_answers_resent_total",
           "Repeated commands answered from the journal without running them again (docs/srup-pq.md 7.3).",
           MetricType::counter);
  w.sample("srup_device_answers_resent_total", {}, counters_.answers_resent);
  w.family("srup_device_broker_refusals_total", "Publishes and subscriptions the broker refused.", MetricType::counter);
  w.sample("srup_device_broker_refusals_total", {}, counters_.broker_refusals);
  w.family("srup_device_overload_drops_total", "Messages dropped because too many were waiting to be handled.",
           MetricType::counter);
  w.sample("srup_device_overload_drops_total", {}, overloaded_.load());
  w.family("srup_device_broker_connected", "1 while connected to the broker.", MetricType::gauge);
  w.sample("srup_device_broker_connected", {}, static_cast<std::uint64_t>(connected_.load() ? 1 : 0));
  w.family("srup_device_joined", "1 while joined to its C2.", MetricType::gauge);
  w.sample("srup_device_joined", {}, static_cast<std::uint64_t>(membership_ == Membership::joined ? 1 : 0));
  return w.take();
}

}  // namespace pqot::srup_device
