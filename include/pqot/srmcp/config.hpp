// srmcpd configuration (docs/srmcpd.md): server settings and the node tree, loaded from TOML.
#pragma once

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "pqot/modbus/point.hpp"
#include "pqot/srmcp/node.hpp"
#include "pqot/srmcp/server_config.hpp"
#include "pqot/srmcp/wire.hpp"

namespace pqot::srmcp {

/// A configuration error, with the file and line it comes from in what() ("plant.toml:12: ...").
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A Modbus TCP device the gateway talks to (`[[device]]`, docs/srmcpd-modbus.md).
struct ModbusDeviceConfig {
  std::string name;
  std::string host;
  std::uint16_t port = 502;
  int unit = 1;                                         ///< unit identifier, 0..255
  std::chrono::milliseconds timeout{500};               ///< one Modbus request's response time
  std::chrono::milliseconds connect_timeout{1000};
  std::chrono::milliseconds backoff_min{200};           ///< first retry after a failure
  std::chrono::milliseconds backoff_max{10000};         ///< retries back off up to this
  std::chrono::milliseconds request_deadline{1000};     ///< queued longer than this: TIMEOUT
  std::uint16_t max_registers = modbus::kMaxReadRegisters;  ///< per batched read
  /// How a WRITE learns the value stored: by reading the point back (the default, right for
  /// devices that clamp or ignore what they are sent), or from the FC05/FC06 answer's echo.
  enum class WriteConfirm : std::uint8_t { read_back, echo };
  WriteConfirm write_confirm = WriteConfirm::read_back;
  std::uint32_t line = 0;                               ///< where it is defined, for messages
};

/// A node whose Read and Write go to a Modbus device (`modbus = {...}` in a `[[node]]`).
struct ModbusBinding {
  std::string node_id;
  std::string device;
  modbus::Point point;
  std::chrono::milliseconds poll{0};       ///< > 0: read every `poll`, reads return the last poll
  std::chrono::milliseconds cache_age{0};  ///< > 0: on-demand reads reuse a value this young
  std::uint32_t line = 0;
};

struct LoadedConfig {
  ServerConfig server;
  std::vector<NodeSpec> nodes;  ///< in an order NodeStore::add accepts (parents first)
  std::vector<ModbusDeviceConfig> devices;
  std::vector<ModbusBinding> modbus;  ///< nodes in `nodes` (without callables yet) on devices
};

/// Settings that differ between `running` and `reloaded` and take effect only after a restart
/// (everything but the nodes, the devices and log_level), by key name ("server.listen", ...).
std::vector<std::string> settings_needing_restart(const ServerConfig& running, const ServerConfig& reloaded);

/// Parses and validates the whole file; throws ConfigError naming the file and line of the first
/// problem. Relative certificate paths are resolved against the file's directory.
LoadedConfig load_config(const std::string& path);
/// Same, from text (tests); `name` is used in error messages and `base_dir` for relative paths.
LoadedConfig parse_config(const std::string& text, const std::string& name, const std::string& base_dir);

}  // namespace pqot::srmcp
