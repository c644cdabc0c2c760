// srmcpd's Prometheus page (docs/metrics.md, "Metric families").
#include "metrics_page.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "pqot/metrics/writer.hpp"

namespace pqot::srmcpd {

using metrics::MetricLabels;
using metrics::MetricType;
using metrics::MetricsWriter;

namespace {

void server_metrics(MetricsWriter& w, const srmcp::ServerStats& s) {
  w.family("pqot_srmcp_sessions_active", "SRMCP sessions open now.", MetricType::gauge);
  w.sample("pqot_srmcp_sessions_active", {}, s.sessions_active);
  w.family("pqot_srmcp_sessions_total", "SRMCP sessions opened (handshake completed).", MetricType::counter);
  w.sample("pqot_srmcp_sessions_total", {}, s.sessions_total);
  w.family("pqot_srmcp_sessions_encoding_total", "SRMCP sessions opened, by the body encoding chosen in the hello.",
           MetricType::counter);
  w.sample("pqot_srmcp_sessions_encoding_total", {{"encoding", "compact"}}, s.sessions_compact);
  w.sample("pqot_srmcp_sessions_encoding_total", {{"encoding", "json"}}, s.sessions_json);
  w.family("pqot_srmcp_handshakes_in_progress", "Connections accepted whose session is not open yet.",
           MetricType::gauge);
  w.sample("pqot_srmcp_handshakes_in_progress", {}, s.handshakes_in_progress);
  w.family("pqot_srmcp_partial_message_bytes", "Bytes held in partial segmented messages, all sessions.",
           MetricType::gauge);
  w.sample("pqot_srmcp_partial_message_bytes", {}, s.partial_bytes);
  w.family("pqot_srmcp_refusals_total",
           "Connections, requests and segments refused or closed for a limit or a protocol violation, by reason.",
           MetricType::counter);
  for (std::size_t i = 0; i < s.refusals.size(); ++i) {
    w.sample("pqot_srmcp_refusals_total", {{"reason", std::string(srmcp::refusal_name(static_cast<srmcp::Refusal>(i)))}},
             s.refusals[i]);
  }
  w.family("pqot_srmcp_data_links_active", "Data links attached to sessions now.", MetricType::gauge);
  w.sample("pqot_srmcp_data_links_active", {}, s.links_active);
  w.family("pqot_srmcp_link_handshakes_total",
           "TLS handshakes of data links presenting their session's identity, by kind (resumed with the "
           "session's ticket, or full).",
           MetricType::counter);
  w.sample("pqot_srmcp_link_handshakes_total", {{"kind", "resumed"}}, s.link_handshakes_resumed);
  w.sample("pqot_srmcp_link_handshakes_total", {{"kind", "full"}}, s.link_handshakes_full);
  w.family("pqot_srmcp_link_tickets_refused_total",
           "Full data-link handshakes in which the client had offered a ticket its session did not hold.",
           MetricType::counter);
  w.sample("pqot_srmcp_link_tickets_refused_total", {}, s.link_tickets_refused);
  w.family("pqot_srmcp_links_closed_on_error_total", "Connections closed for protocol violations.",
           MetricType::counter);
  w.sample("pqot_srmcp_links_closed_on_error_total", {}, s.closed_on_error);

  w.family("pqot_srmcp_requests_total", "Requests answered, by message type.", MetricType::counter);
  for (const auto& t : s.by_type) w.sample("pqot_srmcp_requests_total", {{"type", t.type}}, t.count);
  w.family("pqot_srmcp_responses_total", "Responses sent, by the status code of the response header.",
           MetricType::counter);
  for (std::size_t code = 0; code < s.responses_by_status.size(); ++code) {
    const auto n = s.responses_by_status[code];
    if (n == 0 && code != 0) continue;  // only the codes that occurred (and OK, always)
    w.sample("pqot_srmcp_responses_total",
             {{"status", srmcp::status_name(static_cast<srmcp::Status>(code))}, {"code", std::to_string(code)}}, n);
  }
  w.family("pqot_srmcp_request_duration_seconds",
           "Time from a request's arrival to its response being queued (waiting for devices included).",
           MetricType::histogram);
  for (const auto& t : s.by_type) {
    if (t.count > 0) w.histogram("pqot_srmcp_request_duration_seconds", {{"type", t.type}}, t.latency);
  }
}

void device_metrics(MetricsWriter& w, const std::vector<srmcp::gateway::DeviceStats>& devices) {
  using D = srmcp::gateway::DeviceStats;
  const auto each = [&](const char* name, const char* help, MetricType type, auto value) {
    w.family(name, help, type);
    for (const D& d : devices) w.sample(name, {{"device", d.name}}, value(d));
  };
  each("pqot_modbus_device_up", "1 while the device's connection is up.", MetricType::gauge,
       [](const D& d) { return std::uint64_t{d.connected ? 1u : 0u}; });
  each("pqot_modbus_queue_depth", "Requests waiting for the device now.", MetricType::gauge,
       [](const D& d) { return d.queued; });
  each("pqot_modbus_transactions_total", "Modbus requests sent to the device.", MetricType::counter,
       [](const D& d) { return d.transactions; });
  w.family("pqot_modbus_errors_total", "Failed Modbus requests, by kind.", MetricType::counter);
  for (const D& d : devices) {
    w.sample("pqot_modbus_errors_total", {{"device", d.name}, {"kind", "communication"}}, d.comm_errors);
    w.sample("pqot_modbus_errors_total", {{"device", d.name}, {"kind", "timeout"}}, d.timeouts);
    w.sample("pqot_modbus_errors_total", {{"device", d.name}, {"kind", "exception"}}, d.exceptions);
  }
  each("pqot_modbus_connects_total", "Successful connections to the device.", MetricType::counter,
       [](const D& d) { return d.connects; });
  each("pqot_modbus_connect_failures_total", "Failed connection attempts.", MetricType::counter,
       [](const D& d) { return d.connect_failures; });
  each("pqot_modbus_requests_failed_fast_total", "Requests answered without I/O while the device was backing off.",
       MetricType::counter, [](const D& d) { return d.failed_fast; });
  each("pqot_modbus_requests_expired_total", "Requests that waited past request_deadline_ms.", MetricType::counter,
       [](const D& d) { return d.expired; });
  each("pqot_modbus_requests_rejected_total", "Requests refused because the device queue was full.",
       MetricType::counter, [](const D& d) { return d.rejected; });
  w.family("pqot_modbus_transaction_duration_seconds", "Duration of each Modbus request.", MetricType::histogram);
  for (const D& d : devices) w.histogram("pqot_modbus_transaction_duration_seconds", {{"device", d.name}}, d.latency);
}

void process_metrics(MetricsWriter& w) {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  const double cpu = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                     static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
  w.family("process_cpu_seconds_total", "User and system CPU time of srmcpd.", MetricType::counter);
  w.sample("process_cpu_seconds_total", {}, cpu);
  std::ifstream statm("/proc/self/statm");
  std::uint64_t pages = 0, resident = 0;
  if (statm >> pages >> resident) {
    w.family("process_resident_memory_bytes", "Resident memory of srmcpd.", MetricType::gauge);
    w.sample("process_resident_memory_bytes", {}, resident * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE)));
  }
  std::error_code ec;
  std::uint64_t fds = 0;
  for (std::filesystem::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end; it.increment(ec)) ++fds;
  w.family("process_open_fds", "Open file descriptors of srmcpd.", MetricType::gauge);
  w.sample("process_open_fds", {}, fds);
}

}  // namespace

std::string render_metrics(const srmcp::ServerStats& server, const std::vector<srmcp::gateway::DeviceStats>& devices,
                           const DaemonCounters& daemon) {
  MetricsWriter w;
  server_metrics(w, server);
  device_metrics(w, devices);
  w.family("pqot_srmcpd_nodes", "Nodes served (after the last successful reload).", MetricType::gauge);
  w.sample("pqot_srmcpd_nodes", {}, daemon.nodes.load());
  w.family("pqot_srmcpd_config_reloads_total", "Configuration reloads (SIGHUP), by result.", MetricType::counter);
  w.sample("pqot_srmcpd_config_reloads_total", {{"result", "ok"}}, daemon.reloads_ok.load());
  w.sample("pqot_srmcpd_config_reloads_total", {{"result", "failed"}}, daemon.reloads_failed.load());
  process_metrics(w);
  return w.take();
}

}  // namespace pqot::srmcpd
