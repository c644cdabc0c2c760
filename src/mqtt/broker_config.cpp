#include "pqot/mqtt/broker_config.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <system_error>

#include <nlohmann/json.hpp>

#include "pqot/common/files.hpp"
#include "pqot/mqtt/dynsec_commands.hpp"

namespace pqot::mqtt {

namespace {

[[noreturn]] void broker_bad(const std::string& field, const std::string& why) {
  throw std::invalid_argument("broker config: " + field + " " + why);
}

// mosquitto splits option lines at spaces and treats '#' lines as comments: a value with either,
// or with a control character (a newline would start a new option), cannot be written safely.
void broker_check_value(const std::string& field, const std::string& value) {
  if (value.empty()) broker_bad(field, "is required");
  if (value.size() > 4096) broker_bad(field, "is longer than 4096 bytes");
  for (const char c : value) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f || c == '#') {
      broker_bad(field, "'" + value + "' contains a space, control character or '#'");
    }
  }
}

void broker_check_path(const std::string& field, const std::string& path) {
  broker_check_value(field, path);
  if (path.front() != '/') broker_bad(field, "'" + path + "' must be an absolute path");
}

void broker_check_range(const std::string& field, std::uint64_t value, std::uint64_t lo, std::uint64_t hi) {
  if (value < lo || value > hi) {
    broker_bad(field, "is " + std::to_string(value) + ", must be " + std::to_string(lo) + ".." + std::to_string(hi));
  }
}

void broker_check_name(const std::string& field, const std::string& name) {
  if (name.empty() || name.size() > 64) broker_bad(field, "must be 1..64 characters");
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) broker_bad(field, "'" + name + "' may hold only A-Z a-z 0-9 . _ -");
  }
}

void broker_line(std::string& out, std::string_view key, std::string_view value) {
  out.append(key).append(" ").append(value).append("\n");
}

void render_bridge(std::string& out, const BridgeConfig& b) {
  const std::string f = "bridge '" + b.name + "' ";
  broker_check_name("bridge name", b.name);
  broker_check_value(f + "remote_host", b.remote_host);
  broker_check_range(f + "remote_port", b.remote_port, 1, 65535);
  const std::string clientid = b.remote_clientid.empty() ? "bridge-" + b.name : b.remote_clientid;
  broker_check_name(f + "remote_clientid", clientid);
  broker_check_path(f + "ca_file", b.ca_file);
  broker_check_path(f + "cert_file", b.cert_file);
  broker_check_path(f + "key_file", b.key_file);
  // A topic pattern may hold '#' (not at the start of the line, where it would be a comment).
  if (b.topic.empty() || b.topic.size() > 1024 ||
      std::any_of(b.topic.begin(), b.topic.end(), [](char ch) { return static_cast<unsigned char>(ch) <= 0x20 || ch == 0x7f; })) {
    broker_bad(f + "topic", "'" + b.topic + "' must be 1..1024 bytes without spaces or control characters");
  }
  if (b.protocol_version != "mqttv311" && b.protocol_version != "mqttv50") {
    broker_bad(f + "protocol_version", "must be mqttv311 or mqttv50");
  }
  broker_check_range(f + "restart_timeout_min_s", b.restart_timeout_min_s, 1, 3600);
  broker_check_range(f + "restart_timeout_max_s", b.restart_timeout_max_s, b.restart_timeout_min_s, 3600);

  out += "\n# Bridge to another broker over TLS 1.3 with this side's client certificate.\n";
  broker_line(out, "connection", b.name);
  broker_line(out, "address", b.remote_host + ":" + std::to_string(b.remote_port));
  broker_line(out, "remote_clientid", clientid);
  broker_line(out, "bridge_cafile", b.ca_file);
  broker_line(out, "bridge_certfile", b.cert_file);
  broker_line(out, "bridge_keyfile", b.key_file);
  broker_line(out, "bridge_tls_version", "tlsv1.3");
  broker_line(out, "bridge_protocol_version", b.protocol_version);
  broker_line(out, "cleansession", b.clean_session ? "true" : "false");
  broker_line(out, "try_private", "true");
  broker_line(out, "notifications", "false");
  broker_line(out, "restart_timeout",
              std::to_string(b.restart_timeout_min_s) + " " + std::to_string(b.restart_timeout_max_s));
  broker_line(out, "topic", b.topic + " both 1");
}

