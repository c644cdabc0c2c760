// srup bench: envelope bytes and seal/open time per suite and mode, beside the original SRUP's
// RSA-2048 envelope measured in the same run (docs/srup-tool.md, "bench"; issue 12's figures).
//
// Payloads: a one-byte action (action 7, no argument) and a 3-phase energy reading (the 13
// channels of docs/srup-pq.md section 5.3). Every envelope carries a 36-byte token, the size of
// the original's UUID token, so sizes compare like for like.
#include <algorithm>
#include <stdexcept>
#include <chrono>
#include <iomanip>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "bench_header.hpp"
#include "cli.hpp"
#include "pqot/common/clock.hpp"
#include "pqot/crypto/kem.hpp"
#include "pqot/crypto/rsa.hpp"
#include "pqot/crypto/signature.hpp"
#include "pqot/srup/body.hpp"
#include "pqot/srup/identity.hpp"
#include "pqot/srup/legacy.hpp"
#include "pqot/srup/session.hpp"
#include "pqot/srup/telemetry.hpp"

namespace pqot::srup_tool {

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::uint64_t kC2 = 0xc2;
constexpr std::uint64_t kDevice = 0xa1;
constexpr std::string_view kTopic = "srup/d/00000000000000a1/cmd";
constexpr std::string_view kTelemetryTopic = "srup/d/00000000000000a1/telemetry";

struct BenchOptions {
  int iterations = 200;
  int rounds = 3;
  bool json = false;
};

struct Row {
  std::string suite;
  std::string mode;
  std::string payload;
  std::size_t bytes = 0;
  double seal_us = 0;
  double open_us = 0;
  double seal_spread = 0;  // (max − min) / median of the rounds' medians: the machine's noise
  double open_spread = 0;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Medians of `rounds` rounds of `iterations` calls each; the result is the median of the rounds'
// medians, and the spread of those medians relative to it. `setup` runs before each round, untimed.
template <class F, class Setup>
std::pair<double, double> time_us(const BenchOptions& o, F&& f, Setup&& setup) {
  std::vector<double> per_round;
  for (int r = 0; r < o.rounds; ++r) {
    setup();
    std::vector<double> samples;
    samples.reserve(static_cast<std::size_t>(o.iterations));
    for (int i = 0; i < o.iterations; ++i) {
      const auto t0 = Clock::now();
      f(i);
      samples.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }
    per_round.push_back(median(std::move(samples)));
  }
  const double m = median(per_round);
  const auto [lo, hi] = std::minmax_element(per_round.begin(), per_round.end());
  return {m, m > 0 ? (*hi - *lo) / m : 0};
}

template <class F>
std::pair<double, double> time_us(const BenchOptions& o, F&& f) {
  return time_us(o, [&](int) { f(); }, [] {});
}

Bytes token36() { return Bytes(36, 't'); }

srup::Reading three_phase_reading() {
  srup::Reading r;
  r.timestamp_ms = 1'790'000'000'000;
  const std::pair<std::uint16_t, float> channels[] = {
      {0x0101, 230.1f}, {0x0102, 229.8f}, {0x0103, 231.0f},  // voltage L1-L3
      {0x0111, 12.4f},  {0x0112, 11.9f},  {0x0113, 12.7f},   // current L1-L3
      {0x0121, 2853.0f}, {0x0122, 2734.6f}, {0x0123, 2933.7f},  // active power L1-L3
      {0x0130, 8521.3f}};                                        // total active power
  for (const auto& [ch, v] : channels) r.channels.push_back({ch, srup::Value(v)});
  r.channels.push_back({0x0140, srup::Value(6'558'190.25)});  // energy import, Wh (float64)
  r.channels.push_back({0x0150, srup::Value(50.01f)});        // frequency
  r.channels.push_back({0x0160, srup::Value(0.97f)});         // power factor
  return r;
}

struct Pair {
  srup::Identity c2;
  srup::PeerKeys c2_keys;
  srup::Identity device;
  srup::PeerKeys device_keys;
};

// Identities of `suite` from fixed seeds (the legacy suite: fresh RSA-2048 keys).
Pair make_pair_of(srup::Suite suite) {
  Pair p;
  if (srup::suite_info(suite).legacy) {
    const auto& sig = crypto::signature_by_name("RSA-2048-PKCS1");
    const auto& oaep = crypto::rsa_oaep_by_name("RSA-2048-OAEP");
    for (auto [id, self, keys] : {std::tuple{kC2, &p.c2, &p.c2_keys}, std::tuple{kDevice, &p.device, &p.device_keys}}) {
      auto s = sig.keygen();
      auto k = oaep.keygen();
      *self = srup::Identity{id, suite, s.secret_key, k.secret_key, k.public_key, {}};
      srup::prepare_keys(*self);
      *keys = srup::PeerKeys{suite, s.public_key, k.public_key, {}};
      srup::prepare_keys(*keys);
    }
    return p;
  }
  auto make = [&](std::uint64_t id, std::uint8_t fill) {
    const srup::SuiteInfo info = srup::suite_info(suite);
    const srup::IdentitySeeds seeds{
        crypto::SecretBytes(crypto::signature_by_name(info.signature).seed_size(), fill),
        crypto::SecretBytes(crypto::kem_by_name(info.kem).keygen_seed_size(), fill)};
    return srup::make_identity(id, suite, seeds);
  };
  auto c2 = make(kC2, 0x01);
  auto dev = make(kDevice, 0x02);
  p.c2 = std::move(c2.self);
  p.c2_keys = c2.pub.keys;
  p.device = std::move(dev.self);
  p.device_keys = dev.pub.keys;
  // As Endpoint does for the peers it hears from: their signature keys prepared once.
  srup::prepare_keys(p.c2_keys);
  srup::prepare_keys(p.device_keys);
  return p;
}

srup::Header header(srup::MessageType type, srup::Mode mode, const srup::Identity& from,
                    std::uint64_t to, std::uint64_t seq, std::string_view topic) {
  srup::Header h = bench_header(type, mode, from, to, seq, topic);
  h.token = token36();
  return h;
}

// Mode 1: the C2 seals `body` of `type` to the device, which opens it (steps 1-9).
Row sealed_row(const BenchOptions& o, const Pair& p, srup::MessageType type, const Bytes& body,
               std::string payload) {
  std::uint64_t seq = 0;
  Bytes wire;
  const auto lookup = [&](std::uint64_t id) { return id == kC2 ? &p.c2_keys : nullptr; };
  const auto seal = time_us(o, [&] {
    wire = srup::protect(header(type, srup::Mode::sealed, p.c2, kDevice, ++seq, kTopic), body, p.c2,
                         &p.device_keys);
  });
  const std::uint64_t now = common::unix_time_ms();
  const auto open = time_us(o, [&] { (void)srup::open_protected(wire, kTopic, now, p.device, lookup); });
  return {std::string(srup::suite_info(p.c2.suite).name), "sealed", std::move(payload), wire.size(),
          seal.first, open.first, seal.second, open.second};
}

// Mode 2: one offer/accept, then the C2 seals the action under the session, the device opens it.
Row session_row(const BenchOptions& o, const Pair& p, const Bytes& body) {
  const std::uint64_t now = common::unix_time_ms();
  srup::SessionInitiator init(header(srup::MessageType::session_offer, srup::Mode::signed_clear, p.device, kC2, 1, kTopic),
                              p.device, p.c2_keys);
  const auto offer = srup::SessionResponder::verify(
      init.offer(), kTopic, now, p.c2, [&](std::uint64_t id) { return id == kDevice ? &p.device_keys : nullptr; });
  auto accepted = srup::SessionResponder::accept(
      offer, header(srup::MessageType::session_accept, srup::Mode::signed_clear, p.c2, kDevice, 1, kTopic), p.c2, now);
  srup::Session device_side = init.complete(accepted.accept, kTopic, now);
  srup::Session& c2_side = accepted.session;
  std::uint64_t seq = 1;
  Bytes wire;
  const auto seal = time_us(o, [&] {
    wire = c2_side.seal(header(srup::MessageType::action, srup::Mode::session, p.c2, kDevice, ++seq, kTopic), body, now);
  });
  const auto open = time_us(o, [&] { (void)device_side.open(wire, kTopic, now); });
  return {std::string(srup::suite_info(p.c2.suite).name), "session", "action, 1 byte", wire.size(),
          seal.first, open.first, seal.second, open.second};
}

// Mode 3: the device seals readings under its telemetry key; the C2 (its one reader) opens each
// once (a reader refuses a sequence twice), a fresh reader per round. Sealing also emits a signed
// Checkpoint every 64 readings: the median leaves it out, the checkpoint row gives its cost.
std::vector<Row> telemetry_rows(const BenchOptions& o, const Pair& p, const Bytes& reading) {
  const std::uint64_t now = common::unix_time_ms();
  std::uint64_t seq = 0;
  srup::TelemetrySender sender(p.device, 1, [&](srup::MessageType t, std::uint64_t to) {
    return header(t, srup::Mode::sealed, p.device, to, ++seq, kTelemetryTopic);
  });
  srup::ReaderSet readers;
  readers.readers.push_back({kC2, p.c2.suite, p.c2.kem_public});
  const auto keys = sender.set_readers(readers, now);
  const auto lookup = [&](std::uint64_t id) { return id == kDevice ? &p.device_keys : nullptr; };
  const srup::Opened key_message = srup::open_protected(keys.at(0).wire, kTelemetryTopic, now, p.c2, lookup);

  std::vector<Bytes> telemetry;
  const auto seal = time_us(o, [&] {
    for (auto& out : sender.seal(reading, now)) {
      if (out.type == srup::MessageType::telemetry) telemetry.push_back(std::move(out.wire));
    }
  });
  std::unique_ptr<srup::TelemetryReader> reader;
  std::size_t next = 0;
  const auto open = time_us(
      o, [&](int) { (void)reader->open(telemetry.at(next++), kTelemetryTopic, now); },
      [&] {
        reader = std::make_unique<srup::TelemetryReader>(kC2, lookup);
        reader->add_key(key_message, now);
      });
  const std::string suite(srup::suite_info(p.c2.suite).name);
  std::vector<Row> rows;
  rows.push_back({suite, "telemetry-group", "3-phase reading", telemetry.front().size(), seal.first,
                  open.first, seal.second, open.second});

  // The signed Checkpoint (mode 0): made and checked on its own, one per 64 readings.
  srup::Checkpoint cp_body;
  cp_body.epoch = 1;
  cp_body.first_sequence = 1;
  cp_body.count = 64;
  const Bytes cp_plain = srup::encode_body(srup::MessageType::checkpoint, p.device.suite, cp_body);
  std::uint64_t cp_seq = 1'000'000;
  Bytes cp_wire;
  const auto cp_seal = time_us(o, [&] {
    cp_wire = srup::protect(header(srup::MessageType::checkpoint, srup::Mode::signed_clear, p.device, 0,
                                   ++cp_seq, kTelemetryTopic),
                            cp_plain, p.device);
  });
  const auto cp_open = time_us(o, [&] {
    (void)srup::open_protected(cp_wire, kTelemetryTopic, now, p.c2, lookup);
  });
  rows.push_back({suite, "signed", "checkpoint (1 per 64 readings)", cp_wire.size(), cp_seal.first,
                  cp_open.first, cp_seal.second, cp_open.second});
  return rows;
}

// The original SRUP's version-5 Action with its 36-byte token, RSA-2048 PKCS#1 v1.5 (the legacy
// codec of docs/srup-legacy.md): signing and encoding, then decoding and verifying.
Row original_row(const BenchOptions& o) {
  const auto& rsa = crypto::signature_by_name(srup::legacy::kSuiteName);
  const auto keys = rsa.keygen();
  std::uint64_t seq = 0;
  Bytes wire;
  const auto seal = time_us(o, [&] {
    auto env = srup::legacy::make_envelope(++seq, kC2, token36(), srup::legacy::Action{7});
    wire = srup::legacy::encode(srup::legacy::sign(std::move(env), keys.secret_key));
  });
  const auto open = time_us(o, [&] {
    if (!srup::legacy::verify(srup::legacy::decode(wire), keys.public_key)) throw std::logic_error("legacy verify");
  });
  return {"original SRUP v5 (RSA-2048)", "signed, clear", "action, 1 byte", wire.size(), seal.first,
          open.first, seal.second, open.second};
}

void print_rows(const std::vector<Row>& rows, const BenchOptions& o) {
  if (o.json) {
    nlohmann::ordered_json j;
    j["iterations"] = o.iterations;
    j["rounds"] = o.rounds;
    j["token_bytes"] = 36;
    for (const Row& r : rows) {
      j["rows"].push_back({{"suite", r.suite}, {"mode", r.mode}, {"payload", r.payload},
                           {"bytes", r.bytes}, {"seal_us", r.seal_us}, {"open_us", r.open_us},
                           {"seal_spread", r.seal_spread}, {"open_spread", r.open_spread}});
    }
    std::cout << j.dump() << "\n";
    return;
  }
  std::cout << std::left << std::setw(30) << "suite" << std::setw(17) << "mode" << std::setw(32)
            << "payload" << std::right << std::setw(7) << "bytes" << std::setw(11) << "seal us"
            << std::setw(11) << "open us" << std::setw(9) << "spread" << "\n";
  for (const Row& r : rows) {
    std::cout << std::left << std::setw(30) << r.suite << std::setw(17) << r.mode << std::setw(32)
              << r.payload << std::right << std::setw(7) << r.bytes << std::fixed << std::setprecision(1)
              << std::setw(11) << r.seal_us << std::setw(11) << r.open_us << std::setw(8)
              << std::setprecision(0) << 100 * std::max(r.seal_spread, r.open_spread) << "%\n";
  }
  std::cout << "medians of " << o.rounds << " rounds x " << o.iterations
            << " calls; spread: (max - min) / median of the rounds' medians; every envelope carries a "
               "36-byte token, as the original's\n";
}

void run_bench(const BenchOptions& o) {
  const Bytes action = srup::encode_body(srup::MessageType::action, srup::kDefaultSuite, srup::Action{7, {}});
  const Bytes reading = srup::encode_body(srup::MessageType::telemetry, srup::kDefaultSuite, three_phase_reading());
  const srup::Data reading_as_data{"reading", srup::bytes_value(reading)};
  std::vector<Row> rows;
  rows.push_back(original_row(o));
  for (srup::Suite suite : {srup::Suite::mldsa65_mlkem768, srup::Suite::mldsa65_mlkem1024, srup::Suite::mldsa65_xwing,
                            srup::Suite::hybrid_xwing, srup::Suite::mldsa87_mlkem1024, srup::Suite::ed25519_xwing,
                            srup::Suite::legacy_rsa2048}) {
    const Pair p = make_pair_of(suite);
    rows.push_back(sealed_row(o, p, srup::MessageType::action, action, "action, 1 byte"));
    rows.push_back(sealed_row(o, p, srup::MessageType::data,
                              srup::encode_body(srup::MessageType::data, suite, reading_as_data),
                              "3-phase reading (as Data)"));
    if (!srup::suite_info(suite).legacy) {  // sessions and telemetry keys use the suite's KEM
      rows.push_back(session_row(o, p, action));
      for (Row& r : telemetry_rows(o, p, reading)) rows.push_back(std::move(r));
    }
  }
  print_rows(rows, o);
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bench", "Envelope bytes and seal/open microseconds per suite and mode, beside the original SRUP (RSA-2048)");
  cmd->add_option("--iterations", o->iterations, "Calls per round (default 200)")->check(CLI::Range(10, 100000));
  cmd->add_option("--rounds", o->rounds, "Rounds; medians of their medians are reported (default 3)")
      ->check(CLI::Range(1, 50));
  cmd->add_flag("--json", o->json, "Print one JSON object");
  cmd->callback([o] { run_bench(*o); });
}

}  // namespace pqot::srup_tool
