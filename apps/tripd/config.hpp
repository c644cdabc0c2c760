// tripd's configuration (docs/tripd.md, "Configuration"): identity, paths, flows, relays, limits.
// Parsed and checked in full before anything starts: `tripd --check-config` prints what is wrong
// as FILE:LINE: message.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pqot/common/host_port.hpp"
#include "pqot/config/toml_reader.hpp"
#include "pqot/trip/control.hpp"
#include "pqot/trip/datagram.hpp"

namespace pqot::tripd {

using config::ConfigError;
using Millis = std::chrono::milliseconds;

struct IdentityConfig {
  std::string ca;    ///< the CA that peers' certificates chain to
  std::string cert;  ///< this daemon's certificate (organizational unit "trip")
  std::string key;
};

/// What the server side offers in SERVER_HELLO and the client side offers in CLIENT_HELLO.
struct SessionConfig {
  trip::KemId kem = trip::KemId::ml_kem_768;  ///< the client's KEM
  std::vector<trip::KemId> accept_kems{trip::KemId::ml_kem_768, trip::KemId::ml_kem_1024, trip::KemId::x_wing};
  std::uint32_t keepalive_ms = 1000;
  std::uint32_t dead_after_ms = 5000;
  std::uint32_t key_update_datagrams = 1u << 24;
  std::uint32_t key_update_seconds = 3600;
};

struct LimitsConfig {
  std::size_t max_handshakes = 16;
  std::size_t max_handshakes_per_source = 4;
  Millis handshake_timeout{10'000};
  Millis session_grace{10'000};
  Millis reconnect_min{200};
  Millis reconnect_max{5'000};
  std::size_t max_datagram = 1400;
};

struct PathConfig {
  std::string name;
  std::uint8_t number = 0;                   ///< 1..255, unique
  std::optional<common::HostPort> connect;   ///< client side: the far daemon or a relay
  std::string server_name;                   ///< client side: the name the server's certificate must carry
  std::optional<common::HostPort> listen;    ///< server side: TCP (control) and UDP (data) on one port
  std::vector<std::string> peers;            ///< server side: client certificate names allowed
  bool is_client() const noexcept { return connect.has_value(); }
  bool operator==(const PathConfig&) const = default;
};

struct FlowConfig {
  std::uint16_t id = 0;  ///< 1..65535, unique, the same on both daemons
  std::string name;
  std::optional<common::HostPort> reflect;       ///< this side reflects: where the legacy sender sends
  std::vector<std::string> allow_from;           ///< reflect: source addresses taken (empty: any)
  std::optional<common::HostPort> deliver;       ///< this side filters: where the first copy goes
  std::optional<common::HostPort> deliver_from;  ///< filter: local address to send from (default any)
  Millis max_age{0};                             ///< filter: 0 = off (docs/trip.md §8)
  std::vector<std::string> paths;                ///< names of the paths that carry it (all if empty)
  bool reflects() const noexcept { return reflect.has_value(); }
  bool operator==(const FlowConfig&) const = default;
};

struct RelayConfig {
  std::string name;
  common::HostPort listen;
  common::HostPort forward;
  std::size_t max_connections = 64;
  std::size_t max_associations = 256;
  Millis idle{60'000};
  std::size_t max_buffer = 256 * 1024;  ///< bytes buffered per TCP direction
  bool operator==(const RelayConfig&) const = default;
};

struct TripdConfig {
  std::optional<IdentityConfig> identity;  ///< required when any path is configured
  SessionConfig session;
  LimitsConfig limits;
  std::vector<PathConfig> paths;
  std::vector<FlowConfig> flows;
  std::vector<RelayConfig> relays;
  std::optional<common::HostPort> metrics_listen;
  std::optional<std::filesystem::path> status_socket;
  std::string log_level = "info";

  /// The paths a flow travels on (all of them when its `paths` is empty).
  std::vector<const PathConfig*> paths_of(const FlowConfig& f) const;
  /// The flows a path carries, each with who reflects it as the path's handshake states it
  /// (docs/trip.md §4.1), in the handshake's order.
  std::vector<trip::SessionFlow> session_flows(const PathConfig& p) const;
};

/// Parses and checks a whole configuration; throws ConfigError naming the file and line.
TripdConfig parse_config(std::string_view text, const std::string& name, const std::string& base_dir);
/// Reads and parses a file (its directory is the base for relative paths).
TripdConfig load_config(const std::filesystem::path& file);

}  // namespace pqot::tripd