nlohmann::json broker_acl(const char* type, const char* topic) {
  return {{"acltype", type}, {"topic", topic}, {"priority", 0}, {"allow", true}};
}

}  // namespace

std::string BrokerConfig::default_run_as_user() {
  if (::geteuid() != 0) return "";
  const passwd* pw = ::getpwuid(::geteuid());
  return pw != nullptr && pw->pw_name != nullptr ? pw->pw_name : "root";
}

std::string render_broker_config(const BrokerConfig& c) {
  broker_check_value("listen_host", c.listen_host);
  broker_check_range("port", c.port, 1, 65535);
  if (c.plaintext_port != 0 && c.plaintext_port == c.port) broker_bad("plaintext_port", "must differ from port");
  broker_check_path("ca_file", c.ca_file);
  broker_check_path("cert_file", c.cert_file);
  broker_check_path("key_file", c.key_file);
  if (c.persistence) broker_check_path("persistence_dir", c.persistence_dir);
  broker_check_range("autosave_interval_s", c.autosave_interval_s, 0, 86400);
  broker_check_path("dynsec_plugin", c.dynsec_plugin);
  broker_check_path("dynsec_file", c.dynsec_file);
  if (!c.run_as_user.empty()) broker_check_value("run_as_user", c.run_as_user);
  broker_check_path("log_file", c.log_file);
  if (c.log_types.empty()) broker_bad("log_types", "must name at least one type");
  for (const auto& t : c.log_types) broker_check_name("log_types", t);
  broker_check_range("max_connections", c.max_connections, 1, 1000000);
  broker_check_range("max_inflight_messages", c.max_inflight_messages, 1, 65535);
  broker_check_range("max_queued_messages", c.max_queued_messages, 1, 1000000);
  broker_check_range("max_packet_size", c.max_packet_size, 64, 268435455);

  std::string out;
  out += "# mosquitto 2.0 configuration written by pqot (docs/mqtt.md, \"The broker configuration\").\n";
  out += "# One set of security settings for every listener and bridge.\n";
  broker_line(out, "per_listener_settings", "false");
  if (!c.run_as_user.empty()) {
    out += "# Started as root, mosquitto drops to this user (else to \"mosquitto\", who cannot read our files).\n";
    broker_line(out, "user", c.run_as_user);
  }
  out += "# Bounds on what clients make the broker hold.\n";
  broker_line(out, "max_inflight_messages", std::to_string(c.max_inflight_messages));
  broker_line(out, "max_queued_messages", std::to_string(c.max_queued_messages));
  broker_line(out, "max_packet_size", std::to_string(c.max_packet_size));
  out += "# Commands are single small messages: Nagle's algorithm would hold an answer back until\n"
         "# the peer's delayed ACK (about 40 ms on Linux).\n";
  broker_line(out, "set_tcp_nodelay", "true");
  out += "# Sessions and queued QoS 1 messages survive a restart only with persistence.\n";
  broker_line(out, "persistence", c.persistence ? "true" : "false");
  if (c.persistence) {
    std::string dir = c.persistence_dir;
    if (dir.back() != '/') dir += '/';
    broker_line(out, "persistence_location", dir);
    broker_line(out, "autosave_interval", std::to_string(c.autosave_interval_s));
  }
  broker_line(out, "log_dest", "file " + c.log_file);
  for (const auto& t : c.log_types) broker_line(out, "log_type", t);
  broker_line(out, "log_timestamp", "true");
  out += "# Registration: the dynamic-security plugin, driven by the C2 over $CONTROL/dynamic-security/v1.\n";
  broker_line(out, "plugin", c.dynsec_plugin);
  broker_line(out, "plugin_opt_config_file", c.dynsec_file);
  out += "# Clients need a certificate of our CA; its CN is the username the ACLs are keyed on.\n";
  broker_line(out, "allow_anonymous", "false");
  broker_line(out, "listener", std::to_string(c.port) + " " + c.listen_host);
  broker_line(out, "max_connections", std::to_string(c.max_connections));
  broker_line(out, "cafile", c.ca_file);
  broker_line(out, "certfile", c.cert_file);
  broker_line(out, "keyfile", c.key_file);
  broker_line(out, "tls_version", "tlsv1.3");
  broker_line(out, "require_certificate", "true");
  broker_line(out, "use_identity_as_username", "true");
  if (c.plaintext_port != 0) {
    out += "# Benchmarks only (srup bench-mqtt): plain MQTT without TLS, dynsec username and password.\n";
    broker_line(out, "listener", std::to_string(c.plaintext_port) + " " + c.listen_host);
    broker_line(out, "max_connections", std::to_string(c.max_connections));
  }
  for (const auto& b : c.bridges) render_bridge(out, b);
  return out;
}

