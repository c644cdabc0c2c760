// srup bench-mqtt: command latency and telemetry through a real mosquitto broker, SRUP-PQ beside
// plain MQTT (without and with TLS) and the original SRUP envelope, measured in the same run
// (docs/srup-tool.md, "bench-mqtt"; issues 13 and 16). The contenders are
// bench_mqtt_contenders.cpp's, the connections bench_mqtt_wire.cpp's.
//
// One process holds both ends, each with its own MQTT connections and network threads, so every
// timestamp comes from one steady clock. Commands:
//   t0     the C2 is about to make the command (sealing counts as sending);
//   acted  the device has accepted it (steps 1-11 of docs/srup-pq.md 6, the journal's admission
//          committed) and would run the action now: the one-way latency;
//   done   the C2 has verified the device's Response: the round trip.
// Telemetry: from the device about to make (seal) a reading to the monitor having opened it.
// One exchange is outstanding at a time. Every contender runs once per round, rounds interleave
// them, and the figures are medians over rounds of each round's p50, p99 and mean.
//
// The journal (SQLite, synchronous = FULL) is measured twice: in a directory on disk, and on tmpfs
// (/dev/shm), where fsync returns at once. The difference is the fsync's cost; the tmpfs figure is
// the processing the 1 ms target speaks of.
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iomanip>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "bench_broker.hpp"
#include "bench_mqtt.hpp"
#include "bench_netns.hpp"
#include "cli.hpp"
#include "pqot/crypto/bytes.hpp"
#include "pqot/crypto/random.hpp"
#include "pqot/srup/topics.hpp"

namespace pqot::srup_tool {

namespace {

namespace fs = std::filesystem;
using namespace mqtt_bench;

struct MqttBenchOptions {
  int count = 500;
  int rounds = 3;
  int warmup = 20;
  std::string mosquitto = "/usr/sbin/mosquitto";
  std::string disk_dir;  // empty: the temporary directory (on disk)
  std::string tmpfs_dir = "/dev/shm";
  /// The device's clients in this network namespace, reaching the broker at broker_address
  /// (bench/srup.mjs: the namespaces joined by an emulated link); both empty: loopback.
  std::string device_netns;
  std::string broker_address;
  bool json = false;
};

double bench_quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t i = std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())));
  return v[i];
}

double bench_mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

double bench_median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Per figure: the median over rounds, and the spread of the rounds ((max - min) / median).
struct Figure {
  double value = 0, spread = 0;
};

Figure over_rounds(const std::vector<Samples>& rounds, const std::function<double(const Samples&)>& f) {
  std::vector<double> v;
  for (const auto& r : rounds) v.push_back(f(r));
  Figure out{bench_median(v), 0};
  if (out.value > 0) out.spread = (*std::max_element(v.begin(), v.end()) - *std::min_element(v.begin(), v.end())) / out.value;
  return out;
}

// A fresh directory under `base` for the journals, removed at the end.
struct BenchScratch {
  explicit BenchScratch(const fs::path& base) {
    std::string pattern = (base / "srup-bench-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error("bench-mqtt: cannot create a directory in " + base.string() + ": " +
                               std::strerror(errno));
    }
    path = pattern;
  }
  ~BenchScratch() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  BenchScratch(const BenchScratch&) = delete;
  BenchScratch& operator=(const BenchScratch&) = delete;
  fs::path path;
};

struct Result {
  std::string name, note;
  Flow flow = Flow::command;
  Transport transport = Transport::tls;
  std::size_t message_bytes = 0, answer_bytes = 0;
  Figure ow_p50, ow_p99, ow_mean, rt_p50, rt_p99, rt_mean, device_cpu, c2_cpu, payload_bytes, up_bytes, down_bytes;
  int lost = 0;
};

