// srup bench-telemetry: the telemetry readings per second one srup-c2 stores (docs/srup-tool.md,
// "bench-telemetry"; issue 13's figure "Telemetry messages per second one C2 sustains").
//
// A mosquitto of its own (BenchBroker), the real srup-c2 daemon as a child process, N devices in
// this process (bench_telemetry_device.hpp: enrolled, joined, sealing 3-phase readings with the
// Checkpoints the protocol requires) pushing as fast as a flow window lets them: at most
// `--window` readings published and not yet opened by the C2. After a warm-up, each round reads
// the C2's metrics page (readings confirmed by a Checkpoint and stored) and /proc (CPU time of the
// C2, its threads, the broker, this process and the whole machine) at its start and end. Figures
// are medians over rounds; the verdict says which side limited the rate.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "bench_broker.hpp"
#include "bench_telemetry_c2.hpp"
#include "bench_telemetry_device.hpp"
#include "cli.hpp"
#include "pqot/srup/topics.hpp"

namespace pqot::srup_tool {

namespace {

namespace fs = std::filesystem;
using TbClock = std::chrono::steady_clock;

constexpr std::uint64_t kTbFirstDevice = 0xbe0001;

struct TelemetryBenchOptions {
  int devices = 10;
  int rounds = 5;
  double duration_s = 5;
  double warmup_s = 3;
  int threads = 1;
  int window = 0;  // 0: 15 per device, at most 900
  int checkpoint = 64;
  std::uint32_t retention = 10'000;
  std::string suite;
  std::string c2_program;
  std::string mosquitto = "/usr/sbin/mosquitto";
  std::string state_dir;
  bool json = false;
};

// The machine's CPU time from /proc/stat's first line: busy and total jiffies over all CPUs.
struct TbMachineCpu {
  double busy = 0, total = 0;
};

TbMachineCpu tb_machine_cpu() {
  std::ifstream in("/proc/stat");
  std::string cpu;
  in >> cpu;
  TbMachineCpu m;
  double v = 0;
  for (int i = 0; i < 8 && in >> v; ++i) {
    m.total += v;
    if (i != 3 && i != 4) m.busy += v;  // idle and iowait are not busy
  }
  return m;
}

double tb_self_cpu() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// The broker BenchBroker started: our child named mosquitto.
pid_t tb_find_child(const std::string& comm) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "stat");
    std::string line;
    std::getline(in, line);
    const auto open = line.find('('), close = line.rfind(')');
    if (open == std::string::npos || close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 1));
    std::string state;
    long ppid = 0;
    rest >> state >> ppid;
    if (ppid == ::getpid() && line.substr(open + 1, close - open - 1) == comm) return static_cast<pid_t>(std::stol(name));
  }
  return -1;
}

struct TbSnapshot {
  TbClock::time_point at;
  double confirmed = 0, opened = 0, published = 0, waited = 0, self_cpu = 0, broker_cpu = 0;
  ProcessCpu c2;
  TbMachineCpu machine;
};

struct TbRound {
  double seconds = 0, stored_per_s = 0, opened_per_s = 0, published_per_s = 0, c2_us_per_reading = 0,
         c2_loop_us_per_reading = 0, c2_cores = 0, c2_busiest_thread = 0, broker_cores = 0, generator_cores = 0, machine_cores = 0,
         others_cores = 0, window_wait = 0;
};

double tb_metric(const std::map<std::string, double>& m, const std::string& name) {
  const auto it = m.find(name);
  return it == m.end() ? 0 : it->second;
}

// A labelled family (name{label="value"}) as value -> sample.
nlohmann::json tb_family(const std::map<std::string, double>& m, const std::string& name) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [k, v] : m) {
    if (k.rfind(name + "{", 0) != 0) continue;
    const auto q = k.find('"');
    const auto end = k.rfind('"');
    out[q < end ? k.substr(q + 1, end - q - 1) : k] = v;
  }
  return out;
}

