// The SRUP-PQ flows of docs/srup-mqtt.md 4.2 (observed join, Join Command), 4.4 (updates) and 4.5
// (resign, terminate) end to end through a real broker: mosquitto with TLS and dynsec, srup-c2,
// srup-device and the `srup c2` client as the operator uses them.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "../support/http_test_server.hpp"
#include "../support/srup_system.hpp"
#include "pqot/crypto/bytes.hpp"
#include "pqot/crypto/hash.hpp"

namespace pqot::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string flows_read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// As a camera would: the whole file appears at once (written aside, renamed).
void flows_write_atomically(const fs::path& p, const std::string& text) {
  write_text(p.string() + ".tmp", text);
  fs::rename(p.string() + ".tmp", p);
}

std::size_t flows_count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

constexpr std::chrono::seconds kFlowsPatience{30};

TEST(SrupFlows, AnObservedJoinNeedsTheObserverToSeeTheCode) {
  SrupSystem sys;
  const fs::path seen = sys.dir() / "observed";  // the observer's camera writes what it reads here
  fs::create_directories(seen);
  const fs::path observer_config =
      sys.make_device_with(0xa2, "simple", {}, "observe_dir = \"" + seen.string() + "\"\n");
  ChildProcess observer(bin("srup-device"), {"--config", observer_config.string()}, false);
  ASSERT_TRUE(eventually([&] { return sys.device_state(0xa2) == "joined"; })) << observer.out();

  const std::string joining = srup::id_text(0xb2);
  const fs::path config = sys.make_device_with(0xb2, "observed", {"--observer", srup::id_text(0xa2)},
                                               "observer = \"" + srup::id_text(0xa2) + "\"\n");
  const fs::path code_file = config.parent_path() / "join-code";

  // The observer sees another code than the one the C2 sent: the join is refused, the device stays
  // pending.
  flows_write_atomically(seen / joining, "0123 4567 89ab cdef 0123 4567 89ab cdef\n");
  {
    ChildProcess device(bin("srup-device"), {"--config", config.string()}, false);
    ASSERT_TRUE(eventually([&] { return device.out().find("the C2 refused the join (status 0x5e") != std::string::npos; },
                           kFlowsPatience))
        << device.out() << sys.c2().out() << observer.out();
    EXPECT_TRUE(observer.wait_for_out("observation of device " + joining + ": OBSERVED_JOIN_INVALID")) << observer.out();
    EXPECT_EQ(sys.device_state(0xb2), "pending");
    EXPECT_FALSE(fs::exists(seen / joining)) << "an observation is used once";
    EXPECT_EQ(device.stop(), 0) << device.out();
  }

  // Started again, it asks again; the observer sees the code it shows: joined.
  fs::remove(code_file);
  ChildProcess device(bin("srup-device"), {"--config", config.string()}, false);
  std::string code;
  ASSERT_TRUE(eventually([&] {
    std::ifstream in(code_file);
    std::getline(in, code);
    return code.size() == 39;
  }, kFlowsPatience)) << device.out() << sys.c2().out();
  EXPECT_EQ(sys.device_state(0xb2), "pending");
  flows_write_atomically(seen / joining, code + "\n");
  ASSERT_TRUE(eventually([&] { return sys.device_state(0xb2) == "joined"; }, kFlowsPatience))
      << device.out() << sys.c2().out() << observer.out();
  EXPECT_TRUE(device.wait_for_out("membership: joined")) << device.out();
  EXPECT_TRUE(observer.wait_for_out("observation of device " + joining + ": OBSERVED_JOIN_VALID")) << observer.out();
  const CliResult action = sys.c2_cli({"action", joining, "7", "--arg", "observed", "--wait", "20"});
  EXPECT_NE(action.out.find("ACTION_SUCCESS"), std::string::npos) << action.out << action.err;
}

}  // namespace
}  // namespace pqot::test

