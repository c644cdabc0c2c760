// srmcpd's Prometheus page (docs/metrics.md, "Metric families"): server, Modbus devices, reloads
// and the process.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "pqot/srmcp/gateway.hpp"
#include "pqot/srmcp/server.hpp"

namespace pqot::srmcpd {

struct DaemonCounters {
  std::atomic<std::uint64_t> reloads_ok{0};
  std::atomic<std::uint64_t> reloads_failed{0};
  std::atomic<std::uint64_t> nodes{0};
};

std::string render_metrics(const srmcp::ServerStats& server, const std::vector<srmcp::gateway::DeviceStats>& devices,
                           const DaemonCounters& daemon);

}  // namespace pqot::srmcpd
