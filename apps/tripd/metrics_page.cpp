// tripd's Prometheus page (metrics_page.hpp).
#include "metrics_page.hpp"

#include <functional>

#include "pqot/metrics/writer.hpp"

namespace pqot::tripd {

namespace {

using metrics::MetricType;

// One counter family with a sample per path.
void per_path(metrics::MetricsWriter& w, const std::vector<PathStatus>& paths, const char* name, const char* help,
              const std::function<std::uint64_t(const PathCounters&)>& get) {
  w.family(name, help, MetricType::counter);
  for (const PathStatus& p : paths) w.sample(name, {{"path", p.name}}, get(p.counters));
}

void per_flow(metrics::MetricsWriter& w, const std::vector<FlowStatus>& flows, const char* name, const char* help,
              const std::function<std::uint64_t(const FlowCounters&)>& get, bool reflect) {
  w.family(name, help, MetricType::counter);
  for (const FlowStatus& f : flows) {
    if (f.reflects == reflect) w.sample(name, {{"flow", std::to_string(f.id)}, {"name", f.name}}, get(f.counters));
  }
}

// One counter or gauge family with a sample per relay.
void per_relay(metrics::MetricsWriter& w, const std::vector<std::pair<std::string, RelayStats>>& relays, const char* name,
               const char* help, MetricType type, const std::function<std::uint64_t(const RelayStats&)>& get) {
  w.family(name, help, type);
  for (const auto& [relay, st] : relays) w.sample(name, {{"relay", relay}}, get(st));
}

void relay_metrics(metrics::MetricsWriter& w, const std::vector<std::pair<std::string, RelayStats>>& r) {
  using S = const RelayStats&;
  per_relay(w, r, "trip_relay_tcp_accepted_total", "TCP connections taken and forwarded.", MetricType::counter, [](S s) { return s.tcp_accepted; });
  per_relay(w, r, "trip_relay_tcp_open", "TCP connections open.", MetricType::gauge, [](S s) { return s.tcp_open; });
  per_relay(w, r, "trip_relay_tcp_refused_total", "TCP connections closed at once: max_connections were open.", MetricType::counter,
            [](S s) { return s.tcp_refused; });
  per_relay(w, r, "trip_relay_tcp_connect_failures_total", "Connections to forward that failed.", MetricType::counter,
            [](S s) { return s.tcp_connect_failures; });
  per_relay(w, r, "trip_relay_tcp_idle_closed_total", "TCP connections closed after idle_ms.", MetricType::counter,
            [](S s) { return s.tcp_idle_closed; });
  per_relay(w, r, "trip_relay_tcp_bytes_to_forward_total", "TCP bytes towards forward.", MetricType::counter,
            [](S s) { return s.tcp_bytes_to_forward; });
  per_relay(w, r, "trip_relay_tcp_bytes_to_client_total", "TCP bytes back to the clients.", MetricType::counter,
            [](S s) { return s.tcp_bytes_to_client; });
  per_relay(w, r, "trip_relay_tcp_buffered_bytes", "TCP bytes held now.", MetricType::gauge, [](S s) { return s.tcp_buffered; });
  per_relay(w, r, "trip_relay_udp_datagrams_to_forward_total", "UDP datagrams towards forward.", MetricType::counter,
            [](S s) { return s.udp_datagrams_to_forward; });
  per_relay(w, r, "trip_relay_udp_datagrams_to_client_total", "UDP datagrams back to the clients.", MetricType::counter,
            [](S s) { return s.udp_datagrams_to_client; });
  per_relay(w, r, "trip_relay_udp_associations", "UDP client addresses remembered.", MetricType::gauge,
            [](S s) { return s.udp_associations_open; });
  per_relay(w, r, "trip_relay_udp_associations_evicted_total", "Associations dropped for a new client address.", MetricType::counter,
            [](S s) { return s.udp_associations_evicted; });
  per_relay(w, r, "trip_relay_udp_associations_expired_total", "Associations dropped after idle_ms.", MetricType::counter,
            [](S s) { return s.udp_associations_expired; });
  per_relay(w, r, "trip_relay_udp_send_drops_total", "UDP datagrams dropped: a send would block or failed.", MetricType::counter,
            [](S s) { return s.udp_send_drops; });
}

}  // namespace

std::string metrics_page(const Daemon& d, const std::vector<std::pair<std::string, RelayStats>>& relays,
                         const ReloadCounts& reloads) {
  metrics::MetricsWriter w;
  w.family("tripd_reloads_total", "Configuration reloads (SIGHUP): applied, applied in part, or refused.", MetricType::counter);
  w.sample("tripd_reloads_total", {{"result", "applied"}}, reloads.applied);
  w.sample("tripd_reloads_total", {{"result", "partial"}}, reloads.partial);
  w.sample("tripd_reloads_total", {{"result", "refused"}}, reloads.refused);
  const auto paths = d.paths();
  const auto flows = d.flows();
  w.family("trip_path_up", "1 while the path has a session.", MetricType::gauge);
  for (const PathStatus& p : paths) w.sample("trip_path_up", {{"path", p.name}}, p.up ? 1 : 0);
  w.family("trip_path_rtt_seconds", "The last keepalive round trip of the path's session.", MetricType::gauge);
  for (const PathStatus& p : paths) {
    if (p.rtt) w.sample("trip_path_rtt_seconds", {{"path", p.name}}, static_cast<double>(p.rtt->count()) / 1e6);
  }
  w.family("trip_path_srtt_seconds", "The smoothed keepalive round trip (RFC 6298, alpha 1/8).", MetricType::gauge);
  for (const PathStatus& p : paths) {
    if (p.srtt) w.sample("trip_path_srtt_seconds", {{"path", p.name}}, static_cast<double>(p.srtt->count()) / 1e6);
  }
  w.family("trip_path_keepalives_missing", "Keepalives missing among the last 64 of the session.", MetricType::gauge);
  for (const PathStatus& p : paths) w.sample("trip_path_keepalives_missing", {{"path", p.name}}, p.keepalives_missing);
  w.family("trip_path_data_loss_ratio",
           "Of the datagrams the flows filtered here delivered over the last 16 keepalive intervals, the share this path did not bring.",
           MetricType::gauge);
  for (const PathStatus& p : paths) {
    if (p.data_loss) w.sample("trip_path_data_loss_ratio", {{"path", p.name}}, *p.data_loss);
  }
  per_path(w, paths, "trip_path_sent_total", "Data datagrams sent.", [](const PathCounters& c) { return c.sent; });
  per_path(w, paths, "trip_path_send_errors_total", "Copies not sent (socket buffer full, no route).",
           [](const PathCounters& c) { return c.send_errors; });
  per_path(w, paths, "trip_path_received_total", "Data datagrams that authenticated.", [](const PathCounters& c) { return c.received; });
  per_path(w, paths, "trip_path_won_total", "First arrivals: datagrams this path delivered.", [](const PathCounters& c) { return c.won; });
  per_path(w, paths, "trip_path_duplicates_total", "Datagrams another path had brought first.",
           [](const PathCounters& c) { return c.duplicates; });
  per_path(w, paths, "trip_path_keepalives_sent_total", "Keepalives sent.", [](const PathCounters& c) { return c.keepalives_sent; });
  per_path(w, paths, "trip_path_keepalives_received_total", "Keepalives received (new or late, not replayed).",
           [](const PathCounters& c) { return c.keepalives_received; });
  w.family("trip_path_dropped_total", "Datagrams dropped before the filter, by reason (docs/trip.md 2.1).", MetricType::counter);
  for (const PathStatus& p : paths) {
    w.sample("trip_path_dropped_total", {{"path", p.name}, {"reason", "malformed"}}, p.counters.malformed);
    w.sample("trip_path_dropped_total", {{"path", p.name}, {"reason", "unknown_session"}}, p.counters.unknown_session);
    w.sample("trip_path_dropped_total", {{"path", p.name}, {"reason", "unknown_flow"}}, p.counters.unknown_flow);
    w.sample("trip_path_dropped_total", {{"path", p.name}, {"reason", "auth"}}, p.counters.auth_failures);
  }
  per_path(w, paths, "trip_path_sessions_total", "Sessions established.", [](const PathCounters& c) { return c.sessions; });
  per_path(w, paths, "trip_path_sessions_dead_total", "Sessions ended for lack of keepalives.",
           [](const PathCounters& c) { return c.sessions_dead; });
  per_path(w, paths, "trip_path_handshake_failures_total", "Handshakes that failed (either side).",
           [](const PathCounters& c) { return c.handshake_failures; });
  per_path(w, paths, "trip_path_busy_total", "Connections refused by the handshake bounds.", [](const PathCounters& c) { return c.busy; });

  per_flow(w, flows, "trip_flow_taken_total", "Legacy datagrams taken in to reflect.", [](const FlowCounters& c) { return c.taken; }, true);
  per_flow(w, flows, "trip_flow_oversized_total", "Legacy datagrams over max_datagram, dropped.",
           [](const FlowCounters& c) { return c.oversized; }, true);
  per_flow(w, flows, "trip_flow_refused_source_total", "Legacy datagrams from an address not in allow_from.",
           [](const FlowCounters& c) { return c.refused_source; }, true);
  per_flow(w, flows, "trip_flow_no_path_total", "Legacy datagrams no path was up to carry.",
           [](const FlowCounters& c) { return c.no_path; }, true);
  per_flow(w, flows, "trip_flow_delivered_total", "Datagrams delivered (first copies).", [](const FlowCounters& c) { return c.delivered; },
           false);
  per_flow(w, flows, "trip_flow_late_total", "Of those, delivered out of order.", [](const FlowCounters& c) { return c.late; }, false);
  per_flow(w, flows, "trip_flow_duplicates_total", "Copies dropped as duplicates.", [](const FlowCounters& c) { return c.duplicates; },
           false);
  per_flow(w, flows, "trip_flow_replayed_total", "Copies dropped as too old (behind the window or max_age) or of a stale boot.",
           [](const FlowCounters& c) { return c.too_old + c.stale_boot; }, false);
  per_flow(w, flows, "trip_flow_deliver_errors_total", "Deliveries the local socket refused.",
           [](const FlowCounters& c) { return c.deliver_errors; }, false);
  if (!relays.empty()) relay_metrics(w, relays);
  return w.take();
}

}  // namespace pqot::tripd
