#include "bench_common.hpp"

#include <openssl/crypto.h>
#include <sys/utsname.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

namespace pqot::app::bench {

namespace {

using Clock = std::chrono::steady_clock;

constexpr double kRoundSeconds = 0.08;

double seconds_of(long n, const std::function<void()>& op) {
  const auto t0 = Clock::now();
  for (long i = 0; i < n; ++i) op();
  return std::chrono::duration<double>(Clock::now() - t0).count();
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

}  // namespace

void add_options(CLI::App& cmd, Options& o, const std::string& alg_help,
                 const std::string& iterations_help) {
  cmd.add_option("--alg", o.alg, alg_help);
  cmd.add_option("--iterations", o.iterations, iterations_help)->check(CLI::Range(1L, 100000000L));
  cmd.add_option("--rounds", o.rounds, "Timed rounds per operation (median reported)")
      ->check(CLI::Range(1, 1000));
  cmd.add_flag("--json", o.json, "Machine-readable output");
}

Row measure(const std::string& name, const Options& o, const std::function<void()>& op) {
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

Row row_of_timings(const std::string& name, std::vector<double> us) {
  std::sort(us.begin(), us.end());
  const auto n = static_cast<long>(us.size());
  return Row{name, us[us.size() / 2], us.front(), us.back(), n, 1};
}

void print_rows(const std::vector<Row>& rows, const Options& o, bool per_operation) {
  if (o.json) {
    nlohmann::json j;
    j["machine"] = machine_info();
    j["results"] = nlohmann::json::array();
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
            << m["compiler"].get<std::string>() << ", " << m["openssl"].get<std::string>()
            << "\n\n";
  std::cout << std::left << std::setw(36) << "operation" << std::right << std::setw(12) << "us/op"
            << std::setw(14) << "ops/s" << std::setw(22) << "spread (min..max us)"
            << "\n";
  for (const auto& r : rows) {
    std::ostringstream spread;
    spread << std::fixed << std::setprecision(1) << r.min_us << ".." << r.max_us;
    // Slow operations (RSA key generation: seconds) get decimals, so 0.02 ops/s is not "0".
    const double ops = 1e6 / r.us_per_op;
    std::cout << std::left << std::setw(36) << r.name << std::right << std::fixed
              << std::setprecision(2) << std::setw(12) << r.us_per_op
              << std::setprecision(ops < 10 ? 2 : 0) << std::setw(14) << ops << ' ' << std::setw(21)
              << spread.str() << "\n";
  }
  if (rows.empty()) return;
  std::cout << "\n("
            << (per_operation ? "median of the individual timings of every operation"
                              : "median of " + std::to_string(rows.front().rounds) +
                                    " rounds, each calibrated to ~80 ms")
            << ")\n";
}

}  // namespace pqot::app::bench