TbRound tb_round(const TbSnapshot& a, const TbSnapshot& b, int threads, double cpus) {
  TbRound r;
  r.seconds = std::chrono::duration<double>(b.at - a.at).count();
  const double dt = r.seconds > 0 ? r.seconds : 1;
  const double stored = b.confirmed - a.confirmed;
  r.stored_per_s = stored / dt;
  r.opened_per_s = (b.opened - a.opened) / dt;
  r.published_per_s = (b.published - a.published) / dt;
  r.c2_cores = (b.c2.total - a.c2.total) / dt;
  r.c2_us_per_reading = stored > 0 ? (b.c2.total - a.c2.total) * 1e6 / stored : 0;
  double loop = 0;  // CPU seconds of the busiest thread: the event loop
  for (const auto& [tid, t] : b.c2.threads) {
    const auto before = a.c2.threads.find(tid);
    loop = std::max(loop, t - (before == a.c2.threads.end() ? 0 : before->second));
  }
  r.c2_busiest_thread = loop / dt;
  r.c2_loop_us_per_reading = stored > 0 ? loop * 1e6 / stored : 0;
  r.broker_cores = (b.broker_cpu - a.broker_cpu) / dt;
  r.generator_cores = (b.self_cpu - a.self_cpu) / dt;
  const double total = b.machine.total - a.machine.total;
  r.machine_cores = total > 0 ? (b.machine.busy - a.machine.busy) / total * cpus : 0;
  r.others_cores = std::max(0.0, r.machine_cores - r.c2_cores - r.broker_cores - r.generator_cores);
  r.window_wait = (b.waited - a.waited) / (dt * threads);
  return r;
}

double tb_median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// What limited the rate, from the medians (docs/srup-tool.md, "bench-telemetry").
std::string tb_verdict(const TbRound& m, double cpus) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(0);
  const bool machine_full = m.machine_cores >= 0.9 * cpus;
  if (m.window_wait >= 0.5) {
    if (m.c2_busiest_thread >= 0.85) {
      s << "srup-c2: its event-loop thread was busy " << m.c2_busiest_thread * 100 << "% of the time and the generators waited for it "
        << m.window_wait * 100 << "% of theirs";
    } else if (machine_full) {
      s << "the machine's CPUs (" << m.machine_cores << " of " << cpus << " busy; others " << std::setprecision(2)
        << m.others_cores << "): srup-c2 waits for CPU, its busiest thread ran " << std::setprecision(0)
        << m.c2_busiest_thread * 100 << "% of the time";
    } else {
      s << "between the generators and srup-c2's event loop (the broker at " << std::setprecision(2) << m.broker_cores
        << " cores, the C2's MQTT thread): the generators waited " << std::setprecision(0) << m.window_wait * 100 << "%";
    }
  } else if (machine_full) {
    s << "the machine's CPUs, with the generators rarely waiting (" << m.window_wait * 100
      << "%): the C2 kept up with what they could make";
  } else {
    s << "the generators (they waited " << m.window_wait * 100 << "% of the time): raise --threads or --devices";
  }
  return s.str();
}

std::string tb_default_c2_program() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("srup-c2") : (self.parent_path() / "srup-c2").string();
}

// A fresh directory under `base` for the C2's and the devices' state, removed at the end.
struct TbScratch {
  explicit TbScratch(const fs::path& base) {
    std::string pattern = (base / "srup-bench-telemetry-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("bench-telemetry: cannot create a directory in " + base.string());
    path = pattern;
  }
  ~TbScratch() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  TbScratch(const TbScratch&) = delete;
  TbScratch& operator=(const TbScratch&) = delete;
  fs::path path;
};

// The generators and the poller that feeds the flow window, stopped and joined when it goes.
class TbLoad {
 public:
  TbLoad(const BenchC2& c2, std::vector<std::unique_ptr<BenchDevice>>& devices, int threads, std::uint64_t window)
      : c2_(c2), flow_(window) {
    poller_ = std::thread([this] { poll(); });
    for (int t = 0; t < threads; ++t) {
      generators_.emplace_back([this, &devices, t, threads] {
        for (std::size_t k = static_cast<std::size_t>(t); flow_.acquire();) {
          devices[k]->send_reading();
          k += static_cast<std::size_t>(threads);
          if (k >= devices.size()) k = static_cast<std::size_t>(t);
        }
      });
    }
  }
  ~TbLoad() { stop(); }
  TbLoad(const TbLoad&) = delete;
  TbLoad& operator=(const TbLoad&) = delete;

