// srmcp: command-line client for SRMCP v2 servers (docs/srmcp-cli.md).
//
// Exit codes: 0 success; 1 connection or internal failure; 2 usage error (also a bad
// configuration file); 3 the server answered with an error status (printed with its §11 name and
// code), or a node in the result did.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <mutex>
#include <tuple>

#include "client_config.hpp"
#include "pqot/common/host_port.hpp"
#include "pqot/srmcp/client.hpp"

using namespace pqot::srmcp;
using namespace pqot::srmcp_cli;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

namespace {

struct Options {
  std::string server = "127.0.0.1:4843";
  std::string ca, cert, key;
  std::string config;
  std::string kem = "ML-KEM-768";
  std::string encoding = "compact";
  unsigned links = 3;
  unsigned deadline_ms = 1000;
  bool json = false;
  std::string root;
  int depth = -1;
  std::vector<std::string> ids;
  std::vector<std::string> assignments;
  unsigned count = 1;
  unsigned interval_ms = 0;
  unsigned rotate_ms = 60000;
};

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

std::string show(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

std::string status_text(int code) { return status_name(static_cast<Status>(code)) + " (" + std::to_string(code) + ")"; }

// A table column as wide as its header and every entry, plus two spaces: a long node id never
// runs into the next column.
int column_width(const Json& rows, const char* key, const std::string& header) {
  std::size_t width = header.size();
  for (const auto& r : rows) width = std::max(width, show(r.value(key, Json(""))).size());
  return static_cast<int>(width + 2);
}

// Prints per-node results as a table; returns whether every node succeeded.
bool print_values(const Json& values, bool with_type) {
  bool all_ok = true;
  const int id_w = column_width(values, "id", "id");
  const int type_w = with_type ? column_width(values, "type", "type") : 0;
  std::cout << std::left << std::setw(id_w) << "id" << std::setw(type_w) << (with_type ? "type" : "")
            << "value / status\n";
  for (const auto& v : values) {
    const int st = v.value("status", 0);
    std::cout << std::left << std::setw(id_w) << v.value("id", "?") << std::setw(type_w)
              << (with_type ? v.value("type", "") : "");
    if (st == 0) {
      std::cout << show(v.value("value", Json())) << "\n";
    } else {
      std::cout << "error: " << status_text(st) << "\n";
      all_ok = false;
    }
  }
  return all_ok;
}

Json parse_value(const std::string& text) {
  // JSON if it parses (42, 1.5, true, "quoted", {...}); otherwise the text as a string.
  try {
    return Json::parse(text);
  } catch (const Json::exception&) {
    return Json(text);
  }
}

struct Percentiles {
  double p50 = 0, p99 = 0, mean = 0;
};

Percentiles percentiles(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  Percentiles p;
  if (v.empty()) return p;
  p.p50 = v[v.size() / 2];
  p.p99 = v[std::min(v.size() - 1, static_cast<std::size_t>(v.size() * 0.99))];
  for (double x : v) p.mean += x;
  p.mean /= static_cast<double>(v.size());
  return p;
}

// Connect, read and write latencies against a running server, reported as mean, median and p99.
int run_bench(ClientOptions base, const Options& o) {
  const unsigned n = std::max(o.count, 5u);
  // One TLS context for every connection, as a long-running client would keep it.
  base.tls_context = std::make_shared<asio::ssl::context>(pqot::channel::make_client_tls(base.tls));
  Json out = Json::object();
  auto record = [&](const std::string& name, const std::vector<double>& ms) {
    const auto p = percentiles(ms);
    out[name] = Json{{"mean_ms", p.mean}, {"p50_ms", p.p50}, {"p99_ms", p.p99}, {"n", ms.size()}};
    if (!o.json) {
      std::cout << std::left << std::setw(30) << name << std::right << std::fixed << std::setprecision(3)
                << "  p50 " << std::setw(8) << p.p50 << " ms  p99 " << std::setw(8) << p.p99 << " ms  mean "
                << std::setw(8) << p.mean << " ms  (n=" << ms.size() << ")\n";
    }
  };
  try {
    for (unsigned links : {0u, base.links}) {
      ClientOptions co = base;
      co.links = links;
      std::vector<double> ms;
      for (unsigned i = 0; i < std::min(n, 200u); ++i) {
        Client c(co);
        const auto t0 = Clock::now();
        c.connect();
        ms.push_back(ms_since(t0));
        c.close();
      }
      record("connect (" + std::to_string(links) + " data links)", ms);
      if (links == base.links) break;
    }
    Client c(base);
    c.connect();
    std::vector<double> reads, writes;
    for (unsigned i = 0; i < n; ++i) {
      const auto t0 = Clock::now();
      c.read(o.ids);
      reads.push_back(ms_since(t0));
    }
    for (unsigned i = 0; i < n; ++i) {
      const auto t0 = Clock::now();
      c.write({{o.ids.front(), static_cast<double>(i)}});
      writes.push_back(ms_since(t0));
    }
    record("read " + std::to_string(o.ids.size()) + " nodes", reads);
    record("write 1 node", writes);
    c.close();
  } catch (const std::exception& e) {
    std::cerr << "srmcp: " << e.what() << "\n";
    return 1;
  }
  if (o.json) std::cout << out.dump(2) << "\n";
  return 0;
}

// The options that may also come from the environment and the configuration file.
struct SourcedOptions {
  const CLI::Option *server, *ca, *cert, *key;
};

// Fills in from the configuration file (--config, else the default file if it exists) what neither
// the command line nor the environment gave (CLI11 reads both), then checks that --ca, --cert and
// --key are known. Prints a usage error and returns false if not, or if the file is bad.
bool complete_from_config_file(Options& o, const SourcedOptions& given, const fs::path& default_file) {
  fs::path config_file = o.config;
  std::error_code ec;
  if (config_file.empty() && !default_file.empty() && fs::exists(default_file, ec)) config_file = default_file;
  if (!config_file.empty()) {
    try {
      const ClientFile file = read_client_file(config_file);
      const auto fill = [](const CLI::Option* opt, std::string& value, const std::optional<std::string>& from_file) {
        if (opt->count() == 0 && from_file) value = *from_file;
      };
      fill(given.server, o.server, file.server);
      fill(given.ca, o.ca, file.ca);
      fill(given.cert, o.cert, file.cert);
      fill(given.key, o.key, file.key);
    } catch (const ClientFileError& e) {
      std::cerr << "srmcp: error: " << e.what() << "\n";
      return false;
    }
  }
  const fs::path& file = config_file.empty() ? default_file : config_file;
  for (const auto& [flag, value, env, key] : {std::tuple{"--ca", &o.ca, "SRMCP_CA", "ca"},
                                              std::tuple{"--cert", &o.cert, "SRMCP_CERT", "cert"},
                                              std::tuple{"--key", &o.key, "SRMCP_KEY", "key"}}) {
    if (value->empty()) {
      std::cerr << "srmcp: error: " << flag << " is required: give " << flag << " FILE, set " << env << ", or put "
                << key << " = \"FILE\" in " << (file.empty() ? std::string("a --config file") : file.string())
                << " (see --help)\n";
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"srmcp: SRMCP v2 client (discover, read, write, subscribe, ping)"};
  app.require_subcommand(1);
  // Options of the client, not of one command: accepted after the command too (`srmcp read ID --json`).
  app.fallthrough();
  // --server, --ca, --cert, --key: command line > environment (CLI11 reads it for options not given)
  // > configuration file (applied below, to what is still unset) > default.
  auto* server_opt = app.add_option("--server", o.server, "HOST:PORT of the srmcpd server")
                         ->envname("SRMCP_SERVER")
                         ->capture_default_str();
  auto* ca_opt = app.add_option("--ca", o.ca, "CA certificate the server must chain to (required)")->envname("SRMCP_CA");
  auto* cert_opt = app.add_option("--cert", o.cert, "Client certificate (required)")->envname("SRMCP_CERT");
  auto* key_opt = app.add_option("--key", o.key, "Client private key (required)")->envname("SRMCP_KEY");
  const fs::path default_file = default_client_file();
  app.add_option("--config", o.config,
                 "Configuration file with server, ca, cert, key (TOML); default: " +
                     (default_file.empty() ? std::string("$XDG_CONFIG_HOME/srmcp/client.toml") : default_file.string()) +
                     ", if it exists");
  app.footer(
      "--server, --ca, --cert and --key come from the command line, else the environment (SRMCP_SERVER,\n"
      "SRMCP_CA, SRMCP_CERT, SRMCP_KEY), else the configuration file, else the default. Global options may\n"
      "also follow the command. Documentation: docs/srmcp-cli.md");
  app.add_option("--kem", o.kem, "KEM for the inner key exchange: ML-KEM-768, ML-KEM-1024, X-Wing")
      ->capture_default_str();
  app.add_option("--encoding", o.encoding,
                 "Body encoding to prefer: compact (JSON offered as the fallback) or json (JSON only)")
      ->capture_default_str();
  app.add_option("--links", o.links, "Data links to open (0 = control connection only)")
      ->check(CLI::Range(0u, 8u))->capture_default_str();
  app.add_option("--deadline", o.deadline_ms, "Transaction deadline in ms")->check(CLI::Range(1u, 600000u))
      ->capture_default_str();
  app.add_flag("--json", o.json, "Print JSON instead of tables");
  app.add_option("--rotate", o.rotate_ms, "Replace the oldest data link every MS milliseconds (0 = never)")
      ->capture_default_str();

  auto* discover = app.add_subcommand("discover", "Browse the node tree");
  discover->add_option("root", o.root, "Start at this node (default: the top level)");
  discover->add_option("--depth", o.depth, "Levels below the root (default: all)");
  auto* read = app.add_subcommand("read", "Read nodes");
  read->add_option("ids", o.ids, "Node ids")->required();
  auto* write = app.add_subcommand("write", "Write nodes; VALUE is JSON (42, 1.5, true, \"text\", {...}) or plain text");
  write->add_option("assignments", o.assignments, "ID=VALUE ...")->required();
  auto* subscribe = app.add_subcommand("subscribe", "Print change notifications");
  subscribe->add_option("ids", o.ids, "Node ids")->required();
  subscribe->add_option("--count", o.count, "Notifications to print before exiting")->capture_default_str();
  subscribe->add_option("--interval", o.interval_ms, "Sampling interval in ms (0 = on change)")->capture_default_str();
  auto* ping = app.add_subcommand("ping", "Round trips to the server");
  ping->add_option("--count", o.count, "Pings to send")->capture_default_str();
  auto* bench = app.add_subcommand(
      "bench", "Latency: connect (control only, and with --links data links), read of the given nodes, write of the first");
  bench->add_option("ids", o.ids, "Nodes to read (the first must be writable with a number)")->required();
  bench->add_option("--count", o.count, "Operations of each kind")->capture_default_str();

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "srmcp: error: " << e.what() << " (see --help)\n";
    return 2;
  }

  if (!complete_from_config_file(o, {server_opt, ca_opt, cert_opt, key_opt}, default_file)) return 2;

  ClientOptions co;
  const auto address = pqot::common::parse_host_port(o.server);
  if (!address) {
    std::cerr << "srmcp: error: the server address must be HOST:PORT, got '" << o.server << "'\n";
    return 2;
  }
  co.host = address->host;
  co.port = address->port;
  co.tls = {o.ca, o.cert, o.key};
  const auto kem = kem_id(o.kem);
  if (!kem) {
    std::cerr << "srmcp: error: unknown KEM '" << o.kem << "' (ML-KEM-768, ML-KEM-1024, X-Wing)\n";
    return 2;
  }
  co.kems = {*kem};
  // The preferred encoding first, JSON as the fallback (§4); "json" offers JSON alone.
  const auto encoding = parse_encoding_name(o.encoding);
  if (!encoding) {
    std::cerr << "srmcp: error: unknown body encoding '" << o.encoding << "' (compact, json)\n";
    return 2;
  }
  co.encodings = {*encoding};
  if (*encoding != BodyEncoding::json) co.encodings.push_back(BodyEncoding::json);
  co.links = o.links;
  co.deadline = std::chrono::milliseconds(o.deadline_ms);
  co.rotate_interval = std::chrono::milliseconds(o.rotate_ms);

  Json report = Json::object();
  if (bench->parsed()) return run_bench(co, o);
  try {
    Client client(co);
    auto t0 = Clock::now();
    client.connect();
    const double connect_ms = ms_since(t0);
    const auto info = client.info();
    report["connect_ms"] = connect_ms;
    report["kem"] = *kem_name(info.kem);
    report["encoding"] = encoding_name(info.encoding);
    report["data_links"] = info.data_links;
    if (!o.json) {
      std::cout << "connected to " << o.server << " as '" << info.identity << "' (" << *kem_name(info.kem) << ", "
                << encoding_name(info.encoding) << " bodies, " << info.data_links << " data links) in " << std::fixed
                << std::setprecision(2) << connect_ms
                << " ms\n";
    }
    bool ok = true;
    t0 = Clock::now();
    if (discover->parsed()) {
      const Json r = client.browse(o.root, o.depth);
      report["op_ms"] = ms_since(t0);
      report["result"] = r;
      if (!o.json) {
        const int id_w = column_width(r["nodes"], "id", "id");
        const int type_w = column_width(r["nodes"], "type", "type");
        std::cout << std::left << std::setw(id_w) << "id" << std::setw(type_w) << "type" << std::setw(4) << "rw"
                  << "name\n";
        for (const auto& n : r["nodes"]) {
          const std::string rw = std::string(n.value("readable", false) ? "r" : "-") + (n.value("writable", false) ? "w" : "-");
          std::cout << std::left << std::setw(id_w) << n.value("id", "") << std::setw(type_w) << n.value("type", "")
                    << std::setw(4) << rw << n.value("name", "") << "\n";
        }
      }
    } else if (read->parsed()) {
      const Json r = client.read(o.ids);
      report["op_ms"] = ms_since(t0);
      report["result"] = r;
      if (!o.json) ok = print_values(r["values"], true);
      else for (const auto& v : r["values"]) ok = ok && v.value("status", 0) == 0;
    } else if (write->parsed()) {
      std::vector<std::pair<std::string, Json>> values;
      for (const auto& a : o.assignments) {
        const auto eq = a.find('=');
        if (eq == std::string::npos || eq == 0) {
          std::cerr << "srmcp: error: write expects ID=VALUE, got '" << a << "'\n";
          return 2;
        }
        values.emplace_back(a.substr(0, eq), parse_value(a.substr(eq + 1)));
      }
      const Json r = client.write(values);
      report["op_ms"] = ms_since(t0);
      report["result"] = r;
      if (!o.json) ok = print_values(r["values"], false);
      else for (const auto& v : r["values"]) ok = ok && v.value("status", 0) == 0;
    } else if (subscribe->parsed()) {
      std::mutex m;
      std::condition_variable cv;
      unsigned seen = 0;
      Json notes = Json::array();
      client.on_notification([&](const Json& n) {
        std::lock_guard lock(m);
        if (seen >= o.count) return;
        ++seen;
        notes.push_back(n);
        if (!o.json) {
          for (const auto& v : n["values"]) {
            const int st = v.value("status", 0);
            std::cout << "[" << seen << "] " << v.value("id", "?") << " = "
                      << (st == 0 ? show(v.value("value", Json())) : "error: " + status_text(st)) << "\n";
          }
          std::cout.flush();
        }
        cv.notify_all();
      });
      const auto sub = client.subscribe(o.ids, std::chrono::milliseconds(o.interval_ms));
      std::unique_lock lock(m);
      cv.wait(lock, [&] { return seen >= o.count; });
      lock.unlock();
      client.unsubscribe(sub);
      report["op_ms"] = ms_since(t0);
      report["result"] = notes;
    } else if (ping->parsed()) {
      Json rtts = Json::array();
      for (unsigned i = 0; i < o.count; ++i) {
        const auto p0 = Clock::now();
        client.ping();
        rtts.push_back(ms_since(p0));
        if (!o.json) std::cout << "ping " << i + 1 << ": " << std::fixed << std::setprecision(3) << rtts.back().get<double>() << " ms\n";
      }
      report["op_ms"] = ms_since(t0);
      report["result"] = Json{{"rtt_ms", rtts}};
    }
    client.close();
    if (o.json) {
      std::cout << report.dump(2) << "\n";
    } else {
      std::cout << std::fixed << std::setprecision(3) << "(" << app.get_subcommands().front()->get_name() << " took "
                << report.value("op_ms", 0.0) << " ms)\n";
    }
    return ok ? 0 : 3;
  } catch (const ClientError& e) {
    const int code = static_cast<int>(e.status());
    if (o.json) {
      std::cout << Json{{"error", e.what()}, {"status", code}, {"status_name", status_name(e.status())}}.dump(2) << "\n";
    }
    std::cerr << "srmcp: " << e.what() << "\n";
    return e.status() == Status::internal ? 1 : 3;
  } catch (const std::exception& e) {
    std::cerr << "srmcp: " << e.what() << "\n";
    return 1;
  }
}
