// srup c2 ...: operates a running srup-c2 through its control socket (docs/srup-tool.md, "srup c2";
// the protocol in docs/srup-c2.md, "Control socket"). One request line out, one answer line in.
//
// Exit codes beyond the tool's: 1 the daemon cannot be reached; 4 the daemon refused the request
// (the answer's code and text on stderr); 5 a command sent with --wait was not answered in time
// (it stays in the C2's outbox and is retried).
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli.hpp"

namespace pqot::srup_tool {

namespace {

using nlohmann::json;

constexpr int kExitUnreachable = 1;
constexpr int kExitDaemonRefused = 4;
constexpr int kExitNotAnswered = 5;
constexpr std::size_t kMaxAnswer = 16 * 1024 * 1024;  // a long device or command list
constexpr std::size_t kMaxBundleInput = 64 * 1024;    // identity.pub, CSR

struct C2Options {
  std::string socket;
  bool json_output = false;
};

std::string default_socket() {
  if (const char* env = std::getenv("SRUP_C2_SOCKET"); env != nullptr && *env != '\0') return env;
  return "/var/lib/srup-c2/control.sock";
}

// One request, one answer line; the daemon's own errors become ExitError(4).
json call(const C2Options& o, const json& request) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw ExitError(kExitUnreachable, std::string("socket: ") + std::strerror(errno));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (o.socket.size() >= sizeof(addr.sun_path)) {
    ::close(fd);
    throw UsageError("--socket: path too long");
  }
  std::memcpy(addr.sun_path, o.socket.data(), o.socket.size());
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    const int err = errno;
    ::close(fd);
    throw ExitError(kExitUnreachable, "cannot reach srup-c2 at " + o.socket + ": " + std::strerror(err) +
                                       " (is it running? --socket or SRUP_C2_SOCKET name its control socket)");
  }
  const std::string line = request.dump() + "\n";
  std::size_t sent = 0;
  while (sent < line.size()) {
    const ssize_t n = ::send(fd, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) {
      ::close(fd);
      throw ExitError(kExitUnreachable, "srup-c2 closed the connection while we sent the request");
    }
    sent += static_cast<std::size_t>(n);
  }
  std::string answer;
  char buf[4096];
  while (answer.find('\n') == std::string::npos) {
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    answer.append(buf, static_cast<std::size_t>(n));
    if (answer.size() > kMaxAnswer) break;
  }
  ::close(fd);
  const auto nl = answer.find('\n');
  if (nl == std::string::npos) throw ExitError(kExitUnreachable, "srup-c2 closed the connection without an answer");
  const json j = json::parse(answer.substr(0, nl), nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("ok")) {
    throw std::runtime_error("srup-c2 answered something that is not a control answer");
  }
  if (!j["ok"].get<bool>()) {
    throw ExitError(kExitDaemonRefused, j.value("code", std::string("error")) + ": " + j.value("error", std::string()));
  }
  return j.value("result", json::object());
}

std::string read_small_file(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(std::string(what) + ": cannot read " + path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.size() > kMaxBundleInput) throw UsageError(std::string(what) + ": " + path + " is over 64 KiB");
  return text;
}

void write_new(const std::filesystem::path& path, const std::string& text) {
  if (std::filesystem::exists(path)) throw UsageError(path.string() + " exists: not overwritten");
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out.flush()) throw std::runtime_error("cannot write " + path.string());
}

std::string time_text(const json& ms) {
  if (!ms.is_number_unsigned() || ms.get<std::uint64_t>() == 0) return "-";
  const std::time_t t = static_cast<std::time_t>(ms.get<std::uint64_t>() / 1000);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  std::ostringstream s;
  s << std::put_time(&tm, "%Y-%m-%d %H:%M:%SZ");
  return s.str();
}

std::string field(const json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return "-";
  if (j[key].is_string()) return j[key].get<std::string>();
  return j[key].dump();
}

// A command's outcome: the answer, or "pending" (exit 5 when --wait was given).
int print_command(const C2Options& o, const json& r, bool waited) {
  if (o.json_output) {
    std::cout << r.dump(2) << "\n";
  } else {
    std::cout << "token " << field(r, "token") << ": " << field(r, "state");
    if (r.contains("answer")) {
      const json& a = r["answer"];
      if (a.value("type", "") == "data") {
        std::cout << ", data " << field(a, "id") << " = " << field(a.value("value", json::object()), "text");
      } else {
        std::cout << ", status 0x" << std::hex << std::setw(2) << std::setfill('0') << a.value("status", 0)
                  << std::dec << " " << field(a, "status_name");
        if (!a.value("detail", std::string()).empty()) std::cout << " (" << a["detail"].get<std::string>() << ")";
      }
    }
    std::cout << "\n";
  }
  if (waited && r.value("state", "") == "pending") {
    throw ExitError(kExitNotAnswered, "not answered within --wait; the C2 keeps retrying (srup c2 command TOKEN)");
  }
  return 0;
}

