// tripd's Prometheus page (docs/tripd.md, "Metrics"): per path and per flow.
#pragma once

#include <string>

#include <cstdint>
#include <utility>
#include <vector>

#include "daemon.hpp"
#include "relay.hpp"

namespace pqot::tripd {

/// Reloads since start (docs/tripd.md, "Reloading"): `tripd_reloads_total{result}`.
struct ReloadCounts {
  std::uint64_t applied = 0;
  std::uint64_t partial = 0;  ///< applied, but a restarted path or relay stayed down
  std::uint64_t refused = 0;
};

/// The page for the daemon's and the relays' state now (each relay's name and counters);
/// called on their thread.
std::string metrics_page(const Daemon& d, const std::vector<std::pair<std::string, RelayStats>>& relays,
                         const ReloadCounts& reloads = {});

}  // namespace pqot::tripd
