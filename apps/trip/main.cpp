// trip: the operator's view of a running tripd (docs/tripd.md, "trip status").
//
//   trip status --socket PATH [--json] [--watch SECONDS]
//
// Exit codes: 0 shown; 1 the daemon could not be reached or answered nonsense; 2 a bad command line.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "pqot/common/printable.hpp"

namespace {

constexpr std::size_t kMaxDocument = 4u << 20;

// The daemon's document, read to EOF (bounded); throws std::runtime_error.
std::string fetch(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket: " + std::string(std::strerror(errno)));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) {
    ::close(fd);
    throw std::runtime_error(path + ": path too long");
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size());
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    throw std::runtime_error("cannot reach tripd at " + path + ": " + why + " (is [status] socket set, and is tripd running?)");
  }
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string doc;
  char buf[8192];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      ::close(fd);
      throw std::runtime_error("reading from " + path + ": " + std::strerror(errno));
    }
    doc.append(buf, static_cast<std::size_t>(n));
    if (doc.size() > kMaxDocument) {
      ::close(fd);
      throw std::runtime_error("the answer is over 4 MiB");
    }
  }
  ::close(fd);
  return doc;
}

std::string us_text(const nlohmann::json& v) {
  if (!v.is_number()) return "-";
  char b[32];
  std::snprintf(b, sizeof b, "%.2f ms", v.get<double>() / 1000.0);
  return b;
}

std::string percent_text(const nlohmann::json& v) {
  if (!v.is_number()) return "-";
  char b[32];
  std::snprintf(b, sizeof b, "%.1f %%", v.get<double>() * 100.0);
  return b;
}

std::string cell(const nlohmann::json& v) {
  if (v.is_string()) return pqot::common::printable(v.get<std::string>(), 32);
  if (v.is_boolean()) return v.get<bool>() ? "up" : "DOWN";
  if (v.is_number()) return v.dump();
  return "-";
}

void print_table(const nlohmann::json& j) {
  std::ostringstream out;
  out << "tripd boot " << cell(j.value("boot", nlohmann::json())) << "\n\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-16s %-6s %-4s %4s %10s %10s %10s %10s %10s %8s %10s %8s\n", "PATH", "SIDE", "UP", "SESS",
                "RTT", "SRTT", "SENT", "RECEIVED", "WON", "DUPS", "DROPPED", "LOSS");
  out << line;
  for (const auto& p : j.at("paths")) {
    std::snprintf(line, sizeof line, "%-16s %-6s %-4s %4s %10s %10s %10s %10s %10s %8s %10s %8s\n", cell(p.at("name")).c_str(),
                  cell(p.at("side")).c_str(), cell(p.at("up")).c_str(), cell(p.at("session")).c_str(),
                  us_text(p.at("rtt_us")).c_str(), us_text(p.at("srtt_us")).c_str(), cell(p.at("sent")).c_str(),
                  cell(p.at("received")).c_str(), cell(p.at("won")).c_str(), cell(p.at("duplicates")).c_str(),
                  cell(p.at("dropped")).c_str(), percent_text(p.value("data_loss", nlohmann::json())).c_str());
    out << line;
  }
  out << "\n";
  std::snprintf(line, sizeof line, "%-6s %-20s %-8s %12s %12s %10s %10s\n", "FLOW", "NAME", "ROLE", "TAKEN/DELIV", "LATE",
                "DUPS", "REPLAYED");
  out << line;
  for (const auto& f : j.at("flows")) {
    const bool reflect = f.at("role") == "reflect";
    std::snprintf(line, sizeof line, "%-6s %-20s %-8s %12s %12s %10s %10s\n", cell(f.at("id")).c_str(), cell(f.at("name")).c_str(),
                  cell(f.at("role")).c_str(), cell(reflect ? f.at("taken") : f.at("delivered")).c_str(),
                  reflect ? "-" : cell(f.at("late")).c_str(), reflect ? "-" : cell(f.at("duplicates")).c_str(),
                  reflect ? "-" : cell(f.at("replayed")).c_str());
    out << line;
  }
  std::cout << out.str() << std::flush;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"trip: the operator's view of a running tripd (docs/tripd.md)"};
  app.name("trip");
  app.require_subcommand(1);
  auto* status = app.add_subcommand("status", "Paths and flows of a running tripd, from its status socket");
  std::string socket;
  bool json = false;
  double watch = 0;
  status->add_option("--socket", socket, "tripd's [status] socket")->required();
  status->add_flag("--json", json, "Print the daemon's JSON document as it came");
  status->add_option("--watch", watch, "Show again every SECONDS until interrupted")->check(CLI::Range(0.1, 3600.0));
  app.set_version_flag("--version", std::string(PQOT_VERSION_STRING));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "trip: error: " << e.what() << " (see --help)\n";
    return 2;
  }
  for (;;) {
    try {
      const std::string doc = fetch(socket);
      if (json) {
        std::cout << doc << std::flush;
      } else {
        if (watch > 0) std::cout << "\x1b[H\x1b[2J";
        print_table(nlohmann::json::parse(doc));
      }
    } catch (const std::exception& e) {
      std::cerr << "trip: error: " << e.what() << "\n";
      return 1;
    }
    if (watch <= 0) return 0;
    std::this_thread::sleep_for(std::chrono::duration<double>(watch));
  }
}
