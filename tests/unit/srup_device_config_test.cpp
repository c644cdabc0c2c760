// srup-device's configuration (docs/srup-device.md, "Configuration"): defaults, every section,
// relative paths, and errors that name the file, the line and what would be valid.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "../support/temp_dir.hpp"
#include "pqot/srup/meter_channels.hpp"
#include "srup-device/config.hpp"

namespace {

using namespace pqot::srup_device;

const std::string kDevcfgBase = R"(
[device]
state_dir = "/var/lib/srup-device"

[c2]
public_identity = "/etc/srup-device/c2.pub"

[broker]
host = "broker.example"
ca = "/etc/srup-device/ca.pem"
cert = "/etc/srup-device/dev.pem"
key = "/etc/srup-device/dev.key"

)";

DeviceConfig devcfg_parse(const std::string& extra, const std::string& base_dir = "") {
  return parse_device_config(kDevcfgBase + extra, "dev.toml", base_dir);
}

/// The message of the ConfigError that parsing `extra` after the base throws ("" if none).
std::string devcfg_error(const std::string& extra) {
  try {
    devcfg_parse(extra);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(SrupDeviceConfig, MinimalFileGetsTheDocumentedDefaults) {
  const auto c = devcfg_parse("");
  EXPECT_EQ(c.device.state_dir, "/var/lib/srup-device");
  EXPECT_EQ(c.device.log_level, "info");
  EXPECT_EQ(c.broker.port, 8883);
  EXPECT_EQ(c.broker.keepalive_s, 30u);
  EXPECT_EQ(c.broker.reconnect_min_ms, 500u);
  EXPECT_EQ(c.broker.reconnect_max_ms, 30000u);
  EXPECT_EQ(c.join.mode, JoinMode::simple);
  EXPECT_EQ(c.join.code_file, "/var/lib/srup-device/join-code");
  EXPECT_TRUE(c.actions.empty());
  EXPECT_EQ(c.update.dir, "/var/lib/srup-device/updates");
  EXPECT_EQ(c.update.max_bytes, 64u << 20);
  EXPECT_TRUE(c.update.apply_program.empty());
  EXPECT_TRUE(c.update.allowed_file_root.empty());  // file:// URLs refused
  EXPECT_EQ(c.update.redirects, UpdateRedirects::same_origin);
  EXPECT_FALSE(c.telemetry.enabled);
  EXPECT_EQ(c.telemetry.source, TelemetrySource::model);
  EXPECT_EQ(c.telemetry.phases, 3);
  EXPECT_EQ(c.telemetry.key_resend_s, 60u);
  EXPECT_EQ(c.limits.max_concurrent_actions, 4u);
  EXPECT_FALSE(c.metrics.listen);
}

TEST(SrupDeviceConfig, EverySectionIsRead) {
  const auto c = devcfg_parse(R"(
[join]
mode = "observed"
observer = "00000000000000a1"
code_file = "/run/code"

[[action]]
id = 7
program = "/usr/bin/logger"
args = ["-t", "srup"]
pass_argument = true
end_of_options = true
timeout_ms = 5000
env = ["LANG=C", "HOME"]

[[action]]
id = 8
builtin = "set-interval"

[update]
max_bytes = 1000
timeout_ms = 60000
io_timeout_ms = 2000
apply_program = "/usr/sbin/apply"
apply_args = ["--install"]
apply_timeout_ms = 9000
allowed_file_root = "/srv/updates"
redirects = "public"

[telemetry]
enabled = true
interval_ms = 1000
source = "modbus"
seed = 42
key_resend_s = 5

[telemetry.modbus]
address = "127.0.0.1:1502"
unit = 3
timeout_ms = 500

[[telemetry.modbus.channel]]
name = "voltage_l1"
point = "input:100:float32"

[[telemetry.modbus.channel]]
name = "active_energy_import"
point = "input:122:float64:1000"

[limits]
max_concurrent_actions = 2

[metrics]
listen = "127.0.0.1:9465"
)");
  EXPECT_EQ(c.join.mode, JoinMode::observed);
  EXPECT_EQ(c.join.observer, 0xa1u);
  EXPECT_EQ(c.join.code_file, "/run/code");
  ASSERT_EQ(c.actions.size(), 2u);
  EXPECT_EQ(c.actions[0].id, 7);
  EXPECT_EQ(c.actions[0].program, "/usr/bin/logger");
  EXPECT_EQ(c.actions[0].args, (std::vector<std::string>{"-t", "srup"}));
  EXPECT_TRUE(c.actions[0].pass_argument);
  EXPECT_TRUE(c.actions[0].end_of_options);
  EXPECT_EQ(c.actions[0].timeout_ms, 5000u);
  EXPECT_EQ(c.actions[0].env, (std::vector<std::string>{"LANG=C", "HOME"}));
  EXPECT_EQ(c.actions[1].builtin, "set-interval");
  ASSERT_NE(c.action(8), nullptr);
  EXPECT_EQ(c.action(9), nullptr);
  EXPECT_EQ(c.update.max_bytes, 1000u);
  EXPECT_EQ(c.update.io_timeout_ms, 2000u);
  EXPECT_EQ(c.update.apply_args, (std::vector<std::string>{"--install"}));
  EXPECT_EQ(c.update.allowed_file_root, "/srv/updates");
  EXPECT_EQ(c.update.redirects, UpdateRedirects::public_hosts);
  EXPECT_TRUE(c.telemetry.enabled);
  EXPECT_EQ(c.telemetry.source, TelemetrySource::modbus);
  EXPECT_EQ(c.telemetry.key_resend_s, 5u);
  EXPECT_EQ(c.telemetry.modbus.host, "127.0.0.1");
  EXPECT_EQ(c.telemetry.modbus.port, 1502);
  EXPECT_EQ(c.telemetry.modbus.unit, 3);
  ASSERT_EQ(c.telemetry.modbus.channels.size(), 2u);
  EXPECT_EQ(c.telemetry.modbus.channels[0].channel, pqot::srup::meter::kVoltageL1);
  EXPECT_EQ(c.telemetry.modbus.channels[0].point.table, pqot::modbus::Table::input_register);
  EXPECT_EQ(c.telemetry.modbus.channels[0].point.address, 100);
  EXPECT_EQ(c.telemetry.modbus.channels[0].point.count, 2);
  EXPECT_EQ(c.telemetry.modbus.channels[1].point.count, 4);
  EXPECT_EQ(c.telemetry.modbus.channels[1].point.scale, 1000.0);
  EXPECT_EQ(c.limits.max_concurrent_actions, 2u);
  ASSERT_TRUE(c.metrics.listen);
  EXPECT_EQ(c.metrics.listen->port, 9465);
}

TEST(SrupDeviceConfig, RelativePathsResolveAgainstTheFilesDirectory) {
  const auto c = parse_device_config(R"(
[device]
state_dir = "state"
[c2]
public_identity = "keys/c2.pub"
[broker]
host = "b"
ca = "ca.pem"
cert = "/abs/cert.pem"
key = "../k.key"
[[action]]
id = 1
program = "bin/run"
)", "dev.toml", "/etc/dev");
  EXPECT_EQ(c.device.state_dir, "/etc/dev/state");
  EXPECT_EQ(c.c2.public_identity, "/etc/dev/keys/c2.pub");
  EXPECT_EQ(c.broker.ca, "/etc/dev/ca.pem");
  EXPECT_EQ(c.broker.cert, "/abs/cert.pem");
  EXPECT_EQ(c.broker.key, "/etc/k.key");
  EXPECT_EQ(c.actions.at(0).program, "/etc/dev/bin/run");
  EXPECT_EQ(c.update.dir, "/etc/dev/state/updates");
}

TEST(SrupDeviceConfig, LoadsAFileAndNamesItInErrors) {
  pqot::test::TempDir dir;
  const auto path = (dir.path() / "dev.toml").string();
  std::ofstream(path) << kDevcfgBase;
  EXPECT_EQ(load_device_config(path).broker.host, "broker.example");
  std::ofstream(path) << kDevcfgBase << "\n[limits]\nmax_concurrent_actions = 0\n";
  try {
    load_device_config(path);
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path + ":16:", 0), 0u) << e.what();
  }
  EXPECT_THROW(load_device_config((dir.path() / "missing.toml").string()), ConfigError);
}