std::vector<Result> measure(std::vector<Contender>& contenders, Wire& wire, const MqttBenchOptions& o) {
  std::vector<std::vector<Samples>> samples(contenders.size());
  std::uint64_t n = 0;
  for (int round = 0; round < o.rounds; ++round) {
    for (std::size_t i = 0; i < contenders.size(); ++i) {
      Samples warm, s;
      for (int k = 0; k < o.warmup; ++k) wire.exchange(contenders[i], ++n, &warm);
      LinkBytes before;
      if (!o.device_netns.empty()) before = netns_link_bytes(o.device_netns);
      for (int k = 0; k < o.count; ++k) wire.exchange(contenders[i], ++n, &s);
      if (!o.device_netns.empty()) {
        const LinkBytes after = netns_link_bytes(o.device_netns);
        s.up_bytes = static_cast<double>(after.sent - before.sent) / o.count;
        s.down_bytes = static_cast<double>(after.received - before.received) / o.count;
      }
      s.payload_bytes /= o.count;
      s.lost += warm.lost;
      samples[i].push_back(std::move(s));
      if (!o.json) std::cerr << "round " << round + 1 << "/" << o.rounds << ": " << contenders[i].name << " ("
                             << contenders[i].note << ") done\n";
    }
  }
  std::vector<Result> results;
  for (std::size_t i = 0; i < contenders.size(); ++i) {
    const auto& r = samples[i];
    const Contender& c = contenders[i];
    Result x;
    x.name = c.name;
    x.note = c.note;
    x.flow = c.flow;
    x.transport = c.transport;
    x.message_bytes = c.message_bytes;
    x.answer_bytes = c.answer_bytes;
    x.ow_p50 = over_rounds(r, [](const Samples& s) { return bench_quantile(s.one_way, 0.5); });
    x.ow_p99 = over_rounds(r, [](const Samples& s) { return bench_quantile(s.one_way, 0.99); });
    x.ow_mean = over_rounds(r, [](const Samples& s) { return bench_mean(s.one_way); });
    x.rt_p50 = over_rounds(r, [](const Samples& s) { return bench_quantile(s.round_trip, 0.5); });
    x.rt_p99 = over_rounds(r, [](const Samples& s) { return bench_quantile(s.round_trip, 0.99); });
    x.rt_mean = over_rounds(r, [](const Samples& s) { return bench_mean(s.round_trip); });
    x.device_cpu = over_rounds(r, [](const Samples& s) { return bench_quantile(s.device_cpu, 0.5); });
    x.c2_cpu = over_rounds(r, [](const Samples& s) { return bench_quantile(s.c2_cpu, 0.5); });
    x.payload_bytes = over_rounds(r, [](const Samples& s) { return s.payload_bytes; });
    x.up_bytes = over_rounds(r, [](const Samples& s) { return s.up_bytes; });
    x.down_bytes = over_rounds(r, [](const Samples& s) { return s.down_bytes; });
    for (const auto& s : r) x.lost += s.lost;
    results.push_back(std::move(x));
  }
  return results;
}

// The plain MQTT result (no TLS) of the same flow: what "added" is counted from.
const Result& plain_of(const std::vector<Result>& results, Flow flow) {
  for (const auto& r : results) {
    if (r.flow == flow && r.transport == Transport::plain) return r;
  }
  throw std::logic_error("bench-mqtt: no plain MQTT result");
}

