// srmcpd configuration of the Modbus gateway (docs/srmcpd-modbus.md): [[device]] tables, the
// `modbus` key of a [[node]], and every mistake rejected with its line.
#include <gtest/gtest.h>

#include "pqot/srmcp/config.hpp"

namespace pqot::srmcp {
namespace {
// Its own namespace: the sanitizer build compiles the unit tests as a unity build, where the
// helpers of srmcp_config_test.cpp (parse, error_of, BadCase) are in the same file.
namespace modbus_config {

LoadedConfig parse(const std::string& text) { return parse_config(text, "m.toml", ""); }

std::string error_of(const std::string& text) {
  try {
    (void)parse(text);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

const std::string kDevice = "[[device]]\nname = \"plc\"\nhost = \"127.0.0.1\"\nport = 1502\n";  // lines 1-4

TEST(SrmcpConfigModbus, DeviceKeysAndDefaults) {
  const auto c = parse(
      "[[device]]\nname = \"plc\"\nhost = \"10.0.0.5\"\n"
      "[[device]]\nname = \"meter-2\"\nhost = \"meter.local\"\nport = 5020\nunit = 7\ntimeout_ms = 300\n"
      "connect_timeout_ms = 400\nbackoff_min_ms = 50\nbackoff_max_ms = 5000\nrequest_deadline_ms = 900\n"
      "max_registers = 60\nwrite_confirm = \"echo\"\n");
  ASSERT_EQ(c.devices.size(), 2u);
  EXPECT_EQ(c.devices[0].name, "plc");
  EXPECT_EQ(c.devices[0].port, 502);
  EXPECT_EQ(c.devices[0].unit, 1);
  EXPECT_EQ(c.devices[0].timeout.count(), 500);
  EXPECT_EQ(c.devices[0].line, 1u);
  EXPECT_EQ(c.devices[0].write_confirm, ModbusDeviceConfig::WriteConfirm::read_back);
  const auto& m = c.devices[1];
  EXPECT_EQ(m.host, "meter.local");
  EXPECT_EQ(m.port, 5020);
  EXPECT_EQ(m.unit, 7);
  EXPECT_EQ(m.timeout.count(), 300);
  EXPECT_EQ(m.connect_timeout.count(), 400);
  EXPECT_EQ(m.backoff_min.count(), 50);
  EXPECT_EQ(m.backoff_max.count(), 5000);
  EXPECT_EQ(m.request_deadline.count(), 900);
  EXPECT_EQ(m.max_registers, 60);
  EXPECT_EQ(m.write_confirm, ModbusDeviceConfig::WriteConfirm::echo);
}

TEST(SrmcpConfigModbus, NodeTypesFollowThePoint) {
  const auto c = parse(kDevice +
                       "[[node]]\nid = \"sp\"\naccess = \"readwrite\"\n"
                       "modbus = { device = \"plc\", table = \"holding\", address = 0, type = \"int16\", scale = 0.1, poll_ms = 100 }\n"
                       "[[node]]\nid = \"count\"\nmodbus = { device = \"plc\", table = \"holding\", address = 10, type = \"uint32\" }\n"
                       "[[node]]\nid = \"name\"\nmodbus = { device = \"plc\", table = \"holding\", address = 20, type = \"string\", count = 8, cache_ms = 5000 }\n"
                       "[[node]]\nid = \"run\"\naccess = \"readwrite\"\nmodbus = { device = \"plc\", table = \"coil\", address = 0 }\n"
                       "[[node]]\nid = \"temp\"\ntype = \"double\"\nmodbus = { device = \"plc\", table = \"input\", address = 0, "
                       "type = \"float32\", word_order = \"little\", byte_order = \"little\" }\n");
  ASSERT_EQ(c.nodes.size(), 5u);
  ASSERT_EQ(c.modbus.size(), 5u);
  EXPECT_EQ(c.nodes[0].type, ValueType::float64);
  EXPECT_EQ(c.nodes[0].writers, Acl{"*"});
  EXPECT_EQ(c.modbus[0].poll.count(), 100);
  EXPECT_EQ(c.modbus[0].point.scale, 0.1);
  EXPECT_EQ(c.nodes[1].type, ValueType::int64);
  EXPECT_EQ(c.modbus[1].point.count, 2);
  EXPECT_EQ(c.nodes[2].type, ValueType::string);
  EXPECT_EQ(c.modbus[2].cache_age.count(), 5000);
  EXPECT_EQ(c.nodes[3].type, ValueType::boolean);
  EXPECT_EQ(c.modbus[3].point.table, modbus::Table::coil);
  EXPECT_EQ(c.modbus[4].point.word_order, modbus::Order::little);
  EXPECT_EQ(c.modbus[4].point.byte_order, modbus::Order::little);
  EXPECT_EQ(c.modbus[4].node_id, "temp");
  EXPECT_EQ(c.modbus[4].line, 22u);
  // Adjacent points do not overlap; the same address in another table or device is fine.
  EXPECT_EQ(error_of(kDevice + "[[device]]\nname = \"b\"\nhost = \"h\"\n" +
                     "[[node]]\nid = \"a\"\nmodbus = { device = \"plc\", table = \"holding\", address = 0, type = \"int32\" }\n"
                     "[[node]]\nid = \"c\"\nmodbus = { device = \"plc\", table = \"holding\", address = 2 }\n"
                     "[[node]]\nid = \"d\"\nmodbus = { device = \"plc\", table = \"input\", address = 0 }\n"
                     "[[node]]\nid = \"e\"\nmodbus = { device = \"b\", table = \"holding\", address = 0 }\n"),
            "");
}

struct BadCase {
  const char* what;
  std::string text;
  int line;
  const char* message;
};

std::string node(const std::string& modbus, const std::string& extra = "") {
  return kDevice + "[[node]]\nid = \"n\"\n" + extra + "modbus = { " + modbus + " }\n";  // modbus: line 7 + extra lines
}

const std::vector<BadCase> kBad = {
    {"device without name", "[[device]]\nhost = \"h\"\n", 1, "without a name"},
    {"device without host", "[[device]]\nname = \"a\"\n", 1, "no host"},
    {"device bad name", "[[device]]\nname = \"a b\"\nhost = \"h\"\n", 2, "must be 1..64"},
    {"duplicate device", kDevice + "[[device]]\nname = \"plc\"\nhost = \"h\"\n", 6,
     "duplicate device 'plc' (first defined on line 1)"},
    {"device unknown key", kDevice + "baud = 9600\n", 5, "unknown key 'device.baud'"},
    {"device unit range", kDevice + "unit = 256\n", 5, "out of range 0..255"},
    {"device port 0", "[[device]]\nname = \"a\"\nhost = \"h\"\nport = 0\n", 4, "out of range 1..65535"},
    {"backoff reversed", kDevice + "backoff_min_ms = 500\nbackoff_max_ms = 100\n", 6, "below backoff_min_ms"},
    {"max registers", kDevice + "max_registers = 126\n", 5, "out of range 1..125"},
    {"write confirm", kDevice + "write_confirm = \"never\"\n", 5, "must be \"read_back\" or \"echo\""},
    {"unknown device", node("device = \"plx\", table = \"holding\", address = 0"), 7, "unknown device 'plx'"},
    {"no table", node("device = \"plc\", address = 0"), 7, "modbus.table is required"},
    {"unknown table", node("device = \"plc\", table = \"holding_register\", address = 0"), 7,
     "unknown modbus.table 'holding_register'"},
    {"no address", node("device = \"plc\", table = \"holding\""), 7, "modbus.address is required"},
    {"address range", node("device = \"plc\", table = \"holding\", address = 65536"), 7, "out of range 0..65535"},
    {"beyond 65535", node("device = \"plc\", table = \"holding\", address = 65535, type = \"int32\""), 7,
     "goes beyond 65535"},
    {"unknown type", node("device = \"plc\", table = \"holding\", address = 0, type = \"int64\""), 7,
     "unknown modbus.type 'int64'"},
    {"coil not bool", node("device = \"plc\", table = \"coil\", address = 0, type = \"uint16\""), 7,
     "holds bool only"},
    {"count mismatch", node("device = \"plc\", table = \"holding\", address = 0, type = \"float32\", count = 1"), 7,
     "spans 2 register(s), not 1"},
    {"string without count", node("device = \"plc\", table = \"holding\", address = 0, type = \"string\""), 7,
     "needs modbus.count"},
    {"scale zero", node("device = \"plc\", table = \"holding\", address = 0, scale = 0"), 7, "must not be 0"},
    {"scale string", node("device = \"plc\", table = \"holding\", address = 0, scale = \"x\""), 7,
     "must be a number"},
    {"scale on bool", node("device = \"plc\", table = \"coil\", address = 0, scale = 2"), 7,
     "numeric types only"},
    {"bad word order", node("device = \"plc\", table = \"holding\", address = 0, word_order = \"middle\""), 7,
     "\"big\" or \"little\""},
    {"poll and cache", node("device = \"plc\", table = \"holding\", address = 0, poll_ms = 100, cache_ms = 100"), 7,
     "not both"},
    {"poll too fast", node("device = \"plc\", table = \"holding\", address = 0, poll_ms = 5"), 7,
     "out of range 10..3600000"},
    {"unknown modbus key", node("device = \"plc\", table = \"holding\", address = 0, bit = 3"), 7,
     "unknown key 'modbus.bit'"},
    {"write input register", node("device = \"plc\", table = \"input\", address = 0", "access = \"readwrite\"\n"), 8,
     "cannot be written"},
    {"type mismatch", node("device = \"plc\", table = \"holding\", address = 0, scale = 0.1", "type = \"int64\"\n"), 7,
     "does not match the Modbus point"},
    {"modbus with value", node("device = \"plc\", table = \"holding\", address = 0", "value = 3\n"), 7,
     "no initial value"},
    {"modbus with signal",
     node("device = \"plc\", table = \"holding\", address = 0", "type = \"int64\"\nsignal = { kind = \"counter\" }\n"), 8,
     "signal or modbus"},
    {"modbus on folder", kDevice + "[[node]]\nid = \"n\"\ntype = \"folder\"\nmodbus = { device = \"plc\" }\n", 8,
     "a folder has no 'modbus'"},
    {"overlap",
     kDevice + "[[node]]\nid = \"a\"\nmodbus = { device = \"plc\", table = \"holding\", address = 10, type = \"float64\" }\n"
               "[[node]]\nid = \"b\"\nmodbus = { device = \"plc\", table = \"holding\", address = 13 }\n",
     10, "overlaps node 'a' (line 7)"},
    {"overlap, later node first in address order",
     kDevice + "[[node]]\nid = \"a\"\nmodbus = { device = \"plc\", table = \"holding\", address = 13 }\n"
               "[[node]]\nid = \"b\"\nmodbus = { device = \"plc\", table = \"holding\", address = 10, type = \"float64\" }\n",
     10, "'b': modbus holding 10..13 on device 'plc' overlaps node 'a' (line 7)"},
};

TEST(SrmcpConfigModbus, ErrorsNameTheLine) {
  for (const auto& c : kBad) {
    const std::string msg = error_of(c.text);
    const std::string prefix = "m.toml:" + std::to_string(c.line) + ": ";
    EXPECT_EQ(msg.rfind(prefix, 0), 0u) << c.what << ": got \"" << msg << "\", want line " << c.line;
    EXPECT_NE(msg.find(c.message), std::string::npos) << c.what << ": got \"" << msg << "\"";
  }
}

TEST(SrmcpConfigModbus, RestartSettings) {
  ServerConfig a;
  ServerConfig b = a;
  EXPECT_TRUE(settings_needing_restart(a, b).empty());
  b.log_level = "debug";  // reloadable
  EXPECT_TRUE(settings_needing_restart(a, b).empty());
  b.listen_port = 1;
  b.limits.max_links = 2;
  b.allow = {"x"};
  EXPECT_EQ(settings_needing_restart(a, b), (std::vector<std::string>{"server.listen", "server.allow", "limits"}));
}

}  // namespace modbus_config
}  // namespace
}  // namespace pqot::srmcp
