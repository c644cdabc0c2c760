// srmcpd configuration (docs/srmcpd.md): server settings and the node tree, loaded from TOML.
#pragma once

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "pqot/srmcp/node.hpp"
#include "pqot/srmcp/wire.hpp"

namespace pqot::srmcp {

struct ServerConfig {
  std::string listen_host = "127.0.0.1";
  std::uint16_t listen_port = 4843;
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
  std::vector<std::string> allow;  ///< allowed client identities; empty = any the CA signed
  std::uint16_t data_port_min = 28000;  // below Linux's ephemeral range (32768-60999)
  std::uint16_t data_port_max = 28999;
  std::vector<KemId> kem_preference{KemId::ml_kem_768, KemId::ml_kem_1024, KemId::x_wing};
  std::chrono::milliseconds handshake_deadline{5000};
  std::chrono::milliseconds offer_lifetime{5000};
  std::chrono::milliseconds idle_frame_deadline{10000};
  std::uint32_t max_sessions = 1000;
  std::uint32_t max_pending_links = 64;
  std::uint32_t key_update_messages = 1u << 20;
  std::uint32_t key_update_seconds = 3600;
  std::uint32_t timestamp_window_ms = 30000;
  Limits limits;
  unsigned threads = 2;
  std::string log_level = "info";  ///< trace, debug, info, warn, error
};

/// A configuration error, with the file and line it comes from in what() ("plant.toml:12: ...").
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct LoadedConfig {
  ServerConfig server;
  std::vector<NodeSpec> nodes;  ///< in an order NodeStore::add accepts (parents first)
};

/// Parses and validates the whole file; throws ConfigError naming the file and line of the first
/// problem. Relative certificate paths are resolved against the file's directory.
LoadedConfig load_config(const std::string& path);
/// Same, from text (tests); `name` is used in error messages and `base_dir` for relative paths.
LoadedConfig parse_config(const std::string& text, const std::string& name, const std::string& base_dir);

}  // namespace pqot::srmcp
