// Floods through the broker (docs/srup-c2.md and docs/srup-device.md, "What a hostile peer can
// make it hold"): a registered, joined device that floods the C2 holds only its share of the C2's
// queue and of its provisional readings while another device is served; and a device flooded on
// its command topic (by a compromised bridge) drops past its 1,000 waiting messages and obeys its
// C2 afterwards. Each bound is checked on the daemon's own metrics.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <thread>

#include "../support/mqtt_peer.hpp"
#include "../support/scrape.hpp"
#include "../support/srup_system.hpp"
#include "pqot/crypto/random.hpp"
#include "pqot/mqtt/broker_runner.hpp"
#include "pqot/srup/body.hpp"
#include "pqot/srup/endpoint.hpp"
#include "pqot/srup/state.hpp"
#include "pqot/srup/telemetry.hpp"

namespace pqot::test {
namespace {

namespace fs = std::filesystem;

std::string flood_metrics_config(int port) { return "[metrics]\nlisten = \"127.0.0.1:" + std::to_string(port) + "\"\n"; }

// The value of one sample on a daemon's metrics page (-1: no such sample, or no page).
double flood_metric(int port, const std::string& sample_prefix) {
  const std::string page = http_get(port, "/metrics");
  return page.empty() ? -1 : sample(page, sample_prefix);
}

mqtt::ClientOptions flood_options(SrupSystem& sys, const std::string& client_id, const fs::path& cert, const fs::path& key) {
  mqtt::ClientOptions o = sys.broker().client_options(client_id, "");
  o.tls.cert_file = cert.string();
  o.tls.key_file = key.string();
  return o;
}

crypto::Bytes flood_token() {
  crypto::Bytes t(16);
  crypto::random_bytes(t);
  return t;
}

std::uint64_t flood_now_ms() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

// A signed envelope of exactly srup::kMaxEnvelope bytes from `self` to the C2 on `topic`: a Join
// Request whose body is 64 KB of zeros. Every copy costs the C2 a signature check over all of it
// (docs/srup-pq.md 6, step 5) before the replay window refuses it (step 10).
crypto::Bytes flood_max_envelope(const srup::Identity& self, srup::StateStore& store, const std::string& topic) {
  srup::Header h;
  h.type = srup::MessageType::join_request;
  h.suite = self.suite;
  h.mode = srup::Mode::signed_clear;
  h.sender = self.id;
  h.recipient = kC2Id;
  h.sequence = store.next_sequence(self.id, kC2Id);
  h.timestamp_ms = flood_now_ms();
  h.lifetime_ms = 600'000;
  h.topic = srup::topic_tag(topic);
  h.token = flood_token();
  const std::size_t probe = srup::protect(h, crypto::Bytes(1000), self).size();
  return srup::protect(h, crypto::Bytes(1000 + srup::kMaxEnvelope - probe), self);
}

// Publishes (QoS 1) while fewer than `in_flight` are unacknowledged; until `stop`.
void flood_publish(MqttPeer& peer, const std::string& topic, const crypto::Bytes& payload, std::size_t in_flight,
                   const std::atomic<bool>& stop) {
  while (!stop) {
    if (peer.stats().pending >= in_flight || !peer.client().publish(topic, std::span<const std::uint8_t>(payload), 1)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
}

// Publishes copies of `payload` in bursts of `burst`, each once the C2 has dealt with every copy
// before it (`dealt()`: dropped from its queue or refused), until `stop`. A burst arrives faster
// than the C2 can check signatures, so its queue holds B's share and drops the rest; waiting for
// it keeps the broker's own queue for the C2's session short. That queue is mosquitto's, shared
// by every device and not fair among them: a device publishing faster than the C2 reads would
// make mosquitto drop messages for the C2 from every device (docs/srup-c2.md, "What a hostile
// peer can make it hold", the broker's row), which is not what this test is about.
void flood_in_bursts(MqttPeer& peer, const std::string& topic, const crypto::Bytes& payload, int burst,
                     const std::function<double()>& dealt, const std::atomic<bool>& stop) {
  const double before = dealt();
  double sent = 0;
  while (!stop) {
    for (int i = 0; i < burst; ++i) {
      if (peer.client().publish(topic, std::span<const std::uint8_t>(payload), 1)) ++sent;
    }
    const auto deadline = std::chrono::steady_clock::now() + kPatience;
    while (!stop && dealt() < before + sent && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
}

}  // namespace

// docs/srup-c2.md, "What a hostile peer can make it hold": device B (registered, joined, run by
// hostile software: the test) sends telemetry without Checkpoints and floods its own from-device
// topic with maximum-sized envelopes, while device A's command is answered and its telemetry
// stored. B's excess is dropped and counted by reason; what B held never passed its share. The
// total of provisional readings is set just above B's share, so A's readings fit only because the
// largest holder (B) gives up its oldest; when B is deregistered, what it still held goes.
TEST(SrupFlood, AJoinedDeviceFloodingTheC2HoldsOnlyItsShareWhileAnotherDeviceIsServed) {
  constexpr std::uint64_t kGood = 0xa1;
  constexpr std::uint64_t kBad = 0xbd;
  constexpr int kReadingsShare = 200;
  constexpr int kReadingsTotal = 230;  // A's pending range (up to 64) does not fit beside B's 200
  constexpr int kQueueDeviceBytes = 262'144;  // four envelopes of the maximum size
  constexpr int kQueueBytes = 1'048'576;
  const int c2_metrics = static_cast<int>(mqtt::free_loopback_port());
  SrupSystem sys("[telemetry]\nprovisional_max = " + std::to_string(kReadingsTotal) +
                 "\nprovisional_max_per_device = " + std::to_string(kReadingsShare) +
                 "\nprovisional_max_bytes_per_device = 1048576\n"
                 "[queue]\nmax_bytes = " + std::to_string(kQueueBytes) + "\nmax_messages_per_device = 64\n"
                 "max_bytes_per_device = " + std::to_string(kQueueDeviceBytes) + "\n" +
                 flood_metrics_config(c2_metrics));
  const auto c2_metric = [&](const std::string& s) { return flood_metric(c2_metrics, s); };
  // B joins like any device; the test is its software, with its enrolled identity.
  const fs::path bad_dir = sys.make_device(kBad, "simple").parent_path();
  MqttPeer bad(flood_options(sys, "dev-" + srup::id_text(kBad), bad_dir / "bundle" / "broker.crt", bad_dir / "broker.key"));
  bad.start();
  ASSERT_TRUE(bad.wait_connects()) << bad.last_failure();
  const srup::LoadedIdentity bad_identity = srup::load_identity(bad_dir);
  const srup::PublicIdentity c2_pub = srup::load_public_identity(bad_dir / "bundle" / "c2.pub");
  srup::StateStore bad_store(sys.dir() / "bad-state.db");
  srup::Endpoint bad_endpoint(bad_identity.self, bad_store, {});
  bad_endpoint.enrol(kC2Id, c2_pub.keys);
  const std::string bad_topic = srup::topic_from_device(kBad);
  const srup::JoinRequest join{{bad_identity.pub.keys.signature_public, bad_identity.pub.keys.kem_public}};
  const crypto::Bytes join_wire = bad_endpoint.make(kC2Id, srup::MessageType::join_request, join, bad_topic, flood_token());
  ASSERT_EQ(bad.publish_acked(bad_topic, std::string(join_wire.begin(), join_wire.end())), 0);
  ASSERT_TRUE(eventually([&] { return sys.device_state(kBad) == "joined"; })) << sys.c2().out();

  // B's telemetry: a key for the C2, then readings whose Checkpoint never comes (one range of
  // 1,024, so the telemetry reader's own bound of two ranges is far away). Sent 32 at a time, each
  // batch handled before the next (B is the only device sending yet), so none is lost in the
  // queue: every reading reaches the C2.
  srup::TelemetryPolicy policy;
  policy.checkpoint_messages = 1024;
  policy.checkpoint_seconds = 3600;
  srup::TelemetrySender sender(
      bad_identity.self, 1,
      [&](srup::MessageType type, std::uint64_t recipient) {
        srup::Header h;
        h.sequence = bad_store.next_sequence(kBad, recipient);
        h.timestamp_ms = flood_now_ms();
        h.lifetime_ms = 600'000;
        h.topic = srup::topic_tag(type == srup::MessageType::telemetry_key ? srup::topic_telemetry_key(kBad, recipient)
                                                                           : srup::topic_telemetry(kBad));
        return h;
      },
      policy);
  const auto send_telemetry = [&](const std::vector<srup::Outgoing>& out) {
    for (const srup::Outgoing& o : out) {
      const std::string topic = o.type == srup::MessageType::telemetry_key ? srup::topic_telemetry_key(kBad, o.recipient)
                                                                            : srup::topic_telemetry(kBad);
      ASSERT_TRUE(bad.client().publish(topic, std::span<const std::uint8_t>(o.wire), 1)) << topic;
    }
  };
  send_telemetry(sender.set_readers(srup::ReaderSet{{srup::Reader{kC2Id, c2_pub.keys.suite, c2_pub.keys.kem_public}}},
                                    flood_now_ms()));
  ASSERT_TRUE(eventually([&] { return c2_metric("srup_c2_messages_received_total{type=\"telemetry-key\"}") >= 1; }))
      << sys.c2().out();
  constexpr int kBatches = 13;
  constexpr int kBadReadings = kBatches * 32;  // 416: over twice the share
  const double readings_before = c2_metric("srup_c2_telemetry_readings_total");
  for (int batch = 0; batch < kBatches; ++batch) {
    for (int i = 0; i < 32; ++i) {
      const srup::Reading reading{flood_now_ms(), {srup::ChannelValue{0x0101, srup::Value{230.0f + static_cast<float>(i)}}}};
      send_telemetry(sender.seal(srup::encode_body(srup::MessageType::telemetry, c2_pub.keys.suite, reading), flood_now_ms()));
    }
    ASSERT_TRUE(eventually([&] { return c2_metric("srup_c2_telemetry_readings_total") >= readings_before + 32 * (batch + 1); }))
        << http_get(c2_metrics, "/metrics") << sys.c2().out();
  }
  // B holds its share; each reading past it pushed out B's own oldest.
  EXPECT_EQ(c2_metric("srup_c2_telemetry_provisional_drops_total{reason=\"device_readings\"}"), kBadReadings - kReadingsShare)
      << http_get(c2_metrics, "/metrics");
  EXPECT_EQ(c2_metric("srup_c2_telemetry_provisional_readings"), kReadingsShare);

  // Over what SRUP-PQ can carry: the broker passes it (its limit is 1 MiB), the C2's client drops it.
  ASSERT_EQ(bad.publish_acked(bad_topic, std::string(100'000, 'x')), 0);
  EXPECT_TRUE(eventually([&] { return c2_metric("srup_c2_mqtt_oversized_drops_total") == 1; }))
      << http_get(c2_metrics, "/metrics");

  // Device A starts; meanwhile B floods: bursts of 16 copies of one maximum-sized signed envelope,
  // each as soon as the C2 has dealt with the one before, until A has joined, been served and B's
  // drops are counted.
  const fs::path good_config =
      sys.make_device(kGood, "simple", "[telemetry]\nenabled = true\ninterval_ms = 100\nsource = \"model\"\nphases = 1\n");
  const crypto::Bytes big = flood_max_envelope(bad_identity.self, bad_store, bad_topic);
  ASSERT_EQ(big.size(), srup::kMaxEnvelope);
  const auto drops = [&] {
    return c2_metric("srup_c2_overload_drops_total{reason=\"device_bytes\"}") +
           c2_metric("srup_c2_overload_drops_total{reason=\"device_messages\"}");
  };
  // Every copy is dropped from the queue, or checked and refused: the first as BAD_REQUEST (its
  // body is not a Join Request's), the others as REPLAY.
  const auto dealt = [&] {
    const auto counted = [&](const std::string& s) { return std::max(0.0, c2_metric(s)); };
    return counted("srup_c2_overload_drops_total{reason=\"device_bytes\"}") +
           counted("srup_c2_overload_drops_total{reason=\"device_messages\"}") +
           counted("srup_c2_refusals_total{reason=\"REPLAY\"}") + counted("srup_c2_refusals_total{reason=\"BAD_REQUEST\"}");
  };
  std::atomic<bool> stop{false};
  std::thread flood([&] { flood_in_bursts(bad, bad_topic, big, 16, dealt, stop); });
  StopAndJoin stop_flood(stop, flood);
  ChildProcess good(bin("srup-device"), {"--config", good_config.string()}, false);
  ASSERT_TRUE(eventually([&] { return sys.device_state(kGood) == "joined"; }, kPatience * 3))
      << good.out() << sys.c2().out();
  EXPECT_TRUE(eventually([&] { return drops() > 0; }, kPatience * 3)) << http_get(c2_metrics, "/metrics");
  const CliResult action = sys.c2_cli({"action", srup::id_text(kGood), "7", "--arg", "during", "--wait", "30"});
  EXPECT_NE(action.out.find("ACTION_SUCCESS"), std::string::npos) << action.out << action.err << sys.c2().out();
  EXPECT_TRUE(good.wait_for_out("action log: during")) << good.out();
  EXPECT_TRUE(eventually([&] {
    const CliResult r = sys.c2_cli({"--json", "history", srup::id_text(kGood), "telemetry", "--limit", "100"});
    return r.exit_code == 0 && nlohmann::json::parse(r.out)["telemetry"].size() >= 64;
  }, kPatience * 3)) << good.out() << sys.c2().out();
  stop = true;
  flood.join();
  // The test's premise: the bursts never filled mosquitto's queue for the C2 (which would drop
  // messages of any device, A's included; docs/srup-c2.md, the broker's row).
  EXPECT_EQ(sys.broker().log().find("Outgoing messages are being dropped"), std::string::npos);

  // What the C2 held stayed within the configured bounds, B's share above all.
  EXPECT_LE(c2_metric("srup_c2_queue_device_peak_bytes"), kQueueDeviceBytes) << http_get(c2_metrics, "/metrics");
  EXPECT_GE(c2_metric("srup_c2_queue_device_peak_bytes"), 2.0 * srup::kMaxEnvelope);
  EXPECT_LE(c2_metric("srup_c2_queue_device_peak_messages"), 64);
  EXPECT_LE(c2_metric("srup_c2_queue_peak_bytes"), kQueueBytes);
  EXPECT_LE(c2_metric("srup_c2_telemetry_provisional_device_peak_bytes"), 1'048'576);
  EXPECT_GE(c2_metric("srup_c2_telemetry_confirmed_total"), 64);
  EXPECT_EQ(c2_metric("srup_c2_overload_drops_total{reason=\"total_messages\"}"), 0);
  EXPECT_EQ(c2_metric("srup_c2_telemetry_mismatch_total"), 0);
  EXPECT_GE(c2_metric("srup_c2_refusals_total{reason=\"REPLAY\"}"), 1);  // copies that got past the queue
  const std::string log = sys.c2().out();
  EXPECT_NE(log.find("from " + srup::id_text(kBad) + ": over its share of the queue"), std::string::npos) << log;
  EXPECT_EQ(log.find("from " + srup::id_text(kGood) + ": over its share"), std::string::npos) << log;
  EXPECT_EQ(sys.device_state(kGood), "joined");
  // A's readings were held because B, the largest holder, gave up its oldest at the total.
  EXPECT_GE(c2_metric("srup_c2_telemetry_provisional_drops_total{reason=\"total_readings\"}"), 1)
      << http_get(c2_metrics, "/metrics");

  // B deregistered: whatever it still held is given up at once.
  const CliResult dereg = sys.c2_cli({"deregister", srup::id_text(kBad)});
  EXPECT_EQ(dereg.exit_code, 0) << dereg.out << dereg.err;
  EXPECT_TRUE(eventually([&] {
    return c2_metric("srup_c2_telemetry_provisional_drops_total{reason=\"device_left\"}") >= 1;
  })) << http_get(c2_metrics, "/metrics");
  EXPECT_LE(c2_metric("srup_c2_telemetry_provisional_readings"), 128);  // A's pending ranges at most
}

// docs/srup-device.md, "What a hostile peer can make it hold": at most 1,000 messages wait for the
// agent's thread. A compromised bridge (broker-wide rights, the strongest MQTT-side attacker)
// floods the device's command topic with an Action sealed and signed with the C2's key under a
// sequence number the device has seen: each copy costs the device a decapsulation before it is
// refused (REPLAY), so they pile up past the bound and are dropped and counted; the device obeys
// its C2 afterwards.
TEST(SrupFlood, ADeviceFloodedPastItsThousandWaitingMessagesDropsThemAndStillObeys) {
  SrupSystem sys;
  const fs::path c2_dir = sys.dir() / "c2";
  const std::string c2_user = "c2-" + srup::id_text(kC2Id);
  MqttPeer admin(flood_options(sys, c2_user + "-flood", c2_dir / "broker.crt", c2_dir / "broker.key"), true);
  admin.start();
  ASSERT_TRUE(admin.wait_connects()) << admin.last_failure();
  ASSERT_EQ(register_identity(admin, "bridge-flood", all_srup_acls()), "");
  const fs::path bridge_dir = sys.dir() / "bridge";
  fs::create_directories(bridge_dir);
  sys.issue_broker_identity(bridge_dir, "bridge-flood");
  MqttPeer bridge(flood_options(sys, "bridge-flood", bridge_dir / "broker.crt", bridge_dir / "broker.key"));
  bridge.start();
  ASSERT_TRUE(bridge.wait_connects()) << bridge.last_failure();

  const int metrics_port = static_cast<int>(mqtt::free_loopback_port());
  const fs::path config = sys.make_device(0xa1, "simple", flood_metrics_config(metrics_port));
  ChildProcess device(bin("srup-device"), {"--config", config.string()}, false);
  ASSERT_TRUE(eventually([&] { return sys.device_state(0xa1) == "joined"; }, kPatience * 3)) << device.out();
  const auto acts = [&](const std::string& arg) {
    const CliResult r = sys.c2_cli({"action", srup::id_text(0xa1), "7", "--arg", arg, "--wait", "30"});
    return r.out.find("ACTION_SUCCESS") != std::string::npos && device.wait_for_out("action log: " + arg);
  };
  ASSERT_TRUE(acts("before")) << device.out() << sys.c2().out();

  // An Action made with the C2's own key (from its state directory: the strongest forger) under
  // the C2's first sequence number, which the device's window holds already (the C2's answer to
  // its join): each copy costs the device a signature check, a decapsulation and the journal's
  // look-up before it is refused as REPLAY (docs/srup-pq.md 6, steps 5, 9 and 10); none runs.
  const std::string topic = srup::topic_to_device(0xa1);
  const srup::PublicIdentity device_pub = srup::load_public_identity(config.parent_path() / "identity.pub");
  srup::StateStore c2_key_store(sys.dir() / "c2-key.db");
  srup::EndpointOptions as_c2;
  as_c2.is_c2 = true;
  srup::Endpoint c2_key(srup::load_identity(c2_dir).self, c2_key_store, as_c2);
  c2_key.enrol(0xa1, device_pub.keys);
  const crypto::Bytes forged =
      c2_key.make(0xa1, srup::MessageType::action, srup::Action{7, srup::Value{std::string("flood")}}, topic, flood_token());
  ASSERT_EQ(srup::parse_envelope(forged).header.sequence, 1u);

  std::atomic<bool> stop{false};
  std::thread flood([&] { flood_publish(bridge, topic, forged, 200, stop); });
  StopAndJoin stop_flood(stop, flood);
  EXPECT_TRUE(eventually([&] { return flood_metric(metrics_port, "srup_device_overload_drops_total") > 0; }, kPatience * 3))
      << http_get(metrics_port, "/metrics");
  stop = true;
  flood.join();
  EXPECT_GE(flood_metric(metrics_port, "srup_device_refusals_total{reason=\"REPLAY\"}"), 1);

  // Still its C2's device; the forged command never ran.
  ASSERT_TRUE(acts("after")) << device.out() << sys.c2().out();
  EXPECT_EQ(flood_metric(metrics_port, "srup_device_broker_connected"), 1);
  EXPECT_EQ(device.out().find("action log: flood"), std::string::npos) << device.out();
}

}  // namespace pqot::test
