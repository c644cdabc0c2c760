// The srup-c2 that `srup bench-telemetry` measures (docs/srup-tool.md, "bench-telemetry"): the
// real daemon started as a child process on a broker of the bench's own, with an identity, a
// configuration and a state directory made for the run, reached through its control socket (to
// enrol devices) and its metrics page (what it opened and stored), its CPU time read from /proc.
// Stopped (SIGTERM, then SIGKILL after 10 s) when the object goes.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "bench_broker.hpp"
#include "pqot/srup/types.hpp"

namespace pqot::srup_tool {

/// The bench C2's ID (its broker CN is `c2-` and these 16 hex digits).
inline constexpr std::uint64_t kTelemetryBenchC2 = 0xc2;

struct BenchC2Options {
  std::string program;              ///< the srup-c2 binary
  std::filesystem::path state_dir;  ///< created (0700); must not exist
  srup::Suite suite = srup::kDefaultSuite;
  std::uint32_t retention_per_device = 10'000;
  std::size_t devices = 10;  ///< raises [join] pending_max when above its default
};

/// CPU time (user + system) of a process and of its busiest thread, in seconds.
struct ProcessCpu {
  double total = 0;
  std::map<pid_t, double> threads;
};

/// CPU time of process `pid` from /proc (zero for a process that is gone).
ProcessCpu read_process_cpu(pid_t pid);

class BenchC2 {
 public:
  /// Writes the identity (srup keygen's files), c2.toml (the broker's CA key for enrolment, the
  /// metrics page on a free port of 127.0.0.1) and starts `program`; returns when its control
  /// socket says the broker connection is up. Throws std::runtime_error naming what failed, with
  /// the end of the daemon's log when it exited or did not come up within 20 s.
  BenchC2(const BenchC2Options& options, const BenchBroker& broker);
  ~BenchC2();
  BenchC2(const BenchC2&) = delete;
  BenchC2& operator=(const BenchC2&) = delete;

  /// One control request (docs/srup-c2.md, "Control socket"); the result object. Throws
  /// std::runtime_error with the daemon's code and text when it answers ok:false.
  nlohmann::json control(const nlohmann::json& request) const;

  /// The metrics page as name{labels} -> value (the text format's sample lines). Throws
  /// std::runtime_error when the page cannot be fetched.
  std::map<std::string, double> scrape() const;

  pid_t pid() const noexcept { return pid_; }
  /// Whether the daemon is still running (false also reaps it).
  bool running();
  /// The last `max_bytes` of its log (stdout and stderr).
  std::string log_tail(std::size_t max_bytes = 4000) const;

 private:
  void stop() noexcept;

  std::filesystem::path dir_;
  std::string socket_;
  std::uint16_t metrics_port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace pqot::srup_tool
