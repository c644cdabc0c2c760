// `srup monitor` through a real broker (issue 13; docs/srup-tool.md "monitor", docs/srup-mqtt.md
// 4.6): a monitor enrolled and authorized the way an operator does it reads a meter's telemetry;
// one that starts late gets the key by the device's periodic resend; a revoked one gets no key of
// the next epoch; one not authorized is refused at the broker and says so; readers (the monitor and
// the C2) open their stored key again after a restart and decrypt what the broker queued for them.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../support/srup_system.hpp"
#include "pqot/common/clock.hpp"

namespace pqot::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::chrono::seconds kMonitorPatience{60};  // checkpoints every 64 readings, ASan, 2 cores

// A monitor's identity (srup keygen), broker key and the bundle of `srup c2 enrol-monitor`.
fs::path monitor_enrol(SrupSystem& sys, std::uint64_t id) {
  const fs::path d = sys.dir() / ("mon-" + srup::id_text(id));
  fs::create_directories(d);
  fs::permissions(d, fs::perms::owner_all, fs::perm_options::replace);
  srup::write_identity(d, id, kSystemSuite, srup::random_seeds(kSystemSuite));
  const auto kr = pki::make_key_and_request("mon-" + srup::id_text(id));
  common::write_new_file(d / "broker.key", std::string_view(kr.key_pem.data(), kr.key_pem.size()), 0600);
  write_text(d / "broker.csr", kr.csr_pem);
  const CliResult r = sys.c2_cli({"enrol-monitor", "--pub", (d / "identity.pub").string(), "--csr",
                                  (d / "broker.csr").string(), "--out", (d / "bundle").string()});
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  return d;
}

std::vector<std::string> monitor_args(SrupSystem& sys, const fs::path& mon, const fs::path& device_config) {
  return {"monitor", "--state", mon.string(), "--device-pub", (device_config.parent_path() / "identity.pub").string(),
          "--host", "localhost", "--port", std::to_string(sys.broker().port()), "--ca", (mon / "bundle" / "ca.crt").string(),
          "--cert", (mon / "bundle" / "broker.crt").string(), "--key", (mon / "broker.key").string(), "--format", "json"};
}

// The monitor's JSON lines (only complete ones: the file may be read while a line is written).
struct MonitorLines {
  std::vector<json> readings, keys, checkpoints;
};
MonitorLines monitor_lines(const std::string& out) {
  MonitorLines m;
  std::size_t at = 0;
  for (std::size_t nl = out.find('\n'); nl != std::string::npos; at = nl + 1, nl = out.find('\n', at)) {
    const json j = json::parse(out.substr(at, nl - at), nullptr, false);
    if (j.is_discarded()) {
      ADD_FAILURE() << "not a JSON line: " << out.substr(at, nl - at);
      continue;
    }
    if (j.contains("reading")) m.readings.push_back(j);
    if (j.contains("key")) m.keys.push_back(j);
    if (j.contains("checkpoint")) m.checkpoints.push_back(j);
  }
  return m;
}

bool monitor_confirmed_once(const MonitorLines& m) {
  for (const json& c : m.checkpoints) {
    if (c["checkpoint"]["verdict"] == "confirmed") return true;
  }
  return false;
}

// The device's current key epoch, asked through the C2 (Data request telemetry_epoch); 0 if none.
std::uint64_t monitor_device_epoch(SrupSystem& sys, std::uint64_t device) {
  const CliResult r = sys.c2_cli({"--json", "data", srup::id_text(device), "telemetry_epoch", "--wait", "20"});
  if (r.exit_code != 0) return 0;
  const json j = json::parse(r.out, nullptr, false);
  if (j.is_discarded() || !j.contains("answer")) return 0;
  return std::stoull(j["answer"]["value"]["text"].get<std::string>());
}

// When the newest reading the C2 stored (confirmed) was measured; 0 if none or unreachable.
std::uint64_t monitor_newest_stored_ms(SrupSystem& sys, std::uint64_t device) {
  const CliResult r = sys.c2_cli({"--json", "history", srup::id_text(device), "telemetry", "--limit", "1"});
  if (r.exit_code != 0) return 0;
  const json j = json::parse(r.out, nullptr, false);
  if (j.is_discarded() || j["telemetry"].empty()) return 0;
  return j["telemetry"][0]["reading"]["t"].get<std::uint64_t>();
}

// Waits until the C2 is connected to the broker. Its control socket is up before that, and a
// registration sent while it still connects could time out (its dynsec command can reach the
// broker before the subscription to the answers does).
bool monitor_c2_connected(SrupSystem& sys) {
  return eventually(
      [&] {
        const CliResult r = sys.c2_cli({"--json", "status"});
        const json j = json::parse(r.out, nullptr, false);
        return r.exit_code == 0 && !j.is_discarded() && j["broker"]["connected"] == true;
      },
      kMonitorPatience);
}

