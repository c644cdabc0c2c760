// srup-c2's configuration file (TOML; docs/srup-c2.md, "Configuration"): every key with its
// default and range, relative paths resolved against the file's directory, unknown keys refused,
// every error "FILE:LINE: message".
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>

#include "pqot/common/host_port.hpp"
#include "records.hpp"
#include "registry.hpp"

namespace pqot::srup_c2 {

/// The file cannot be used: what() is "FILE:LINE: message" (or "FILE: message" for the file itself).
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class LogLevel { trace, debug, info, warn, error };
const char* to_string(LogLevel l) noexcept;

struct C2Config {
  // Ranges (docs/srup-c2.md lists them with the keys).
  static constexpr std::int64_t kMaxLifetimeMs = 604'800'000;  ///< the envelope's (srup-pq.md 2.1)
  static constexpr std::int64_t kMaxCertDays = 3650;           ///< pki::kMaxEnrolDays
  static constexpr std::size_t kMaxSocketPath = 107;           ///< sockaddr_un::sun_path less NUL
  /// Smallest byte bound of the queue (in all and per device): two of the largest envelope
  /// (srup::kMaxEnvelope) with their topics.
  static constexpr std::int64_t kMinQueueBytes = 131'072;
  /// Smallest byte bound of provisional readings: one reading of the registry's largest (65,536).
  static constexpr std::int64_t kMinProvisionalBytes = 65'536;
  static constexpr std::int64_t kMaxBudgetBytes = std::int64_t{4} << 30;  ///< 4 GiB

  struct C2 {
    std::filesystem::path state_dir;  ///< required
    LogLevel log_level = LogLevel::info;
  } c2;
  struct Broker {
    std::string host = "localhost";
    std::uint16_t port = 8883;
    std::filesystem::path ca, cert, key;  ///< required
    std::uint32_t keepalive_s = 30;
    std::chrono::milliseconds reconnect_min{500};
    std::chrono::milliseconds reconnect_max{30'000};
  } broker;
  struct Enrolment {
    std::optional<std::filesystem::path> ca_cert, ca_key;  ///< both or neither
    int cert_days = 365;
    JoinMode default_join = JoinMode::human;
  } enrolment;
  struct Commands {
    std::chrono::milliseconds lifetime{60'000};
    std::chrono::milliseconds retry_initial{2'000};
    std::chrono::milliseconds retry_max{30'000};
    std::chrono::seconds expire_after{3'600};
    std::size_t outbox_max_per_device = 16;
    std::size_t outbox_max_total = 10'000;
  } commands;
  struct Join {
    std::uint32_t code_attempts = 5;
    std::size_t pending_max = 100;
    std::chrono::seconds code_lifetime{86'400};
  } join;
  struct Telemetry {
    bool store = true;
    std::size_t retention_per_device = 10'000;
    /// Readings held until their Checkpoint confirms them (docs/srup-c2.md, "Telemetry"): in all
    /// and per device, counted and in bytes of their JSON text.
    std::size_t provisional_max = 100'000;
    std::size_t provisional_max_bytes = std::size_t{128} << 20;
    std::size_t provisional_max_per_device = 1'000;
    std::size_t provisional_max_bytes_per_device = std::size_t{4} << 20;
  } telemetry;
  /// Messages from the broker waiting for the daemon's handler, in all and per device (the
  /// topic's device ID); bytes are payload and topic.
  struct Queue {
    std::size_t max_messages = 10'000;
    std::size_t max_bytes = std::size_t{64} << 20;
    std::size_t max_messages_per_device = 1'000;
    std::size_t max_bytes_per_device = std::size_t{4} << 20;
  } queue;
  struct Limits {
    std::size_t max_devices = 10'000;
    std::size_t max_monitors = 100;
  } limits;
  struct Control {
    std::filesystem::path socket;  ///< default state_dir/control.sock
    std::size_t max_clients = 8;
    std::size_t request_max_bytes = 65'536;
    std::chrono::milliseconds idle_timeout{60'000};
  } control;
  struct Metrics {
    std::optional<common::HostPort> listen;
  } metrics;

  std::filesystem::path identity_dir() const { return c2.state_dir; }  ///< identity.key|pub
  std::filesystem::path state_db() const { return c2.state_dir / "state.db"; }
  std::filesystem::path registry_db() const { return c2.state_dir / "registry.db"; }
  /// The registry's bounds from [commands], [join], [telemetry] and [limits].
  RegistryLimits registry_limits() const;
};

/// Parses `text`; `name` is the file name in messages, relative paths resolve against `base_dir`.
C2Config parse_c2_config(const std::string& text, const std::string& name, const std::string& base_dir);
/// Reads and parses the file at `path` (at most 1 MiB).
C2Config load_c2_config(const std::filesystem::path& path);

}  // namespace pqot::srup_c2
