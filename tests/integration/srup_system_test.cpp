// SRUP-PQ end to end through a real broker (issue 13; docs/srup-mqtt.md): mosquitto with TLS and
// dynsec, srup-c2, srup-device and the `srup c2` client as the operator uses them.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "../support/child_process.hpp"
#include "../support/mosquitto_broker.hpp"
#include "../support/programs.hpp"
#include "../support/temp_dir.hpp"
#include "../support/test_pki.hpp"
#include "../support/wait.hpp"
#include "pqot/pki/enrol.hpp"
#include "pqot/srup/identity.hpp"
#include "pqot/srup/topics.hpp"

namespace pqot::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::uint64_t kC2Id = 0xc2;
constexpr srup::Suite kSystemSuite = srup::Suite::ed25519_xwing;  // fast; the suite is not under test here

void write_text(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
  ASSERT_TRUE(out.flush()) << p;
}

struct CliResult {
  int exit_code = -1;
  std::string out, err;
};

// A one-shot program run to its end.
CliResult run_program(const std::string& program, std::vector<std::string> args) {
  ChildProcess p(program, std::move(args), /*listen_any=*/false);
  CliResult r;
  r.exit_code = p.wait_exit(std::chrono::seconds(60)).value_or(-1);
  r.out = p.out();
  r.err = p.log();
  return r;
}

BrokerSetup c2_admin_setup() {
  BrokerSetup s;
  s.admin = "c2-" + srup::id_text(kC2Id);  // the C2 is the broker's dynsec administrator
  return s;
}

// The broker, the C2 and its operator's CLI, and devices made the way docs/srup-mqtt.md 4.1 says.
class SrupSystem {
 public:
  SrupSystem() : broker_(pki_, c2_admin_setup()) {
    const fs::path c2 = dir_.path() / "c2";
    fs::create_directories(c2);
    fs::permissions(c2, fs::perms::owner_all, fs::perm_options::replace);
    srup::write_identity(c2, kC2Id, kSystemSuite, srup::random_seeds(kSystemSuite));
    broker_files(c2, "c2-" + srup::id_text(kC2Id));
    socket_ = (c2 / "control.sock").string();
    write_text(c2 / "c2.toml",
               "[c2]\nstate_dir = \"" + c2.string() + "\"\n"
               "[broker]\nhost = \"localhost\"\nport = " + std::to_string(broker_.port()) +
               "\nca = \"" + pki_.ca() + "\"\ncert = \"" + (c2 / "broker.crt").string() + "\"\nkey = \"" +
               (c2 / "broker.key").string() + "\"\nreconnect_min_ms = 100\nreconnect_max_ms = 1000\n"
               "[enrolment]\nca_cert = \"" + pki_.ca() + "\"\nca_key = \"" + pki_.file("ca.key") + "\"\n"
               "default_join = \"simple\"\n"
               "[commands]\nretry_initial_ms = 500\nretry_max_ms = 2000\n");
    start_c2();
  }

  void start_c2() {
    c2_ = std::make_unique<ChildProcess>(bin("srup-c2"), std::vector<std::string>{"--config", (dir_.path() / "c2" / "c2.toml").string()},
                                         false);
    EXPECT_TRUE(eventually([&] { return fs::exists(socket_) || c2_->wait_exit(std::chrono::milliseconds(1)); }))
        << c2_->log();
  }

  CliResult c2_cli(std::vector<std::string> args) {
    args.insert(args.begin(), {"c2", "--socket", socket_});
    return run_program(bin("srup"), std::move(args));
  }

  // A device's identity and broker key, enrolled through `srup c2 enrol`; its config file.
  fs::path make_device(std::uint64_t id, const std::string& join, const std::string& extra_config = "") {
    const fs::path d = dir_.path() / ("dev-" + srup::id_text(id));
    fs::create_directories(d);
    fs::permissions(d, fs::perms::owner_all, fs::perm_options::replace);
    srup::write_identity(d, id, kSystemSuite, srup::random_seeds(kSystemSuite));
    const auto kr = pki::make_key_and_request("dev-" + srup::id_text(id));
    pki::write_new_file(d / "broker.key", std::string_view(kr.key_pem.data(), kr.key_pem.size()), 0600);
    write_text(d / "broker.csr", kr.csr_pem);
    const CliResult r = c2_cli({"enrol", "--pub", (d / "identity.pub").string(), "--csr", (d / "broker.csr").string(),
                                "--type", "meter", "--join", join, "--out", (d / "bundle").string()});
    EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
    write_text(d / "device.toml",
               "[device]\nstate_dir = \"" + d.string() + "\"\ntype = \"meter\"\n"
               "[c2]\npublic_identity = \"" + (d / "bundle" / "c2.pub").string() + "\"\n"
               "[broker]\nhost = \"localhost\"\nport = " + std::to_string(broker_.port()) + "\nca = \"" +
               (d / "bundle" / "ca.crt").string() + "\"\ncert = \"" + (d / "bundle" / "broker.crt").string() +
               "\"\nkey = \"" + (d / "broker.key").string() + "\"\nreconnect_min_ms = 100\nreconnect_max_ms = 1000\n"
               "[join]\nmode = \"" + join + "\"\n" +
               "[[action]]\nid = 7\nbuiltin = \"log\"\n" + extra_config);
    return d / "device.toml";
  }

  std::string device_state(std::uint64_t id) {
    const CliResult r = c2_cli({"--json", "device", srup::id_text(id)});
    if (r.exit_code != 0) return "error: " + r.err;
    return json::parse(r.out).value("state", "");
  }

  ChildProcess& c2() { return *c2_; }
  MosquittoBroker& broker() { return broker_; }

 private:
  void broker_files(const fs::path& d, const std::string& cn) {
    const auto kr = pki::make_key_and_request(cn);
    pki::write_new_file(d / "broker.key", std::string_view(kr.key_pem.data(), kr.key_pem.size()), 0600);
    const auto cert = pki::issue_client_certificate(pki::CaFiles::in_dir(pki_.dir()), kr.csr_pem, cn, 30);
    write_text(d / "broker.crt", cert.pem);
  }

  TempDir dir_{"pqot-srup-system"};
  TestPki pki_{0};
  MosquittoBroker broker_;
  std::string socket_;
  std::unique_ptr<ChildProcess> c2_;
};

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