namespace pqot::test {
namespace {

TEST(SrupFlows, AJoinCommandMovesADeviceToAnotherC2) {
  SrupSystem sys;
  SecondC2 b(sys, 0xc3);
  const std::string dev = srup::id_text(0xa3);
  const fs::path config = sys.make_device(0xa3, "simple");
  const fs::path d = config.parent_path();
  auto device = std::make_unique<ChildProcess>(bin("srup-device"), std::vector<std::string>{"--config", config.string()}, false);
  ASSERT_TRUE(eventually([&] { return sys.device_state(0xa3) == "joined"; })) << device->out();

  // The new C2 must know the device first: enrolled there too, with the same identity.
  const CliResult enrol = b.cli({"enrol", "--pub", (d / "identity.pub").string(), "--csr", (d / "broker.csr").string(),
                                 "--type", "meter", "--join", "simple", "--out", (d / "bundle-b").string()});
  ASSERT_EQ(enrol.exit_code, 0) << enrol.err << b.c2().out();
  EXPECT_EQ(b.device_state(0xa3), "pending");

  const CliResult move = sys.c2_cli({"join-command", dev, "--c2-pub", b.public_identity().string(), "--wait", "20"});
  ASSERT_EQ(move.exit_code, 0) << move.err << move.out;
  EXPECT_NE(move.out.find("JOIN_SUCCESS"), std::string::npos) << move.out;
  ASSERT_TRUE(eventually([&] { return b.device_state(0xa3) == "joined"; }, kFlowsPatience))
      << device->out() << b.c2().out();
  EXPECT_EQ(sys.device_state(0xa3), "resigned");
  EXPECT_TRUE(fs::exists(d / "current-c2.pub"));

  // The move survives a restart of the device: it obeys B, joined.
  EXPECT_EQ(device->stop(), 0) << device->out();
  device = std::make_unique<ChildProcess>(bin("srup-device"), std::vector<std::string>{"--config", config.string()}, false);
  ASSERT_TRUE(device->wait_for_out("C2 " + srup::id_text(0xc3) + ", joined")) << device->out();
  const CliResult action = b.cli({"action", dev, "7", "--arg", "from-b", "--wait", "20"});
  EXPECT_NE(action.out.find("ACTION_SUCCESS"), std::string::npos) << action.out << action.err;
  EXPECT_TRUE(device->wait_for_out("action log: from-b"));

  // A may not command it: its CLI says so, and what A signs anyway the device refuses.
  const CliResult refused = sys.c2_cli({"action", dev, "7"});
  EXPECT_EQ(refused.exit_code, 4);
  EXPECT_NE(refused.err.find("resigned, not joined"), std::string::npos) << refused.err;
  const fs::path a_copy = sys.dir() / "c2-copy";  // A's identity, with a state of its own
  fs::create_directories(a_copy);
  fs::permissions(a_copy, fs::perms::owner_all, fs::perm_options::replace);
  fs::copy_file(sys.dir() / "c2" / "identity.key", a_copy / "identity.key");
  fs::copy_file(sys.dir() / "c2" / "identity.pub", a_copy / "identity.pub");
  const CliResult sealed = run_program(bin("srup"), {"seal", "--from", a_copy.string(), "--to", (d / "identity.pub").string(),
                                                     "--topic", srup::topic_to_device(0xa3), "--type", "action",
                                                     "--action", "7", "--arg", "from-a"});
  ASSERT_EQ(sealed.exit_code, 0) << sealed.err;
  mqtt::ClientOptions as_a = sys.broker().client_options("c2-" + srup::id_text(kC2Id) + "-inject", "");
  as_a.tls.cert_file = (sys.dir() / "c2" / "broker.crt").string();
  as_a.tls.key_file = (sys.dir() / "c2" / "broker.key").string();
  MqttPeer injector(as_a);
  injector.start();
  ASSERT_TRUE(injector.wait_connects());
  const std::size_t before = flows_count(device->out(), "refused: UNKNOWN_SENDER");
  EXPECT_EQ(injector.publish_acked(srup::topic_to_device(0xa3), sealed.out), 0);
  EXPECT_TRUE(eventually([&] { return flows_count(device->out(), "refused: UNKNOWN_SENDER") > before; })) << device->out();
  EXPECT_EQ(device->out().find("action log: from-a"), std::string::npos);

  // Re-homed to a C2 that has not enrolled it, a device is refused there (its joins are from an
  // unknown sender: nobody answers) and keeps asking; enrolled there, its next request joins.
  const fs::path stray_config = sys.make_device(0xa4, "simple");
  const fs::path stray_dir = stray_config.parent_path();
  ChildProcess stray(bin("srup-device"), {"--config", stray_config.string()}, false);
  ASSERT_TRUE(eventually([&] { return sys.device_state(0xa4) == "joined"; })) << stray.out();
  const CliResult stray_move =
      sys.c2_cli({"join-command", srup::id_text(0xa4), "--c2-pub", b.public_identity().string(), "--wait", "20"});
  EXPECT_EQ(stray_move.exit_code, 0) << stray_move.err;
  ASSERT_TRUE(stray.wait_for_out("re-homed: this device's C2 is now " + srup::id_text(0xc3))) << stray.out();
  EXPECT_NE(b.device_state(0xa4).find("not_found"), std::string::npos);
  const std::string stray_out = stray.out();
  EXPECT_EQ(stray_out.find("membership: joined", stray_out.find("re-homed")), std::string::npos) << stray_out;
  const CliResult stray_enrol = b.cli({"enrol", "--pub", (stray_dir / "identity.pub").string(), "--csr",
                                       (stray_dir / "broker.csr").string(), "--type", "meter", "--join", "simple",
                                       "--out", (stray_dir / "bundle-b").string()});
  ASSERT_EQ(stray_enrol.exit_code, 0) << stray_enrol.err;
  EXPECT_TRUE(eventually([&] { return b.device_state(0xa4) == "joined"; }, kFlowsPatience)) << stray.out() << b.c2().out();
}

}  // namespace
}  // namespace pqot::test