TEST(SrupDeviceConfig, ErrorsNameTheLineAndWhatIsValid) {
  struct Case {
    std::string extra;
    std::string needle;
  };
  // The base has 13 lines; the extra text starts on line 14.
  const Case cases[] = {
      {"[devic]\n", "dev.toml:14: unknown key 'devic' in the file"},
      {"[limits]\nmax = 1\n", "dev.toml:15: unknown key 'max' in [limits] (valid: max_concurrent_actions)"},
      {"[limits]\nmax_concurrent_actions = 65\n", "dev.toml:15: limits.max_concurrent_actions = 65 is out of range 1..64"},
      {"[limits]\nmax_concurrent_actions = \"4\"\n", "must be an integer, not a string"},
      {"[metrics]\nlisten = \"9465\"\n", "dev.toml:15: metrics.listen: expected \"HOST:PORT\""},
      {"[join]\nmode = \"magic\"\n", "dev.toml:15: join.mode: 'magic' is not one of simple, human, observed"},
      {"[join]\nmode = \"observed\"\n", "needs join.observer"},
      {"[join]\nmode = \"observed\"\nobserver = \"00000000000000A1\"\n", "dev.toml:16: join.observer must be 16 lower-case hex"},
      {"[join]\nmode = \"observed\"\nobserver = \"0000000000000000\"\n", "join.observer must be 16"},
      {"[join]\nobserver = \"00000000000000a1\"\n", "only for mode = \"observed\""},
      {"[[action]]\nprogram = \"/bin/true\"\n", "needs id"},
      {"[[action]]\nid = 256\nprogram = \"/bin/true\"\n", "dev.toml:15: action.id = 256 is out of range 0..255"},
      {"[[action]]\nid = 1\n", "needs exactly one of program and builtin"},
      {"[[action]]\nid = 1\nprogram = \"/bin/true\"\nbuiltin = \"log\"\n", "needs exactly one of program and builtin"},
      {"[[action]]\nid = 1\nbuiltin = \"format-disk\"\n", "not one of log, reboot-simulated, set-interval"},
      {"[[action]]\nid = 1\nbuiltin = \"log\"\ntimeout_ms = 5\n", "action.timeout_ms is for programs"},
      {"[[action]]\nid = 1\nprogram = \"/bin/true\"\n[[action]]\nid = 1\nprogram = \"/bin/false\"\n",
       "dev.toml:18: action.id 1 is given twice"},
      {"[[action]]\nid = 1\nprogram = \"/bin/true\"\nenv = [\"A B=1\"]\n", "is not NAME or NAME=VALUE"},
      {"[[action]]\nid = 1\nprogram = \"/bin/true\"\ntimeout_ms = 0\n", "action.timeout_ms = 0 is out of range"},
      {"[[action]]\nid = 1\nprogram = \"/bin/true\"\nshell = true\n", "unknown key 'shell' in [[action]]"},
      {"[update]\nmax_bytes = 0\n", "update.max_bytes = 0 is out of range 1.."},
      {"[update]\napply_args = [\"x\"]\n", "update.apply_args needs update.apply_program"},
      {"[update]\nredirects = \"any\"\n", "dev.toml:15: update.redirects: 'any' is not one of none, same-origin, public"},
      {"[[action]]\nid = 1\nprogram = \"/bin/true\"\nend_of_options = true\n",
       "dev.toml:17: action.end_of_options needs pass_argument = true"},
      {"[[action]]\nid = 1\nbuiltin = \"log\"\nend_of_options = true\n", "action.end_of_options is for programs"},
      {"[telemetry]\nsource = \"modbus\"\n", "needs [telemetry.modbus]"},
      {"[telemetry]\nsource = \"random\"\n", "not one of model, modbus"},
      {"[telemetry]\nphases = 2\n", "telemetry.phases must be 1 or 3"},
      {"[telemetry]\ninterval_ms = 10\n", "telemetry.interval_ms = 10 is out of range 100.."},
      {"[telemetry]\nkey_resend_s = 0\n", "telemetry.key_resend_s = 0 is out of range 1..86400"},
      {"[telemetry]\nkey_resend_s = 86401\n", "telemetry.key_resend_s = 86401 is out of range 1..86400"},
      {"[telemetry]\nsource = \"modbus\"\n[telemetry.modbus]\naddress = \"h\"\n", "expected \"HOST:PORT\""},
      {"[telemetry]\nsource = \"modbus\"\n[telemetry.modbus]\naddress = \"h:1\"\n", "needs at least one"},
      {"[telemetry]\nsource = \"modbus\"\n[telemetry.modbus]\naddress = \"h:1\"\n[[telemetry.modbus.channel]]\n"
       "name = \"volts\"\npoint = \"input:0:float32\"\n",
       "dev.toml:19: telemetry.modbus.channel.name: 'volts' is not a meter channel"},
      {"[telemetry]\nsource = \"modbus\"\n[telemetry.modbus]\naddress = \"h:1\"\n[[telemetry.modbus.channel]]\n"
       "name = \"frequency\"\npoint = \"input:0\"\n",
       "dev.toml:20: telemetry.modbus.channel.point: expected TABLE:ADDRESS:TYPE"},
      {"[telemetry]\nsource = \"modbus\"\n[telemetry.modbus]\naddress = \"h:1\"\n[[telemetry.modbus.channel]]\n"
       "name = \"frequency\"\npoint = \"coil:0:float32\"\n",
       "telemetry.modbus.channel.point:"},
      {"[telemetry]\nsource = \"modbus\"\n[telemetry.modbus]\naddress = \"h:1\"\n[[telemetry.modbus.channel]]\n"
       "name = \"frequency\"\npoint = \"input:65535:float32\"\n",
       "telemetry.modbus.channel.point:"},
      {"[telemetry]\nsource = \"modbus\"\n[telemetry.modbus]\naddress = \"h:1\"\n[[telemetry.modbus.channel]]\n"
       "name = \"frequency\"\npoint = \"input:0:float32\"\n[[telemetry.modbus.channel]]\nname = \"frequency\"\n"
       "point = \"input:2:float32\"\n",
       "dev.toml:22: telemetry.modbus.channel 'frequency' is given twice"},
      {"[telemetry.modbus]\naddress = \"h:1\"\n", "only for source = \"modbus\""},
      {"[broker]\nport = 1\n", "dev.toml:14:"},  // a table defined twice is TOML's own error
      {"x = \n", "dev.toml:14:"},
  };
  for (const auto& c : cases) {
    const std::string err = devcfg_error(c.extra);
    EXPECT_NE(err.find(c.needle), std::string::npos) << "for:\n" << c.extra << "got: " << err;
  }
}

