// The srmcp client's configuration file (docs/srmcp-cli.md, "Configuration file"). toml++, which
// also reads srmcpd's configuration: real TOML with the same "FILE:LINE: what" errors, rather than
// one more small parser of our own that would accept a near-TOML of its own.
#include "client_config.hpp"

#include <toml++/toml.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "pqot/common/host_port.hpp"

namespace pqot::srmcp_cli {
namespace {

namespace fs = std::filesystem;

const char* type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a number";
    case toml::node_type::boolean:
      return "a boolean";
    default:
      return "a date or time";
  }
}

}  // namespace

ClientFile parse_client_file(const std::string& text, const std::string& name,
                             const fs::path& base_dir) {
  const auto fail = [&](const toml::source_region& at, const std::string& what) -> ClientFileError {
    return ClientFileError(name + ":" + std::to_string(at.begin.line) + ": " + what);
  };
  toml::table root;
  try {
    root = toml::parse(std::string_view(text), std::string_view(name));
  } catch (const toml::parse_error& e) {
    throw fail(e.source(), std::string(e.description()));
  }
  ClientFile out;
  for (auto&& [k, v] : root) {
    const std::string key(k.str());
    std::optional<std::string>* slot = key == "server" ? &out.server
                                       : key == "ca"   ? &out.ca
                                       : key == "cert" ? &out.cert
                                       : key == "key"  ? &out.key
                                                       : nullptr;
    if (slot == nullptr)
      throw fail(k.source(), "unknown key '" + key + "' (expected server, ca, cert, key)");
    const auto* s = v.as_string();
    if (s == nullptr) throw fail(v.source(), key + " must be a string, not " + type_name(v));
    std::string value = s->get();
    if (value.empty()) throw fail(v.source(), key + " must not be empty");
    if (key == "server") {
      if (!common::parse_host_port(value))
        throw fail(v.source(), "server must be HOST:PORT, not '" + value + "'");
    } else if (fs::path(value).is_relative()) {
      value = (base_dir / value).lexically_normal().string();
    }
    *slot = std::move(value);
  }
  return out;
}

ClientFile read_client_file(const fs::path& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw ClientFileError(path.string() + ": is a directory, not a configuration file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ClientFileError(path.string() + ": cannot read: " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  return parse_client_file(text.str(), path.string(), fs::absolute(path, ec).parent_path());
}

fs::path default_client_file() {
  // XDG Base Directory: a relative XDG_CONFIG_HOME is invalid and ignored.
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  if (xdg != nullptr && xdg[0] == '/') return fs::path(xdg) / "srmcp" / "client.toml";
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] != '\0')
    return fs::path(home) / ".config" / "srmcp" / "client.toml";
  return {};
}

}  // namespace pqot::srmcp_cli
