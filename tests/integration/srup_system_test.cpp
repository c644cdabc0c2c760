// SRUP-PQ end to end through a real broker (issue 13; docs/srup-mqtt.md): mosquitto with TLS and
// dynsec, srup-c2, srup-device and the `srup c2` client as the operator uses them.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "../support/srup_system.hpp"

namespace pqot::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

TEST(SrupSystem, ASimpleJoinThenAnActionAnsweredThroughTheBroker) {
  SrupSystem sys;
  const fs::path config = sys.make_device(0xa1, "simple");
  EXPECT_EQ(sys.device_state(0xa1), "pending");
  ChildProcess device(bin("srup-device"), {"--config", config.string()}, false);
  ASSERT_TRUE(eventually([&] { return sys.device_state(0xa1) == "joined"; })) << device.out() << sys.c2().out();

  const CliResult action = sys.c2_cli({"action", srup::id_text(0xa1), "7", "--arg", "hello", "--wait", "20"});
  EXPECT_EQ(action.exit_code, 0) << action.err << action.out;
  EXPECT_NE(action.out.find("ACTION_SUCCESS"), std::string::npos) << action.out;
  EXPECT_TRUE(device.wait_for_out("action log: hello"));

  const CliResult unknown = sys.c2_cli({"action", srup::id_text(0xa1), "9", "--wait", "20"});
  EXPECT_NE(unknown.out.find("ACTION_UNKNOWN"), std::string::npos) << unknown.out << unknown.err;

  const CliResult id = sys.c2_cli({"id", srup::id_text(0xa1), "--wait", "20"});
  EXPECT_NE(id.out.find("IDENTIFICATION_RESPONSE = meter " + srup::id_text(0xa1)), std::string::npos) << id.out << id.err;

  const CliResult data = sys.c2_cli({"--json", "data", srup::id_text(0xa1), "interval_ms", "--wait", "20"});
  ASSERT_EQ(data.exit_code, 0) << data.err;
  EXPECT_EQ(json::parse(data.out)["answer"]["value"]["type"], "uint32") << data.out;
  EXPECT_EQ(sys.c2().stop(), 0) << sys.c2().log();
}

}  // namespace
}  // namespace pqot::test

namespace pqot::test {
namespace {

std::string read_code_file(const fs::path& p) {
  std::ifstream in(p);
  std::string line;
  std::getline(in, line);
  return line;
}

TEST(SrupSystem, AHumanJoinNeedsTheCodeTheDeviceShows) {
  SrupSystem sys;
  const fs::path config = sys.make_device(0xb1, "human");
  ChildProcess device(bin("srup-device"), {"--config", config.string()}, false);
  const fs::path code_file = config.parent_path() / "join-code";
  ASSERT_TRUE(eventually([&] { return read_code_file(code_file).size() == 39; })) << device.out();
  EXPECT_EQ(sys.device_state(0xb1), "pending");
  const CliResult wrong = sys.c2_cli({"join-code", srup::id_text(0xb1), std::string(32, '0')});
  EXPECT_EQ(wrong.exit_code, 4) << wrong.err;
  EXPECT_NE(wrong.err.find("wrong code"), std::string::npos) << wrong.err;
  EXPECT_EQ(sys.device_state(0xb1), "pending");
  const CliResult right = sys.c2_cli({"join-code", srup::id_text(0xb1), read_code_file(code_file)});
  EXPECT_EQ(right.exit_code, 0) << right.err;
  EXPECT_EQ(sys.device_state(0xb1), "joined");
  ASSERT_TRUE(device.wait_for_out("membership: joined")) << device.out();
  const CliResult action = sys.c2_cli({"action", srup::id_text(0xb1), "7", "--wait", "20"});
  EXPECT_NE(action.out.find("ACTION_SUCCESS"), std::string::npos) << action.out << action.err;
}

TEST(SrupSystem, ADeregisteredDeviceIsDroppedAndCommandsToItAreRefused) {
  SrupSystem sys;
  const fs::path config = sys.make_device(0xd1, "simple");
  ChildProcess device(bin("srup-device"), {"--config", config.string()}, false);
  ASSERT_TRUE(eventually([&] { return sys.device_state(0xd1) == "joined"; })) << device.out();
  const CliResult dereg = sys.c2_cli({"deregister", srup::id_text(0xd1)});
  EXPECT_EQ(dereg.exit_code, 0) << dereg.err << dereg.out;
  EXPECT_EQ(sys.device_state(0xd1), "deregistered") << sys.c2().out();
  // The device heard the Deregister Command before the broker dropped it.
  EXPECT_TRUE(device.wait_for_out("membership: left its C2")) << device.out();
  const CliResult action = sys.c2_cli({"action", srup::id_text(0xd1), "7"});
  EXPECT_EQ(action.exit_code, 4);
  EXPECT_NE(action.err.find("not joined"), std::string::npos) << action.err;
  // The broker no longer knows it: its reconnections may neither subscribe nor publish.
  EXPECT_TRUE(eventually([&] { return sys.broker().log().find("dev-" + srup::id_text(0xd1)) != std::string::npos; }));
}

}  // namespace
}  // namespace pqot::test

namespace pqot::test {
namespace {

TEST(SrupSystem, MeterTelemetryIsStoredOnceItsCheckpointConfirmsIt) {
  SrupSystem sys;
  const fs::path config =
      sys.make_device(0xe1, "simple", "[telemetry]\nenabled = true\ninterval_ms = 100\nsource = \"model\"\nphases = 3\n");
  ChildProcess device(bin("srup-device"), {"--config", config.string()}, false);
  ASSERT_TRUE(eventually([&] { return sys.device_state(0xe1) == "joined"; })) << device.out();
  // 64 readings close a range (docs/srup-pq.md 5.2); the C2 stores them when its Checkpoint confirms them.
  json stored;
  ASSERT_TRUE(eventually([&] {
    const CliResult r = sys.c2_cli({"--json", "history", srup::id_text(0xe1), "telemetry", "--limit", "100"});
    if (r.exit_code != 0) return false;
    stored = json::parse(r.out)["telemetry"];
    return stored.size() >= 64;
  })) << device.out() << sys.c2().out();
  const json& channels = stored[0]["reading"]["channels"];
  EXPECT_TRUE(channels.contains("voltage_l3")) << stored[0].dump();
  EXPECT_GT(channels["frequency"].get<double>(), 49.0);
  EXPECT_LT(channels["frequency"].get<double>(), 51.0);
}

}  // namespace
}  // namespace pqot::test
