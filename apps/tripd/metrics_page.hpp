// tripd's Prometheus page (docs/tripd.md, "Metrics"): per path and per flow.
#pragma once

#include <string>

#include <memory>
#include <vector>

#include "daemon.hpp"
#include "relay.hpp"

namespace pqot::tripd {

/// The page for the daemon's and the relays' state now; called on their thread.
std::string metrics_page(const Daemon& d, const std::vector<std::unique_ptr<Relay>>& relays,
                         const std::vector<RelayConfig>& relay_configs);

}  // namespace pqot::tripd
