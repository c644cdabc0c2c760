// srmcp-bench: the SRMCP bench client (bench/README.md, "The bench-client contract").
//
//   srmcp-bench latency    ... --n N --connects C --warmup W   connect, read of ten nodes, write of one
//   srmcp-bench throughput ... --clients K --seconds S --pipeline D   reads/s with D outstanding per client
//   srmcp-bench hold       ... --sessions N                    server RSS per open session
//
// Everything runs as coroutines on the library's asynchronous API, on io_contexts owned here: a
// latency run uses one thread (no hand-offs between threads), the throughput run two (the
// machine's cores). Prints one JSON object on stdout; diagnostics on stderr.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <fstream>
#include <iostream>
#include <optional>
#include <thread>
#include <sys/resource.h>

#include "bench_client.hpp"
#include "pqot/srmcp/client.hpp"

using namespace pqot::srmcp;
using pqot::bench::Clock;
using pqot::bench::Phase;
using pqot::bench::us_between;

namespace {

struct Options {
  std::string host = "127.0.0.1";
  std::uint16_t port = 4843;
  std::string ca, cert, key;
  std::string kem = "ML-KEM-768";
  std::string encoding = "compact";
  unsigned links = 1;
  unsigned n = 1000;
  unsigned connects = 20;
  std::optional<unsigned> writes;  // timed writes; default: as many as reads (--n)
  unsigned warmup = 20;
  long server_pid = 0;
  unsigned clients = 1;
  double seconds = 5;
  unsigned pipeline = 16;
  unsigned sessions = 1000;
  unsigned parallel_connects = 8;
  double hold_seconds = 1;
};

const std::vector<std::string> kAllIds = {"bench.r0", "bench.r1", "bench.r2", "bench.r3", "bench.r4",
                                          "bench.r5", "bench.r6", "bench.r7", "bench.r8", "bench.r9"};
// The nodes a read asks for: the first --points of them (10 by default, bench/README.md).
std::vector<std::string> kIds = kAllIds;

std::optional<long> server_pid(const Options& o) {
  return o.server_pid > 0 ? std::optional<long>(o.server_pid) : std::nullopt;
}

ClientOptions client_options(const Options& o) {
  ClientOptions co;
  co.host = o.host;
  co.port = o.port;
  co.tls = pqot::channel::TlsFiles{o.ca, o.cert, o.key};
  co.tls_context = std::make_shared<asio::ssl::context>(pqot::channel::make_client_tls(co.tls));
  std::string name = o.kem;
  // Accept "ml-kem-768" and "x-wing" as well as the canonical names.
  for (const std::string canonical : {"ML-KEM-768", "ML-KEM-1024", "X-Wing"}) {
    if (std::equal(name.begin(), name.end(), canonical.begin(), canonical.end(),
                   [](char a, char b) { return std::tolower(a) == std::tolower(b); })) {
      name = canonical;
    }
  }
  const auto kem = kem_id(name);
  if (!kem) throw std::invalid_argument("unknown KEM '" + o.kem + "' (ML-KEM-768, ML-KEM-1024 or X-Wing)");
  co.kems = {*kem};
  const auto encoding = parse_encoding_name(o.encoding);
  if (!encoding) throw std::invalid_argument("unknown body encoding '" + o.encoding + "' (compact or json)");
  co.encodings = {*encoding};
  co.links = o.links;
  co.rotate_interval = std::chrono::milliseconds(0);  // no rotation inside a measurement
  co.deadline = std::chrono::milliseconds(5000);
  return co;
}

// A write of `value` to the first node.
std::vector<std::pair<std::string, Value>> write_values(int value) { return {{kIds[0], std::int64_t{value}}}; }

// A read is good when all ten nodes came back OK with integer values.
bool read_ok(const ReadReply& r) {
  if (r.status != Status::ok || r.values.size() != kIds.size()) return false;
  return std::all_of(r.values.begin(), r.values.end(), [](const NodeReading& v) {
    return v.status == Status::ok && std::holds_alternative<std::int64_t>(v.value);
  });
}

bool write_ok(const WriteReply& r, int value) {
  if (r.status != Status::ok || r.values.size() != 1) return false;
  const WriteOutcome& v = r.values[0];
  return v.status == Status::ok && std::holds_alternative<std::int64_t>(v.stored) &&
         std::get<std::int64_t>(v.stored) == value;
}

// ---- latency ---------------------------------------------------------------------------------------

asio::awaitable<Json> latency(asio::io_context& io, const Options& o) {
  const ClientOptions co = client_options(o);
  Json out;
  out["protocol"] = "srmcp";
  out["kem"] = co.kems.empty() ? "" : std::string(*kem_name(co.kems[0]));
  out["links"] = o.links;
  out["version"] = std::string("SRMCP v2, pqot ") + PQOT_VERSION_STRING;
  out["encoding"] = o.encoding;
  std::uint64_t errors = 0;

  for (unsigned i = 0; i < o.warmup; ++i) {
    Client c(io, co);
    co_await c.async_connect();
    errors += !read_ok(co_await c.async_read(kIds));
    errors += !write_ok(co_await c.async_write(write_values(100)), 100);
    co_await c.async_close();
  }

  // C timed connects (each closed again, untimed) with the given options.
  auto time_connects = [&](ClientOptions options) -> asio::awaitable<Json> {
    Phase phase(server_pid(o));
    for (unsigned i = 0; i < o.connects; ++i) {
      const auto t0 = Clock::now();
      Client c(io, options);
      co_await c.async_connect();
      phase.add(us_between(t0, Clock::now()));
      co_await c.async_close();
    }
    co_return phase.finish();
  };
  out["connect"] = co_await time_connects(co);
  // The control channel alone (TCP, TLS 1.3, the KEM exchange, SESSION_READY): what a session
  // needs before its first request, which may go on the control connection (§8.1).
  ClientOptions control_only = co;
  control_only.links = 0;
  out["connect_control"] = co_await time_connects(control_only);

  Client c(io, co);
  co_await c.async_connect();
  bool reads_ok = true;
  {
    Phase phase(server_pid(o));
    for (unsigned i = 0; i < o.n; ++i) {
      const auto t0 = Clock::now();
      const ReadReply r = co_await c.async_read(kIds);
      phase.add(us_between(t0, Clock::now()));
      if (!read_ok(r)) {
        ++errors;
        reads_ok = false;
      }
    }
    out["read"] = phase.finish();
  }
  const unsigned writes = o.writes.value_or(o.n);
  if (writes > 0) {
    Phase phase(server_pid(o));
    for (unsigned i = 0; i < writes; ++i) {
      const int value = pqot::bench::write_value(i);
      auto values = write_values(value);
      const auto t0 = Clock::now();
      const WriteReply r = co_await c.async_write(std::move(values));
      phase.add(us_between(t0, Clock::now()));
      errors += !write_ok(r, value);
    }
    out["write"] = phase.finish();
  }
  // Read-back: node 0 must hold the last value written.
  const ReadReply back = co_await c.async_read(kIds);
  const bool back_ok = read_ok(back) && (writes == 0 || std::get<std::int64_t>(back.values[0].value) ==
                                                           pqot::bench::write_value(writes - 1));
  co_await c.async_close();
  out["readback_ok"] = reads_ok && back_ok && errors == 0;
  out["errors"] = errors;
  co_return out;
}

// ---- throughput ------------------------------------------------------------------------------------

// `threads` io_contexts, one thread each, run until destroyed; clients are spread over them round
// robin (as srmcpd spreads sessions), so a client's work never moves between threads. run() waits
// for one coroutine. Client read loops stay pending while sessions are open, so io.run() alone
// would not return.
class Runner {
 public:
  explicit Runner(unsigned threads) {
    for (unsigned i = 0; i < std::max(1u, threads); ++i) {
      contexts_.push_back(std::make_unique<asio::io_context>(1));
      guards_.emplace_back(contexts_.back()->get_executor());
    }
    for (auto& c : contexts_) threads_.emplace_back([io = c.get()] { io->run(); });
  }
  ~Runner() {
    guards_.clear();
    for (auto& c : contexts_) c->stop();
    for (auto& t : threads_) t.join();
  }
  asio::io_context& io() { return *contexts_.front(); }
  asio::io_context& next() { return *contexts_[next_++ % contexts_.size()]; }
  template <class T>
  T run(asio::awaitable<T> op) {
    // On a strand: the coroutine's own timers (Join) are then never touched by two threads at once.
    return asio::co_spawn(asio::make_strand(io()), std::move(op), asio::use_future).get();
  }

