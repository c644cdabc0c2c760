// The project's mosquitto 2.0 configuration and its initial dynamic-security file (docs/mqtt.md,
// "The broker configuration"): TLS 1.3 with client certificates whose CN is the username, no
// anonymous access, registration through the dynsec plugin, optional bridges.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pqot::mqtt {

/// A bridge to another broker (mosquitto's `connection` section).
struct BridgeConfig {
  std::string name;            ///< connection name, [A-Za-z0-9._-], 1..64
  std::string remote_host;     ///< host name or IPv4 literal
  std::uint16_t remote_port = 8883;
  std::string remote_clientid;  ///< empty: "bridge-<name>"
  std::string ca_file, cert_file, key_file;  ///< this side's TLS files (the remote's CA)
  std::string topic = "srup/#";  ///< `topic <topic> both 1`
  /// "mqttv311" (default: cleansession false keeps the bridge's session without an expiry
  /// property, and try_private marks the connection as a bridge so messages do not loop) or "mqttv50".
  std::string protocol_version = "mqttv311";
  bool clean_session = false;
  unsigned restart_timeout_min_s = 1;   ///< reconnect backoff of the bridge, 1..3600
  unsigned restart_timeout_max_s = 30;
};

struct BrokerConfig {
  std::string listen_host = "127.0.0.1";
  std::uint16_t port = 8883;
  std::string ca_file, cert_file, key_file;  ///< the broker's TLS files; clients are verified against ca_file
  bool persistence = true;
  std::string persistence_dir;       ///< required when persistence is on
  unsigned autosave_interval_s = 60;  ///< 0: save only at shutdown; else every N s (1..86400)
  std::string dynsec_plugin = "/usr/lib/x86_64-linux-gnu/mosquitto_dynamic_security.so";
  std::string dynsec_file;           ///< dynsec.json (the plugin rewrites it on every change)
  /// `user`: mosquitto started as root drops to this user; it must be able to read every file
  /// above. Default: default_run_as_user(). Empty: no `user` line.
  std::string run_as_user = default_run_as_user();
  std::string log_file;              ///< required: `log_dest file`
  std::vector<std::string> log_types{"error", "warning", "notice", "information"};
  // Bounds on what clients can make the broker hold (mosquitto's own options).
  unsigned max_connections = 1000;       ///< 1..1000000
  unsigned max_inflight_messages = 20;   ///< per client, 1..65535
  unsigned max_queued_messages = 1000;   ///< per client session while offline, 1..1000000
  std::size_t max_packet_size = 1 << 20;  ///< bytes, 64..268435455
  std::vector<BridgeConfig> bridges;
  /// Benchmarks only (`srup bench-mqtt`, docs/srup-tool.md): a second listener on listen_host
  /// without TLS, where clients log in with a dynsec username and password, so that plain MQTT
  /// is measured on the same broker as SRUP-PQ. 0, the default and what every daemon writes:
  /// none. Must differ from `port`.
  std::uint16_t plaintext_port = 0;

  /// The effective user's name when running as root (so that mosquitto keeps our identity and
  /// can read the files we wrote), else "" (mosquitto only changes user when started as root).
  static std::string default_run_as_user();
};

/// The mosquitto.conf text for `config`. Throws std::invalid_argument naming the field for
/// missing or unusable values: a path or value with a space, control character or '#', a
/// relative path, bounds above.
std::string render_broker_config(const BrokerConfig& config);

/// The initial dynsec.json: defaultACLAccess publishClientSend, publishClientReceive and subscribe
/// false, unsubscribe true; one client `admin_username` (no password) with a role of the same
/// name allowing srup/# and $CONTROL/dynamic-security/# (publishClientSend, publishClientReceive,
/// subscribePattern). Throws std::invalid_argument for a bad username.
std::string render_initial_dynsec(std::string_view admin_username);

/// Writes `text` to `path` atomically: a temporary file in the same directory, flushed, then
/// renamed over `path` (overwrite) or linked to it (otherwise: an existing file is an error and
/// is left untouched). Mode 0600. Throws std::system_error naming the path.
void write_config_file(const std::string& path, std::string_view text, bool overwrite);

/// render_broker_config + write_config_file.
void write_broker_config(const BrokerConfig& config, const std::string& path, bool overwrite = false);
/// render_initial_dynsec + write_config_file.
void write_initial_dynsec(const std::string& path, std::string_view admin_username, bool overwrite = false);

}  // namespace pqot::mqtt
