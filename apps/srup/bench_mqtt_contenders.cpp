// What each contender of `srup bench-mqtt` does at each end (bench_mqtt.hpp; docs/srup-tool.md,
// "bench-mqtt"): plain MQTT without and with TLS, SRUP-PQ's commands in three suites, the original
// SRUP envelope, and telemetry readings plain and in SRUP-PQ's mode 3.
#include <atomic>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <utility>

#include "bench_header.hpp"
#include "bench_mqtt.hpp"
#include "bench_payload.hpp"
#include "pqot/common/clock.hpp"
#include "pqot/crypto/signature.hpp"
#include "pqot/srup/body.hpp"
#include "pqot/srup/endpoint.hpp"
#include "pqot/srup/envelope.hpp"
#include "pqot/srup/identity.hpp"
#include "pqot/srup/legacy.hpp"
#include "pqot/srup/protect.hpp"
#include "pqot/srup/telemetry.hpp"
#include "pqot/srup/topics.hpp"

namespace pqot::srup_tool::mqtt_bench {

namespace {

namespace fs = std::filesystem;

// A 36-byte token unique per command (the original's UUID size, as `srup bench` uses).
Bytes bench_token(std::uint64_t n) {
  std::string s = "bench-" + std::to_string(n);
  s.resize(36, '-');
  return Bytes(s.begin(), s.end());
}

srup::Identity bench_identity(std::uint64_t id, srup::Suite suite, srup::PeerKeys* keys) {
  srup::LoadedIdentity l = srup::make_identity(id, suite, srup::random_seeds(suite));
  *keys = l.pub.keys;
  return std::move(l.self);
}

// SRUP-PQ: a sealed Action from the C2, the device's sealed Response, both through Endpoint with
// its durable state in `dir`.
struct SrupPair {
  SrupPair(srup::Suite suite, const fs::path& dir) {
    srup::PeerKeys c2_keys, device_keys;
    srup::Identity c2_self = bench_identity(kBenchC2, suite, &c2_keys);
    srup::Identity device_self = bench_identity(kBenchDevice, suite, &device_keys);
    fs::create_directories(dir);
    c2_store = std::make_unique<srup::StateStore>(dir / "c2.db");
    device_store = std::make_unique<srup::StateStore>(dir / "device.db");
    srup::EndpointOptions c2_options;
    c2_options.is_c2 = true;
    c2 = std::make_unique<srup::Endpoint>(std::move(c2_self), *c2_store, c2_options);
    device = std::make_unique<srup::Endpoint>(std::move(device_self), *device_store);
    c2->enrol(kBenchDevice, device_keys);
    device->enrol(kBenchC2, c2_keys);
  }
  std::unique_ptr<srup::StateStore> c2_store, device_store;
  std::unique_ptr<srup::Endpoint> c2, device;
  std::atomic<std::uint64_t> current{0};  // the exchange in progress: its command's token
};

Contender srup_contender(const std::string& name, const std::string& note, std::shared_ptr<SrupPair> p) {
  const std::string to_device = srup::topic_to_device(kBenchDevice);
  const std::string from_device = srup::topic_from_device(kBenchDevice);
  Contender c;
  c.name = name;
  c.note = note;
  c.make = [p, to_device](std::uint64_t n) {
    p->current = n;
    return Made{{p->c2->make(kBenchDevice, srup::MessageType::action, srup::Action{kBenchAction, {}}, to_device,
                             bench_token(n))}};
  };
  c.on_device = [p, from_device](const Received& m, BenchClock::time_point* acted) {
    const srup::Inbound in = p->device->receive(m.payload, m.topic, from_device);
    if (in.kind != srup::Inbound::Kind::execute) throw std::runtime_error("not a new command");
    if (in.header.token != bench_token(p->current)) throw std::runtime_error("another exchange's command");
    *acted = BenchClock::now();
    return p->device->answer(in.header, 0x20, "", from_device);
  };
  c.on_c2 = [p, to_device](const Received& m) {
    const srup::Inbound in = p->c2->receive(m.payload, m.topic, to_device);
    const auto* r = std::get_if<srup::Response>(&in.body);
    if (in.kind != srup::Inbound::Kind::message || r == nullptr || r->status != 0x20) {
      throw std::runtime_error("the answer did not verify");
    }
    if (in.header.token != bench_token(p->current)) throw std::runtime_error("another exchange's answer");
    return Seen::done;
  };
  return c;
}

// The original SRUP's version-5 envelope: RSA-2048 PKCS#1 v1.5 signatures, no encryption, the
// replay check a sequence number above the last one (in memory, as the original kept it).
Contender legacy_contender() {
  struct Keys {
    crypto::SignatureKeyPair c2, device;
    std::uint64_t c2_seq = 0, device_seq = 0, device_seen = 0, c2_seen = 0;
    std::atomic<std::uint64_t> current{0};  // the exchange in progress: its command's token
  };
  const auto& rsa = crypto::signature_by_name(srup::legacy::kSuiteName);
  auto k = std::make_shared<Keys>();
  k->c2 = rsa.keygen();
  k->device = rsa.keygen();
  Contender c;
  c.name = "SRUP original, RSA-2048";
  c.note = "signed, not encrypted; replay state in memory";
  c.make = [k](std::uint64_t n) {
    k->current = n;
    auto env = srup::legacy::make_envelope(++k->c2_seq, kBenchC2, bench_token(n), srup::legacy::Action{kBenchAction});
    return Made{{srup::legacy::encode(srup::legacy::sign(std::move(env), k->c2.secret_key))}};
  };
  c.on_device = [k](const Received& m, BenchClock::time_point* acted) {
    const srup::legacy::LegacyEnvelope env = srup::legacy::decode(m.payload);
    if (env.sender != kBenchC2 || env.sequence <= k->device_seen || !srup::legacy::verify(env, k->c2.public_key)) {
      throw std::runtime_error("legacy command refused");
    }
    if (env.token != bench_token(k->current)) throw std::runtime_error("another exchange's command");
    k->device_seen = env.sequence;
    *acted = BenchClock::now();
    auto answer = srup::legacy::make_envelope(++k->device_seq, kBenchDevice, env.token, srup::legacy::Response{0x20});
    return srup::legacy::encode(srup::legacy::sign(std::move(answer), k->device.secret_key));
  };
  c.on_c2 = [k](const Received& m) {
    const srup::legacy::LegacyEnvelope env = srup::legacy::decode(m.payload);
    if (env.sender != kBenchDevice || env.sequence <= k->c2_seen || !srup::legacy::verify(env, k->device.public_key)) {
      throw std::runtime_error("the legacy answer did not verify");
    }
    if (env.token != bench_token(k->current)) throw std::runtime_error("another exchange's answer");
    k->c2_seen = env.sequence;
    return Seen::done;
  };
  return c;
}

// Plain MQTT: the action number out, a status byte back; no envelope.
Contender plain_command(Transport t) {
  Contender c;
  c.transport = t;
  c.name = t == Transport::plain ? "MQTT, no TLS" : "MQTT over TLS";
  c.note = t == Transport::plain ? "plain TCP, username and password, QoS 1" : "same broker, TLS 1.3, QoS 1";
  c.make = [](std::uint64_t) { return Made{{Bytes{kBenchAction}}}; };
  c.on_device = [](const Received& m, BenchClock::time_point* acted) {
    if (m.payload.size() != 1 || m.payload[0] != kBenchAction) throw std::runtime_error("not the action");
    *acted = BenchClock::now();
    return Bytes{0x20};
  };
  c.on_c2 = [](const Received& m) {
    if (m.payload.size() != 1 || m.payload[0] != 0x20) throw std::runtime_error("not the answer");
    return Seen::done;
  };
  return c;
}

// 3-phase meter readings (the payload benchmark's, bench_payload.hpp), as SRUP-PQ's telemetry
// body encodes them: what every telemetry contender carries, so that the bytes they add are the
// envelope's alone.
constexpr std::size_t kReadingCycle = 1000;

std::shared_ptr<const std::vector<Bytes>> bench_readings() {
  auto out = std::make_shared<std::vector<Bytes>>();
  for (const auto& r : payload::make_readings(payload::Phases::three, kReadingCycle)) {
    out->push_back(srup::encode_body(srup::MessageType::telemetry, srup::kDefaultSuite,
                                     payload::reading_channels(r)));
  }
  return out;
}

// Plain MQTT telemetry: the reading's bytes as they are; the monitor decodes them.
Contender plain_telemetry(Transport t, std::shared_ptr<const std::vector<Bytes>> readings) {
  Contender c;
  c.flow = Flow::telemetry;
  c.transport = t;
  c.name = t == Transport::plain ? "telemetry, MQTT, no TLS" : "telemetry, MQTT over TLS";
  c.note = "3-phase reading, no envelope";
  c.make = [readings](std::uint64_t n) { return Made{{(*readings)[n % readings->size()]}}; };
  c.on_c2 = [](const Received& m) {
    (void)srup::decode_body(srup::MessageType::telemetry, srup::kDefaultSuite, m.payload);
    return Seen::done;
  };
  return c;
}

// SRUP-PQ telemetry (mode 3, docs/srup-pq.md section 5): the device seals each reading under its
// telemetry key; a signed Checkpoint every 64 readings; the monitor (the C2's end) opens each,
// checks its sequence is above the last (in memory) and verifies the Checkpoints. The Reader Set
// and the first Telemetry Key are exchanged before the run, not measured.
struct SrupTelemetry {
  SrupTelemetry()
      : device(bench_identity(kBenchDevice, srup::kDefaultSuite, &device_keys)),
        monitor(bench_identity(kBenchC2, srup::kDefaultSuite, &monitor_keys)),
        topic(srup::topic_telemetry(kBenchDevice)),
        sender(device, 1,
               [this](srup::MessageType type, std::uint64_t to) {
                 return bench_header(type, srup::Mode::sealed, device, to, ++sequence, topic);
               }),
        reader(kBenchC2, lookup()) {
    srup::prepare_keys(device_keys);
    srup::prepare_keys(monitor_keys);
    srup::ReaderSet readers;
    readers.readers.push_back({kBenchC2, monitor.suite, monitor.kem_public});
    for (const auto& o : sender.set_readers(readers, common::unix_time_ms())) monitor_receive(o.wire, topic);
  }
  srup::PeerLookup lookup() {
    return [this](std::uint64_t id) { return id == kBenchDevice ? &device_keys : nullptr; };
  }
  Seen monitor_receive(std::span<const std::uint8_t> wire, const std::string& on_topic) {
    const std::uint64_t now = common::unix_time_ms();
    const auto type = srup::parse_envelope(wire).header.type;
    if (type == srup::MessageType::telemetry) {
      const srup::TelemetryReading r = reader.open(wire, on_topic, now);
      if (r.opened.header.sequence <= last_reading) throw std::runtime_error("a reading replayed");
      last_reading = r.opened.header.sequence;
      (void)srup::decode_body(srup::MessageType::telemetry, r.opened.header.suite, r.opened.body);
      return Seen::done;
    }
    if (type == srup::MessageType::checkpoint) {
      if (reader.checkpoint(wire, on_topic, now).verdict != srup::CheckpointReport::Verdict::confirmed) {
        throw std::runtime_error("a Checkpoint did not confirm its readings");
      }
      return Seen::other;
    }
    if (type == srup::MessageType::telemetry_key) {
      reader.add_key(srup::open_protected(wire, on_topic, now, monitor, lookup()), now);
      return Seen::other;
    }
    throw std::runtime_error("an envelope of an unexpected type");
  }

