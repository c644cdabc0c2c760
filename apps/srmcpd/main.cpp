// srmcpd: the SRMCP v2 server daemon (docs/srmcpd.md).
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <asio.hpp>
#include <sys/resource.h>

#include <condition_variable>
#include <iostream>
#include <mutex>
#include <thread>

#include "metrics_page.hpp"
#include "pqot/common/host_port.hpp"
#include "pqot/metrics/http_server.hpp"
#include "pqot/srmcp/config.hpp"
#include "pqot/srmcp/gateway.hpp"
#include "pqot/srmcp/server.hpp"

using namespace pqot::srmcp;

namespace {

// What the command line overrides in the file; applied again on every reload.
struct Overrides {
  std::string listen, ca, cert, key, log_level;
  unsigned threads = 0;
};

// The nodes of a configuration and the Modbus devices behind them.
struct Plant {
  std::unique_ptr<pqot::srmcp::gateway::Gateway> gateway;
  std::shared_ptr<NodeStore> nodes;
};

void split_host_port(const std::string& text, std::string& host, std::uint16_t& port, const char* flag = "--listen") {
  const auto hp = pqot::common::parse_host_port(text, /*allow_port_zero=*/true);
  if (!hp) throw CLI::ValidationError(flag, "expected HOST:PORT or [IPV6]:PORT with PORT 0..65535, got '" + text + "'");
  host = hp->host;
  port = hp->port;
}

// Each session holds a control connection and up to max_links data links: the default soft limit
// of 1,024 descriptors would cap srmcpd far below max_sessions. Raise it to the hard limit.
void raise_descriptor_limit(const pqot::srmcp::ServerConfig& cfg) {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
  if (rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  // Sessions with all their links, handshakes in progress (control connections and connections to
  // offer ports, both bounded by max_handshakes), offer listeners, and a margin for the rest.
  const auto wanted = static_cast<rlim_t>(cfg.max_sessions) * (cfg.limits.max_links + 1) + cfg.max_handshakes +
                      cfg.max_pending_links + 64;
  if (rl.rlim_cur < wanted) {
    spdlog::warn("open-file limit {} is below the {} that max_sessions and max_links may need", rl.rlim_cur, wanted);
  }
}

LoadedConfig load(const std::string& file, const Overrides& o) {
  LoadedConfig loaded = load_config(file);
  auto& s = loaded.server;
  if (!o.listen.empty()) split_host_port(o.listen, s.listen_host, s.listen_port);
  if (!o.ca.empty()) s.ca_file = o.ca;
  if (!o.cert.empty()) s.cert_file = o.cert;
  if (!o.key.empty()) s.key_file = o.key;
  if (o.threads != 0) s.threads = o.threads;
  if (!o.log_level.empty()) s.log_level = o.log_level;
  for (const auto* f : {&s.ca_file, &s.cert_file, &s.key_file}) {
    if (f->empty()) throw ConfigError(file + ": ca, cert and key are required (in [server] or as flags)");
  }
  return loaded;
}

Plant build_plant(const LoadedConfig& loaded) {
  Plant p;
  p.gateway = std::make_unique<gateway::Gateway>(loaded.devices);
  p.nodes = gateway::build_node_store(loaded, *p.gateway);
  return p;
}

void apply_log_level(const std::string& name) {
  const auto level = spdlog::level::from_str(name);
  spdlog::set_level(level == spdlog::level::off && name != "off" ? spdlog::level::info : level);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"srmcpd: SRMCP v2 server (mutual TLS 1.3, ML-KEM / X-Wing inner keys, data links)"};
  std::string config_file, metrics_address;
  Overrides o;
  bool check_only = false;
  app.add_option("--config", config_file, "Configuration file (TOML, docs/srmcpd.md)")->required();
  app.add_option("--listen", o.listen, "HOST:PORT to listen on (overrides [server] listen; port 0 = any)");
  app.add_option("--ca", o.ca, "CA certificate clients must chain to (overrides [server] ca)");
  app.add_option("--cert", o.cert, "Server certificate chain (overrides [server] cert)");
  app.add_option("--key", o.key, "Server private key (overrides [server] key)");
  app.add_option("--threads", o.threads, "I/O threads (overrides [server] threads)")->check(CLI::Range(1u, 64u));
  app.add_option("--log-level", o.log_level, "trace, debug, info, warn, error (overrides [server] log_level)");
  app.add_option("--metrics", metrics_address,
                 "HOST:PORT for the Prometheus endpoint (GET /metrics, /healthz; docs/metrics.md); off if not given");
  app.add_flag("--check-config", check_only, "Validate the configuration and exit (0 = valid, 2 = not)");
  app.footer("Signals: SIGTERM/SIGINT stop cleanly; SIGHUP reloads the nodes, devices and log level "
             "(docs/srmcpd.md, \"Reloading\").");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "srmcpd: error: " << e.what() << " (see --help)\n";
    return 2;
  }

  // The event loops are declared before the plant: its devices live on strands of these loops,
  // which must outlive them (a strand cannot outlive its io_context).
  std::vector<std::unique_ptr<asio::io_context>> contexts;
  LoadedConfig loaded;
  Plant plant;
  std::string metrics_host;
  std::uint16_t metrics_port = 0;
  try {
    if (!metrics_address.empty()) split_host_port(metrics_address, metrics_host, metrics_port, "--metrics");
    loaded = load(config_file, o);
    plant = build_plant(loaded);  // connects to nothing yet
  } catch (const std::exception& e) {
    std::cerr << "srmcpd: error: " << e.what() << "\n";
    return 2;
  }
  ServerConfig cfg = loaded.server;
  if (check_only) {
    std::cout << config_file << ": OK: " << plant.nodes->size() << " nodes, " << loaded.devices.size()
              << " Modbus devices, listen " << cfg.listen_host << ":" << cfg.listen_port << "\n";
    return 0;
  }

