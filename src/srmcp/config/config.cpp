// srmcpd configuration loader (docs/srmcpd.md): TOML via toml++, every key checked, every error
// reported as "FILE:LINE: message" so an operator can fix the file without guessing. The
// sections are parsed by server.cpp, device.cpp, node.cpp and signal.cpp (sections.hpp).
#include "pqot/srmcp/config.hpp"

#include <toml++/toml.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "sections.hpp"

namespace pqot::srmcp {

LoadedConfig parse_config(const std::string& text, const std::string& name, const std::string& base_dir) {
  using namespace config;
  const Reader r(name, base_dir);
  toml::table root;
  try {
    root = toml::parse(std::string_view(text), std::string_view(name));
  } catch (const toml::parse_error& e) {
    r.fail_at(e.source().begin.line, std::string(e.description()));
  }
  for (auto&& [k, v] : root) {
    if (k != "server" && k != "limits" && k != "node" && k != "device") {
      r.fail(k.source(), "unknown key " + in_quotes(k.str()) + " (expected [server], [limits], [[device]], [[node]])");
    }
  }
  // Sections in a fixed order so that errors come out in a predictable order.
  LoadedConfig out;
  if (const auto* s = root.get("server")) parse_server(r, r.table_of(*s, "server"), out.server);
  if (const auto* l = root.get("limits")) parse_limits(r, r.table_of(*l, "limits"), out.server.limits);
  if (const auto* d = root.get("device")) parse_devices(r, *d, out.devices);  // before the nodes that use them
  if (const auto* n = root.get("node")) parse_nodes(r, *n, out);
  check_overlaps(r, out.modbus);
  return out;
}

LoadedConfig load_config(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path + ": cannot open the file");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw ConfigError(path + ": cannot read the file");
  return parse_config(text.str(), path, std::filesystem::path(path).parent_path().string());
}

}  // namespace pqot::srmcp
