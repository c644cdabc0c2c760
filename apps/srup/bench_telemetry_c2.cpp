#include "bench_telemetry_c2.hpp"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "pqot/srup/identity.hpp"
#include "pqot/srup/topics.hpp"

extern char** environ;

namespace pqot::srup_tool {

namespace {

namespace fs = std::filesystem;

// Closes a descriptor on every path out.
struct TelemetryBenchFd {
  explicit TelemetryBenchFd(int f) : fd(f) {}
  ~TelemetryBenchFd() {
    if (fd >= 0) ::close(fd);
  }
  TelemetryBenchFd(const TelemetryBenchFd&) = delete;
  TelemetryBenchFd& operator=(const TelemetryBenchFd&) = delete;
  int fd;
};

std::uint16_t telemetry_bench_free_port() {
  const TelemetryBenchFd s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (s.fd < 0) throw std::runtime_error("bench-telemetry: socket: " + std::string(std::strerror(errno)));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (::bind(s.fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(s.fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    throw std::runtime_error("bench-telemetry: cannot find a free port on 127.0.0.1");
  }
  return ntohs(a.sin_port);
}

void send_all(int fd, const std::string& data, const char* what) {
  std::size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) throw std::runtime_error(std::string("bench-telemetry: ") + what + ": the connection closed");
    sent += static_cast<std::size_t>(n);
  }
}

// Reads until `done(text)` or the peer closes; at most `max` bytes.
std::string receive_until(int fd, std::size_t max, bool (*done)(const std::string&)) {
  std::string text;
  char buf[16384];
  while (!done(text) && text.size() <= max) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  return text;
}

std::string toml_quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// utime + stime (fields 14 and 15) of a /proc stat line, in seconds. The command name (field 2)
// may hold spaces and parentheses: fields are counted after its last ')'.
double stat_cpu_seconds(const std::string& line) {
  const auto close = line.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream in(line.substr(close + 1));
  std::string field;
  double utime = 0, stime = 0;
  for (int i = 3; i <= 15 && in >> field; ++i) {
    if (i == 14) utime = std::stod(field);
    if (i == 15) stime = std::stod(field);
  }
  return (utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

std::string first_line(const fs::path& p) {
  std::ifstream in(p);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

ProcessCpu read_process_cpu(pid_t pid) {
  ProcessCpu cpu;
  const fs::path proc = "/proc/" + std::to_string(pid);
  const std::string line = first_line(proc / "stat");
  if (line.empty()) return cpu;
  cpu.total = stat_cpu_seconds(line);
  std::error_code ec;
  for (const auto& task : fs::directory_iterator(proc / "task", ec)) {
    const std::string t = first_line(task.path() / "stat");
    if (!t.empty()) cpu.threads[static_cast<pid_t>(std::stol(task.path().filename().string()))] = stat_cpu_seconds(t);
  }
  return cpu;
}

BenchC2::BenchC2(const BenchC2Options& o, const BenchBroker& broker) : dir_(o.state_dir) {
  if (fs::exists(dir_)) throw std::runtime_error("bench-telemetry: " + dir_.string() + " exists");
  fs::create_directories(dir_);
  fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::replace);
  srup::write_identity(dir_, kTelemetryBenchC2, o.suite, srup::random_seeds(o.suite));
  socket_ = (dir_ / "control.sock").string();
  metrics_port_ = telemetry_bench_free_port();
  // BenchBroker's client certificate is the dynsec administrator's, CN c2-<id>: the C2's own. Its
  // CA lives 2 days: devices' certificates 1 (a certificate may not outlive its CA). The Reader
  // Set is retransmitted after 5 s, not sooner: on a loaded machine a quicker retry crosses the
  // device's answer, whose journal copy the C2 then refuses as REPLAY (harmless, but noise).
  const fs::path ca_key = fs::path(broker.ca_file()).parent_path() / "ca.key";
  const std::size_t pending = std::max<std::size_t>(100, o.devices);
  const std::string conf =
      "[c2]\nstate_dir = " + toml_quoted(dir_.string()) + "\nlog_level = \"warn\"\n" +
      "[broker]\nhost = \"127.0.0.1\"\nport = " + std::to_string(broker.port()) + "\nca = " +
      toml_quoted(broker.ca_file()) + "\ncert = " + toml_quoted(broker.client_cert()) + "\nkey = " +
      toml_quoted(broker.client_key()) + "\nreconnect_min_ms = 100\nreconnect_max_ms = 1000\n" +
      "[enrolment]\nca_cert = " + toml_quoted(broker.ca_file()) + "\nca_key = " + toml_quoted(ca_key.string()) +
      "\ncert_days = 1\ndefault_join = \"simple\"\n[commands]\nretry_initial_ms = 5000\nretry_max_ms = 30000\n" +
      "[join]\npending_max = " + std::to_string(pending) + "\n[limits]\nmax_devices = " +
      std::to_string(std::max<std::size_t>(10'000, o.devices)) + "\n[telemetry]\nstore = true\nretention_per_device = " +
      std::to_string(o.retention_per_device) + "\n[metrics]\nlisten = \"127.0.0.1:" +
      std::to_string(metrics_port_) + "\"\n";
  {
    std::ofstream out(dir_ / "c2.toml", std::ios::binary);
    out << conf;
    if (!out.flush()) throw std::runtime_error("bench-telemetry: cannot write " + (dir_ / "c2.toml").string());
  }

  std::vector<std::string> args{o.program, "--config", (dir_ / "c2.toml").string()};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string log = (dir_ / "srup-c2.log").string();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  const int rc = posix_spawn(&pid_, o.program.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    pid_ = -1;
    throw std::runtime_error("bench-telemetry: cannot start " + o.program + ": " + std::strerror(rc) +
                             " (--c2-program names the srup-c2 binary)");
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (;;) {
    if (!running()) throw std::runtime_error("bench-telemetry: srup-c2 exited at start:\n" + log_tail());
    if (fs::exists(socket_)) {
      try {
        const nlohmann::json s = control({{"cmd", "status"}});
        if (s.contains("broker") && s["broker"].value("connected", false)) break;
      } catch (const std::exception&) {
        // not listening yet
      }
    }
    if (std::chrono::steady_clock::now() > deadline) {
      stop();
      throw std::runtime_error("bench-telemetry: srup-c2 did not connect to the broker within 20 s:\n" + log_tail());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

BenchC2::~BenchC2() { stop(); }

bool BenchC2::running() {
  if (pid_ < 0) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    pid_ = -1;
    return false;
  }
  return true;
}

void BenchC2::stop() noexcept {
  if (pid_ < 0) return;
  ::kill(pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  int status = 0;
  while (::waitpid(pid_, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  pid_ = -1;
}

std::string BenchC2::log_tail(std::size_t max_bytes) const {
  std::ifstream in(dir_ / "srup-c2.log", std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return text.size() > max_bytes ? text.substr(text.size() - max_bytes) : text;
}

nlohmann::json BenchC2::control(const nlohmann::json& request) const {
  const TelemetryBenchFd s(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (s.fd < 0) throw std::runtime_error("bench-telemetry: socket: " + std::string(std::strerror(errno)));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_.size() >= sizeof(addr.sun_path)) throw std::runtime_error("bench-telemetry: control socket path too long");
  std::memcpy(addr.sun_path, socket_.data(), socket_.size());
  if (::connect(s.fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    throw std::runtime_error("bench-telemetry: cannot reach srup-c2's control socket: " + std::string(std::strerror(errno)));
  }
  send_all(s.fd, request.dump() + "\n", "control socket");
  const std::string answer =
      receive_until(s.fd, 1 << 20, [](const std::string& t) { return t.find('\n') != std::string::npos; });
  const auto nl = answer.find('\n');
  if (nl == std::string::npos) throw std::runtime_error("bench-telemetry: srup-c2 closed its control socket without an answer");
  const nlohmann::json j = nlohmann::json::parse(answer.substr(0, nl), nullptr, false);
  if (!j.is_object() || !j.contains("ok")) throw std::runtime_error("bench-telemetry: srup-c2 answered no control answer");
  if (!j["ok"].get<bool>()) {
    throw std::runtime_error("bench-telemetry: srup-c2 refused " + request.value("cmd", std::string("?")) + ": " +
                             j.value("code", std::string()) + ": " + j.value("error", std::string()));
  }
  return j.value("result", nlohmann::json::object());
}

std::map<std::string, double> BenchC2::scrape() const {
  const TelemetryBenchFd s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (s.fd < 0) throw std::runtime_error("bench-telemetry: socket: " + std::string(std::strerror(errno)));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(metrics_port_);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(s.fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    throw std::runtime_error("bench-telemetry: cannot reach srup-c2's metrics page: " + std::string(std::strerror(errno)));
  }
  send_all(s.fd, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", "metrics page");
  const std::string page = receive_until(s.fd, 4 << 20, [](const std::string&) { return false; });
  const auto body = page.find("\r\n\r\n");
  if (page.rfind("HTTP/1.1 200", 0) != 0 || body == std::string::npos) {
    throw std::runtime_error("bench-telemetry: srup-c2's metrics page answered: " + page.substr(0, page.find('\r')));
  }
  std::map<std::string, double> samples;
  std::istringstream in(page.substr(body + 4));
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto space = line.rfind(' ');
    if (space == std::string::npos) continue;
    try {
      samples[line.substr(0, space)] = std::stod(line.substr(space + 1));
    } catch (const std::exception&) {
      // not a number ("+Inf" buckets are parsed by stod; anything else is not ours to read)
    }
  }
  return samples;
}

}  // namespace pqot::srup_tool
