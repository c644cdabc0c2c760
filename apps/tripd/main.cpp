// tripd: TRIP's daemon, a multipath redundant post-quantum secure UDP tunnel (docs/trip.md,
// docs/tripd.md).
//
//   tripd --config FILE [--check-config] [--log-level LEVEL]
//
// Exit codes: 0 stopped cleanly (SIGTERM/SIGINT) or a valid configuration; 2 a bad command line or
// configuration; 1 a failure at start (a certificate, an address in use). SIGHUP reloads the
// configuration (docs/tripd.md, "Reloading").
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <functional>
#include <iostream>

#include "daemon.hpp"
#include "metrics_page.hpp"
#include "relay_set.hpp"
#include "status_server.hpp"
#include "pqot/metrics/http_server.hpp"
#include "tripd/config.hpp"

namespace {

using namespace pqot::tripd;

// What a reload leaves as it was at start (docs/tripd.md, "Reloading").
struct Fixed {
  std::optional<pqot::common::HostPort> metrics_listen;
  std::optional<std::filesystem::path> status_socket;
  bool log_level_on_command_line = false;
};

// SIGHUP: the same file read again; refused whole, applied, or applied in part (a restarted path or
// relay could not take its address back), in one log line each way.
void reload(const std::string& file, const Fixed& fixed, Daemon& daemon, RelaySet& relays, ReloadCounts& counts) {
  try {
    TripdConfig next = load_config(file);
    if (next.metrics_listen != fixed.metrics_listen) throw ReloadRefused("[metrics] listen changed: that needs a restart");
    if (next.status_socket != fixed.status_socket) throw ReloadRefused("[status] socket changed: that needs a restart");
    const std::vector<RelayConfig> next_relays = next.relays;
    const std::string level = next.log_level;
    auto prepared = daemon.prepare_reload(std::move(next));
    auto prepared_relays = relays.prepare(next_relays);  // throws: `prepared` is dropped, nothing changed
    const ReloadOutcome paths = daemon.commit_reload(std::move(prepared));
    const ReloadOutcome relay = relays.commit(std::move(prepared_relays));
    std::string log_line;
    if (!fixed.log_level_on_command_line && spdlog::get_level() != spdlog::level::from_str(level)) {
      spdlog::set_level(spdlog::level::from_str(level));
      log_line = "; log level " + level;
    }
    std::string failed;
    for (const auto* o : {&paths, &relay}) {
      for (const std::string& f : o->failed) failed += (failed.empty() ? "" : "; ") + f;
    }
    if (failed.empty()) {
      ++counts.applied;
      spdlog::info("reload applied: {}; {}{}", paths.line, relay.line, log_line);
    } else {
      // A restarted path or relay whose unchanged address could not be taken back once its old
      // socket closed: down until a later reload brings it (it then counts as added).
      ++counts.partial;
      spdlog::error("reload applied in part: {}; {}{}; stayed down: {}", paths.line, relay.line, log_line, failed);
    }
  } catch (const std::exception& e) {
    ++counts.refused;
    spdlog::error("reload refused, the running configuration is kept: {}", e.what());
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGHUP, SIG_IGN);  // until the daemon's signal_set takes it (below)
  CLI::App app{"tripd: TRIP, a multipath redundant post-quantum secure UDP tunnel (docs/tripd.md)"};
  app.name("tripd");
  std::string config_file, log_level;
  bool check_only = false;
  app.add_option("--config", config_file, "Configuration file (TOML, docs/tripd.md)")->required();
  app.add_flag("--check-config", check_only, "Validate the configuration and exit (0 valid, 2 not)");
  app.add_option("--log-level", log_level, "trace, debug, info, warning, error (overrides [log] level)")
      ->check(CLI::IsMember({"trace", "debug", "info", "warning", "error"}));
  app.set_version_flag("--version", std::string(PQOT_VERSION_STRING));
  app.footer("SIGTERM or SIGINT stop it cleanly (each session is closed with CLOSE shutdown); SIGHUP reads the "
             "configuration again and applies it (docs/tripd.md, \"Reloading\"). Examples: examples/trip/*.toml.");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "tripd: error: " << e.what() << " (see --help)\n";
    return 2;
  }
  TripdConfig config;
  try {
    config = load_config(config_file);
  } catch (const std::exception& e) {
    std::cerr << "tripd: error: " << e.what() << "\n";
    return 2;
  }
  if (check_only) {
    std::size_t reflect = 0;
    for (const FlowConfig& f : config.flows) reflect += f.reflects() ? 1 : 0;
    std::cout << config_file << ": OK: " << config.paths.size() << " paths, " << reflect << " flows reflected, "
              << config.flows.size() - reflect << " filtered, " << config.relays.size() << " relays\n";
    return 0;
  }
  spdlog::set_default_logger(spdlog::stderr_color_st("tripd"));  // logs on stderr; stdout stays for --check-config
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  spdlog::set_level(spdlog::level::from_str(log_level.empty() ? config.log_level : log_level));
  try {
    asio::io_context io;
    // Registered before anything starts: a SIGHUP that comes while tripd starts waits for the
    // first async_wait below (until here, main ignores it); and destroyed after the daemon.
    asio::signal_set hangup(io, SIGHUP);
    const Fixed fixed{config.metrics_listen, config.status_socket, !log_level.empty()};
    const std::vector<RelayConfig> relay_configs = config.relays;
    Daemon daemon(io, std::move(config));
    daemon.start();
    RelaySet relays(io);
    relays.start(relay_configs);
    ReloadCounts reloads;
    std::unique_ptr<pqot::metrics::MetricsHttpServer> metrics;
    if (fixed.metrics_listen) {
      metrics = std::make_unique<pqot::metrics::MetricsHttpServer>(io, fixed.metrics_listen->host, fixed.metrics_listen->port,
                                                                    [&] { return metrics_page(daemon, relays.stats(), reloads); });
      metrics->start();
    }
    std::unique_ptr<StatusServer> status;
    if (fixed.status_socket) {
      status = std::make_unique<StatusServer>(io, *fixed.status_socket, [&daemon] { return status_json(daemon); });
      status->start();
    }
    std::function<void()> wait_hangup = [&] {
      hangup.async_wait([&](std::error_code ec, int) {
        if (ec) return;
        reload(config_file, fixed, daemon, relays, reloads);
        wait_hangup();
      });
    };
    wait_hangup();
    asio::signal_set signals(io, SIGINT, SIGTERM);
    signals.async_wait([&](std::error_code ec, int sig) {
      if (ec) return;
      spdlog::info("signal {}: stopping", sig);
      daemon.stop();
      hangup.cancel();
      relays.stop();
      if (metrics) metrics->stop();
      if (status) status->stop();
      // Let the CLOSE frames go out, then end.
      auto timer = std::make_shared<asio::steady_timer>(io, std::chrono::milliseconds(200));
      timer->async_wait([&io, timer](std::error_code) { io.stop(); });
    });
    io.run();
    // The signal sets restore SIGHUP's default action (ending the process) when destroyed, and
    // the daemon's teardown is still to come: a late SIGHUP is ignored instead.
    hangup.clear();
    std::signal(SIGHUP, SIG_IGN);
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
  return 0;
}