namespace pqot::test {
namespace {

TEST(SrupFlows, AnUpdateIsAppliedOnlyWhenItsDigestMatches) {
  SrupSystem sys;
  const fs::path work = sys.dir() / "updates-src";
  fs::create_directories(work);
  const fs::path marker = work / "applied";
  const fs::path apply = work / "apply.sh";
  write_text(apply, "#!/bin/sh\n{ printf '%s\\n' \"$1\"; cat \"$1\"; } > '" + marker.string() + ".tmp' && mv '" +
                        marker.string() + ".tmp' '" + marker.string() + "'\n");
  fs::permissions(apply, fs::perms::owner_all);
  const std::string firmware = "firmware image 2.0\n";
  write_text(work / "fw.bin", firmware);
  write_text(work / "evil.bin", "firmware image 2.0, altered\n");
  const std::string digest = crypto::to_hex(crypto::sha256(crypto::as_bytes(firmware)));
  const std::string dev = srup::id_text(0xa5);
  const fs::path config = sys.make_device(0xa5, "simple", "[update]\napply_program = \"" + apply.string() +
                                                             "\"\nallowed_file_root = \"" + work.string() + "\"\n");
  const fs::path downloads = config.parent_path() / "updates";
  ChildProcess device(bin("srup-device"), {"--config", config.string()}, false);
  ASSERT_TRUE(eventually([&] { return sys.device_state(0xa5) == "joined"; })) << device.out();

  // A good digest: downloaded (0x00), activated with the same token, applied (0x10).
  const CliResult good = sys.c2_cli({"--json", "update", dev, "file://" + (work / "fw.bin").string(), "--sha256", digest, "--wait", "20"});
  ASSERT_EQ(good.exit_code, 0) << good.err << good.out;
  const json initiate = json::parse(good.out);
  EXPECT_EQ(initiate["answer"]["status"], 0x00) << good.out;
  const std::string token = initiate["token"];
  json shown;
  ASSERT_TRUE(eventually([&] {
    const CliResult r = sys.c2_cli({"--json", "command", token});
    if (r.exit_code != 0) return false;
    shown = json::parse(r.out);
    return shown.value("type", "") == "update-activate" && shown.value("state", "") == "answered";
  }, kFlowsPatience)) << shown.dump() << device.out();
  EXPECT_EQ(shown["answer"]["status"], 0x10) << shown.dump();
  ASSERT_EQ(shown["earlier"].size(), 1u) << shown.dump();
  EXPECT_EQ(shown["earlier"][0]["type"], "update-initiate");
  ASSERT_TRUE(fs::exists(marker));
  const std::string applied = flows_read(marker);
  const std::string applied_path = applied.substr(0, applied.find('\n'));
  EXPECT_EQ(fs::path(applied_path).parent_path(), downloads) << applied;
  EXPECT_EQ(applied.substr(applied.find('\n') + 1), firmware);
  fs::remove(marker);

  // A file that does not match its digest: 0xFF, deleted, never activated, never applied.
  const CliResult bad = sys.c2_cli({"--json", "update", dev, "file://" + (work / "evil.bin").string(), "--sha256", digest, "--wait", "20"});
  ASSERT_EQ(bad.exit_code, 0) << bad.err << bad.out;
  const json refused = json::parse(bad.out);
  EXPECT_EQ(refused["answer"]["status"], 0xFF) << bad.out;
  const CliResult rows = sys.c2_cli({"--json", "command", refused["token"].get<std::string>()});
  ASSERT_EQ(rows.exit_code, 0) << rows.err;
  EXPECT_EQ(json::parse(rows.out)["type"], "update-initiate") << rows.out;
  EXPECT_FALSE(json::parse(rows.out).contains("earlier")) << rows.out;
  EXPECT_FALSE(fs::exists(marker));
  std::size_t left = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(downloads)) ++left;
  EXPECT_EQ(left, 0u) << "downloads left in " << downloads;