  apply_log_level(cfg.log_level);
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");

  // One io_context per thread: the listener and signals on the first, sessions spread over all.
  // A session's work then stays on one thread (no cross-thread wake-ups per request).
  for (unsigned i = 0; i < std::max(1u, cfg.threads); ++i) contexts.push_back(std::make_unique<asio::io_context>(1));
  std::vector<asio::io_context*> session_contexts;
  for (auto& c : contexts) session_contexts.push_back(c.get());
  asio::io_context& io = *contexts.front();
  raise_descriptor_limit(cfg);
  Server server(io, cfg, plant.nodes, session_contexts);
  try {
    server.start();
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
  // The devices run on the sessions' event loops: an on-demand read needs no thread hand-off.
  plant.gateway->start(session_contexts);
  pqot::srmcpd::DaemonCounters counters;
  counters.nodes = plant.nodes->size();
  std::unique_ptr<pqot::metrics::MetricsHttpServer> metrics;
  if (!metrics_address.empty()) {
    try {
      // Rendered on `io`, the thread that also replaces `plant` on SIGHUP.
      metrics = std::make_unique<pqot::metrics::MetricsHttpServer>(
          io, metrics_host, metrics_port,
          [&] { return pqot::srmcpd::render_metrics(server.stats(), plant.gateway->stats(), counters); },
          [&] { return !io.stopped(); });
      metrics->start();
    } catch (const std::exception& e) {
      spdlog::error("metrics: {}", e.what());
      return 1;
    }
    spdlog::info("metrics on http://{}:{}/metrics", metrics_host, metrics->port());
  }
  spdlog::info("srmcpd listening on {}:{} with {} nodes, {} Modbus devices, {} threads", cfg.listen_host,
               server.port(), plant.nodes->size(), loaded.devices.size(), cfg.threads);
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const asio::error_code& ec, int sig) {
    if (ec) return;
    spdlog::info("signal {}: shutting down", sig);
    server.stop();
    if (metrics) metrics->stop();
    // Give sessions a moment to close their links, then stop.
    auto timer = std::make_shared<asio::steady_timer>(io, std::chrono::milliseconds(200));
    timer->async_wait([&contexts, timer](const asio::error_code&) {
      for (auto& c : contexts) c->stop();
    });
  });

  // SIGHUP: reload the nodes and devices without dropping sessions (docs/srmcpd.md, "Reloading").
  // The old devices keep answering requests already under way, then stop in the background.
  std::vector<std::thread> retiring;
  std::mutex retire_mutex;
  std::condition_variable retire_now;  // shutdown: stop retired devices without waiting
  bool shutting_down = false;
  asio::signal_set hangup(io, SIGHUP);
  std::function<void()> wait_hangup = [&] {
    hangup.async_wait([&](const asio::error_code& ec, int) {
      if (ec) return;
      try {
        LoadedConfig fresh = load(config_file, o);
        Plant next = build_plant(fresh);
        for (const auto& key : settings_needing_restart(cfg, fresh.server)) {
          spdlog::warn("reload: {} changed; it takes effect after a restart", key);
        }
        next.gateway->start(session_contexts);
        server.set_nodes(next.nodes);
        if (fresh.server.log_level != cfg.log_level) {
          apply_log_level(fresh.server.log_level);
          cfg.log_level = fresh.server.log_level;
        }
        retiring.emplace_back([&, old = std::make_shared<Plant>(std::move(plant))] {
          std::unique_lock lock(retire_mutex);  // requests under way finish first
          retire_now.wait_for(lock, std::chrono::seconds(2), [&] { return shutting_down; });
          lock.unlock();
          old->gateway->stop();
        });
        plant = std::move(next);
        counters.nodes = plant.nodes->size();
        ++counters.reloads_ok;
        spdlog::info("reloaded {}: {} nodes, {} Modbus devices", config_file, plant.nodes->size(), fresh.devices.size());
      } catch (const std::exception& e) {
        ++counters.reloads_failed;
        spdlog::error("reload failed, the running configuration stays: {}", e.what());
      }
      wait_hangup();
    });
  };
  wait_hangup();
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> idle_guards;
  std::vector<std::thread> pool;
  for (std::size_t i = 1; i < contexts.size(); ++i) {
    idle_guards.push_back(asio::make_work_guard(*contexts[i]));  // run even with no session yet
    pool.emplace_back([c = contexts[i].get()] { c->run(); });
  }
  io.run();
  for (auto& t : pool) t.join();
  // Queued requests are answered SHUTTING_DOWN (to loops that no longer run); what a device's
  // strand still holds goes with the loops, which are destroyed last.
  plant.gateway->stop();
  {
    std::lock_guard lock(retire_mutex);
    shutting_down = true;
  }
  retire_now.notify_all();
  for (auto& t : retiring) t.join();
  const auto st = server.stats();
  spdlog::info("srmcpd stopped: {} sessions, {} requests, {} errors", st.sessions_total, st.requests, st.errors);
  return 0;
}
