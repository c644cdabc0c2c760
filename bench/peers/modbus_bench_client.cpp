// modbus-bench-client: the Modbus TCP bench client on libmodbus (bench/README.md, "The bench-client
// contract"): latency of connect, FC03 read of holding registers 0..9 and FC06 write of register 0,
// or read throughput of K connections. One JSON object on stdout.
#include <arpa/inet.h>
#include <modbus.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <CLI/CLI.hpp>

#include "pqot/common/resolve.hpp"
#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <latch>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "bench_client.hpp"

namespace {

using pqot::bench::Clock;
using pqot::bench::Phase;
using pqot::bench::us_between;
using pqot::bench::write_value;

constexpr int kRegisters = 10;
// What the timed operations touch: registers base..base+points-1 (bench/README.md; --base and
// --points, for the gateway benchmark against the device simulator).
int g_base = 0;
int g_points = kRegisters;
constexpr std::uint32_t kResponseTimeoutS = 2;

/// A failure that ends the run (exit 1): the server cannot be reached.
struct Fatal : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Target {
  std::string host = "127.0.0.1";
  int port = 1502;
  long server_pid = 0;  // 0: not given
  std::string ip;       // `host` resolved: modbus_new_tcp() takes only a dotted IPv4 address

  std::optional<long> pid() const {
    return server_pid > 0 ? std::optional(server_pid) : std::nullopt;
  }
};

/// strerror() is not thread-safe; the throughput threads report errors too.
std::string errno_text(int e) {
  return std::generic_category().message(e);
}

std::string resolve_ipv4(const std::string& host) {
  auto ip = pqot::common::resolve_ipv4(host);
  if (!ip) throw Fatal("cannot resolve '" + host + "' to an IPv4 address");
  return *ip;
}

/// Modbus has no session: a connection is the TCP handshake (modbus_connect() sets TCP_NODELAY).
modbus_t* open_connection(const Target& t) {
  modbus_t* ctx = modbus_new_tcp(t.ip.c_str(), t.port);
  if (ctx == nullptr) throw Fatal(std::string("modbus_new_tcp: ") + errno_text(errno));
  modbus_set_response_timeout(ctx, kResponseTimeoutS, 0);
  if (modbus_connect(ctx) != 0) {
    const int err = errno;
    modbus_free(ctx);
    throw Fatal("cannot connect to " + t.ip + ":" + std::to_string(t.port) + ": " +
                errno_text(err));
  }
  return ctx;
}

void close_connection(modbus_t* ctx) {
  modbus_close(ctx);
  modbus_free(ctx);
}

/// After a failed operation a late reply could be taken for the next one: start a fresh connection.
void reconnect(modbus_t* ctx, const Target& t) {
  modbus_close(ctx);
  if (modbus_connect(ctx) != 0) {
    throw Fatal("cannot reconnect to " + t.ip + ":" + std::to_string(t.port) + ": " +
                errno_text(errno));
  }
}

/// Says why an operation failed, on stderr; only the first few, the count is in "errors".
void report_failure(const std::string& what) {
  static std::atomic<int> reported{0};
  if (reported++ < 5) std::cerr << "modbus-bench-client: " + what + "\n";
}

/// libmodbus sets errno to a system error or to one of its own (exceptions, bad replies).
std::string modbus_error_text(int e) {
  return e >= MODBUS_ENOBASE ? modbus_strerror(e) : errno_text(e);
}

/// FC03 of the registers; true if all came back and registers 1.. hold 100+i (only the first is
/// ever written).
bool read_all(modbus_t* ctx) {
  std::array<std::uint16_t, kRegisters> regs{};
  if (modbus_read_registers(ctx, g_base, g_points, regs.data()) != g_points) {
    report_failure("FC03 read failed: " + modbus_error_text(errno));
    return false;
  }
  for (std::size_t i = 1; i < static_cast<std::size_t>(g_points); ++i) {
    if (regs[i] != 100 + i) {
      report_failure("FC03 read: register " + std::to_string(i) + " is " + std::to_string(regs[i]) +
                     ", expected " + std::to_string(100 + i));
      return false;
    }
  }
  return true;
}

bool write_reg0(modbus_t* ctx, int value) {
  if (modbus_write_register(ctx, g_base, static_cast<std::uint16_t>(value)) != 1) {
    report_failure("FC06 write failed: " + modbus_error_text(errno));
    return false;
  }
  return true;
}

struct LatencyOptions {
  std::size_t n = 1000;
  std::size_t connects = 20;
  std::size_t warmup = 20;
};

nlohmann::json run_latency(const Target& t, const LatencyOptions& o, std::uint64_t& errors) {
  bool ok = true;
  auto fail = [&](modbus_t* ctx) {
    ++errors;
    ok = false;
    reconnect(ctx, t);
  };

  for (std::size_t i = 0; i < o.warmup; ++i) {
    modbus_t* ctx = open_connection(t);
    if (!read_all(ctx)) fail(ctx);
    if (!write_reg0(ctx, write_value(i))) fail(ctx);
    close_connection(ctx);
  }

  Phase connect(t.pid());
  for (std::size_t i = 0; i < o.connects; ++i) {
    const auto t0 = Clock::now();
    modbus_t* ctx = open_connection(t);
    const auto t1 = Clock::now();
    connect.add(us_between(t0, t1));
    close_connection(ctx);
  }
  auto connect_json = connect.finish();

  modbus_t* ctx = open_connection(t);
  Phase read(t.pid());
  for (std::size_t i = 0; i < o.n; ++i) {
    const auto t0 = Clock::now();
    const bool done = read_all(ctx);
    const auto t1 = Clock::now();
    if (done) {
      read.add(us_between(t0, t1));
    } else {
      fail(ctx);  // a failed operation's time is not a latency: no sample
    }
  }
  auto read_json = read.finish();

  Phase write(t.pid());
  for (std::size_t i = 0; i < o.n; ++i) {
    const auto t0 = Clock::now();
    const bool done = write_reg0(ctx, write_value(i));
    const auto t1 = Clock::now();
    if (done) {
      write.add(us_between(t0, t1));
    } else {
      fail(ctx);
    }
  }
  auto write_json = write.finish();

  std::uint16_t reg0 = 0;
  if (modbus_read_registers(ctx, g_base, 1, &reg0) != 1) {
    report_failure("read-back failed: " + modbus_error_text(errno));
    fail(ctx);
  } else if (reg0 != write_value(o.n - 1)) {
    report_failure("read-back: register 0 is " + std::to_string(reg0) + ", expected " +
                   std::to_string(write_value(o.n - 1)));
    ++errors;
    ok = false;
  }
  close_connection(ctx);

  return {{"protocol", "modbus"},
          {"connect", connect_json},
          {"read", read_json},
          {"write", write_json},
          {"readback_ok", ok},
          {"errors", errors},
          {"version", "libmodbus " LIBMODBUS_VERSION_STRING}};
}

struct ThroughputOptions {
  int clients = 1;
  double seconds = 5;
  int pipeline = 1;
};

struct Worker {
  modbus_t* ctx = nullptr;
  std::uint64_t ops = 0;
  std::uint64_t errors = 0;
  std::optional<Clock::time_point> first;  // start of the first read
  Clock::time_point last;                  // end of the last read
  std::string fatal;
};

void read_until(Worker& w, const Target& t, Clock::time_point deadline) {
  try {
    for (auto now = Clock::now(); now < deadline;) {
      if (!w.first) w.first = now;
      const bool done = read_all(w.ctx);
      now = w.last = Clock::now();
      if (done) {
        ++w.ops;
      } else {
        ++w.errors;
        reconnect(w.ctx, t);
      }
    }
  } catch (const Fatal& e) {
    w.fatal = e.what();
  }
}

nlohmann::json run_throughput(const Target& t, const ThroughputOptions& o, std::uint64_t& errors) {
  std::vector<Worker> workers(static_cast<std::size_t>(o.clients));
  try {
    for (auto& w : workers) w.ctx = open_connection(t);
  } catch (const Fatal&) {
    for (auto& w : workers) {
      if (w.ctx != nullptr) close_connection(w.ctx);
    }
    throw;
  }

  Phase phase(t.pid());
  std::latch go(1);
  Clock::time_point deadline;
  std::vector<std::thread> threads;
  threads.reserve(workers.size());
  for (auto& w : workers) {
    threads.emplace_back([&w, &t, &go, &deadline] {
      go.wait();
      read_until(w, t, deadline);
    });
  }
  deadline = Clock::now() +
             std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.seconds));
  go.count_down();
  for (auto& th : threads) th.join();
  const auto cost = phase.finish();

  std::uint64_t ops = 0;
  std::optional<Clock::time_point> first;
  Clock::time_point last{};
  std::string fatal;
  for (auto& w : workers) {
    ops += w.ops;
    errors += w.errors;
    if (w.first) {
      first = first ? std::min(*first, *w.first) : *w.first;
      last = std::max(last, w.last);
    }
    if (fatal.empty()) fatal = w.fatal;
    close_connection(w.ctx);
  }
  if (!fatal.empty()) throw Fatal(fatal);
  const double seconds = first ? us_between(*first, last) / 1e6 : 0.0;

  nlohmann::json j = {{"protocol", "modbus"},
                      {"clients", o.clients},
                      {"pipeline", 1},
                      {"ops", ops},
                      {"seconds", seconds},
                      {"ops_per_s", seconds > 0 ? static_cast<double>(ops) / seconds : 0.0},
                      {"cpu_client_us", cost["cpu_client_us"]},
                      {"cpu_server_us", cost["cpu_server_us"]},
                      {"bytes", cost["bytes"]},
                      {"errors", errors},
                      {"version", "libmodbus " LIBMODBUS_VERSION_STRING}};
  if (o.pipeline > 1) {
    j["note"] = "libmodbus sends a request only after the reply to the previous one: pipeline " +
                std::to_string(o.pipeline) + " was asked, 1 was measured";
  }
  return j;
}