  // The same update from an http:// server.
  DevhttpServer server({{"/fw.bin", {devhttp_ok(firmware)}}});
  const CliResult http = sys.c2_cli({"--json", "update", dev, server.url("/fw.bin"), "--sha256", digest, "--wait", "20"});
  ASSERT_EQ(http.exit_code, 0) << http.err << http.out;
  EXPECT_EQ(json::parse(http.out)["answer"]["status"], 0x00) << http.out;
  ASSERT_TRUE(eventually([&] { return fs::exists(marker); }, kFlowsPatience)) << device.out();
  const std::string applied_http = flows_read(marker);
  EXPECT_EQ(applied_http.substr(applied_http.find('\n') + 1), firmware);
  EXPECT_EQ(server.requests(), 1);
}

}  // namespace
}  // namespace pqot::test

namespace pqot::test {
namespace {

TEST(SrupFlows, ADeviceResignsAndATerminatedOneLeavesCommandsToThemAreRefused) {
  SrupSystem sys;
  const std::string resigning = srup::id_text(0xa6), terminated = srup::id_text(0xa7);
  const fs::path config = sys.make_device(0xa6, "simple");
  const fs::path config2 = sys.make_device(0xa7, "simple");
  auto device = std::make_unique<ChildProcess>(bin("srup-device"), std::vector<std::string>{"--config", config.string()}, false);
  ChildProcess device2(bin("srup-device"), {"--config", config2.string()}, false);
  ASSERT_TRUE(eventually([&] { return sys.device_state(0xa6) == "joined" && sys.device_state(0xa7) == "joined"; }))
      << device->out() << device2.out();

  // Resign: the agent stopped, `srup-device --resign` asks the C2 once and records it.
  EXPECT_EQ(device->stop(), 0) << device->out();
  const CliResult resign = run_program(bin("srup-device"), {"--config", config.string(), "--resign", "--wait", "60"});
  EXPECT_EQ(resign.exit_code, 0) << resign.out << resign.err << sys.c2().out();
  EXPECT_NE(resign.out.find("resigned from C2 " + srup::id_text(kC2Id)), std::string::npos) << resign.out;
  EXPECT_EQ(sys.device_state(0xa6), "resigned");
  const CliResult action = sys.c2_cli({"action", resigning, "7"});
  EXPECT_EQ(action.exit_code, 4);
  EXPECT_NE(action.err.find("is resigned, not joined"), std::string::npos) << action.err;
  const CliResult events = sys.c2_cli({"--json", "history", resigning, "events"});
  ASSERT_EQ(events.exit_code, 0) << events.err;
  EXPECT_NE(events.out.find("\"actor\": \"device\""), std::string::npos) << events.out;
  // It has left: a second --resign has nothing to leave, and the agent started again obeys nothing.
  const CliResult again = run_program(bin("srup-device"), {"--config", config.string(), "--resign"});
  EXPECT_EQ(again.exit_code, 2) << again.out;
  device = std::make_unique<ChildProcess>(bin("srup-device"), std::vector<std::string>{"--config", config.string()}, false);
  EXPECT_TRUE(device->wait_for_out("left its C2")) << device->out();

  // Terminate: the C2 tells the device to leave (0x70); the device obeys nothing more.
  const CliResult terminate = sys.c2_cli({"terminate", terminated, "--wait", "20"});
  EXPECT_EQ(terminate.exit_code, 0) << terminate.err;
  EXPECT_NE(terminate.out.find("RESIGN_SUCCESS"), std::string::npos) << terminate.out;
  EXPECT_EQ(sys.device_state(0xa7), "resigned");
  EXPECT_TRUE(device2.wait_for_out("membership: left its C2")) << device2.out();
  const CliResult after = sys.c2_cli({"id", terminated});
  EXPECT_EQ(after.exit_code, 4);
  EXPECT_NE(after.err.find("is resigned, not joined"), std::string::npos) << after.err;
}

}  // namespace
}  // namespace pqot::test