void print_json(const std::vector<Result>& results, const MqttBenchOptions& o, std::uint64_t late) {
  nlohmann::json out;
  out["late_messages"] = late;
  out["count"] = o.count;
  out["rounds"] = o.rounds;
  out["device_netns"] = o.device_netns;
  out["broker_address"] = o.broker_address.empty() ? "127.0.0.1" : o.broker_address;
  out["unit"] = "microseconds";
  auto fig = [](const Figure& f) { return nlohmann::json{{"median", f.value}, {"spread", f.spread}}; };
  for (const auto& r : results) {
    const Result& plain = plain_of(results, r.flow);
    nlohmann::json j = {{"contender", r.name},
                        {"note", r.note},
                        {"flow", r.flow == Flow::command ? "command" : "telemetry"},
                        {"transport", r.transport == Transport::tls ? "tls" : "plain"},
                        {"message_bytes", r.message_bytes},
                        {"added_message_bytes", static_cast<double>(r.message_bytes) -
                                                    static_cast<double>(plain.message_bytes)},
                        {"payload_bytes_per_exchange", fig(r.payload_bytes)},
                        {"one_way", {{"p50", fig(r.ow_p50)}, {"p99", fig(r.ow_p99)}, {"mean", fig(r.ow_mean)}}},
                        {"added_one_way_p50", r.ow_p50.value - plain.ow_p50.value},
                        {"device_cpu_p50", fig(r.device_cpu)},
                        {"c2_cpu_p50", fig(r.c2_cpu)},
                        {"lost", r.lost}};
    if (r.flow == Flow::command) {
      j["answer_bytes"] = r.answer_bytes;
      j["round_trip"] = {{"p50", fig(r.rt_p50)}, {"p99", fig(r.rt_p99)}, {"mean", fig(r.rt_mean)}};
    }
    if (!o.device_netns.empty()) j["ip_bytes_per_exchange"] = {{"up", fig(r.up_bytes)}, {"down", fig(r.down_bytes)}};
    out["results"].push_back(std::move(j));
  }
  std::cout << out.dump(2) << "\n";
}

void print_table(const std::vector<Result>& results, const MqttBenchOptions& o, std::uint64_t late) {
  std::cout << "Through mosquitto on "
            << (o.device_netns.empty() ? std::string("127.0.0.1")
                                       : o.broker_address + " (the device in namespace " + o.device_netns + ")")
            << " (QoS 1), " << o.count << " exchanges x " << o.rounds
            << " rounds; microseconds, median over rounds (spread of the rounds in brackets)\n";
  for (Flow flow : {Flow::command, Flow::telemetry}) {
    const Result& plain = plain_of(results, flow);
    std::cout << "\n" << (flow == Flow::command ? "Commands (one-way: C2 sends -> device acted)"
                                                : "Telemetry (one-way: device seals -> monitor opened)")
              << "\n"
              << std::left << std::setw(42) << "contender" << std::setw(46) << "journal / note" << std::right
              << std::setw(7) << "msg B" << std::setw(7) << "ans B" << std::setw(15) << "one-way p50" << std::setw(9)
              << "p99" << std::setw(9) << "mean" << std::setw(10) << "added" << std::setw(13) << "rtt p50"
              << std::setw(9) << "p99" << std::setw(9) << "mean" << std::setw(11) << "dev CPU" << std::setw(9)
              << "C2 CPU" << std::setw(6) << "lost" << "\n";
    std::cout << std::fixed << std::setprecision(0);
    for (const auto& r : results) {
      if (r.flow != flow) continue;
      std::ostringstream p50;
      p50 << std::fixed << std::setprecision(0) << r.ow_p50.value << " [" << r.ow_p50.spread * 100 << "%]";
      std::cout << std::left << std::setw(42) << r.name << std::setw(46) << r.note << std::right << std::setw(7)
                << r.message_bytes << std::setw(7)
                << (flow == Flow::command ? std::to_string(r.answer_bytes) : std::string("-")) << std::setw(15)
                << p50.str() << std::setw(9)
                << r.ow_p99.value << std::setw(9) << r.ow_mean.value << std::setw(10)
                << (r.ow_p50.value - plain.ow_p50.value);
      if (flow == Flow::command) {
        std::cout << std::setw(13) << r.rt_p50.value << std::setw(9) << r.rt_p99.value << std::setw(9) << r.rt_mean.value;
      } else {
        std::cout << std::setw(13) << "-" << std::setw(9) << "-" << std::setw(9) << "-";
      }
      std::cout << std::setw(11) << r.device_cpu.value << std::setw(9) << r.c2_cpu.value << std::setw(6) << r.lost
                << "\n";
    }
  }
  std::cout << "\nadded: one-way p50 minus plain MQTT's without TLS (same flow). CPU: per exchange; commands: the\n"
               "device's receive and answer, the C2's make and its check of the answer; telemetry: the device's\n"
               "seal, the monitor's open. fsync: the disk row minus the tmpfs row of the same suite.\n"
            << "Late messages (arrived with no exchange in progress): " << late << "\n";
}