std::string monitor_meter(int phases, int key_resend_s) {
  return "[telemetry]\nenabled = true\ninterval_ms = 100\nsource = \"model\"\nphases = " + std::to_string(phases) +
         "\nkey_resend_s = " + std::to_string(key_resend_s) + "\n";
}

TEST(SrupMonitor, ReadsTheMeterGetsALateKeyByTheResendAndNoKeyAfterItsRevocation_4_6) {
  SrupSystem sys;
  const std::uint64_t dev = 0xe1, mon_id = 0xd1;
  ASSERT_TRUE(monitor_c2_connected(sys)) << sys.c2().out();
  const fs::path config = sys.make_device(dev, "simple", monitor_meter(1, 1));
  ChildProcess device(bin("srup-device"), {"--config", config.string()}, false);
  ASSERT_TRUE(eventually([&] { return sys.device_state(dev) == "joined"; })) << device.out();
  const fs::path mon = monitor_enrol(sys, mon_id);

  // Enrolled but not authorized: the broker refuses both subscriptions; the monitor names and
  // counts them, and reads nothing.
  {
    ChildProcess early(bin("srup"), monitor_args(sys, mon, config), false);
    ASSERT_TRUE(eventually([&] { return count_of(early.log(), "the broker refused") >= 2; }, kMonitorPatience))
        << early.log();
    EXPECT_EQ(early.stop(), 0) << early.log();
    EXPECT_NE(early.log().find("refused BROKER_SUBSCRIBE: 2"), std::string::npos) << early.log();
    EXPECT_NE(early.log().find("srup monitor: 0 readings"), std::string::npos) << early.log();
    EXPECT_TRUE(monitor_lines(early.out()).readings.empty()) << early.out();
  }
  const CliResult stranger = sys.c2_cli({"authorize", srup::id_text(0xd9), srup::id_text(dev)});
  EXPECT_NE(stranger.exit_code, 0) << stranger.out;  // a monitor the C2 never enrolled

  // Authorizing rotates the device's key (epoch 2) and sends it to the monitor's key topic while
  // the monitor is not subscribed to it: only the periodic resend (key_resend_s = 1) brings it.
  ASSERT_EQ(sys.c2_cli({"authorize", srup::id_text(mon_id), srup::id_text(dev)}).exit_code, 0);
  ASSERT_TRUE(eventually([&] { return monitor_device_epoch(sys, dev) >= 2; }, kMonitorPatience)) << device.out();
  ChildProcess monitor(bin("srup"), monitor_args(sys, mon, config), false);
  MonitorLines seen;
  ASSERT_TRUE(eventually(
      [&] {
        seen = monitor_lines(monitor.out());
        return seen.readings.size() >= 3 && monitor_confirmed_once(seen);
      },
      kMonitorPatience))
      << monitor.out() << monitor.log() << device.out();
  ASSERT_FALSE(seen.keys.empty());
  EXPECT_EQ(seen.keys[0]["key"]["source"], "broker") << seen.keys[0].dump();
  EXPECT_EQ(seen.keys[0]["key"]["epoch"], 2) << seen.keys[0].dump();
  const json& first = seen.readings[0];
  EXPECT_EQ(first["device"], srup::id_text(dev));
  EXPECT_EQ(first["epoch"], 2);
  EXPECT_EQ(first["status"], "provisional");
  const json& channels = first["reading"]["channels"];
  EXPECT_TRUE(channels.contains("voltage_l1")) << first.dump();
  EXPECT_FALSE(channels.contains("voltage_l2")) << first.dump();  // a 1-phase meter
  EXPECT_GT(channels["frequency"].get<double>(), 49.0);
  EXPECT_LT(channels["frequency"].get<double>(), 51.0);

  // Revoked: the next epoch's key goes to the remaining readers only, resent every second or not.
  ASSERT_EQ(sys.c2_cli({"revoke", srup::id_text(mon_id), srup::id_text(dev)}).exit_code, 0);
  ASSERT_TRUE(eventually([&] { return monitor_device_epoch(sys, dev) >= 3; }, kMonitorPatience)) << device.out();
  const std::uint64_t rotated = common::unix_time_ms();
  // The C2 (still a reader) confirms readings of the new epoch: the device went on, with resends.
  ASSERT_TRUE(eventually([&] { return monitor_newest_stored_ms(sys, dev) > rotated; }, kMonitorPatience))
      << sys.c2().out();
  EXPECT_EQ(monitor.stop(), 0) << monitor.log();
  seen = monitor_lines(monitor.out());
  for (const json& k : seen.keys) EXPECT_LT(k["key"]["epoch"].get<int>(), 3) << k.dump();
  for (const json& r : seen.readings) EXPECT_LT(r["epoch"].get<int>(), 3) << r.dump();
}