  srup::PeerKeys device_keys, monitor_keys;
  srup::Identity device, monitor;
  std::string topic;
  std::uint64_t sequence = 0, last_reading = 0;
  srup::TelemetrySender sender;
  srup::TelemetryReader reader;
};

Contender srup_telemetry(std::shared_ptr<const std::vector<Bytes>> readings) {
  auto t = std::make_shared<SrupTelemetry>();
  Contender c;
  c.flow = Flow::telemetry;
  c.name = "telemetry, SRUP-PQ mode 3";
  c.note = "ML-DSA-65 + ML-KEM-768; a Checkpoint every 64";
  c.make = [t, readings](std::uint64_t n) {
    Made made;
    for (auto& o : t->sender.seal((*readings)[n % readings->size()], common::unix_time_ms())) {
      if (o.type == srup::MessageType::telemetry) made.main = made.messages.size();
      made.messages.push_back(std::move(o.wire));
    }
    return made;
  };
  c.on_c2 = [t](const Received& m) { return t->monitor_receive(m.payload, m.topic); };
  return c;
}

}  // namespace

std::vector<Contender> make_contenders(const std::string& tmpfs_dir, const std::string& disk_dir) {
  std::vector<Contender> out;
  out.push_back(plain_command(Transport::plain));
  out.push_back(plain_command(Transport::tls));
  const std::pair<srup::Suite, std::string> suites[] = {{srup::Suite::mldsa65_mlkem768, "ML-DSA-65 + ML-KEM-768"},
                                                        {srup::Suite::ed25519_xwing, "Ed25519 + X-Wing"},
                                                        {srup::Suite::hybrid_xwing, "hybrid ML-DSA-65+Ed25519 + X-Wing"}};
  for (const auto& [suite, label] : suites) {
    const std::string dir_name = "suite-" + std::to_string(static_cast<int>(suite));
    if (!tmpfs_dir.empty()) {
      out.push_back(srup_contender("SRUP-PQ " + label, "journal on tmpfs (no fsync cost)",
                                   std::make_shared<SrupPair>(suite, fs::path(tmpfs_dir) / dir_name)));
    }
    out.push_back(srup_contender("SRUP-PQ " + label, "journal on disk (fsync)",
                                 std::make_shared<SrupPair>(suite, fs::path(disk_dir) / dir_name)));
  }
  out.push_back(legacy_contender());
  const auto readings = bench_readings();
  out.push_back(plain_telemetry(Transport::plain, readings));
  out.push_back(plain_telemetry(Transport::tls, readings));
  out.push_back(srup_telemetry(readings));
  return out;
}

}  // namespace pqot::srup_tool::mqtt_bench