void run_bench_mqtt(const MqttBenchOptions& o) {
  if (!o.tmpfs_dir.empty() && !fs::is_directory(o.tmpfs_dir)) {
    throw UsageError("--tmpfs-dir " + o.tmpfs_dir + " is not a directory");
  }
  if (!o.disk_dir.empty() && !fs::is_directory(o.disk_dir)) {
    throw UsageError("--disk-dir " + o.disk_dir + " is not a directory");
  }
  if (o.device_netns.empty() != o.broker_address.empty()) {
    throw UsageError("--device-netns and --broker-address go together");
  }
  if (!o.device_netns.empty() && !fs::exists("/var/run/netns/" + o.device_netns)) {
    throw UsageError("--device-netns: no network namespace '" + o.device_netns + "' (/var/run/netns/" +
                     o.device_netns + "; ip netns add makes one)");
  }
  BenchBroker broker(o.mosquitto, "c2-" + srup::id_text(kBenchC2), o.broker_address, true);
  // The plain connections' password: random per run, never printed.
  std::uint8_t secret[16];
  crypto::random_bytes(secret);
  const std::string password = crypto::to_hex(secret);
  const std::string plain_user = "bench-plain";
  broker.add_plain_user(plain_user, password);

  const BenchScratch disk(o.disk_dir.empty() ? broker.work_dir() : fs::path(o.disk_dir));
  std::optional<BenchScratch> tmpfs;
  if (!o.tmpfs_dir.empty()) tmpfs.emplace(o.tmpfs_dir);
  std::vector<Contender> contenders = make_contenders(tmpfs ? tmpfs->path.string() : "", disk.path.string());

  WireOptions w;
  w.ca_file = broker.ca_file();
  w.cert_file = broker.client_cert();
  w.key_file = broker.client_key();
  w.tls_port = broker.port();
  w.plain_port = broker.plaintext_port();
  w.plain_username = plain_user;
  w.plain_password = password;
  w.device_netns = o.device_netns;
  w.broker_address = o.broker_address;
  Wire wire(w);
  const std::vector<Result> results = measure(contenders, wire, o);
  const std::uint64_t late = wire.late_messages();
  if (o.json) {
    print_json(results, o, late);
  } else {
    print_table(results, o, late);
  }
}

}  // namespace

void add_bench_mqtt_command(CLI::App& app) {
  auto o = std::make_shared<MqttBenchOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bench-mqtt",
      "Commands and telemetry through a mosquitto broker of its own: SRUP-PQ beside plain MQTT (without and "
      "with TLS) and the original SRUP");
  cmd->add_option("--count", o->count, "Exchanges per contender and round (default 500)")->check(CLI::Range(10, 100000));
  cmd->add_option("--rounds", o->rounds, "Rounds; figures are medians over rounds (default 3)")->check(CLI::Range(1, 50));
  cmd->add_option("--warmup", o->warmup, "Unmeasured exchanges per contender and round (default 20)")
      ->check(CLI::Range(0, 10000));
  cmd->add_option("--mosquitto", o->mosquitto, "The broker program (default /usr/sbin/mosquitto)");
  cmd->add_option("--disk-dir", o->disk_dir, "Where the on-disk journals go (default: the temporary directory)");
  cmd->add_option("--tmpfs-dir", o->tmpfs_dir, "A tmpfs directory for the fsync-free journals; empty: skip (default /dev/shm)");
  cmd->add_option("--device-netns", o->device_netns,
                  "Put the device's clients in this network namespace (root; bench/srup.mjs), reaching "
                  "the broker at --broker-address");
  cmd->add_option("--broker-address", o->broker_address,
                  "The broker's IPv4 address as the device's namespace reaches it (with --device-netns)")
      ->check(CLI::ValidIPV4);
  cmd->add_flag("--json", o->json, "Print one JSON object");
  cmd->callback([o] { run_bench_mqtt(*o); });
}

}  // namespace pqot::srup_tool
