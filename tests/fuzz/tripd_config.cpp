// Fuzzes tripd's configuration parser (docs/tripd.md, "Configuration"): any text is refused with
// ConfigError or gives a configuration whose invariants hold.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "tripd/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace pqot::tripd;
  try {
    const TripdConfig c = parse_config(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.toml", "/etc/tripd");
    if (c.paths.empty() && c.relays.empty()) std::abort();
    for (const PathConfig& p : c.paths) {
      if (p.connect.has_value() == p.listen.has_value() || p.number == 0) std::abort();
      const auto flows = c.session_flows(p);
      for (std::size_t i = 1; i < flows.size(); ++i) {
        if (!(flows[i - 1] < flows[i])) std::abort();
      }
    }
    for (const FlowConfig& f : c.flows) {
      if (f.id == 0 || f.reflect.has_value() == f.deliver.has_value()) std::abort();
    }
  } catch (const ConfigError&) {
  }
  return 0;
}
