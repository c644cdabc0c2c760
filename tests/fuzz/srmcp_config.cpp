// libFuzzer target: srmcpd's configuration loader (docs/srmcpd.md, docs/srmcpd-modbus.md). Any
// text is either a valid configuration whose nodes a NodeStore accepts, or one ConfigError.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "pqot/srmcp/config.hpp"

using namespace pqot::srmcp;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 16384) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  LoadedConfig c;
  try {
    c = parse_config(text, "fuzz.toml", "");
  } catch (const ConfigError& e) {
    if (std::string(e.what()).rfind("fuzz.toml:", 0) != 0) std::abort();  // every error names the file
    return 0;
  }
  // What the loader accepted, the store must accept too (srmcpd would fail at start otherwise).
  NodeStore store;
  for (auto& n : c.nodes) {
    try {
      store.add(n);
    } catch (const std::invalid_argument&) {
      std::abort();
    }
  }
  for (const auto& b : c.modbus) {
    if (!pqot::modbus::check(b.point).empty() || !store.contains(b.node_id)) std::abort();
  }
  return 0;
}
