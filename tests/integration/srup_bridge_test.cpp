// SRUP-PQ across two bridged brokers (issue 13; docs/srup-mqtt.md 6): the C2 on its own broker
// (the "home" broker, whose dynsec admin it is), a device on an "edge" broker that dials the home
// broker over TLS 1.3 with a bridge identity. The C2 registers what it can on its own broker; the
// edge broker's registrations are made by that broker's operator (here: the test, with its own
// admin certificate), as the section says. Join, a command and its answer, and telemetry stored by
// the C2, end to end through both brokers.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "../support/mqtt_peer.hpp"
#include "../support/srup_system.hpp"

namespace pqot::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::uint64_t kBridgedDevice = 0xb7;
const std::string kBridgeName = "edge";
const std::string kEdgeAdmin = "ops-edge";

// Client options for an identity whose files are `dir`/broker.crt and broker.key.
mqtt::ClientOptions bridge_test_client(const MosquittoBroker& broker, const std::string& client_id, const fs::path& dir) {
  mqtt::ClientOptions o = broker.client_options(client_id, "");
  o.tls.cert_file = (dir / "broker.crt").string();
  o.tls.key_file = (dir / "broker.key").string();
  return o;
}

// A directory with broker.key and broker.crt for `cn`, from the broker's CA (identities the C2
// does not enrol: the bridge, the edge broker's operator).
fs::path bridge_test_identity(const SrupSystem& sys, const std::string& cn) {
  const fs::path d = sys.dir() / cn;
  fs::create_directories(d);
  fs::permissions(d, fs::perms::owner_all, fs::perm_options::replace);
  const auto kr = pki::make_key_and_request(cn);
  common::write_new_file(d / "broker.key", std::string_view(kr.key_pem.data(), kr.key_pem.size()), 0600);
  write_text(d / "broker.crt", pki::issue_client_certificate(pki::CaFiles::in_dir(sys.pki().dir()), kr.csr_pem, cn, 30).pem);
  return d;
}

TEST(SrupBridge, JoinCommandAndTelemetryCrossTwoBridgedBrokers) {
  SrupSystem sys;  // the home broker, administered by the C2

  // Home broker: the bridge identity gets srup/# both ways. The C2 has no command for this; its
  // operator does it with the admin certificate (mosquitto_ctrl dynsec would do the same).
  {
    MqttPeer home_admin(bridge_test_client(sys.broker(), "c2-" + srup::id_text(kC2Id) + "-ops", sys.dir() / "c2"), true);
    home_admin.start();
    ASSERT_TRUE(home_admin.wait_connects());
    ASSERT_EQ(register_identity(home_admin, "bridge-" + kBridgeName, all_srup_acls()), "");
  }

  // The edge broker dials home with the bridge's certificate; its own dynsec admin is its operator.
  const fs::path bridge_dir = bridge_test_identity(sys, "bridge-" + kBridgeName);
  const fs::path edge_ops_dir = bridge_test_identity(sys, kEdgeAdmin);
  mqtt::BridgeConfig bridge;
  bridge.name = kBridgeName;
  bridge.remote_host = "127.0.0.1";
  bridge.remote_port = static_cast<std::uint16_t>(sys.broker().port());
  bridge.ca_file = sys.pki().ca();
  bridge.cert_file = (bridge_dir / "broker.crt").string();
  bridge.key_file = (bridge_dir / "broker.key").string();
  BrokerSetup edge_setup;
  edge_setup.admin = kEdgeAdmin;
  edge_setup.bridges.push_back(bridge);
  MosquittoBroker edge(sys.pki(), edge_setup);
  ASSERT_TRUE(eventually([&] { return sys.broker().log().find("bridge-" + kBridgeName) != std::string::npos; },
                         kPatience * 3))
      << edge.log();

  // Enrolment at the C2 (certificate, registry, the home broker's ACLs) ...
  const fs::path config = sys.make_device(
      kBridgedDevice, "simple", "[telemetry]\nenabled = true\ninterval_ms = 100\nsource = \"model\"\nphases = 3\n");
  // ... and at the edge broker, by its operator: the same device role (docs/srup-mqtt.md 3).
  MqttPeer edge_admin(bridge_test_client(edge, kEdgeAdmin + "-admin", edge_ops_dir), true);
  edge_admin.start();
  ASSERT_TRUE(edge_admin.wait_connects());
  ASSERT_EQ(register_identity(edge_admin, "dev-" + srup::id_text(kBridgedDevice), device_acls(srup::id_text(kBridgedDevice))),
            "");

  // The device talks to the edge broker only.
  std::string text = slurp(config);
  const std::string home_port = "port = " + std::to_string(sys.broker().port()) + "\n";
  ASSERT_NE(text.find(home_port), std::string::npos) << text;
  text.replace(text.find(home_port), home_port.size(), "port = " + std::to_string(edge.port()) + "\n");
  write_text(config, text);
  ChildProcess device(bin("srup-device"), {"--config", config.string()}, false);

  ASSERT_TRUE(eventually([&] { return sys.device_state(kBridgedDevice) == "joined"; }, kPatience * 6))
      << device.out() << sys.c2().out() << edge.log();
  const CliResult action = sys.c2_cli({"action", srup::id_text(kBridgedDevice), "7", "--arg", "over-the-bridge", "--wait", "60"});
  EXPECT_EQ(action.exit_code, 0) << action.err << action.out;
  EXPECT_NE(action.out.find("ACTION_SUCCESS"), std::string::npos) << action.out;
  EXPECT_TRUE(device.wait_for_out("action log: over-the-bridge"));

  // Telemetry keys and readings cross to the C2, which stores them once a Checkpoint confirms them.
  json stored;
  EXPECT_TRUE(eventually([&] {
    const CliResult r = sys.c2_cli({"--json", "history", srup::id_text(kBridgedDevice), "telemetry", "--limit", "100"});
    if (r.exit_code != 0) return false;
    stored = json::parse(r.out)["telemetry"];
    return stored.size() >= 64;
  }, kPatience * 6)) << device.out() << sys.c2().out();
  EXPECT_NE(edge.log().find("dev-" + srup::id_text(kBridgedDevice)), std::string::npos);
  EXPECT_EQ(sys.c2().stop(), 0) << sys.c2().log();
}

}  // namespace
}  // namespace pqot::test
