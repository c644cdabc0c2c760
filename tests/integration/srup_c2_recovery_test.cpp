// srup-c2 after a crash at an exact point, and the observed join's answers (docs/srup-c2.md,
// "Outbox" and "Follow-up steps"; docs/srup-mqtt.md 4.2, 4.4, 4.7). The C2 is ended by its
// test-only fault hook (SRUP_C2_TEST_CRASH_AT=POINT:TYPE: _Exit at POINT while handling the answer
// to a command of TYPE), so the crash falls between the two databases deterministically, not by
// a kill race.
#include <gtest/gtest.h>

#include <cstdlib>

#include <nlohmann/json.hpp>

#include "../support/mqtt_peer.hpp"
#include "../support/srup_system.hpp"
#include "pqot/crypto/hash.hpp"
#include "pqot/crypto/random.hpp"
#include "pqot/srup/body.hpp"
#include "pqot/srup/endpoint.hpp"
#include "pqot/srup/state.hpp"
#include "pqot/srup/status.hpp"

namespace pqot::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kRecoveryHookExit = 86;  // srup-c2's fault hook ends the process with this

std::size_t recovery_count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// Restarts the C2 with its fault hook armed at `point`; runs `cli` (the operator's request, which
// makes the device answer); waits until the hook ended the C2; starts it again without the hook.
// The token of the command `cli` started.
std::string recovery_crash_at(SrupSystem& sys, const std::string& point, std::vector<std::string> cli) {
  sys.kill_c2();
  // Only the C2 started now inherits it (the CLI and the device ignore it).
  ::setenv("SRUP_C2_TEST_CRASH_AT", point.c_str(), 1);
  sys.restart_c2();
  ::unsetenv("SRUP_C2_TEST_CRASH_AT");
  cli.insert(cli.begin(), "--json");
  const CliResult r = sys.c2_cli(cli);
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  const json j = json::parse(r.out, nullptr, false);
  EXPECT_EQ(sys.c2().wait_exit(kPatience * 2), std::optional<int>(kRecoveryHookExit)) << sys.c2().out();
  EXPECT_TRUE(sys.c2().wait_for_out("test fault hook: ending at " + point)) << sys.c2().out();
  sys.restart_c2();
  return j.is_object() ? j.value("token", "") : "";
}

// The newest command with `token` once it is answered (null if it is not within the patience).
json recovery_answered(SrupSystem& sys, const std::string& token, const std::string& type) {
  json shown;
  const bool ok = eventually([&] {
    const CliResult r = sys.c2_cli({"--json", "command", token});
    if (r.exit_code != 0) return false;
    shown = json::parse(r.out);
    return shown.value("type", "") == type && shown.value("state", "") == "answered";
  }, kPatience * 2);
  return ok ? shown : json();
}

TEST(SrupC2Recovery, AnswersAndTheirStepsSurviveACrashBetweenTheTwoDatabases) {
  SrupSystem sys;
  const fs::path work = sys.dir() / "recovery-src";
  fs::create_directories(work);
  const fs::path marker = work / "applied";
  const fs::path apply = work / "apply.sh";
  write_text(apply, "#!/bin/sh\ncp \"$1\" '" + marker.string() + ".tmp' && mv '" + marker.string() + ".tmp' '" +
                        marker.string() + "'\n");
  fs::permissions(apply, fs::perms::owner_all);
  const std::string firmware = "firmware image 3.0\n";
  write_text(work / "fw.bin", firmware);
  const std::string digest = crypto::to_hex(crypto::sha256(crypto::as_bytes(firmware)));
  const std::string dev = srup::id_text(0xa9);
  // file:// updates need a root the device may read under (docs/srup-device.md, "Updates").
  const fs::path config = sys.make_device(0xa9, "simple", "[update]\napply_program = \"" + apply.string() +
                                                              "\"\nallowed_file_root = \"" + work.string() + "\"\n");
  ChildProcess device(bin("srup-device"), {"--config", config.string()}, false);
  ASSERT_TRUE(eventually([&] { return sys.device_state(0xa9) == "joined"; })) << device.out();

  // Killed after the device answered and before the C2 stored it: the restarted C2 sends the
  // Action again, the device answers from its journal with the same envelope, and it is taken
  // (not refused as a REPLAY, leaving the command pending until it expires).
  const std::string action = recovery_crash_at(sys, "before-answer-stored:action", {"action", dev, "7", "--arg", "once"});
  const json a = recovery_answered(sys, action, "action");
  EXPECT_FALSE(a.is_null()) << sys.c2().out() << device.out();
  EXPECT_EQ(a.is_null() ? json() : a["answer"]["status_name"], "ACTION_SUCCESS") << a.dump();
  EXPECT_EQ(recovery_count(device.out(), "action log: once"), 1u) << device.out();

  // Killed after the C2 stored Update Initiate's 0x00 and before it took the step: the restarted
  // C2 sends the Update Activate, and the update is applied.
  const std::string update = recovery_crash_at(sys, "after-answer-stored:update-initiate",
                                               {"update", dev, "file://" + (work / "fw.bin").string(), "--sha256", digest});
  const json activated = recovery_answered(sys, update, "update-activate");
  EXPECT_FALSE(activated.is_null()) << sys.c2().out() << device.out();
  EXPECT_EQ(activated.is_null() ? json() : activated["answer"]["status"], 0x10) << activated.dump();
  EXPECT_TRUE(eventually([&] { return fs::exists(marker); })) << device.out();

  // Killed after the C2 stored the Terminate's 0x70: the restarted C2 marks the device resigned.
  const std::string terminate = recovery_crash_at(sys, "after-answer-stored:terminate-command", {"terminate", dev});
  EXPECT_FALSE(recovery_answered(sys, terminate, "terminate-command").is_null());
  EXPECT_TRUE(eventually([&] { return sys.device_state(0xa9) == "resigned"; })) << sys.c2().out();
}

