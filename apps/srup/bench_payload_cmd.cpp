// srup bench-payload: the energy-monitoring paper's payload-encryption table, pqot's version
// (docs/srup-tool.md, "bench-payload"; issue 16). Per scheme, a publisher process encrypts 1- and
// 3-phase meter readings to a subscriber process, which decrypts and checks each one.
//
// Processes (bench_payload_roles.cpp): this program starts itself twice per scheme (hidden --role
// publisher|subscriber), so CPU time and peak RSS are each side's own and each scheme's own. They
// talk over a Unix socketpair in lock-step (the publisher waits for the subscriber's one-byte
// verdict before the next reading), so encryption and decryption never overlap. Not MQTT:
// the broker would add nothing to what is timed (the calls around encrypt and decrypt) but its
// own CPU and scheduling noise, and `srup bench-mqtt` already measures the broker path.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>

#include "bench_payload.hpp"
#include "cli.hpp"
#include "pqot/crypto/key_file.hpp"
#include "pqot/crypto/rsa.hpp"
#include "pqot/crypto/signature.hpp"

namespace pqot::srup_tool::payload {

namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::ordered_json;
constexpr int kMaxMessages = 100'000;
constexpr int kSmokeMessages = 3;
constexpr std::size_t kMaxKeyFile = 64 * 1024;  // a PKCS#8 RSA-7680 key is about 4.4 KiB

struct PayloadOptions {
  int messages = 500;
  std::string schemes;
  bool json = false;
  bool smoke = false;
  bool example = false;
  std::string rsa_keys;  // a directory with rsa{2048,3072,7680}-a.p8.der instead of fresh keys
  std::string role;      // hidden: publisher | subscriber
  std::string scheme;    // hidden: the role's scheme
};

struct Stats {
  double median = 0, p99 = 0, mean = 0, max = 0;
};

Stats stats_of(const Json& values) {
  std::vector<double> v;
  for (const auto& x : values) v.push_back(x.get<double>());
  Stats s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  s.median = n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  // Nearest rank: the smallest value with at least 99 % of the samples at or below it.
  s.p99 = v[(99 * n + 99) / 100 - 1];
  for (double x : v) s.mean += x / static_cast<double>(n);
  s.max = v.back();
  return s;
}

Json stats_json(const Stats& s) {
  return {{"median", s.median}, {"p99", s.p99}, {"mean", s.mean}, {"max", s.max}};
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

RsaKeys rsa_keys_for(const SchemeInfo& s, const PayloadOptions& o, Json& keygen_log) {
  const auto& oaep = crypto::rsa_oaep_by_name(s.primitive);
  const int bits = static_cast<int>(oaep.modulus());
  RsaKeys k;
  const auto t0 = Clock::now();
  if (!o.rsa_keys.empty()) {
    const std::string file = o.rsa_keys + "/rsa" + std::to_string(bits) + "-a.p8.der";
    std::ifstream in(file, std::ios::binary);
    if (!in) throw UsageError("--rsa-keys: cannot read " + file);
    SecretBytes der(kMaxKeyFile + 1);  // a secret key: read into memory that is wiped
    in.read(reinterpret_cast<char*>(der.data()), static_cast<std::streamsize>(der.size()));
    if (in.bad() || static_cast<std::size_t>(in.gcount()) > kMaxKeyFile) {
      throw UsageError("--rsa-keys: " + file + " is unreadable or over " +
                       std::to_string(kMaxKeyFile) + " bytes");
    }
    der.resize(static_cast<std::size_t>(in.gcount()));
    const auto& sig = crypto::signature_by_name("RSA-" + std::to_string(bits) + "-PKCS1");
    auto decoded = crypto::decode_private_key(der, &sig);
    k.public_key = std::move(decoded.keys.public_key);
    k.secret_key = std::move(decoded.keys.secret_key);
  } else {
    auto pair = oaep.keygen();
    k.public_key = std::move(pair.public_key);
    k.secret_key = std::move(pair.secret_key);
  }
  keygen_log[std::to_string(bits)] = {{"source", o.rsa_keys.empty() ? "generated" : "file"},
                                      {"seconds", seconds_since(t0)}};
  return k;
}

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown";
}

std::vector<const SchemeInfo*> chosen_schemes(const PayloadOptions& o) {
  std::vector<const SchemeInfo*> out;
  if (o.schemes.empty()) {
    for (const SchemeInfo& s : all_schemes()) out.push_back(&s);
    return out;
  }
  std::stringstream list(o.schemes);
  for (std::string name; std::getline(list, name, ',');) {
    const SchemeInfo* s = &scheme_by_name(name);
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  }
  return out;
}

std::string_view family_name(Family f) {
  switch (f) {
    case Family::rsa_chunked:
      return "RSA-OAEP chunks, base64 (the paper's)";
    case Family::rsa_hybrid:
      return "RSA-OAEP key + AES-256-GCM";
    case Family::kem_aead:
      return "KEM + AES-256-GCM";
    case Family::srup_sealed:
      return "SRUP-PQ mode 1 (sealed Data, signed)";
    case Family::srup_telemetry:
      return "SRUP-PQ mode 3 (telemetry group key)";
  }
  return "?";
}

void print_table(const Json& report) {
  std::cout << std::left << std::setw(19) << "scheme" << std::setw(4) << "lvl" << std::setw(4)
            << "ph" << std::right << std::setw(6) << "plain" << std::setw(7) << "wire"
            << std::setw(11) << "enc med" << std::setw(10) << "enc p99" << std::setw(11)
            << "dec med" << std::setw(10) << "dec p99" << std::setw(9) << "cpu pub" << std::setw(9)
            << "cpu sub" << std::setw(8) << "rss pub" << std::setw(8) << "rss sub" << std::setw(9)
            << "ok"
            << "\n";
  for (const auto& r : report["rows"]) {
    std::cout << std::left << std::setw(19) << r["scheme"].get<std::string>() << std::setw(4)
              << r["level"].get<int>() << std::setw(4) << r["phases"].get<int>() << std::right
              << std::fixed << std::setprecision(0) << std::setw(6)
              << r["plaintext_bytes"]["median"].get<double>() << std::setw(7)
              << r["wire_bytes"]["median"].get<double>() << std::setprecision(1) << std::setw(11)
              << r["encrypt_us"]["median"].get<double>() << std::setw(10)
              << r["encrypt_us"]["p99"].get<double>() << std::setw(11)
              << r["decrypt_us"]["median"].get<double>() << std::setw(10)
              << r["decrypt_us"]["p99"].get<double>() << std::setw(9)
              << r["publisher"]["cpu_us_per_message"].get<double>() << std::setw(9)
              << r["subscriber"]["cpu_us_per_message"].get<double>() << std::setprecision(1)
              << std::setw(8) << r["publisher"]["max_rss_kb"].get<double>() / 1024 << std::setw(8)
              << r["subscriber"]["max_rss_kb"].get<double>() / 1024 << std::setw(5)
              << r["decrypted_ok"].get<int>() << "/" << std::left << std::setw(3)
              << r["messages"].get<int>() << "\n";
  }
  std::cout << "times in us (median, p99 nearest rank) of the encrypt/decrypt calls alone; cpu: "
               "user+sys us per "
               "message of each process's loop; rss: peak MiB of each process; lvl 0 = RSA-2048 "
               "(112-bit)\n";
}

void orchestrate(const PayloadOptions& o) {
  const int messages = o.smoke ? kSmokeMessages : o.messages;
  const auto schemes = chosen_schemes(o);
  const auto t_run = Clock::now();
  Json report;
  report["messages"] = messages;
  report["seed"] = kReadingSeed;
  report["transport"] = "Unix socketpair, lock-step (one reading in flight)";
  report["machine"] = {{"cpu", cpu_model()},
                       {"cores", ::sysconf(_SC_NPROCESSORS_ONLN)},
                       {"kernel", first_line("/proc/sys/kernel/osrelease")},
                       {"loadavg_start", first_line("/proc/loadavg")}};
  Json keygen_log = Json::object();
  std::map<std::string, RsaKeys> rsa_cache;  // one key per modulus per run
  bool all_ok = true;
  for (const SchemeInfo* s : schemes) {
    const bool rsa = s->family == Family::rsa_chunked || s->family == Family::rsa_hybrid;
    if (rsa && !rsa_cache.count(std::string(s->primitive))) {
      rsa_cache.emplace(std::string(s->primitive), rsa_keys_for(*s, o, keygen_log));
    }
    if (!o.json) std::cerr << "bench-payload: " << s->name << "\n";
    const PairReports reports =
        run_pair(*s, messages, rsa ? &rsa_cache.at(std::string(s->primitive)) : nullptr);
    const Json pub = Json::parse(reports.publisher);
    const Json sub = Json::parse(reports.subscriber);
    for (std::size_t k = 0; k < std::size(kKinds); ++k) {
      const Json& pk = pub["kinds"].at(k);
      const Json& sk = sub["kinds"].at(k);
      const int ok = sk["decrypted_ok"].get<int>();
      all_ok = all_ok && ok == messages;
      report["rows"].push_back({{"scheme", s->name},
                                {"level", s->level},
                                {"construction", family_name(s->family)},
                                {"primitive", s->primitive},
                                {"mlkem_aead", s->mlkem},
                                {"contender", s->contender},
                                {"phases", pk["phases"]},
                                {"messages", messages},
                                {"decrypted_ok", ok},
                                {"first_error", sk["first_error"]},
                                {"plaintext_bytes", stats_json(stats_of(pk["plain_bytes"]))},
                                {"wire_bytes", stats_json(stats_of(pk["bytes"]))},
                                {"encrypt_us", stats_json(stats_of(pk["us"]))},
                                {"decrypt_us", stats_json(stats_of(sk["us"]))},
                                {"publisher",
                                 {{"cpu_us_per_message", pk["cpu_us"].get<double>() / messages},
                                  {"max_rss_kb", pub["max_rss_kb"]},
                                  {"rss_start_kb", pub["rss_start_kb"]}}},
                                {"subscriber",
                                 {{"cpu_us_per_message", sk["cpu_us"].get<double>() / messages},
                                  {"max_rss_kb", sub["max_rss_kb"]},
                                  {"rss_start_kb", sub["rss_start_kb"]}}}});
    }
  }
  report["rsa_keys"] = keygen_log;
  report["machine"]["loadavg_end"] = first_line("/proc/loadavg");
  report["seconds"] = seconds_since(t_run);
  report["all_decrypted"] = all_ok;
  if (o.json) {
    std::cout << report.dump() << "\n";
  } else {
    print_table(report);
  }
  if (!all_ok)
    throw ExitError(kExitInternal,
                    "bench-payload: some readings did not decrypt (see decrypted_ok)");
}

}  // namespace

}  // namespace pqot::srup_tool::payload