  void stop() {
    flow_.stop();
    {
      std::lock_guard lock(m_);
      stopping_ = true;
    }
    for (auto& g : generators_) {
      if (g.joinable()) g.join();
    }
    if (poller_.joinable()) poller_.join();
  }
  const BenchFlow& flow() const { return flow_; }
  std::string error() {
    std::lock_guard lock(m_);
    return error_;
  }

 private:
  void poll() {
    for (;;) {
      {
        std::lock_guard lock(m_);
        if (stopping_) return;
      }
      try {
        flow_.set_opened(static_cast<std::uint64_t>(tb_metric(c2_.scrape(), "srup_c2_telemetry_readings_total")));
      } catch (const std::exception& e) {
        std::lock_guard lock(m_);
        error_ = e.what();
        flow_.stop();
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
  }

  const BenchC2& c2_;
  BenchFlow flow_;
  std::thread poller_;
  std::vector<std::thread> generators_;
  std::mutex m_;
  bool stopping_ = false;
  std::string error_;
};

// Connections the devices made beyond their first: a reconnect can lose or repeat QoS 1 messages
// (clean sessions), which the C2 then counts as unconfirmed or REPLAY.
std::uint64_t tb_device_reconnects(const std::vector<std::unique_ptr<BenchDevice>>& devices) {
  std::uint64_t n = 0;
  for (const auto& d : devices) {
    const mqtt::ClientStats st = d->mqtt_stats();
    n += st.connects > 1 ? st.connects - 1 : 0;
  }
  return n;
}

void tb_check(BenchC2& c2, const std::vector<std::unique_ptr<BenchDevice>>& devices, TbLoad* load) {
  if (!c2.running()) throw std::runtime_error("bench-telemetry: srup-c2 exited:\n" + c2.log_tail());
  for (const auto& d : devices) {
    if (const std::string e = d->error(); !e.empty()) throw std::runtime_error("bench-telemetry: " + e);
  }
  if (load != nullptr) {
    if (const std::string e = load->error(); !e.empty()) throw std::runtime_error(e);
  }
}

void tb_sleep_checked(double seconds, BenchC2& c2, const std::vector<std::unique_ptr<BenchDevice>>& devices, TbLoad& load) {
  const auto end = TbClock::now() + std::chrono::duration_cast<TbClock::duration>(std::chrono::duration<double>(seconds));
  while (TbClock::now() < end) {
    tb_check(c2, devices, &load);
    std::this_thread::sleep_for(std::min<TbClock::duration>(end - TbClock::now(), std::chrono::milliseconds(100)));
  }
}

nlohmann::json tb_round_json(const TbRound& r) {
  return {{"seconds", r.seconds},
          {"stored_per_s", r.stored_per_s},
          {"opened_per_s", r.opened_per_s},
          {"published_per_s", r.published_per_s},
          {"c2_cpu_us_per_reading", r.c2_us_per_reading},
          {"c2_loop_us_per_reading", r.c2_loop_us_per_reading},
          {"c2_cores", r.c2_cores},
          {"c2_busiest_thread", r.c2_busiest_thread},
          {"broker_cores", r.broker_cores},
          {"generator_cores", r.generator_cores},
          {"machine_cores", r.machine_cores},
          {"others_cores", r.others_cores},
          {"window_wait", r.window_wait}};
}

void tb_print_round(const std::string& label, const TbRound& r) {
  std::cout << std::left << std::setw(8) << label << std::right << std::fixed << std::setprecision(0) << std::setw(10)
            << r.stored_per_s << std::setw(10) << r.opened_per_s << std::setw(11) << r.published_per_s << std::setprecision(1)
            << std::setw(10) << r.c2_us_per_reading << std::setprecision(2) << std::setw(8) << r.c2_cores << std::setw(9)
            << r.c2_busiest_thread << std::setw(8) << r.broker_cores << std::setw(8) << r.generator_cores << std::setw(8)
            << r.others_cores << std::setw(9) << r.machine_cores << std::setprecision(0) << std::setw(7)
            << r.window_wait * 100 << "%\n";
}

void run_bench_telemetry(const TelemetryBenchOptions& o) {
  const std::string suite_name = o.suite.empty() ? std::string(srup::suite_info(srup::kDefaultSuite).name) : o.suite;
  const auto suite = srup::suite_by_name(suite_name);
  if (!suite || srup::suite_info(*suite).legacy) throw UsageError("--suite: unknown suite '" + suite_name + "'");
  const std::string program = o.c2_program.empty() ? tb_default_c2_program() : o.c2_program;
  if (::access(program.c_str(), X_OK) != 0) {
    throw UsageError("--c2-program: " + program + " is not an executable srup-c2 (build it, or name it)");
  }
  if (!o.state_dir.empty() && !fs::is_directory(o.state_dir)) throw UsageError("--state-dir " + o.state_dir + " is not a directory");
  const double cpus = static_cast<double>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
  auto progress = [&](const std::string& line) {
    if (!o.json) std::cerr << line << "\n";
  };

  BenchBroker broker(o.mosquitto, "c2-" + srup::id_text(kTelemetryBenchC2));
  const TbScratch scratch(o.state_dir.empty() ? broker.work_dir() : fs::path(o.state_dir));
  BenchC2Options co;
  co.program = program;
  co.state_dir = scratch.path / "c2";
  co.suite = *suite;
  co.retention_per_device = o.retention;
  co.devices = static_cast<std::size_t>(o.devices);
  BenchC2 c2(co, broker);
  std::cerr << "bench-telemetry: srup-c2 running as pid " << c2.pid() << " (perf record -p " << c2.pid() << ")\n";
  const pid_t broker_pid = tb_find_child("mosquitto");

  std::vector<std::unique_ptr<BenchDevice>> devices;
  for (int i = 0; i < o.devices; ++i) {
    BenchDeviceOptions d;
    d.id = kTbFirstDevice + static_cast<std::uint64_t>(i);
    d.suite = *suite;
    d.dir = scratch.path / ("dev-" + srup::id_text(d.id));
    d.checkpoint_messages = static_cast<std::uint16_t>(o.checkpoint);
    devices.push_back(std::make_unique<BenchDevice>(d, c2, broker));
  }
  progress("bench-telemetry: " + std::to_string(o.devices) + " devices enrolled; joining");
  const auto join_deadline = TbClock::now() + std::chrono::seconds(30 + o.devices / 10);
  for (;;) {
    tb_check(c2, devices, nullptr);
    bool all = true;
    for (auto& d : devices) {
      d->join_step();
      all = all && d->ready();
    }
    if (all) break;
    if (TbClock::now() > join_deadline) throw std::runtime_error("bench-telemetry: devices not joined within the deadline:\n" + c2.log_tail());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  progress("bench-telemetry: joined; warm-up " + std::to_string(o.warmup_s) + " s");

  const int threads = std::min(o.threads, o.devices);  // each generator serves its own devices
  // Per device below the MQTT in-flight window (20): runs here with 50 per device had readings
  // dropped unconfirmed by the C2 (suspected: re-ordered on the way); with 10 per device none.
  const int window = o.window > 0 ? o.window : std::min(900, 15 * o.devices);
  TbLoad load(c2, devices, threads, static_cast<std::uint64_t>(window));
  auto snapshot = [&] {
    TbSnapshot s;
    const auto m = c2.scrape();
    s.at = TbClock::now();
    s.c2 = read_process_cpu(c2.pid());
    s.broker_cpu = broker_pid > 0 ? read_process_cpu(broker_pid).total : 0;
    s.self_cpu = tb_self_cpu();
    s.machine = tb_machine_cpu();
    s.confirmed = tb_metric(m, "srup_c2_telemetry_confirmed_total");
    s.opened = tb_metric(m, "srup_c2_telemetry_readings_total");
    s.published = static_cast<double>(load.flow().published());
    s.waited = load.flow().waited_seconds();
    return s;
  };
  tb_sleep_checked(o.warmup_s, c2, devices, load);
  std::vector<TbRound> rounds;
  for (int i = 0; i < o.rounds; ++i) {
    const TbSnapshot a = snapshot();
    tb_sleep_checked(o.duration_s, c2, devices, load);
    const TbSnapshot b = snapshot();
    rounds.push_back(tb_round(a, b, threads, cpus));
    std::ostringstream line;
    line << "bench-telemetry: round " << i + 1 << "/" << o.rounds << ": " << std::fixed << std::setprecision(0)
         << rounds.back().stored_per_s << " readings/s stored";
    progress(line.str());
  }
  load.stop();
  tb_check(c2, devices, &load);
  const auto final_metrics = c2.scrape();
  if (!tb_family(final_metrics, "srup_c2_refusals_total").empty()) {
    std::cerr << "bench-telemetry: srup-c2 refused messages; the end of its log:\n" << c2.log_tail(2000) << "\n";
  }

  auto med = [&](double TbRound::*f) {
    std::vector<double> v;
    for (const auto& r : rounds) v.push_back(r.*f);
    return tb_median(v);
  };
  TbRound m;
  for (double TbRound::*f : {&TbRound::seconds, &TbRound::stored_per_s, &TbRound::opened_per_s, &TbRound::published_per_s,
                             &TbRound::c2_us_per_reading, &TbRound::c2_loop_us_per_reading, &TbRound::c2_cores, &TbRound::c2_busiest_thread,
                             &TbRound::broker_cores, &TbRound::generator_cores, &TbRound::machine_cores,
                             &TbRound::others_cores, &TbRound::window_wait}) {
    m.*f = med(f);
  }
  double lo = rounds.front().stored_per_s, hi = lo;
  for (const auto& r : rounds) {
    lo = std::min(lo, r.stored_per_s);
    hi = std::max(hi, r.stored_per_s);
  }
  const std::string verdict = tb_verdict(m, cpus);
  // What one free core would give the event loop, at the loop's measured cost per reading: an
  // extrapolation, printed as such, for machines where others hold the CPUs.
  const double loop_core_capacity = m.c2_loop_us_per_reading > 0 ? 1e6 / m.c2_loop_us_per_reading : 0;
  const nlohmann::json counters = {
      {"readings_opened", tb_metric(final_metrics, "srup_c2_telemetry_readings_total")},
      {"readings_stored", tb_metric(final_metrics, "srup_c2_telemetry_confirmed_total")},
      {"mismatch", tb_metric(final_metrics, "srup_c2_telemetry_mismatch_total")},
      {"unconfirmed", tb_metric(final_metrics, "srup_c2_telemetry_unconfirmed_total")},
      {"overload_drops", tb_metric(final_metrics, "srup_c2_overload_drops_total")},
      {"refusals", tb_family(final_metrics, "srup_c2_refusals_total")},
      {"published", load.flow().published()},
      {"device_reconnects", tb_device_reconnects(devices)}};

  if (o.json) {
    nlohmann::json out = {{"devices", o.devices},         {"rounds", o.rounds},       {"duration_s", o.duration_s},
                          {"warmup_s", o.warmup_s},       {"threads", threads},     {"window", window},
                          {"checkpoint_messages", o.checkpoint}, {"retention_per_device", o.retention},
                          {"suite", suite_name},          {"cpus", cpus},             {"c2_pid", c2.pid()},
                          {"median", tb_round_json(m)},   {"stored_per_s_min", lo},   {"stored_per_s_max", hi},
                          {"verdict", verdict},           {"loop_core_capacity_per_s", loop_core_capacity},           {"c2_counters", counters}};
    for (const auto& r : rounds) out["per_round"].push_back(tb_round_json(r));
    std::cout << out.dump(2) << "\n";
    return;
  }
  std::cout << "Telemetry stored by one srup-c2 through mosquitto on 127.0.0.1 (TLS 1.3, QoS 1): " << o.devices
            << " devices, suite " << suite_name << ", a Checkpoint every " << o.checkpoint << " readings, window "
            << window << ", " << o.rounds << " rounds of " << o.duration_s << " s, " << cpus << " CPUs\n\n";
  std::cout << std::left << std::setw(8) << "round" << std::right << std::setw(10) << "stored/s" << std::setw(10)
            << "opened/s" << std::setw(11) << "publish/s" << std::setw(10) << "C2 us/rd" << std::setw(8) << "C2" << std::setw(9)
            << "C2 loop" << std::setw(8) << "broker" << std::setw(8) << "gen" << std::setw(8) << "others" << std::setw(9)
            << "machine" << std::setw(8) << "waited" << "\n";
  for (std::size_t i = 0; i < rounds.size(); ++i) tb_print_round(std::to_string(i + 1), rounds[i]);
  tb_print_round("median", m);
  std::cout << "\nstored/s: readings confirmed by a Checkpoint and written to the registry, per second (rounds: " << std::fixed
            << std::setprecision(0) << lo << " .. " << hi << "). C2 us/rd: the C2's CPU time per stored reading.\n"
            << "C2, broker, gen (this process), others (everything else on the machine), machine: CPU cores busy;\n"
            << "C2 loop: its busiest thread's share of one core; waited: the generators' time waiting for the window.\n"
            << "Bottleneck: " << verdict << ".\n"
            << "C2 event loop: " << std::setprecision(1) << m.c2_loop_us_per_reading << " us CPU per stored reading; with a core "
            << "of its own it would store at most about " << std::setprecision(0) << loop_core_capacity
            << "/s (an extrapolation).\nC2 counters: " << counters.dump() << "\n";
}

}  // namespace

void add_bench_telemetry_command(CLI::App& app) {
  auto o = std::make_shared<TelemetryBenchOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bench-telemetry",
      "Telemetry readings per second one srup-c2 stores: its own broker, a real srup-c2, devices pushing readings");
  cmd->add_option("--devices", o->devices, "Devices enrolled and pushing (default 10)")->check(CLI::Range(1, 1000));
  cmd->add_option("--rounds", o->rounds, "Measured rounds; figures are medians (default 5)")->check(CLI::Range(1, 100));
  cmd->add_option("--duration", o->duration_s, "Seconds per round (default 5)")->check(CLI::Range(0.2, 3600.0));
  cmd->add_option("--warmup", o->warmup_s, "Seconds of load before the first round (default 3)")->check(CLI::Range(0.0, 3600.0));
  cmd->add_option("--threads", o->threads, "Generator threads sealing readings (default 1)")->check(CLI::Range(1, 64));
  cmd->add_option("--window", o->window,
                  "Readings published and not yet opened by the C2, at most (default 15 per device, at most 900)")
      ->check(CLI::Range(1, 900));
  cmd->add_option("--checkpoint", o->checkpoint, "A Checkpoint every this many readings (default 64, as srup-device)")
      ->check(CLI::Range(1, static_cast<int>(srup::kMaxCheckpointMessages)));
  cmd->add_option("--retention", o->retention, "The C2's [telemetry] retention_per_device (default 10000)")
      ->check(CLI::Range(1, 10'000'000));
  cmd->add_option("--suite", o->suite, "Suite of the C2 and the devices (default " +
                                           std::string(srup::suite_info(srup::kDefaultSuite).name) + ")");
  cmd->add_option("--c2-program", o->c2_program, "The srup-c2 binary (default: srup-c2 next to this program)");
  cmd->add_option("--mosquitto", o->mosquitto, "The broker program (default /usr/sbin/mosquitto)");
  cmd->add_option("--state-dir", o->state_dir, "Where the C2's and devices' state goes (default: the temporary directory)");
  cmd->add_flag("--json", o->json, "Print one JSON object");
  cmd->callback([o] {
    try {
      run_bench_telemetry(*o);
    } catch (const UsageError&) {
      throw;
    } catch (const ExitError&) {
      throw;
    } catch (const std::exception& e) {
      throw ExitError(1, e.what());  // the broker, the C2 or a device failed: not our bug
    }
  });
}

}  // namespace pqot::srup_tool