// A device the test speaks for: its enrolled identity and broker certificate (SrupSystem's
// make_device), its own state file and endpoint, and an MQTT connection on its topics.
struct RecoveryPeer {
  RecoveryPeer(SrupSystem& sys, std::uint64_t id, const fs::path& dir)
      : id(id),
        identity(srup::load_identity(dir)),
        store(dir / "test-state.db"),
        endpoint(identity.self, store),
        mqtt([&] {
          mqtt::ClientOptions o = sys.broker().client_options("dev-" + srup::id_text(id), "");
          o.tls.cert_file = (dir / "bundle" / "broker.crt").string();
          o.tls.key_file = (dir / "broker.key").string();
          return o;
        }()) {
    endpoint.enrol(kC2Id, srup::load_public_identity(dir / "bundle" / "c2.pub").keys);
    mqtt.start();
    EXPECT_TRUE(mqtt.wait_connects()) << mqtt.last_failure();
    EXPECT_EQ(mqtt.subscribe(srup::topic_to_device(id)), 1);
  }
  srup::PublicKeys keys() const { return {identity.pub.keys.signature_public, identity.pub.keys.kem_public}; }
  void send(srup::MessageType type, const srup::Body& body, const crypto::Bytes& token) {
    const crypto::Bytes wire = endpoint.make(kC2Id, type, body, srup::topic_from_device(id), token);
    EXPECT_EQ(mqtt.publish_acked(srup::topic_from_device(id), std::string(wire.begin(), wire.end())), 0);
  }
  // The next command of `type` from the C2 (others, such as a Reader Set, are answered 0x20).
  std::optional<srup::Inbound> next_command(srup::MessageType type) {
    std::optional<srup::Inbound> found;
    eventually([&] {
      const auto all = mqtt.messages();
      for (; consumed < all.size() && !found; ++consumed) {
        const auto& m = all[consumed];
        srup::Inbound in = endpoint.receive(crypto::Bytes(m.payload.begin(), m.payload.end()), m.topic,
                                            srup::topic_from_device(id));
        if (in.kind != srup::Inbound::Kind::execute) continue;
        if (in.header.type == type) {
          found = std::move(in);
        } else {
          answer(in, static_cast<std::uint8_t>(srup::Status::action_success));
        }
      }
      return found.has_value();
    });
    return found;
  }
  void answer(const srup::Inbound& command, std::uint8_t status) {
    const crypto::Bytes wire = endpoint.answer(command.header, status, "", srup::topic_from_device(id));
    EXPECT_EQ(mqtt.publish_acked(srup::topic_from_device(id), std::string(wire.begin(), wire.end())), 0);
  }

  std::uint64_t id;
  srup::LoadedIdentity identity;
  srup::StateStore store;
  srup::Endpoint endpoint;
  MqttPeer mqtt;
  std::size_t consumed = 0;
};

crypto::Bytes recovery_token() {
  crypto::Bytes t(16);
  crypto::random_bytes(t);
  return t;
}

// docs/srup-mqtt.md 4.2, observed join: the observer's answer ends the join only when it carries
// the token of that join's Observation Request. Here the device asks again (a new token) after
// the observer was asked once; the observer's "valid" to the first request must not join it.
TEST(SrupC2Recovery, AnObservationAnswerEndsOnlyTheJoinWhoseRequestItAnswers) {
  SrupSystem sys;
  const fs::path obs_dir = sys.make_device(0xa4, "simple").parent_path();
  RecoveryPeer observer(sys, 0xa4, obs_dir);
  observer.send(srup::MessageType::join_request, srup::JoinRequest{observer.keys()}, recovery_token());
  ASSERT_TRUE(eventually([&] { return sys.device_state(0xa4) == "joined"; })) << sys.c2().out();

  const fs::path dev_dir = sys.make_device_with(0xb4, "observed", {"--observer", srup::id_text(0xa4)}, "").parent_path();
  RecoveryPeer joining(sys, 0xb4, dev_dir);
  const srup::ObservedJoinRequest ask{joining.keys(), 0xa4};
  // A join's steps: the device asks, shows the code (0x50 to the Observed Join Response), and the
  // C2 asks the observer.
  const auto start_join = [&]() -> std::optional<srup::Inbound> {
    joining.send(srup::MessageType::observed_join_request, ask, recovery_token());
    const auto shown = joining.next_command(srup::MessageType::observed_join_response);
    if (!shown) return std::nullopt;
    joining.answer(*shown, static_cast<std::uint8_t>(srup::Status::join_success));
    return observer.next_command(srup::MessageType::observation_request);
  };
  const auto first = start_join();
  ASSERT_TRUE(first) << sys.c2().out();
  const auto second = start_join();  // the device asked again: a new join, a new code
  ASSERT_TRUE(second) << sys.c2().out();
  ASSERT_NE(first->header.token, second->header.token);

  // The observer confirms the first join's code: the C2 stores the answer, and the device stays
  // pending.
  const auto valid = static_cast<std::uint8_t>(srup::Status::observed_join_valid);
  observer.answer(*first, valid);
  ASSERT_FALSE(recovery_answered(sys, crypto::to_hex(first->header.token), "observation-request").is_null())
      << sys.c2().out();
  EXPECT_EQ(sys.device_state(0xb4), "pending") << sys.c2().out();
  // Its answer to the request of this join does.
  observer.answer(*second, valid);
  EXPECT_TRUE(eventually([&] { return sys.device_state(0xb4) == "joined"; })) << sys.c2().out();
}

}  // namespace
}  // namespace pqot::test
