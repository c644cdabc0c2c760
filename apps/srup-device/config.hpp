// srup-device's TOML configuration (docs/srup-device.md, "Configuration"): every key checked,
// unknown keys refused, every error "FILE:LINE: message". No I/O but reading the file (fuzzed:
// tests/fuzz/srup_device_config.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "pqot/common/host_port.hpp"
#include "pqot/modbus/point.hpp"

namespace pqot::srup_device {

struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Built-in action handlers a configuration may name (`builtin = "..."`); the agent registers
/// a handler for each with ActionRunner::register_builtin.
inline constexpr const char* kBuiltinActions[] = {"log", "reboot-simulated", "set-interval"};

struct DeviceSection {
  std::string state_dir;  ///< required: identity files and state.db
  std::string type;       ///< device type text (Data "IDENTIFICATION_RESPONSE"), may be empty
  std::string log_level = "info";
};

struct C2Section {
  std::string public_identity;  ///< required: the C2's identity.pub
};

struct BrokerSection {
  std::string host;  ///< required
  std::uint16_t port = 8883;
  std::string ca, cert, key;  ///< required
  std::uint32_t keepalive_s = 30;
  std::uint32_t reconnect_min_ms = 500;
  std::uint32_t reconnect_max_ms = 30'000;
};

enum class JoinMode { simple, human, observed };

struct JoinSection {
  JoinMode mode = JoinMode::simple;
  std::uint64_t observer = 0;  ///< required with mode = "observed", else 0
  std::string code_file;       ///< default STATE_DIR/join-code
  /// As an observer: where this device finds the codes it observes other devices show, one file
  /// per device named by its 16 hex digits (a camera's or a person's reading, docs/srup-mqtt.md
  /// 4.2). Empty: it observes nothing (Observation Requests are answered 0x6F).
  std::string observe_dir;
  /// How long an Observation Request waits for its observation to appear in observe_dir before it
  /// is answered 0x6F (nothing observed).
  std::uint32_t observe_wait_ms = 60'000;
};

/// One [[action]]: a program (run without a shell) or a built-in handler.
struct ActionSpec {
  std::uint8_t id = 0;
  std::string program;            ///< absolute after loading; empty for a built-in
  std::vector<std::string> args;  ///< argv[1..]; argv[0] is the program path
  bool pass_argument = false;     ///< append the SRUP argument's text as one more argv element
  /// With pass_argument: put "--" before the argument, which may then start with '-'. Without
  /// it such an argument is refused (it would be read as an option of the program).
  bool end_of_options = false;
  std::uint32_t timeout_ms = 10'000;
  std::vector<std::string> env;  ///< "NAME=VALUE" set, or "NAME" copied from the agent's own
  std::string builtin;           ///< one of kBuiltinActions; empty for a program
};

/// Which HTTP redirects an update download follows (update.redirects).
enum class UpdateRedirects {
  none,          ///< none: a 3xx answer is an HTTP error
  same_origin,   ///< only to the same host and port (relative or absolute Location)
  public_hosts,  ///< also to other hosts, if every address they resolve to is public
};

struct UpdateSection {
  std::string dir;                              ///< default STATE_DIR/updates
  std::uint64_t max_bytes = 64ull << 20;        ///< 1 .. 4 GiB
  std::uint32_t timeout_ms = 300'000;           ///< whole download
  std::uint32_t io_timeout_ms = 10'000;         ///< connect, and each read
  std::string apply_program;                    ///< empty: Update Activate answers 0x1F
  std::vector<std::string> apply_args;          ///< before the file's path
  std::uint32_t apply_timeout_ms = 600'000;
  /// file:// URLs must resolve inside it; empty: file:// URLs are refused.
  std::string allowed_file_root;
  UpdateRedirects redirects = UpdateRedirects::same_origin;
};

enum class TelemetrySource { model, modbus };

struct ModbusChannel {
  std::string name;          ///< a name of pqot/srup/meter_channels.hpp
  std::uint16_t channel = 0;  ///< its number
  modbus::Point point;
};

struct TelemetryModbus {
  std::string host;  ///< required with source = "modbus"
  std::uint16_t port = 502;
  int unit = 1;
  std::uint32_t timeout_ms = 1000;
  std::uint32_t backoff_min_ms = 500;
  std::uint32_t backoff_max_ms = 30'000;
  std::vector<ModbusChannel> channels;  ///< 1..64, in file order
};

struct TelemetrySection {
  bool enabled = false;
  std::uint32_t interval_ms = 10'000;
  TelemetrySource source = TelemetrySource::model;
  int phases = 3;
  std::uint64_t seed = 1;
  std::uint32_t key_resend_s = 60;  ///< the current Telemetry Key to every reader again (mqtt 4.6)
  TelemetryModbus modbus;
};

struct LimitsSection {
  std::uint32_t max_concurrent_actions = 4;
};

/// `[metrics]`: the Prometheus page of the agent's counters (refusals by reason, ...).
struct MetricsSection {
  std::optional<common::HostPort> listen;  ///< none: no metrics endpoint
};

struct DeviceConfig {
  DeviceSection device;
  C2Section c2;
  BrokerSection broker;
  JoinSection join;
  std::vector<ActionSpec> actions;  ///< unique IDs, file order
  UpdateSection update;
  TelemetrySection telemetry;
  LimitsSection limits;
  MetricsSection metrics;

  /// The action with `id`, or nullptr.
  const ActionSpec* action(std::uint8_t id) const;
};

/// Parses `text` (named `name` in errors; relative paths resolve against `base_dir`, if not empty).
DeviceConfig parse_device_config(const std::string& text, const std::string& name,
                                 const std::string& base_dir);
/// Reads and parses the file at `path` (at most 1 MiB).
DeviceConfig load_device_config(const std::string& path);

/// "TABLE:ADDRESS:TYPE[:SCALE]" (table coil|discrete_input|holding|input, address 0..65535,
/// type a pqot::modbus type but string): the point, or a message saying what is wrong.
std::variant<modbus::Point, std::string> parse_point_spec(std::string_view spec);

}  // namespace pqot::srup_device