std::string render_initial_dynsec(std::string_view admin_username) {
  try {
    dynsec::check_name(admin_username, "admin username");
  } catch (const dynsec::DynsecError& e) {
    throw std::invalid_argument(e.what());
  }
  const std::string admin(admin_username);
  nlohmann::json acls = nlohmann::json::array();
  for (const char* topic : {"srup/#", "$CONTROL/dynamic-security/#"}) {
    acls.push_back(broker_acl("publishClientSend", topic));
    acls.push_back(broker_acl("publishClientReceive", topic));
    acls.push_back(broker_acl("subscribePattern", topic));
  }
  const nlohmann::json doc = {
      {"defaultACLAccess",
       {{"publishClientSend", false}, {"publishClientReceive", false}, {"subscribe", false}, {"unsubscribe", true}}},
      {"clients", {{{"username", admin}, {"textname", "SRUP-PQ C2, dynsec admin"}, {"roles", {{{"rolename", admin}}}}}}},
      {"groups", nlohmann::json::array()},
      {"roles", {{{"rolename", admin}, {"acls", acls}}}},
  };
  return doc.dump(2) + "\n";
}

void write_config_file(const std::string& path, std::string_view text, bool overwrite) {
  const std::filesystem::path target(path);
  const std::string dir = target.has_parent_path() ? target.parent_path().string() : ".";
  std::random_device rd;
  const std::string tmp = path + ".tmp-" + std::to_string(rd());
  common::write_new_file(tmp, text, 0600);
  if (overwrite) {
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
      const int err = errno;
      ::unlink(tmp.c_str());
      throw std::system_error(err, std::generic_category(), "cannot replace '" + path + "'");
    }
  } else {
    // link() fails with EEXIST instead of replacing: no window in which another file is clobbered.
    const int rc = ::link(tmp.c_str(), path.c_str());
    const int err = errno;
    ::unlink(tmp.c_str());
    if (rc != 0) {
      throw std::system_error(err, std::generic_category(),
                              err == EEXIST ? "'" + path + "' exists (refusing to overwrite)"
                                            : "cannot create '" + path + "'");
    }
  }
  common::sync_directory(dir);
}

void write_broker_config(const BrokerConfig& config, const std::string& path, bool overwrite) {
  write_config_file(path, render_broker_config(config), overwrite);
}

void write_initial_dynsec(const std::string& path, std::string_view admin_username, bool overwrite) {
  write_config_file(path, render_initial_dynsec(admin_username), overwrite);
}

}  // namespace pqot::mqtt