void add_target_options(CLI::App* app, Target& t) {
  app->add_option("--host", t.host, "Server address (IPv4 address or name)")->capture_default_str();
  app->add_option("--port", t.port, "Server TCP port")
      ->check(CLI::Range(1, 65535))
      ->capture_default_str();
  app->add_option("--server-pid", t.server_pid, "Server process whose CPU time is reported")
      ->check(CLI::PositiveNumber);
  app->add_option("--base", g_base, "First register (reads start here, writes go here)")
      ->check(CLI::Range(0, 65535 - kRegisters))
      ->capture_default_str();
  app->add_option("--points", g_points, "Registers per read (1..10)")->check(CLI::Range(1, kRegisters))->capture_default_str();
}

void add_latency_options(CLI::App* app, Target& t, LatencyOptions& o) {
  add_target_options(app, t);
  app->add_option("--n", o.n, "Reads, and writes, timed")
      ->check(CLI::Range(1, 10000000))
      ->capture_default_str();
  app->add_option("--connects", o.connects, "Connects timed")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  app->add_option("--warmup", o.warmup, "Connect+read+write cycles before measuring")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
}

int run(int argc, char** argv) {
  CLI::App app{"modbus-bench-client: Modbus TCP bench client on libmodbus " LIBMODBUS_VERSION_STRING
               " (bench/README.md); latency mode without a subcommand"};
  Target target;
  LatencyOptions lo;
  ThroughputOptions to;
  add_latency_options(&app, target, lo);
  auto* latency = app.add_subcommand(
      "latency", "Connect, FC03 read of registers 0..9, FC06 write of register 0");
  add_latency_options(latency, target, lo);
  auto* throughput =
      app.add_subcommand("throughput", "FC03 reads of registers 0..9 on K connections");
  add_target_options(throughput, target);
  throughput->add_option("--clients", to.clients, "Connections, one thread each")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  throughput->add_option("--seconds", to.seconds, "Duration")
      ->check(CLI::Range(0.01, 3600.0))
      ->capture_default_str();
  throughput
      ->add_option("--pipeline", to.pipeline,
                   "Requests outstanding per connection (libmodbus: always 1)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.require_subcommand(0, 1);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "modbus-bench-client: error: " << e.what() << " (see --help)\n";
    return 1;
  }

  std::uint64_t errors = 0;
  nlohmann::json result;
  try {
    target.ip = resolve_ipv4(target.host);
    result =
        throughput->parsed() ? run_throughput(target, to, errors) : run_latency(target, lo, errors);
  } catch (const Fatal& e) {
    std::cerr << "modbus-bench-client: error: " << e.what() << "\n";
    return 1;
  }
  std::cout << result.dump() << std::endl;
  if (errors > 0) {
    std::cerr << "modbus-bench-client: " << errors << " operation(s) failed\n";
    return 2;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "modbus-bench-client: error: " << e.what() << "\n";
    return 1;
  }
}
