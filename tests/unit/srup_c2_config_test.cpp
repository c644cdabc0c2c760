// srup-c2's configuration file (docs/srup-c2.md, "Configuration"): defaults, every key read,
// relative paths, and errors that name the file, the line and what would be valid.
#include <gtest/gtest.h>

#include <string>

#include "config.hpp"

namespace pqot::srup_c2::config_test {
namespace {

const std::string kMinimal = R"(
[c2]
state_dir = "state"

[broker]
ca = "pki/ca.crt"
cert = "pki/c2.crt"
key = "/etc/c2/c2.key"
)";

C2Config parse(const std::string& text) { return parse_c2_config(text, "c2.toml", "/etc/c2"); }

// The error's message, or "" if the text was accepted.
std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(SrupC2Config, MinimalFileTakesTheDocumentedDefaults) {
  const C2Config c = parse(kMinimal);
  EXPECT_EQ(c.c2.state_dir.string(), "/etc/c2/state");
  EXPECT_EQ(c.c2.log_level, LogLevel::info);
  EXPECT_EQ(c.broker.host, "localhost");
  EXPECT_EQ(c.broker.port, 8883);
  EXPECT_EQ(c.broker.ca.string(), "/etc/c2/pki/ca.crt");
  EXPECT_EQ(c.broker.key.string(), "/etc/c2/c2.key");  // absolute stays
  EXPECT_EQ(c.broker.keepalive_s, 30u);
  EXPECT_EQ(c.broker.reconnect_min.count(), 500);
  EXPECT_EQ(c.broker.reconnect_max.count(), 30'000);
  EXPECT_FALSE(c.enrolment.ca_cert);
  EXPECT_EQ(c.enrolment.cert_days, 365);
  EXPECT_EQ(c.enrolment.default_join, JoinMode::human);
  EXPECT_EQ(c.commands.lifetime.count(), 60'000);
  EXPECT_EQ(c.commands.retry_initial.count(), 2'000);
  EXPECT_EQ(c.commands.retry_max.count(), 30'000);
  EXPECT_EQ(c.commands.expire_after.count(), 3'600);
  EXPECT_EQ(c.commands.outbox_max_per_device, 16u);
  EXPECT_EQ(c.commands.outbox_max_total, 10'000u);
  EXPECT_EQ(c.join.code_attempts, 5u);
  EXPECT_EQ(c.join.pending_max, 100u);
  EXPECT_EQ(c.join.code_lifetime.count(), 86'400);
  EXPECT_TRUE(c.telemetry.store);
  EXPECT_EQ(c.telemetry.retention_per_device, 10'000u);
  EXPECT_EQ(c.telemetry.provisional_max, 100'000u);
  EXPECT_EQ(c.telemetry.provisional_max_bytes, 134'217'728u);
  EXPECT_EQ(c.telemetry.provisional_max_per_device, 1'000u);
  EXPECT_EQ(c.telemetry.provisional_max_bytes_per_device, 4'194'304u);
  EXPECT_EQ(c.queue.max_messages, 10'000u);
  EXPECT_EQ(c.queue.max_bytes, 67'108'864u);
  EXPECT_EQ(c.queue.max_messages_per_device, 1'000u);
  EXPECT_EQ(c.queue.max_bytes_per_device, 4'194'304u);
  EXPECT_EQ(c.limits.max_devices, 10'000u);
  EXPECT_EQ(c.limits.max_monitors, 100u);
  EXPECT_EQ(c.control.socket.string(), "/etc/c2/state/control.sock");
  EXPECT_EQ(c.control.max_clients, 8u);
  EXPECT_EQ(c.control.request_max_bytes, 65'536u);
  EXPECT_EQ(c.control.idle_timeout.count(), 60'000);
  EXPECT_FALSE(c.metrics.listen);
  EXPECT_EQ(c.registry_db().string(), "/etc/c2/state/registry.db");
  EXPECT_EQ(c.state_db().string(), "/etc/c2/state/state.db");
}

TEST(SrupC2Config, EveryKeyIsRead) {
  const C2Config c = parse(R"(
[c2]
state_dir = "/var/lib/srup-c2"
log_level = "debug"
[broker]
host = "broker.example"
port = 18883
ca = "ca.crt"
cert = "c2.crt"
key = "c2.key"
keepalive_s = 60
reconnect_min_ms = 1000
reconnect_max_ms = 60000
[enrolment]
ca_cert = "ca/ca.crt"
ca_key = "ca/ca.key"
cert_days = 90
default_join = "observed"
[commands]
lifetime_ms = 120000
retry_initial_ms = 500
retry_max_ms = 10000
expire_after_s = 600
outbox_max_per_device = 4
outbox_max_total = 400
[join]
code_attempts = 3
pending_max = 10
code_lifetime_s = 600
[telemetry]
store = false
retention_per_device = 50
provisional_max = 500
provisional_max_bytes = 1000000
provisional_max_per_device = 20
provisional_max_bytes_per_device = 70000
[queue]
max_messages = 300
max_bytes = 4294967296
max_messages_per_device = 30
max_bytes_per_device = 131072
[limits]
max_devices = 20
max_monitors = 2
[control]
socket = "/run/srup-c2/control.sock"
max_clients = 2
request_max_bytes = 4096
idle_timeout_ms = 5000
[metrics]
listen = "127.0.0.1:9464"
)");
  EXPECT_EQ(c.c2.log_level, LogLevel::debug);
  EXPECT_EQ(c.broker.host, "broker.example");
  EXPECT_EQ(c.broker.port, 18883);
  EXPECT_EQ(c.broker.keepalive_s, 60u);
  ASSERT_TRUE(c.enrolment.ca_key);
  EXPECT_EQ(c.enrolment.ca_key->string(), "/etc/c2/ca/ca.key");
  EXPECT_EQ(c.enrolment.cert_days, 90);
  EXPECT_EQ(c.enrolment.default_join, JoinMode::observed);
  EXPECT_EQ(c.commands.expire_after.count(), 600);
  EXPECT_FALSE(c.telemetry.store);
  EXPECT_EQ(c.telemetry.provisional_max, 500u);
  EXPECT_EQ(c.telemetry.provisional_max_bytes, 1'000'000u);
  EXPECT_EQ(c.telemetry.provisional_max_per_device, 20u);
  EXPECT_EQ(c.telemetry.provisional_max_bytes_per_device, 70'000u);
  EXPECT_EQ(c.queue.max_messages, 300u);
  EXPECT_EQ(c.queue.max_bytes, 4'294'967'296u);
  EXPECT_EQ(c.queue.max_messages_per_device, 30u);
  EXPECT_EQ(c.queue.max_bytes_per_device, 131'072u);
  EXPECT_EQ(c.control.socket.string(), "/run/srup-c2/control.sock");
  EXPECT_EQ(c.control.idle_timeout.count(), 5000);
  ASSERT_TRUE(c.metrics.listen);
  EXPECT_EQ(c.metrics.listen->port, 9464);
  const RegistryLimits l = c.registry_limits();
  EXPECT_EQ(l.max_devices, 20u);
  EXPECT_EQ(l.max_monitors, 2u);
  EXPECT_EQ(l.pending_max, 10u);
  EXPECT_EQ(l.join_code_attempts, 3u);
  EXPECT_EQ(l.join_code_lifetime_ms, 600'000u);
  EXPECT_EQ(l.outbox_max_per_device, 4u);
  EXPECT_EQ(l.outbox_max_total, 400u);
  EXPECT_EQ(l.telemetry_per_device, 50u);
}

TEST(SrupC2Config, ErrorsNameTheLineAndWhatIsValid) {
  struct Case {
    std::string append;
    std::string expected;
  };
  const Case cases[] = {
      {"[broker2]\n", "c2.toml:10: unknown key 'broker2'"},
      {"[join]\ncode_attempt = 3\n", "c2.toml:11: unknown key 'code_attempt' in [join] (expected code_attempts"},
      {"[join]\ncode_attempts = 0\n", "c2.toml:11: join.code_attempts = 0 is out of range 1..100"},
      {"[join]\ncode_attempts = \"5\"\n", "c2.toml:11: join.code_attempts must be an integer, not a string"},
      {"[telemetry]\nstore = 1\n", "c2.toml:11: telemetry.store must be true or false"},
      {"[enrolment]\ndefault_join = \"auto\"\n", "c2.toml:11: enrolment.default_join: 'auto' is not one of simple"},
      {"[enrolment]\nca_cert = \"ca.crt\"\n", "c2.toml:10: [enrolment] ca_cert and ca_key are given together"},
      {"[enrolment]\ncert_days = 3651\n", "out of range 1..3650"},
      {"[commands]\nlifetime_ms = 604800001\n", "commands.lifetime_ms = 604800001 is out of range 1000..604800000"},
      {"[commands]\nretry_initial_ms = 5000\nretry_max_ms = 1000\n", "c2.toml:10: [commands] retry_initial_ms (5000) is above retry_max_ms (1000)"},
      {"[commands]\nexpire_after_s = 10\n", "expire_after_s (10 s) is shorter than lifetime_ms (60000 ms)"},
      {"[metrics]\nlisten = \"9464\"\n", "c2.toml:11: metrics.listen: expected \"HOST:PORT\""},
      {"[control]\nsocket = \"/" + std::string(120, 's') + "\"\n", "c2.toml:11: control.socket: the path"},
      {"[control]\nmax_clients = 65\n", "out of range 1..64"},
      {"[control]\nidle_timeout_ms = 999\n", "control.idle_timeout_ms = 999 is out of range 1000..3600000"},
      {"[limits]\nmax_devices = 50\n", "join.pending_max (100) is above limits.max_devices (50)"},
      {"[queue]\nmax_bytes = 131071\n", "c2.toml:11: queue.max_bytes = 131071 is out of range 131072..4294967296"},
      {"[queue]\nmax_bytes_per_device = 4294967297\n", "queue.max_bytes_per_device = 4294967297 is out of range"},
      {"[queue]\nmax_messages = 0\n", "queue.max_messages = 0 is out of range 1..1000000"},
      {"[queue]\nmax_messages = 100\n", "c2.toml:10: [queue] max_messages_per_device (1000) is above max_messages (100)"},
      {"[queue]\nmax_bytes = 200000\n", "[queue] max_bytes_per_device (4194304) is above max_bytes (200000)"},
      {"[queue]\nmax_message = 1\n", "unknown key 'max_message' in [queue]"},
      {"[telemetry]\nprovisional_max_bytes_per_device = 65535\n", "out of range 65536..4294967296"},
      {"[telemetry]\nprovisional_max = 999\n", "[telemetry] provisional_max_per_device (1000) is above provisional_max (999)"},
      {"[telemetry]\nprovisional_max_bytes = 65536\n", "provisional_max_bytes_per_device (4194304) is above provisional_max_bytes"},
      {"[c2]\n", "c2.toml:10: "},
      {"x = [\n", "c2.toml:"},
  };
  for (const Case& c : cases) {
    const std::string e = error_of(kMinimal + "\n" + c.append);
    EXPECT_NE(e.find(c.expected), std::string::npos) << "for:\n" << c.append << "got: " << e;
  }
  EXPECT_NE(error_of("[broker]\nca=\"a\"\ncert=\"b\"\nkey=\"c\"\n").find("c2.toml:1: [c2] state_dir is required"),
            std::string::npos);
  EXPECT_NE(error_of("[c2]\nstate_dir = \"s\"\n[broker]\nca = \"a\"\nkey = \"k\"\n").find("c2.toml:3: [broker] needs cert"),
            std::string::npos);
  EXPECT_NE(error_of("[c2]\nstate_dir = \"s\"\n").find("[broker] is required"), std::string::npos);
  EXPECT_NE(error_of(kMinimal + "[broker.x]\n").find("unknown key 'x' in [broker]"), std::string::npos);
}

TEST(SrupC2Config, MissingFileIsAnError) {
  EXPECT_THROW(load_c2_config("/nonexistent/c2.toml"), ConfigError);
}

}  // namespace
}  // namespace pqot::srup_c2::config_test
