// srup-c2's Prometheus page (docs/srup-c2.md, "Metrics"; docs/metrics.md for the format).
#include "daemon_internal.hpp"
#include "pqot/metrics/writer.hpp"

namespace pqot::srup_c2 {

std::string Daemon::metrics_page() {
  using metrics::MetricType;
  metrics::MetricsWriter w;
  w.family("srup_c2_messages_received_total", "Authenticated messages from devices, by type.", MetricType::counter);
  for (const auto& [type, n] : counters_.received_by_type) w.sample("srup_c2_messages_received_total", {{"type", type}}, n);
  w.family("srup_c2_messages_sent_total", "Messages sent to devices (first transmissions), by type.", MetricType::counter);
  for (const auto& [type, n] : counters_.sent_by_type) w.sample("srup_c2_messages_sent_total", {{"type", type}}, n);
  w.family("srup_c2_refusals_total", "Messages refused, by reason (docs/srup-pq.md section 9).", MetricType::counter);
  for (const auto& [reason, n] : counters_.refusals) w.sample("srup_c2_refusals_total", {{"reason", reason}}, n);
  w.family("srup_c2_retransmissions_total", "Commands published again from the outbox.", MetricType::counter);
  w.sample("srup_c2_retransmissions_total", {}, counters_.retransmissions);
  w.family("srup_c2_commands_expired_total", "Commands not answered within their lifetime.", MetricType::counter);
  w.sample("srup_c2_commands_expired_total", {}, counters_.commands_expired);
  w.family("srup_c2_answers_unmatched_total", "Answers whose token no pending command holds (late duplicates).",
           MetricType::counter);
  w.sample("srup_c2_answers_unmatched_total", {}, counters_.answers_unmatched);
  w.family("srup_c2_outbox_depth", "Commands waiting for their answer.", MetricType::gauge);
  w.sample("srup_c2_outbox_depth", {}, static_cast<std::uint64_t>(registry_->outbox_pending(std::nullopt)));
  w.family("srup_c2_devices", "Registered devices, by state.", MetricType::gauge);
  for (const DeviceState s : {DeviceState::pending, DeviceState::joined, DeviceState::resigned, DeviceState::deregistered}) {
    w.sample("srup_c2_devices", {{"state", to_string(s)}}, static_cast<std::uint64_t>(registry_->count_devices(s)));
  }
  std::uint64_t online = 0;
  const std::uint64_t now = now_ms();
  for (const auto& [id, at] : last_seen_) online += now - at < kOnlineWindowMs ? 1 : 0;
  w.family("srup_c2_devices_online", "Devices heard from in the last two minutes.", MetricType::gauge);
  w.sample("srup_c2_devices_online", {}, online);
  w.family("srup_c2_command_round_trip_seconds", "From a command's first transmission to its answer.",
           MetricType::histogram);
  w.histogram("srup_c2_command_round_trip_seconds", {}, counters_.round_trip.snapshot());
  w.family("srup_c2_telemetry_readings_total", "Telemetry readings opened.", MetricType::counter);
  w.sample("srup_c2_telemetry_readings_total", {}, counters_.telemetry_readings);
  w.family("srup_c2_telemetry_confirmed_total", "Readings confirmed by a Checkpoint and stored.", MetricType::counter);
  w.sample("srup_c2_telemetry_confirmed_total", {}, counters_.telemetry_confirmed);
  w.family("srup_c2_telemetry_mismatch_total", "Checkpoints whose digest differed (forged readings).", MetricType::counter);
  w.sample("srup_c2_telemetry_mismatch_total", {}, counters_.telemetry_mismatch);
  w.family("srup_c2_telemetry_unconfirmed_total", "Readings dropped without a Checkpoint.", MetricType::counter);
  w.sample("srup_c2_telemetry_unconfirmed_total", {}, counters_.telemetry_dropped);
  w.family("srup_c2_telemetry_provisional_drops_total",
           "Provisional readings given up: a device's oldest over its share (device_readings, device_bytes), the "
           "largest holder's oldest over the total (total_readings, total_bytes), older than their Checkpoint could "
           "be (expired), or of a device that left (device_left).",
           MetricType::counter);
  for (const char* reason :
       {"device_readings", "device_bytes", "total_readings", "total_bytes", "expired", "device_left"}) {
    const auto it = counters_.provisional_drops.find(reason);
    w.sample("srup_c2_telemetry_provisional_drops_total", {{"reason", reason}},
             it == counters_.provisional_drops.end() ? 0 : it->second);
  }
  const common::ShareBudget::Usage held = provisional_budget_.total();
  w.family("srup_c2_telemetry_provisional_readings", "Readings held until their Checkpoint.", MetricType::gauge);
  w.sample("srup_c2_telemetry_provisional_readings", {}, static_cast<std::uint64_t>(held.items));
  w.family("srup_c2_telemetry_provisional_bytes", "JSON bytes of the readings held until their Checkpoint.",
           MetricType::gauge);
  w.sample("srup_c2_telemetry_provisional_bytes", {}, static_cast<std::uint64_t>(held.bytes));
  w.family("srup_c2_telemetry_provisional_device_peak_bytes",
           "The most JSON bytes of provisional readings one device held at once since the start.", MetricType::gauge);
  w.sample("srup_c2_telemetry_provisional_device_peak_bytes", {},
           static_cast<std::uint64_t>(provisional_budget_.peak_per_key().bytes));
  w.family("srup_c2_broker_refusals_total", "Publishes and subscriptions the broker refused.", MetricType::counter);
  w.sample("srup_c2_broker_refusals_total", {}, counters_.broker_refusals);
  w.family("srup_c2_overload_drops_total",
           "Messages from the broker dropped before handling, by the bound of the queue they would have crossed: "
           "device_messages, device_bytes (the sending device's share), total_messages, total_bytes.",
           MetricType::counter);
  {
    using V = common::ShareBudget::Verdict;
    const std::pair<V, const char*> reasons[] = {{V::key_items, "device_messages"},
                                                 {V::key_bytes, "device_bytes"},
                                                 {V::total_items, "total_messages"},
                                                 {V::total_bytes, "total_bytes"}};
    for (const auto& [v, reason] : reasons) {
      w.sample("srup_c2_overload_drops_total", {{"reason", reason}}, overloaded_[static_cast<std::size_t>(v)].load());
    }
  }
  const common::ShareBudget::Usage queued = queue_.total();
  const common::ShareBudget::Usage peak = queue_.peak();
  const common::ShareBudget::Usage device_peak = queue_.peak_per_key();
  w.family("srup_c2_queue_messages", "Messages from the broker waiting to be handled.", MetricType::gauge);
  w.sample("srup_c2_queue_messages", {}, static_cast<std::uint64_t>(queued.items));
  w.family("srup_c2_queue_bytes", "Bytes (payload and topic) of the messages waiting to be handled.", MetricType::gauge);
  w.sample("srup_c2_queue_bytes", {}, static_cast<std::uint64_t>(queued.bytes));
  w.family("srup_c2_queue_peak_messages", "The most messages waiting at once since the start.", MetricType::gauge);
  w.sample("srup_c2_queue_peak_messages", {}, static_cast<std::uint64_t>(peak.items));
  w.family("srup_c2_queue_peak_bytes", "The most bytes waiting at once since the start.", MetricType::gauge);
  w.sample("srup_c2_queue_peak_bytes", {}, static_cast<std::uint64_t>(peak.bytes));
  w.family("srup_c2_queue_device_peak_messages", "The most messages one device had waiting at once since the start.",
           MetricType::gauge);
  w.sample("srup_c2_queue_device_peak_messages", {}, static_cast<std::uint64_t>(device_peak.items));
  w.family("srup_c2_queue_device_peak_bytes", "The most bytes one device had waiting at once since the start.",
           MetricType::gauge);
  w.sample("srup_c2_queue_device_peak_bytes", {}, static_cast<std::uint64_t>(device_peak.bytes));
  w.family("srup_c2_broker_connected", "1 while connected to the broker.", MetricType::gauge);
  w.sample("srup_c2_broker_connected", {}, static_cast<std::uint64_t>(connected_.load() ? 1 : 0));
  const ControlServerStats cs = control_->stats();
  w.family("srup_c2_control_clients", "Control socket connections open (at most [control] max_clients).",
           MetricType::gauge);
  w.sample("srup_c2_control_clients", {}, static_cast<std::uint64_t>(control_->clients()));
  w.family("srup_c2_control_requests_total", "Control request lines received.", MetricType::counter);
  w.sample("srup_c2_control_requests_total", {}, cs.requests);
  w.family("srup_c2_control_refusals_total",
           "Control connections and requests refused, by reason: other_user (not the daemon's user or root), "
           "busy (max_clients reached), bad_request (did not parse), too_long (over request_max_bytes), "
           "idle (closed after idle_timeout_ms).",
           MetricType::counter);
  w.sample("srup_c2_control_refusals_total", {{"reason", "other_user"}}, cs.refused_peer);
  w.sample("srup_c2_control_refusals_total", {{"reason", "busy"}}, cs.refused_full);
  w.sample("srup_c2_control_refusals_total", {{"reason", "bad_request"}}, cs.bad_requests - cs.too_long);
  w.sample("srup_c2_control_refusals_total", {{"reason", "too_long"}}, cs.too_long);
  w.sample("srup_c2_control_refusals_total", {{"reason", "idle"}}, cs.timed_out);
  const mqtt::ClientStats s = mqtt_->stats();
  w.family("srup_c2_mqtt_reconnects_total", "Accepted CONNACKs after the first.", MetricType::counter);
  w.sample("srup_c2_mqtt_reconnects_total", {}, s.connects > 0 ? s.connects - 1 : 0);
  w.family("srup_c2_mqtt_pending", "Publishes not yet acknowledged by the broker.", MetricType::gauge);
  w.sample("srup_c2_mqtt_pending", {}, static_cast<std::uint64_t>(s.pending));
  w.family("srup_c2_mqtt_oversized_drops_total",
           "Messages from the broker over 65,535 bytes (the SRUP-PQ envelope's maximum), dropped unread.",
           MetricType::counter);
  w.sample("srup_c2_mqtt_oversized_drops_total", {}, s.dropped_oversized);
  return w.take();
}

}  // namespace pqot::srup_c2