 private:
  std::vector<std::unique_ptr<asio::io_context>> contexts_;
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> guards_;
  std::vector<std::thread> threads_;
  std::size_t next_ = 0;
};

struct Counters {
  std::atomic<std::uint64_t> ops{0};
  std::atomic<std::uint64_t> errors{0};
};

// Waits until `count` spawned coroutines have finished; made and awaited on the waiter's strand,
// which the completions post to.
class Join {
 public:
  Join(const asio::any_io_executor& strand, std::size_t count)
      : timer_(std::make_shared<asio::steady_timer>(strand, Clock::time_point::max())),
        left_(std::make_shared<std::atomic<std::size_t>>(count)) {}
  auto done() {
    return [timer = timer_, left = left_](std::exception_ptr) {
      if (left->fetch_sub(1) == 1) asio::post(timer->get_executor(), [timer] { timer->cancel(); });
    };
  }
  asio::awaitable<void> wait() {
    if (left_->load() == 0) co_return;
    asio::error_code ec;
    co_await timer_->async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }

 private:
  std::shared_ptr<asio::steady_timer> timer_;
  std::shared_ptr<std::atomic<std::size_t>> left_;
};

// A client and the io_context it runs on.
struct Session {
  std::unique_ptr<Client> client;
  asio::io_context* io = nullptr;
};

// Opens `clients` sessions, `parallel` connects in flight at a time; returns the ones that opened.
std::vector<Session> open_sessions(Runner& runner, const ClientOptions& co, unsigned clients, unsigned parallel,
                                   std::uint64_t& errors) {
  std::vector<Session> all;
  for (unsigned i = 0; i < clients; ++i) {
    asio::io_context& io = runner.next();
    all.push_back(Session{std::make_unique<Client>(io, co), &io});
  }
  std::vector<char> opened(all.size(), 0);
  std::atomic<std::size_t> next{0};
  std::atomic<std::uint64_t> failed{0};
  auto worker = [&]() -> asio::awaitable<void> {
    for (std::size_t i; (i = next.fetch_add(1)) < all.size();) {
      try {
        co_await all[i].client->async_connect();
        opened[i] = 1;
      } catch (const std::exception& e) {
        if (failed.fetch_add(1) == 0) std::cerr << "srmcp-bench: connect failed: " << e.what() << "\n";
      }
    }
  };
  const unsigned workers = std::max(1u, std::min(parallel, clients));
  runner.run([&]() -> asio::awaitable<void> {
    Join join(co_await asio::this_coro::executor, workers);
    for (unsigned w = 0; w < workers; ++w) asio::co_spawn(runner.io(), worker(), join.done());
    co_await join.wait();
  }());
  errors += failed.load();
  std::vector<Session> out;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (opened[i]) out.push_back(std::move(all[i]));
  }
  return out;
}

