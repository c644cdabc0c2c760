// srmcpd configuration (docs/srmcpd.md): the example plant, every key, and every error with the
// line it names.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "pqot/srmcp/config.hpp"

namespace pqot::srmcp {
namespace {

const std::string kPlant = std::string(PQOT_SOURCE_DIR) + "/examples/srmcp/plant.toml";

LoadedConfig parse(const std::string& text, const std::string& base_dir = "") {
  return parse_config(text, "t.toml", base_dir);
}

// The ConfigError message, or "" if the text parses.
std::string error_of(const std::string& text) {
  try {
    (void)parse(text);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

const NodeSpec* find(const LoadedConfig& c, const std::string& id) {
  for (const auto& n : c.nodes) {
    if (n.id == id) return &n;
  }
  return nullptr;
}

TEST(SrmcpConfig, ExamplePlantLoads) {
  const LoadedConfig c = load_config(kPlant);
  EXPECT_GE(c.nodes.size(), 45u);
  EXPECT_LE(c.nodes.size(), 70u);
  EXPECT_EQ(c.server.listen_host, "127.0.0.1");
  EXPECT_EQ(c.server.listen_port, 4843);
  // Relative paths resolve against the file's directory.
  const auto dir = std::filesystem::path(kPlant).parent_path();
  EXPECT_EQ(c.server.ca_file, (dir / "../../build/demo-pki/ca.crt").string());
  EXPECT_EQ(c.server.cert_file, (dir / "../../build/demo-pki/server.crt").string());
  EXPECT_EQ(c.server.key_file, (dir / "../../build/demo-pki/server.key").string());

  // The whole tree goes into a store in file order (parents first).
  NodeStore store;
  for (const auto& n : c.nodes) store.add(n);
  EXPECT_EQ(store.size(), c.nodes.size());

  const Principal anon{"nobody", {}};
  const Principal client1{"client1", {}};
  const Principal op{"alice", {"operator"}};
  int simulated = 0;
  int writable = 0;
  std::set<ValueType> types;
  for (const auto& n : c.nodes) {
    simulated += n.read ? 1 : 0;
    writable += n.writers.empty() ? 0 : 1;
    types.insert(n.type);
  }
  EXPECT_GE(simulated, 15);
  EXPECT_GE(writable, 8);
  EXPECT_EQ(types.size(), 6u);  // every type is shown

  // Every readable node reads OK; simulated ones give values of their type.
  std::vector<std::string> ids;
  for (const auto& n : c.nodes) {
    if (n.type != ValueType::folder) ids.push_back(n.id);
  }
  const Json all = store.read(ids, op);
  for (const auto& v : all["values"]) {
    if (v["id"] == "plant.admin.shift_notes") continue;
    EXPECT_EQ(v["status"], 0) << v["id"];
  }
  // Only client1 may write the maintenance switch; only operators may read the shift notes.
  auto status = [](const Json& body) { return body["values"][0]["status"].get<int>(); };
  EXPECT_EQ(status(store.write({{"plant.alarms.maintenance_mode", true}}, op)), 6);
  EXPECT_EQ(status(store.write({{"plant.alarms.maintenance_mode", true}}, client1)), 0);
  EXPECT_EQ(status(store.read({"plant.admin.shift_notes"}, client1)), 2) << "not revealed (§11): UNKNOWN_NODE";
  EXPECT_EQ(status(store.read({"plant.admin.shift_notes"}, op)), 0);
  EXPECT_EQ(status(store.write({{"plant.line1.press.temp", 1.0}}, op)), 4);
  EXPECT_EQ(status(store.write({{"plant.line1.oven.setpoint", 175}}, anon)), 0);
  EXPECT_EQ(status(store.write({{"plant.line1.press.pressure_setpoint", 175}}, anon)), 6);
  EXPECT_EQ(status(store.write({{"plant.line1.press.pressure_setpoint", 175}}, op)), 0);
  // The JSON nodes: a TOML table and JSON text with a null.
  const Json alarms = store.read({"plant.alarms.config", "plant.alarms.active"}, anon)["values"];
  EXPECT_EQ(alarms[0]["value"]["plant.line1.oven.temp"]["high"], 195.0);
  EXPECT_TRUE(alarms[1]["value"][0]["since"].is_null());
  // A rounded int64 signal reads as an integer; the multi-parent node sits in the dashboard.
  EXPECT_TRUE(
      store.read({"plant.line2.cnc.coolant_temp"}, anon)["values"][0]["value"].is_number_integer());
  EXPECT_EQ(find(c, "plant.line1.press.temp")->parents,
            (std::vector<std::string>{"plant.line1.press", "dashboard"}));
  EXPECT_EQ(store.browse("", 0, anon)["nodes"].size(), 2u);
}

TEST(SrmcpConfig, EmptyFileGivesDefaults) {
  const LoadedConfig c = parse("");
  const ServerConfig d;
  EXPECT_EQ(c.server.listen_host, d.listen_host);
  EXPECT_EQ(c.server.listen_port, d.listen_port);
  EXPECT_EQ(c.server.kem_preference, d.kem_preference);
  EXPECT_EQ(c.server.limits.max_frame_body, d.limits.max_frame_body);
  EXPECT_TRUE(c.server.ca_file.empty());  // flags may supply it later
  EXPECT_TRUE(c.nodes.empty());
}

TEST(SrmcpConfig, EveryServerAndLimitsKey) {
  const LoadedConfig c = parse(R"(
[server]
listen = "[::1]:5000"
ca = "pki/ca.crt"
cert = "/etc/pqot/server.crt"
key = "server.key"
allow = ["client1", "client2"]
data_ports = "41000-41010"
kems = ["X-Wing", "ML-KEM-1024"]
body_encodings = ["json"]
handshake_deadline_ms = 2000
offer_lifetime_ms = 3000
idle_frame_deadline_ms = 4000
max_sessions = 10
max_pending_links = 5
key_update_messages = 1000
key_update_seconds = 60
timestamp_window_ms = 10000
threads = 4
log_level = "debug"
[limits]
max_frame_body = 1024
max_message = 2048
max_nodes_per_request = 10
max_links = 0
max_reassemblies = 3
max_json_depth = 8
)",
                               "/srv/conf");
  const ServerConfig& s = c.server;
  EXPECT_EQ(s.listen_host, "::1");
  EXPECT_EQ(s.listen_port, 5000);
  EXPECT_EQ(s.ca_file, "/srv/conf/pki/ca.crt");
  EXPECT_EQ(s.cert_file, "/etc/pqot/server.crt");
  EXPECT_EQ(s.key_file, "/srv/conf/server.key");
  EXPECT_EQ(s.allow, (std::vector<std::string>{"client1", "client2"}));
  EXPECT_EQ(s.data_port_min, 41000);
  EXPECT_EQ(s.data_port_max, 41010);
  EXPECT_EQ(s.body_encodings, (std::vector<BodyEncoding>{BodyEncoding::json}));
  EXPECT_EQ(s.kem_preference, (std::vector<KemId>{KemId::x_wing, KemId::ml_kem_1024}));
  EXPECT_EQ(s.handshake_deadline, std::chrono::milliseconds(2000));
  EXPECT_EQ(s.offer_lifetime, std::chrono::milliseconds(3000));
  EXPECT_EQ(s.idle_frame_deadline, std::chrono::milliseconds(4000));
  EXPECT_EQ(s.max_sessions, 10u);
  EXPECT_EQ(s.max_pending_links, 5u);
  EXPECT_EQ(s.key_update_messages, 1000u);
  EXPECT_EQ(s.key_update_seconds, 60u);
  EXPECT_EQ(s.timestamp_window_ms, 10000u);
  EXPECT_EQ(s.threads, 4u);
  EXPECT_EQ(s.log_level, "debug");
  EXPECT_EQ(s.limits.max_frame_body, 1024u);
  EXPECT_EQ(s.limits.max_message, 2048u);
  EXPECT_EQ(s.limits.max_nodes_per_request, 10u);
  EXPECT_EQ(s.limits.max_links, 0u);
  EXPECT_EQ(s.limits.max_reassemblies, 3u);
  EXPECT_EQ(s.limits.max_json_depth, 8u);
  // Without a base directory relative paths stay as written.
  EXPECT_EQ(parse("[server]\nca = \"pki/ca.crt\"\n").server.ca_file, "pki/ca.crt");
  EXPECT_EQ(parse("[server]\ndata_ports = \"40001\"\n").server.data_port_max, 40001);
  EXPECT_EQ(parse("[server]\nlisten = \"localhost:1\"\n").server.listen_host, "localhost");
}

// docs/srmcpd.md, "Limits and denial of service": every bound is a key, with its range checked.
TEST(SrmcpConfig, DenialOfServiceBounds) {
  const LoadedConfig c = parse(R"([server]
max_sessions_per_identity = 3
max_handshakes = 100
max_handshakes_per_source = 7
max_pending_links_per_identity = 5
max_queued_bytes = 2097152
max_queued_bytes_per_link = 524288
send_stall_timeout_ms = 1500
max_partial_bytes = 1048576
max_partial_bytes_total = 33554432
max_partial_bytes_per_identity = 4194304
max_subscriptions = 4
max_subscribed_ids = 300
max_backend_ops = 64
min_backend_sample_ms = 250
link_close_grace_ms = 500
)");
  const ServerConfig& s = c.server;
  EXPECT_EQ(s.max_sessions_per_identity, 3u);
  EXPECT_EQ(s.max_handshakes, 100u);
  EXPECT_EQ(s.max_handshakes_per_source, 7u);
  EXPECT_EQ(s.max_pending_links_per_identity, 5u);
  EXPECT_EQ(s.max_queued_bytes, 2097152u);
  EXPECT_EQ(s.max_queued_bytes_per_link, 524288u);
  EXPECT_EQ(s.send_stall_timeout, std::chrono::milliseconds(1500));
  EXPECT_EQ(s.max_partial_bytes, 1048576u);
  EXPECT_EQ(s.max_partial_bytes_total, 33554432u);
  EXPECT_EQ(s.max_partial_bytes_per_identity, 4194304u);
  EXPECT_EQ(s.max_subscriptions, 4u);
  EXPECT_EQ(s.max_subscribed_ids, 300u);
  EXPECT_EQ(s.max_backend_ops, 64u);
  EXPECT_EQ(s.min_backend_sample, std::chrono::milliseconds(250));
  EXPECT_EQ(s.link_close_grace, std::chrono::milliseconds(500));
  EXPECT_NE(error_of("[server]\nmax_handshakes = 0\n").find("server.max_handshakes"), std::string::npos);
  EXPECT_NE(error_of("[server]\nmax_queued_bytes = 10\n").find("server.max_queued_bytes"), std::string::npos);
  EXPECT_NE(error_of("[server]\nlisten = \"h:12x\"\n").find("server.listen"), std::string::npos);
  // Changing a bound needs a restart; a reload says so.
  EXPECT_EQ(settings_needing_restart(ServerConfig{}, s).size(), 15u);
}

TEST(SrmcpConfig, NodeKeys) {
  const LoadedConfig c = parse(R"(
[[node]]
id = "f"
[[node]]
id = "g"
type = "folder"
name = "G"
description = "group"
[[node]]
id = "v"
parents = ["f", "g"]
type = "double"
unit = "bar"
description = "pressure"
value = 3
[[node]]
id = "rw"
parent = "f"
type = "int64"
access = "readwrite"
[[node]]
id = "acl"
type = "string"
access = "readwrite"
readers = ["role:operator", "client9"]
writers = ["client1"]
value = "x"
[[node]]
id = "j"
type = "json"
value = [1, "two", { three = 3.0 }, true]
[[node]]
id = "sig"
type = "int64"
[node.signal]
kind = "ramp"
amplitude = 10
offset = 0.4
period_s = 1e9
noise = 0
)");
  ASSERT_EQ(c.nodes.size(), 7u);
  const NodeSpec& f = c.nodes[0];
  EXPECT_EQ(f.type, ValueType::folder);
  EXPECT_EQ(f.name, "f");  // defaults to the id
  EXPECT_EQ(c.nodes[1].name, "G");
  EXPECT_EQ(c.nodes[1].description, "group");
  const NodeSpec& v = c.nodes[2];
  EXPECT_EQ(v.parents, (std::vector<std::string>{"f", "g"}));
  EXPECT_EQ(v.type, ValueType::float64);
  EXPECT_EQ(v.unit, "bar");
  EXPECT_EQ(v.initial, 3.0);
  EXPECT_TRUE(v.initial.is_number_float());
  EXPECT_EQ(v.readers, (Acl{"*"}));
  EXPECT_TRUE(v.writers.empty());  // read-only by default
  EXPECT_EQ(c.nodes[3].writers, (Acl{"*"}));
  EXPECT_TRUE(c.nodes[3].initial.is_null());
  EXPECT_EQ(c.nodes[4].readers, (Acl{"role:operator", "client9"}));
  EXPECT_EQ(c.nodes[4].writers, (Acl{"client1"}));
  EXPECT_EQ(c.nodes[5].initial, Json::parse(R"([1, "two", {"three": 3.0}, true])"));
  const NodeSpec& sig = c.nodes[6];
  ASSERT_TRUE(sig.read);
  const ReadResult r = sig.read();
  EXPECT_TRUE(r.value.is_number_integer());  // an int64 node rounds its signal
  EXPECT_EQ(r.value, 0);
  NodeStore store;
  for (const auto& n : c.nodes) store.add(n);
}

TEST(SrmcpConfig, LoadReportsMissingFile) {
  try {
    (void)load_config("/nonexistent/plant.toml");
    ADD_FAILURE() << "no ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("/nonexistent/plant.toml: ", 0), 0u) << e.what();
  }
}

TEST(SrmcpConfig, LoadNamesTheFileInErrors) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("pqot_config_test_" + std::to_string(::getpid()) + ".toml");
  {
    std::ofstream out(path);
    out << "[server]\n\nthreads = 0\n";
  }
  try {
    (void)load_config(path.string());
    ADD_FAILURE() << "no ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path.string() + ":3: ", 0), 0u) << e.what();
  }
  std::filesystem::remove(path);
}

struct BadCase {
  const char* what;
  std::string text;
  int line;
  const char* message;  // a part of the message
};

// Each case names the line the error must point at.
const std::vector<BadCase> kBad = {
    {"syntax", "[server]\nthreads = 2\nlisten = = 1\n", 3, ""},
    {"duplicate TOML key", "[server]\nthreads = 2\nthreads = 3\n", 3, "threads"},
    {"unknown top-level key", "\nserver_x = 1\n", 2, "unknown key 'server_x'"},
    {"[nodes] typo", "[server]\n[[nodes]]\nid = \"a\"\n", 2, "unknown key 'nodes'"},
    {"[node] not an array", "\n[node]\nid = \"a\"\n", 2, "[[node]]"},
    {"server not a table", "server = 1\n", 1, "server must be a table"},
    {"unknown server key", "[server]\nthreads = 2\nlisen = \"x:1\"\n", 3,
     "unknown key 'server.lisen'"},
    {"unknown limits key", "[limits]\n\nmax_frame = 1\n", 3, "unknown key 'limits.max_frame'"},
    {"bad type", "[server]\n\nthreads = \"2\"\n", 3,
     "server.threads must be an integer, not a string"},
    {"float for integer", "[server]\nthreads = 2.0\n", 2, "must be an integer"},
    {"threads 0", "[server]\nthreads = 0\n", 2, "out of range 1..64"},
    {"threads 65", "[server]\nthreads = 65\n", 2, "out of range 1..64"},
    {"listen no port", "[server]\nlisten = \"127.0.0.1\"\n", 2, "server.listen"},
    {"listen port 0", "[server]\nlisten = \"127.0.0.1:0\"\n", 2, "server.listen"},
    {"listen port 65536", "[server]\n\nlisten = \"127.0.0.1:65536\"\n", 3, "server.listen"},
    {"listen bare v6", "[server]\nlisten = \"::1:4843\"\n", 2, "server.listen"},
    {"listen junk port", "[server]\nlisten = \"h:12x\"\n", 2, "server.listen"},
    {"data ports reversed", "[server]\ndata_ports = \"40999-40000\"\n", 2, "data_ports"},
    {"data port 0", "[server]\ndata_ports = \"0-10\"\n", 2, "data_ports"},
    {"data port too big", "[server]\ndata_ports = \"1-70000\"\n", 2, "data_ports"},
    {"unknown kem", "[server]\nkems = [\"ML-KEM-768\",\n  \"ML-KEM-512\"]\n", 3,
     "unknown KEM 'ML-KEM-512'"},
    {"kem twice", "[server]\nkems = [\"X-Wing\", \"X-Wing\"]\n", 2, "listed twice"},
    {"no kems", "[server]\nkems = []\n", 2, "non-empty"},
    {"unknown encoding", "[server]\nbody_encodings = [\"compact\", \"cbor\"]\n", 2,
     "server.body_encodings: unknown encoding 'cbor' (compact, json)"},
    {"encoding twice", "[server]\nbody_encodings = [\"json\", \"json\"]\n", 2, "listed twice"},
    {"no encodings", "[server]\nbody_encodings = []\n", 2, "non-empty"},
    {"log level", "[server]\nlog_level = \"verbose\"\n", 2, "unknown level"},
    {"empty path", "[server]\ncert = \"\"\n", 2, "empty path"},
    {"allow not strings", "[server]\nallow = [1]\n", 2, "server.allow entries must be a string"},
    {"handshake deadline", "[server]\nhandshake_deadline_ms = 0\n", 2, "out of range"},
    {"max_frame_body small", "[limits]\nmax_frame_body = 1023\n", 2, "out of range 1024..16777216"},
    {"max_frame_body big", "[limits]\nmax_frame_body = 16777217\n", 2, "out of range"},
    {"max_nodes 0", "[limits]\nmax_nodes_per_request = 0\n", 2, "out of range 1..65535"},
    {"max_nodes big", "[limits]\nmax_nodes_per_request = 100001\n", 2, "out of range"},
    {"max_links", "[limits]\nmax_links = 65\n", 2, "out of range 0..64"},
    {"max_links negative", "[limits]\nmax_links = -1\n", 2, "out of range"},
    {"node without id", "[[node]]\nid = \"a\"\n\n[[node]]\nname = \"x\"\n", 4, "without an id"},
    {"bad id", "[[node]]\nid = \"a b\"\n", 2, "printable ASCII"},
    {"id too long", "[[node]]\nid = \"" + std::string(129, 'x') + "\"\n", 2, "1..128"},
    {"name too long", "[[node]]\nid = \"a\"\nname = \"" + std::string(257, 'n') + "\"\n", 3, "256"},
    {"unknown node key", "[[node]]\nid = \"a\"\ntpye = \"double\"\n", 3, "unknown key 'node.tpye'"},
    {"unknown type", "[[node]]\nid = \"a\"\ntype = \"float\"\n", 3, "unknown type 'float'"},
    {"duplicate id", "[[node]]\nid = \"a\"\n[[node]]\nid = \"b\"\n[[node]]\nid = \"a\"\n", 6,
     "duplicate node id 'a' (first defined on line 2)"},
    {"unknown parent", "[[node]]\nid = \"a\"\n\nparent = \"nope\"\n", 4, "unknown parent 'nope'"},
    {"parent later",
     "[[node]]\nid = \"a\"\nparents = [\"f\",\n  \"g\"]\n[[node]]\nid = \"f\"\n[[node]]\nid = "
     "\"g\"\n",
     3, "parent 'f' is defined later (line 6)"},
    {"second parent later",
     "[[node]]\nid = \"f\"\n[[node]]\nid = \"a\"\nparents = [\"f\",\n  \"g\"]\n[[node]]\nid = "
     "\"g\"\n",
     6, "parent 'g' is defined later (line 8)"},
    {"self parent", "[[node]]\nid = \"a\"\nparent = \"a\"\n", 3, "its own parent"},
    {"parent not folder",
     "[[node]]\nid = \"v\"\ntype = \"bool\"\n[[node]]\nid = \"a\"\nparent = \"v\"\n", 6,
     "not a folder"},
    {"parent and parents",
     "[[node]]\nid = \"f\"\n[[node]]\nid = \"a\"\nparent = \"f\"\nparents = [\"f\"]\n", 6,
     "not both"},
    {"parent twice", "[[node]]\nid = \"f\"\n[[node]]\nid = \"a\"\nparents = [\"f\", \"f\"]\n", 5,
     "listed twice"},
    {"folder with value", "[[node]]\nid = \"a\"\nvalue = 1.5\n", 3, "a folder has no 'value'"},
    {"folder with access", "[[node]]\nid = \"a\"\ntype = \"folder\"\n\naccess = \"readwrite\"\n", 5,
     "a folder has no 'access'"},
    {"bool given int", "[[node]]\nid = \"a\"\ntype = \"bool\"\nvalue = 1\n", 4,
     "value must be a boolean"},
    {"int64 given 1.5", "[[node]]\nid = \"a\"\ntype = \"int64\"\nvalue = 1.5\n", 4,
     "value must be an integer"},
    {"double given string", "[[node]]\nid = \"a\"\ntype = \"double\"\nvalue = \"1.5\"\n", 4,
     "value must be a number"},
    {"double given nan", "[[node]]\nid = \"a\"\ntype = \"double\"\nvalue = nan\n", 4, "finite"},
    {"string given int", "[[node]]\nid = \"a\"\ntype = \"string\"\nvalue = 5\n", 4,
     "value must be a string"},
    {"json given number", "[[node]]\nid = \"a\"\ntype = \"json\"\nvalue = 5\n", 4, "for type json"},
    {"json text scalar", "[[node]]\nid = \"a\"\ntype = \"json\"\nvalue = '\"x\"'\n", 4,
     "for type json"},
    {"json text broken", "[[node]]\nid = \"a\"\ntype = \"json\"\nvalue = '{\"a\": '\n", 4,
     "not valid JSON"},
    {"json with a date", "[[node]]\nid = \"a\"\ntype = \"json\"\nvalue = [1,\n 1979-05-27]\n", 5,
     "no JSON form"},
    {"bad access", "[[node]]\nid = \"a\"\ntype = \"bool\"\naccess = \"write\"\n", 4,
     "\"read\" or \"readwrite\""},
    {"access contradicts writers",
     "[[node]]\nid = \"a\"\ntype = \"bool\"\naccess = \"read\"\nwriters = [\"x\"]\n", 5,
     "contradict"},
    {"bad acl entry", "[[node]]\nid = \"a\"\ntype = \"bool\"\nreaders = [\"*\",\n \"role:\"]\n", 5,
     "invalid entry"},
    {"acl not array", "[[node]]\nid = \"a\"\ntype = \"bool\"\nwriters = \"*\"\n", 4,
     "must be an array"},
    {"signal on string", "[[node]]\nid = \"a\"\ntype = \"string\"\nsignal = { kind = \"sine\" }\n",
     4, "a signal needs type double or int64"},
    {"signal on folder", "[[node]]\nid = \"a\"\nsignal = { kind = \"sine\" }\n", 3,
     "a folder has no 'signal'"},
    {"signal with writer",
     "[[node]]\nid = \"a\"\ntype = \"double\"\naccess = \"readwrite\"\nsignal = { kind = \"sine\" "
     "}\n",
     5, "read-only"},
    {"signal with writers list",
     "[[node]]\nid = \"a\"\ntype = \"double\"\nwriters = [\"client1\"]\n\nsignal = { kind = "
     "\"sine\" }\n",
     6, "read-only"},
    {"signal with value",
     "[[node]]\nid = \"a\"\ntype = \"double\"\nvalue = 1.0\nsignal = { kind = \"sine\" }\n", 4,
     "no initial value"},
    {"unknown signal kind",
     "[[node]]\nid = \"a\"\ntype = \"double\"\nsignal = { kind = \"triangle\" }\n", 4,
     "unknown signal kind 'triangle'"},
    {"signal without kind",
     "[[node]]\nid = \"a\"\ntype = \"double\"\n\nsignal = { amplitude = 1 }\n", 5,
     "without a kind"},
    {"period 0",
     "[[node]]\nid = \"a\"\ntype = \"double\"\n[node.signal]\nkind = \"sine\"\nperiod_s = 0\n", 6,
     "period_s must be > 0"},
    {"period negative",
     "[[node]]\nid = \"a\"\ntype = \"double\"\nsignal = { kind = \"sine\", period_s = -1.5 }\n", 4,
     "period_s must be > 0"},
    {"negative noise",
     "[[node]]\nid = \"a\"\ntype = \"double\"\n[node.signal]\nkind = \"sine\"\n\nnoise = -1\n", 7,
     "noise must be >= 0"},
    {"unknown signal key",
     "[[node]]\nid = \"a\"\ntype = \"double\"\n[node.signal]\nkind = \"sine\"\nphase = 1\n", 6,
     "unknown key 'signal.phase'"},
    {"signal amplitude type",
     "[[node]]\nid = \"a\"\ntype = \"double\"\nsignal = { kind = \"sine\", amplitude = \"2\" }\n",
     4, "must be a number"},
};

TEST(SrmcpConfig, ErrorsNameTheLine) {
  for (const auto& c : kBad) {
    const std::string msg = error_of(c.text);
    const std::string prefix = "t.toml:" + std::to_string(c.line) + ": ";
    EXPECT_EQ(msg.rfind(prefix, 0), 0u)
        << c.what << ": got \"" << msg << "\", want line " << c.line;
    EXPECT_NE(msg.find(c.message), std::string::npos) << c.what << ": got \"" << msg << "\"";
  }
}

TEST(SrmcpConfig, EveryErrorCaseIsOtherwiseValid) {
  // Guards the table above: removing the offending line must not leave a second error behind
  // that happens to be on the same line. Spot-check a few fixed variants.
  EXPECT_EQ(error_of("[server]\nthreads = 64\n"), "");
  EXPECT_EQ(error_of("[limits]\nmax_frame_body = 16777216\nmax_links = 64\n"), "");
  EXPECT_EQ(error_of("[[node]]\nid = \"a\"\ntype = \"double\"\nsignal = { kind = \"sine\", "
                     "period_s = 0.5 }\n"),
            "");
  EXPECT_EQ(
      error_of(
          "[[node]]\nid = \"a\"\ntype = \"bool\"\naccess = \"readwrite\"\nwriters = [\"x\"]\n"),
      "");
  EXPECT_EQ(error_of("[[node]]\nid = \"a\"\ntype = \"json\"\nvalue = '{\"a\": null}'\n"), "");
  EXPECT_EQ(error_of("node = []\n"), "");
}

}  // namespace
}  // namespace pqot::srmcp