std::uint32_t wait_ms(double seconds) {
  if (seconds < 0 || seconds > 600) throw UsageError("--wait: 0 .. 600 seconds");
  return static_cast<std::uint32_t>(seconds * 1000);
}

json typed(const std::string& type, const std::string& text) { return {{"type", type}, {"text", text}}; }

}  // namespace

void add_c2_command(CLI::App& app) {
  auto o = std::make_shared<C2Options>();
  o->socket = default_socket();
  CLI::App* c2 = app.add_subcommand("c2", "Operate a running srup-c2 over its control socket (docs/srup-tool.md)");
  c2->require_subcommand(1);
  c2->add_option("--socket", o->socket, "The daemon's control socket (default: $SRUP_C2_SOCKET, else /var/lib/srup-c2/control.sock)");
  c2->add_flag("--json", o->json_output, "Print the daemon's answer as JSON");

  // Runs `request` and prints the result with `show` (or as JSON); exit codes as above.
  auto run = [o](const json& request, const std::function<void(const json&)>& show) {
    const json r = call(*o, request);
    if (o->json_output) {
      std::cout << r.dump(2) << "\n";
    } else {
      show(r);
    }
  };
  auto pretty = [](const json& r) { std::cout << r.dump(2) << "\n"; };

  c2->add_subcommand("status", "The daemon's state: broker connection, devices, outbox")->callback([run, pretty] {
    run({{"cmd", "status"}}, pretty);
  });

  {
    auto state = std::make_shared<std::string>();
    auto* cmd = c2->add_subcommand("devices", "List registered devices");
    cmd->add_option("--state", *state, "Only devices in this state")->check(CLI::IsMember({"pending", "joined", "resigned", "deregistered"}));
    cmd->callback([run, state] {
      json req = {{"cmd", "devices"}};
      if (!state->empty()) req["state"] = *state;
      run(req, [](const json& r) {
        std::cout << std::left << std::setw(18) << "ID" << std::setw(14) << "TYPE" << std::setw(14) << "STATE"
                  << std::setw(10) << "JOIN" << std::setw(8) << "ONLINE" << "LAST SEEN\n";
        for (const json& d : r.value("devices", json::array())) {
          std::cout << std::left << std::setw(18) << field(d, "id") << std::setw(14) << field(d, "type")
                    << std::setw(14) << field(d, "state") << std::setw(10) << field(d, "join") << std::setw(8)
                    << (d.value("online", false) ? "yes" : "no") << time_text(d.value("last_seen_ms", json())) << "\n";
        }
      });
    });
  }

  {
    auto dev = std::make_shared<std::string>();
    auto* cmd = c2->add_subcommand("device", "Show one device");
    cmd->add_option("DEVICE", *dev, "Device ID (hex)")->required();
    cmd->callback([run, pretty, dev] { run({{"cmd", "device"}, {"device", *dev}}, pretty); });
  }

  {
    struct Enrol {
      std::string pub, csr, type, join = "simple", observer, out;
      bool monitor = false;
    };
    for (const bool monitor : {false, true}) {
      auto e = std::make_shared<Enrol>();
      e->monitor = monitor;
      auto* cmd = c2->add_subcommand(monitor ? "enrol-monitor" : "enrol",
                                     monitor ? "Enrol a telemetry monitor: register it at the broker and issue its certificate"
                                             : "Enrol a device: register it (pending) at the broker and issue its certificate");
      cmd->add_option("--pub", e->pub, "Its identity.pub (srup keygen)")->required();
      cmd->add_option("--csr", e->csr, "Its broker certificate request (pqot pki csr)")->required();
      cmd->add_option("--out", e->out, "Directory for the bundle: broker.crt, ca.crt, c2.pub (created)")->required();
      if (!monitor) {
        cmd->add_option("--type", e->type, "Device type, e.g. meter")->required();
        cmd->add_option("--join", e->join, "How it joins")->check(CLI::IsMember({"simple", "human", "observed"}));
        cmd->add_option("--observer", e->observer, "The device that must observe its join (--join observed)");
      }
      cmd->callback([o, e] {
        json req = {{"cmd", e->monitor ? "enrol-monitor" : "enrol"},
                    {"public_identity", read_small_file(e->pub, "--pub")},
                    {"csr", read_small_file(e->csr, "--csr")}};
        if (!e->monitor) {
          req["type"] = e->type;
          req["join"] = e->join;
          if (!e->observer.empty()) req["observer"] = e->observer;
        }
        const json r = call(*o, req);
        const std::filesystem::path dir(e->out);
        std::filesystem::create_directories(dir);
        write_new(dir / "broker.crt", r.at("certificate").get<std::string>());
        write_new(dir / "ca.crt", r.at("ca").get<std::string>());
        write_new(dir / "c2.pub", r.at("c2_public_identity").get<std::string>());
        if (o->json_output) {
          json shown = r;
          shown.erase("certificate");
          shown.erase("ca");
          shown.erase("c2_public_identity");
          std::cout << shown.dump(2) << "\n";
        } else {
          std::cout << (e->monitor ? "monitor " : "device ") << field(r, "id") << " enrolled as " << field(r, "username")
                    << " (" << field(r, "state") << "); bundle written to " << dir.string() << "\n";
        }
      });
    }
  }

  {
    auto dev = std::make_shared<std::string>();
    auto code = std::make_shared<std::string>();
    auto* cmd = c2->add_subcommand("join-code", "Confirm a human join with the code the device shows");
    cmd->add_option("DEVICE", *dev, "Device ID (hex)")->required();
    cmd->add_option("CODE", *code, "The 32 hex digits the device shows (spaces allowed)")->required();
    cmd->callback([run, dev, code] {
      run({{"cmd", "join-code"}, {"device", *dev}, {"code", *code}},
          [](const json& r) { std::cout << "device " << field(r, "device") << ": " << field(r, "state") << "\n"; });
    });
  }

  // Commands to a device: they share --wait and the printing of the outcome.
  struct CommandArgs {
    std::string device, action, arg, arg_type = "string", data_id, value, value_type = "string", url, sha256, c2_pub;
    bool has_arg = false, no_activate = false;
    double wait = 0;
  };
  auto add_device_command = [c2, o](const char* name, const char* help,
                                     const std::function<void(CLI::App*, CommandArgs&)>& options,
                                     const std::function<json(const CommandArgs&)>& make) {
    auto a = std::make_shared<CommandArgs>();
    auto* cmd = c2->add_subcommand(name, help);
    cmd->add_option("DEVICE", a->device, "Device ID (hex)")->required();
    options(cmd, *a);
    cmd->add_option("--wait", a->wait, "Wait up to this many seconds for the answer (exit 5 if none)");
    cmd->callback([o, a, make] {
      json req = make(*a);
      req["device"] = a->device;
      req["wait_ms"] = wait_ms(a->wait);
      return print_command(*o, call(*o, req), a->wait > 0);
    });
  };
  add_device_command(
      "action", "Send an Action",
      [](CLI::App* cmd, CommandArgs& a) {
        cmd->add_option("ACTION", a.action, "Action ID, 0-255")->required();
        cmd->add_option("--arg", a.arg, "The action's argument (text form, docs/srup-pq.md 2.6)");
        cmd->add_option("--arg-type", a.arg_type, "Its type: bool, int8 .. uint64, float32, float64, string, bytes");
      },
      [](const CommandArgs& a) {
        int id = 0;
        try {
          id = std::stoi(a.action);
        } catch (const std::exception&) {
          throw UsageError("ACTION must be a number 0-255");
        }
        if (id < 0 || id > 255) throw UsageError("ACTION must be a number 0-255");
        json req = {{"cmd", "action"}, {"action", id}};
        if (!a.arg.empty()) req["arg"] = typed(a.arg_type, a.arg);
        return req;
      });
  add_device_command(
      "data", "Ask a device for a data value, or set one with --value",
      [](CLI::App* cmd, CommandArgs& a) {
        cmd->add_option("DATA_ID", a.data_id, "The data ID")->required();
        cmd->add_option("--value", a.value, "Set this value (text form)");
        cmd->add_option("--value-type", a.value_type, "Its type (default string)");
      },
      [](const CommandArgs& a) {
        json req = {{"cmd", "data"}, {"id", a.data_id}};
        if (!a.value.empty()) req["value"] = typed(a.value_type, a.value);
        return req;
      });
  add_device_command(
      "id", "Send an ID Request", [](CLI::App*, CommandArgs&) {}, [](const CommandArgs&) { return json{{"cmd", "id-request"}}; });
  add_device_command(
      "update", "Send an update: the device downloads URL, checks its SHA-256, then the C2 activates it",
      [](CLI::App* cmd, CommandArgs& a) {
        cmd->add_option("URL", a.url, "file:// or http:// URL of the update")->required();
        cmd->add_option("--sha256", a.sha256, "The file's SHA-256, 64 hex digits")->required();
        cmd->add_flag("--no-activate", a.no_activate, "Stop after the download; do not send Update Activate");
      },
      [](const CommandArgs& a) {
        return json{{"cmd", "update"}, {"url", a.url}, {"sha256", a.sha256}, {"activate", !a.no_activate}};
      });
  add_device_command(
      "join-command", "Re-home a device: it leaves this C2 and joins the C2 of --c2-pub (enrol it there first)",
      [](CLI::App* cmd, CommandArgs& a) {
        cmd->add_option("--c2-pub", a.c2_pub, "The new C2's identity.pub")->required();
      },
      [](const CommandArgs& a) {
        return json{{"cmd", "join-command"}, {"c2_public_identity", read_small_file(a.c2_pub, "--c2-pub")}};
      });
  add_device_command(
      "terminate", "Send a Terminate Command: the device leaves this C2", [](CLI::App*, CommandArgs&) {},
      [](const CommandArgs&) { return json{{"cmd", "terminate"}}; });
  add_device_command(
      "deregister", "Deregister a device: refused by the broker at once; told with a Deregister Command if it can hear",
      [](CLI::App*, CommandArgs&) {}, [](const CommandArgs&) { return json{{"cmd", "deregister"}}; });

  for (const bool allow : {true, false}) {
    auto mon = std::make_shared<std::string>();
    auto dev = std::make_shared<std::string>();
    auto* cmd = c2->add_subcommand(allow ? "authorize" : "revoke",
                                   allow ? "Let a monitor read a device's telemetry" : "Stop a monitor reading a device's telemetry");
    cmd->add_option("MONITOR", *mon, "Monitor ID (hex)")->required();
    cmd->add_option("DEVICE", *dev, "Device ID (hex)")->required();
    cmd->callback([run, pretty, mon, dev, allow] {
      run({{"cmd", allow ? "authorize" : "revoke"}, {"monitor", *mon}, {"device", *dev}}, pretty);
    });
  }

  {
    auto dev = std::make_shared<std::string>();
    auto state = std::make_shared<std::string>();
    auto limit = std::make_shared<unsigned>(100);
    auto* cmd = c2->add_subcommand("commands", "List commands in the outbox and their answers");
    cmd->add_option("--device", *dev, "Only this device's");
    cmd->add_option("--state", *state, "Only in this state")->check(CLI::IsMember({"pending", "answered", "expired", "cancelled"}));
    cmd->add_option("--limit", *limit, "At most this many (newest first)")->check(CLI::Range(1, 1000));
    cmd->callback([run, dev, state, limit] {
      json req = {{"cmd", "commands"}, {"limit", *limit}};
      if (!dev->empty()) req["device"] = *dev;
      if (!state->empty()) req["state"] = *state;
      run(req, [](const json& r) {
        for (const json& c : r.value("commands", json::array())) {
          std::cout << field(c, "token") << "  " << field(c, "device") << "  " << std::left << std::setw(16)
                    << field(c, "type") << std::setw(10) << field(c, "state") << time_text(c.value("created_ms", json()));
          if (c.contains("answer")) std::cout << "  " << field(c["answer"], "status_name");
          std::cout << "\n";
        }
      });
    });
  }

  {
    auto token = std::make_shared<std::string>();
    auto* cmd = c2->add_subcommand("command", "Show one command and its answer");
    cmd->add_option("TOKEN", *token, "The command's token (hex)")->required();
    cmd->callback([o, token] { return print_command(*o, call(*o, {{"cmd", "command"}, {"token", *token}}), false); });
  }

  {
    auto dev = std::make_shared<std::string>();
    auto kind = std::make_shared<std::string>();
    auto limit = std::make_shared<unsigned>(20);
    auto* cmd = c2->add_subcommand("history", "A device's recent data, telemetry or registry events");
    cmd->add_option("DEVICE", *dev, "Device ID (hex)")->required();
    cmd->add_option("KIND", *kind, "data, telemetry or events")->required()->check(CLI::IsMember({"data", "telemetry", "events"}));
    cmd->add_option("--limit", *limit, "At most this many (newest first)")->check(CLI::Range(1, 1000));
    cmd->callback([run, pretty, dev, kind, limit] {
      run({{"cmd", "history"}, {"device", *dev}, {"kind", *kind}, {"limit", *limit}}, pretty);
    });
  }

  {
    auto path = std::make_shared<std::string>();
    auto* cmd = c2->add_subcommand("backup", "Write a consistent copy of the registry (SQLite online backup)");
    cmd->add_option("FILE", *path, "Where to write it (absolute path; must not exist)")->required();
    cmd->callback([run, path] {
      const std::string abs = std::filesystem::absolute(*path).string();
      run({{"cmd", "backup"}, {"path", abs}}, [abs](const json&) { std::cout << "registry backed up to " << abs << "\n"; });
    });
  }
}

}  // namespace pqot::srup_tool