TEST(SrupMonitor, RestartedReadersOpenTheirStoredKeyAndDecryptWhatTheBrokerQueued_4_6) {
  SrupSystem sys;
  const std::uint64_t dev = 0xe2, mon_id = 0xd2;
  ASSERT_TRUE(monitor_c2_connected(sys)) << sys.c2().out();
  // No resend within this test: every key a reader gets comes from a start or from its store.
  const fs::path config = sys.make_device(dev, "simple", monitor_meter(3, 3600));
  auto device = std::make_unique<ChildProcess>(bin("srup-device"), std::vector<std::string>{"--config", config.string()}, false);
  ASSERT_TRUE(eventually([&] { return sys.device_state(dev) == "joined"; })) << device->out();
  const fs::path mon = monitor_enrol(sys, mon_id);
  ASSERT_EQ(sys.c2_cli({"authorize", srup::id_text(mon_id), srup::id_text(dev)}).exit_code, 0);
  ASSERT_TRUE(eventually([&] { return monitor_device_epoch(sys, dev) >= 2; }, kMonitorPatience)) << device->out();

  // The monitor subscribes (its broker session is persistent); then the device restarts and, at
  // its start, sends every reader of its stored Reader Set the key of a new epoch.
  auto monitor = std::make_unique<ChildProcess>(bin("srup"), monitor_args(sys, mon, config), false);
  ASSERT_TRUE(eventually([&] { return count_of(monitor->log(), "subscribed to " + srup::topic_telemetry(dev)) > 0; },
                         kMonitorPatience))
      << monitor->log();
  ASSERT_EQ(device->stop(), 0) << device->out();
  device = std::make_unique<ChildProcess>(bin("srup-device"), std::vector<std::string>{"--config", config.string()}, false);
  EXPECT_TRUE(eventually([&] { return count_of(device->out(), "telemetry readers restored: 2") > 0; }, kMonitorPatience))
      << device->out();
  MonitorLines seen;
  ASSERT_TRUE(eventually(
      [&] {
        seen = monitor_lines(monitor->out());
        return seen.readings.size() >= 3;
      },
      kMonitorPatience))
      << monitor->out() << monitor->log() << device->out();
  ASSERT_EQ(seen.keys.size(), 1u) << monitor->out();
  EXPECT_EQ(seen.keys[0]["key"]["source"], "broker");
  EXPECT_EQ(seen.keys[0]["key"]["epoch"], 3);
  EXPECT_TRUE(seen.readings[0]["reading"]["channels"].contains("voltage_l3")) << seen.readings[0].dump();
  EXPECT_EQ(monitor->stop(), 0) << monitor->log();

  const fs::path key_file = mon / "telemetry-keys" / (srup::id_text(dev) + ".tk");
  struct stat st {};
  ASSERT_EQ(::stat(key_file.c_str(), &st), 0) << key_file;
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  // While the monitor is down, readings wait in its broker session. The C2 is a reader too: it is
  // stopped and started meanwhile, and once it confirms a reading measured after it went down it
  // has opened its stored key (no new key comes: no resend, no device start) and readings were
  // published while the monitor was down. One checkpoint shows both (CI time: a checkpoint comes
  // every 64 readings, 6.4 s here).
  EXPECT_EQ(sys.c2().stop(), 0) << sys.c2().log();
  const std::uint64_t down = common::unix_time_ms();
  sys.start_c2();
  ASSERT_TRUE(eventually([&] { return monitor_newest_stored_ms(sys, dev) > down; }, kMonitorPatience))
      << sys.c2().out();
  EXPECT_NE(sys.c2().out().find("telemetry keys restored: 1"), std::string::npos) << sys.c2().out();

  const std::uint64_t launched = common::unix_time_ms();
  monitor = std::make_unique<ChildProcess>(bin("srup"), monitor_args(sys, mon, config), false);
  ASSERT_TRUE(eventually([&] { return !monitor_lines(monitor->out()).readings.empty(); }, kMonitorPatience))
      << monitor->out() << monitor->log();
  EXPECT_EQ(monitor->stop(), 0) << monitor->log();
  seen = monitor_lines(monitor->out());
  ASSERT_EQ(seen.keys.size(), 1u) << monitor->out();  // no key came from the broker
  EXPECT_EQ(seen.keys[0]["key"]["source"], "stored");
  EXPECT_EQ(seen.keys[0]["key"]["epoch"], 3);
  EXPECT_LT(seen.readings[0]["reading"]["t"].get<std::uint64_t>(), launched) << seen.readings[0].dump();  // queued
  EXPECT_EQ(monitor->log().find("refused DECRYPT_FAILED"), std::string::npos) << monitor->log();
}

}  // namespace
}  // namespace pqot::test