void close_sessions(Runner& runner, std::vector<Session>& clients) {
  runner.run([&]() -> asio::awaitable<void> {
    Join join(co_await asio::this_coro::executor, clients.size());
    for (auto& c : clients) asio::co_spawn(*c.io, c.client->async_close(), join.done());
    co_await join.wait();
  }());
  clients.clear();
}

asio::awaitable<void> reader(Client& c, Clock::time_point end, Counters& counters) {
  while (Clock::now() < end) {
    const ReadReply r = co_await c.async_read(kIds);
    if (read_ok(r)) {
      counters.ops.fetch_add(1, std::memory_order_relaxed);
    } else if (counters.errors.fetch_add(1, std::memory_order_relaxed) == 0) {
      std::cerr << "srmcp-bench: read failed: " << status_name(r.status) << " " << r.message << "\n";
    }
  }
}

Json throughput(const Options& o) {
  const ClientOptions co = client_options(o);
  Runner runner(2);  // the machine's two cores (shared with the server)
  std::uint64_t connect_errors = 0;
  auto clients = open_sessions(runner, co, o.clients, 8, connect_errors);
  Counters counters;
  const unsigned pipeline = std::max(1u, o.pipeline);
  Phase phase(server_pid(o));
  const auto t0 = Clock::now();
  const auto end = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.seconds));
  runner.run([&]() -> asio::awaitable<void> {
    Join join(co_await asio::this_coro::executor, clients.size() * pipeline);
    for (auto& c : clients) {
      // The readers of a client run on the client's own io_context (its strand's).
      for (unsigned i = 0; i < pipeline; ++i) asio::co_spawn(*c.io, reader(*c.client, end, counters), join.done());
    }
    co_await join.wait();
  }());
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  const Json p = phase.finish();
  close_sessions(runner, clients);
  Json out;
  out["protocol"] = "srmcp";
  out["clients"] = o.clients;
  out["pipeline"] = pipeline;
  out["links"] = o.links;
  out["ops"] = counters.ops.load();
  out["seconds"] = seconds;
  out["ops_per_s"] = static_cast<double>(counters.ops.load()) / seconds;
  out["cpu_client_us"] = p["cpu_client_us"];
  out["cpu_server_us"] = p["cpu_server_us"];
  out["errors"] = counters.errors.load() + connect_errors;
  return out;
}

// ---- hold ------------------------------------------------------------------------------------------

