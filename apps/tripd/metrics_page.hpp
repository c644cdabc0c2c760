// tripd's Prometheus page (docs/tripd.md, "Metrics"): per path and per flow.
#pragma once

#include <string>

#include "daemon.hpp"

namespace pqot::tripd {

/// The page for the daemon's state now; called on the daemon's thread.
std::string metrics_page(const Daemon& d);

}  // namespace pqot::tripd