TEST(SrupDeviceConfig, ActionMustBeAnArrayOfTables) {
  try {
    parse_device_config("action = 5\n" + kDevcfgBase, "dev.toml", "");
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("dev.toml:1: action must be an array of tables"), std::string::npos) << e.what();
  }
}

TEST(SrupDeviceConfig, RequiredKeysAreNamed) {
  const std::pair<std::string, std::string> cases[] = {
      {"[c2]\npublic_identity = \"c\"\n", "[device] is required"},
      {"[device]\ntype = \"x\"\n", "device.state_dir is required"},
      {"[device]\nstate_dir = \"/s\"\n", "[c2] is required"},
      {"[device]\nstate_dir = \"/s\"\n[c2]\npublic_identity = \"c\"\n[broker]\nhost = \"h\"\n", "broker.ca is required"},
  };
  for (const auto& [text, needle] : cases) {
    try {
      parse_device_config(text, "dev.toml", "");
      ADD_FAILURE() << "accepted:\n" << text;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  }
}

TEST(SrupDeviceConfig, PointSpecs) {
  auto p = parse_point_spec("holding:10:int16:0.1");
  ASSERT_TRUE(std::holds_alternative<pqot::modbus::Point>(p));
  EXPECT_EQ(std::get<pqot::modbus::Point>(p).scale, 0.1);
  EXPECT_EQ(std::get<pqot::modbus::Point>(p).count, 1);
  EXPECT_TRUE(std::holds_alternative<pqot::modbus::Point>(parse_point_spec("discrete_input:3:bool")));
  for (const char* bad : {"", "holding", "holding:1", "holding:-1:int16", "holding:x:int16", "holding:1:int16:0",
                          "holding:1:int16:nan", "holding:1:string", "tape:1:int16", "holding:1:int16:1:2"}) {
    EXPECT_TRUE(std::holds_alternative<std::string>(parse_point_spec(bad))) << bad;
  }
}

}  // namespace