namespace pqot::srup_tool {

void add_bench_payload_command(CLI::App& app) {
  auto o = std::make_shared<payload::PayloadOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bench-payload",
      "Meter readings (1- and 3-phase JSON) encrypted by a publisher process and decrypted by a "
      "subscriber "
      "process: RSA-OAEP (chunked, as the energy-monitoring paper, and hybrid), NTRU, Saber, "
      "ML-KEM and X-Wing "
      "with AES-256-GCM, SRUP-PQ modes 1 and 3; times, bytes, CPU and peak RSS per side");
  cmd->add_option("--messages", o->messages,
                  "Readings of each kind (1-phase, 3-phase) per scheme (default 500)")
      ->check(CLI::Range(1, payload::kMaxMessages));
  cmd->add_option("--schemes", o->schemes,
                  "Comma-separated schemes (default: all; see docs/srup-tool.md)");
  cmd->add_flag("--json", o->json, "Print one JSON object");
  cmd->add_flag("--smoke", o->smoke,
                "3 readings of each kind per scheme: checks that everything decrypts");
  cmd->add_option(
         "--rsa-keys", o->rsa_keys,
         "Directory with rsa2048-a.p8.der, rsa3072-a.p8.der, rsa7680-a.p8.der (PKCS#8 DER) to use "
         "instead of generating RSA keys (a 7680-bit key takes 10-55 s)")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--role", o->role)->check(CLI::IsMember({"publisher", "subscriber"}))->group("");
  cmd->add_option("--scheme", o->scheme)->group("");
  cmd->add_flag("--example", o->example,
                "Print the first 1-phase and 3-phase reading (the JSON encrypted) and exit");
  cmd->callback([o] {
    if (o->example) {
      for (payload::Phases kind : payload::kKinds) {
        std::cout << payload::reading_json(payload::make_readings(kind, 1).at(0)) << "\n";
      }
      return;
    }
    if (o->role.empty()) {
      payload::orchestrate(*o);
      return;
    }
    const payload::SchemeInfo& s = payload::scheme_by_name(o->scheme);
    if (o->role == "publisher") {
      payload::run_publisher(s, o->messages);
    } else {
      payload::run_subscriber(s, o->messages);
    }
  });
}

}  // namespace pqot::srup_tool
