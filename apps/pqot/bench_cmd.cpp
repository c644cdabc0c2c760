// `pqot bench crypto`: microseconds per operation of every KEM and of the symmetric primitives,
// as medians over several timed rounds, with the machine printed alongside (docs/cli.md).
//
// With --alg ALG --iterations N it runs exactly N keygen+encaps+decaps exchanges of ALG, each
// operation in its own non-inlined function, so that instruction counts can be taken with
//   valgrind --tool=callgrind --toggle-collect='*bench_op_*' pqot bench crypto --alg A --iterations N
#include <openssl/crypto.h>
#include <sys/utsname.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli_common.hpp"
#include "pqot/crypto/aead.hpp"
#include "pqot/crypto/hkdf.hpp"
#include "pqot/crypto/kem.hpp"
#include "pqot/crypto/random.hpp"

namespace pqot::app {

namespace {

using Clock = std::chrono::steady_clock;

struct BenchOptions {
  std::string alg;
  long iterations = 0;  // 0: calibrate to ~kRoundSeconds per round
  int rounds = 5;
  bool json = false;
};

struct Row {
  std::string name;
  double us_per_op = 0;  // median over rounds
  double min_us = 0, max_us = 0;
  long iterations = 0;   // per round
  int rounds = 0;
};

constexpr double kRoundSeconds = 0.08;

// The operations measured, each kept out of line so callgrind can attribute them.
[[gnu::noinline]] crypto::KemKeyPair bench_op_keygen(const crypto::Kem& kem) {
  return kem.generate_keypair();
}
[[gnu::noinline]] crypto::KemEncapsulation bench_op_encaps(const crypto::Kem& kem,
                                                           const crypto::Bytes& ek) {
  return kem.encapsulate(ek);
}
[[gnu::noinline]] crypto::SecretBytes bench_op_decaps(const crypto::Kem& kem,
                                                      const crypto::SecretBytes& dk,
                                                      const crypto::Bytes& ct) {
  return kem.decapsulate(dk, ct);
}

double seconds_of(long n, const std::function<void()>& op) {
  const auto t0 = Clock::now();
  for (long i = 0; i < n; ++i) op();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

Row measure(const std::string& name, const BenchOptions& o, const std::function<void()>& op) {
  long n = o.iterations;
  if (n <= 0) {
    // Calibrate: grow until one batch takes a measurable time, then size rounds to kRoundSeconds.
    long probe = 1;
    double t = seconds_of(probe, op);
    while (t < 0.01) {
      probe *= 4;
      t = seconds_of(probe, op);
    }
    n = std::max(1L, static_cast<long>(probe * kRoundSeconds / t));
  } else {
    op();  // warm-up
  }
  std::vector<double> us;
  for (int r = 0; r < o.rounds; ++r) us.push_back(seconds_of(n, op) * 1e6 / static_cast<double>(n));
  std::sort(us.begin(), us.end());
  return Row{name, us[us.size() / 2], us.front(), us.back(), n, o.rounds};
}

nlohmann::json machine_info() {
  nlohmann::json m;
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      m["cpu"] = line.substr(line.find(':') + 2);
      break;
    }
  }
  m["cores"] = std::thread::hardware_concurrency();
  utsname u{};
  if (uname(&u) == 0) m["kernel"] = std::string(u.sysname) + " " + u.release + " " + u.machine;
  m["compiler"] = std::string("gcc ") + __VERSION__;
  m["openssl"] = OpenSSL_version(OPENSSL_VERSION);
#ifdef NDEBUG
  m["build"] = "release";
#else
  m["build"] = "debug";
#endif
  return m;
}

// --alg A --iterations N: exactly N exchanges; per-operation medians from the individual timings.
std::vector<Row> run_exchanges(const BenchOptions& o) {
  const auto& kem = crypto::kem_by_name(o.alg);
  std::vector<double> t_keygen, t_encaps, t_decaps;
  for (long i = 0; i < o.iterations; ++i) {
    const auto t0 = Clock::now();
    const auto kp = bench_op_keygen(kem);
    const auto t1 = Clock::now();
    const auto enc = bench_op_encaps(kem, kp.public_key);
    const auto t2 = Clock::now();
    const auto ss = bench_op_decaps(kem, kp.secret_key, enc.ciphertext);
    const auto t3 = Clock::now();
    if (!crypto::ct_equal(ss, enc.shared_secret)) {
      throw std::runtime_error(o.alg + ": decapsulated secret differs from the encapsulated one");
    }
    t_keygen.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    t_encaps.push_back(std::chrono::duration<double, std::micro>(t2 - t1).count());
    t_decaps.push_back(std::chrono::duration<double, std::micro>(t3 - t2).count());
  }
  auto row = [&](const char* op, std::vector<double>& v) {
    std::sort(v.begin(), v.end());
    return Row{o.alg + " " + op, v[v.size() / 2], v.front(), v.back(), o.iterations, 1};
  };
  return {row("keygen", t_keygen), row("encaps", t_encaps), row("decaps", t_decaps)};
}

std::vector<Row> run_all(const BenchOptions& o) {
  std::vector<Row> rows;
  std::vector<std::string_view> algs(crypto::kem_names().begin(), crypto::kem_names().end());
  if (!o.alg.empty()) algs = {crypto::kem_by_name(o.alg).name()};
  for (auto name : algs) {
    const auto& kem = crypto::kem_by_name(name);
    const auto kp = kem.generate_keypair();
    const auto enc = kem.encapsulate(kp.public_key);
    const std::string n(name);
    rows.push_back(measure(n + " keygen", o, [&] { (void)bench_op_keygen(kem); }));
    rows.push_back(measure(n + " encaps", o, [&] { (void)bench_op_encaps(kem, kp.public_key); }));
    rows.push_back(measure(n + " decaps", o, [&] {
      (void)bench_op_decaps(kem, kp.secret_key, enc.ciphertext);
    }));
  }
  if (!o.alg.empty()) return rows;

  crypto::Bytes key(32);
  crypto::random_secret_bytes(key);
  crypto::Aes256Gcm aead(key);
  crypto::NonceSequence nonces({'b', 'e', 'n', 'c'});
  for (std::size_t size : {std::size_t{64}, std::size_t{1024}}) {
    const crypto::Bytes msg(size, 0x5a), aad(16, 0x01);
    crypto::Bytes out(size + crypto::kAesGcmTagSize);
    const std::string label = "AES-256-GCM seal " + std::to_string(size) + " B";
    rows.push_back(measure(label, o, [&] { aead.seal_into(nonces.next(), aad, msg, out); }));
    const auto nonce = nonces.next();
    const auto sealed = aead.seal(nonce, aad, msg);
    crypto::Bytes plain(size);
    const std::string open_label = "AES-256-GCM open " + std::to_string(size) + " B";
    rows.push_back(measure(open_label, o, [&] { aead.open_into(nonce, aad, sealed, plain); }));
  }
  const crypto::Bytes ikm(32, 0x11), salt(32, 0x22), info(24, 0x33);
  rows.push_back(measure("HKDF-SHA-256 (32 B ikm, 96 B out)", o,
                         [&] { (void)crypto::hkdf_sha256(ikm, salt, info, 96); }));
  return rows;
}

void print_rows(const std::vector<Row>& rows, const BenchOptions& o) {
  if (o.json) {
    nlohmann::json j;
    j["machine"] = machine_info();
    for (const auto& r : rows) {
      j["results"].push_back({{"name", r.name},
                              {"us_per_op", r.us_per_op},
                              {"ops_per_s", 1e6 / r.us_per_op},
                              {"min_us", r.min_us},
                              {"max_us", r.max_us},
                              {"iterations", r.iterations},
                              {"rounds", r.rounds}});
    }
    std::cout << j.dump(2) << '\n';
    return;
  }
  const auto m = machine_info();
  std::cout << "machine: " << m.value("cpu", "?") << ", " << m["cores"] << " cores, "
            << m.value("kernel", "?") << "\n"
            << "build: " << m["build"].get<std::string>() << ", "
            << m["compiler"].get<std::string>() << ", " << m["openssl"].get<std::string>() << "\n\n";
  std::cout << std::left << std::setw(36) << "operation" << std::right << std::setw(12)
            << "us/op" << std::setw(14) << "ops/s" << std::setw(22) << "spread (min..max us)"
            << "\n";
  for (const auto& r : rows) {
    std::ostringstream spread;
    spread << std::fixed << std::setprecision(1) << r.min_us << ".." << r.max_us;
    std::cout << std::left << std::setw(36) << r.name << std::right << std::fixed
              << std::setprecision(2) << std::setw(12) << r.us_per_op << std::setprecision(0)
              << std::setw(14) << 1e6 / r.us_per_op << std::setw(22) << spread.str() << "\n";
  }
  std::cout << "\n(median of " << rows.front().rounds << " rounds; "
            << (o.iterations > 0 && !o.alg.empty() ? "per-exchange timings"
                                                   : "each round calibrated to ~80 ms")
            << ")\n";
}

}  // namespace

void add_bench_commands(CLI::App& app) {
  auto* bench = app.add_subcommand("bench", "Benchmarks");
  bench->require_subcommand(1);
  auto o = std::make_shared<BenchOptions>();
  auto* crypto_cmd = bench->add_subcommand(
      "crypto", "Microseconds per operation: KEM keygen/encaps/decaps, AES-256-GCM, HKDF");
  crypto_cmd->add_option("--alg", o->alg, "Only this KEM");
  crypto_cmd->add_option("--iterations", o->iterations,
                         "Iterations per round; with --alg: run exactly this many full "
                         "keygen+encaps+decaps exchanges (for callgrind)")
      ->check(CLI::Range(1L, 100000000L));
  crypto_cmd->add_option("--rounds", o->rounds, "Timed rounds per operation (median reported)")
      ->check(CLI::Range(1, 1000));
  crypto_cmd->add_flag("--json", o->json, "Machine-readable output");
  crypto_cmd->callback([o] {
    if (!o->alg.empty()) (void)crypto::kem_by_name(o->alg);  // validate before any work
    const auto rows = (!o->alg.empty() && o->iterations > 0) ? run_exchanges(*o) : run_all(*o);
    print_rows(rows, *o);
  });
}

}  // namespace pqot::app