// Resident set size of process `pid` in KiB; -1 if unknown.
long rss_kib(long pid) {
  if (pid <= 0) return -1;
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

Json hold(const Options& o) {
  const ClientOptions co = client_options(o);
  Runner runner(1);
  const long before = rss_kib(o.server_pid);
  std::uint64_t errors = 0;
  const auto t0 = Clock::now();
  auto clients = open_sessions(runner, co, o.sessions, o.parallel_connects, errors);
  const double connect_s = std::chrono::duration<double>(Clock::now() - t0).count();
  // Let the server settle, then read its RSS with every session open.
  std::this_thread::sleep_for(std::chrono::duration<double>(o.hold_seconds));
  const long after = rss_kib(o.server_pid);
  const std::size_t opened = clients.size();
  close_sessions(runner, clients);
  Json out;
  out["protocol"] = "srmcp";
  out["sessions"] = o.sessions;
  out["links"] = o.links;
  out["opened"] = opened;
  out["connect_seconds"] = connect_s;
  const bool known = before >= 0 && after >= 0;
  out["rss_before_kib"] = known ? Json(before) : Json(nullptr);
  out["rss_after_kib"] = known ? Json(after) : Json(nullptr);
  out["rss_per_session_kib"] =
      known && opened > 0 ? Json(static_cast<double>(after - before) / static_cast<double>(opened)) : Json(nullptr);
  out["errors"] = errors;
  return out;
}

// More sessions than the default 1,024 descriptors allow: raise the soft limit to the hard one.
void raise_fd_limit() {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
}

void add_common(CLI::App* app, Options& o) {
  app->add_option("--host", o.host, "Server address")->capture_default_str();
  app->add_option("--port", o.port, "Server port")->capture_default_str();
  app->add_option("--ca", o.ca, "CA certificate (PEM)")->required();
  app->add_option("--cert", o.cert, "Client certificate (PEM)")->required();
  app->add_option("--key", o.key, "Client private key (PEM)")->required();
  app->add_option("--kem", o.kem, "KEM: ML-KEM-768, ML-KEM-1024 or X-Wing")->capture_default_str();
  app->add_option("--links", o.links, "Data links per session")->capture_default_str();
  app->add_option("--encoding", o.encoding, "Body encoding offered: compact or json (§4, §9.2)")->capture_default_str();
  app->add_option("--server-pid", o.server_pid, "Server process, for its CPU time and RSS");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"srmcp-bench: SRMCP bench client (bench/README.md)"};
  app.require_subcommand(1);
  Options o;
  auto* lat = app.add_subcommand("latency", "Connect, read of ten nodes, write of one; one JSON object on stdout");
  add_common(lat, o);
  lat->add_option("--n", o.n, "Reads and writes")->capture_default_str()->check(CLI::Range(1u, 10000000u));
  lat->add_option("--connects", o.connects, "Timed connects")->capture_default_str();
  lat->add_option("--writes", o.writes, "Timed writes (default: --n; 0 = reads only, for profiles)");
  lat->add_option("--warmup", o.warmup, "Untimed connect+read+write cycles first")->capture_default_str();
  std::size_t points = kAllIds.size();
  lat->add_option("--points", points, "Nodes per read: bench.r0 .. (1..10)")->capture_default_str()->check(CLI::Range(1, 10));
  auto* thr = app.add_subcommand("throughput", "Reads per second from concurrent, pipelining clients");
  add_common(thr, o);
  thr->add_option("--clients", o.clients, "Concurrent sessions")->capture_default_str()->check(CLI::Range(1u, 10000u));
  thr->add_option("--seconds", o.seconds, "Measured duration")->capture_default_str()->check(CLI::Range(0.1, 3600.0));
  thr->add_option("--pipeline", o.pipeline, "Outstanding reads per session")->capture_default_str();
  auto* hld = app.add_subcommand("hold", "Open many sessions at once; server RSS per session");
  add_common(hld, o);
  hld->add_option("--sessions", o.sessions, "Sessions to open")->capture_default_str()->check(CLI::Range(1u, 100000u));
  hld->add_option("--parallel", o.parallel_connects, "Connects in flight at once")->capture_default_str();
  hld->add_option("--hold-seconds", o.hold_seconds, "Wait before reading the RSS")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  kIds.resize(points);

  try {
    Json out;
    raise_fd_limit();
    if (lat->parsed()) {
      Runner runner(1);
      out = runner.run(latency(runner.io(), o));
    } else if (thr->parsed()) {
      out = throughput(o);
    } else {
      out = hold(o);
    }
    std::cout << out.dump() << std::endl;
    const bool failed = out.value("errors", 0) != 0 || (out.contains("readback_ok") && !out["readback_ok"].get<bool>());
    return failed ? 1 : 0;
  } catch (const std::exception& e) {
    std::cerr << "srmcp-bench: " << e.what() << "\n";
    return 1;
  }
}
