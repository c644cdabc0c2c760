#include "bench_broker.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "pqot/mqtt/broker_config.hpp"
#include "pqot/pki/enrol.hpp"
#include "pqot/pki/test_pki.hpp"

extern char** environ;

namespace pqot::srup_tool {

namespace {

namespace fs = std::filesystem;

// A port the kernel just handed out and took back (free unless taken meanwhile: the start then
// fails with the broker's "address in use" in its log).
std::uint16_t bench_free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("bench-mqtt: socket: " + std::string(std::strerror(errno)));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0;
  ::close(fd);
  if (!ok) throw std::runtime_error("bench-mqtt: cannot find a free port on 127.0.0.1");
  return ntohs(a.sin_port);
}

bool bench_port_open(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

std::string bench_slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

BenchBroker::BenchBroker(const std::string& mosquitto_path, const std::string& client_cn) : admin_cn_(client_cn) {
  std::string pattern = (fs::temp_directory_path() / "srup-bench-mqtt-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("bench-mqtt: cannot create a temporary directory: " + std::string(std::strerror(errno)));
  }
  dir_ = pattern;
  try {
    pki::PkiOptions po;
    po.dir = dir_;
    po.clients = 0;
    po.days = 2;
    po.ca_days = 2;
    pki::create_test_pki(po);
    const auto request = pki::make_key_and_request(client_cn);
    pki::write_new_file(dir_ / "client.key", std::string_view(request.key_pem.data(), request.key_pem.size()), 0600);
    const auto cert = pki::issue_client_certificate(pki::CaFiles::in_dir(dir_), request.csr_pem, client_cn, 1);
    pki::write_new_file(dir_ / "client.crt", cert.pem, 0644);
    fs::create_directories(dir_ / "work");
    fs::create_directories(dir_ / "persistence");
    start(mosquitto_path);
  } catch (...) {
    stop();
    std::error_code ec;
    fs::remove_all(dir_, ec);
    throw;
  }
}

BenchBroker::~BenchBroker() {
  stop();
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

void BenchBroker::start(const std::string& mosquitto_path) {
  port_ = bench_free_port();
  mqtt::BrokerConfig c;
  c.port = port_;
  c.ca_file = (dir_ / "ca.crt").string();
  c.cert_file = (dir_ / "server.crt").string();
  c.key_file = (dir_ / "server.key").string();
  c.persistence_dir = (dir_ / "persistence").string() + "/";
  c.dynsec_file = (dir_ / "dynsec.json").string();
  c.log_file = (dir_ / "mosquitto.log").string();
  c.log_types = {"error", "warning"};
  mqtt::write_initial_dynsec(c.dynsec_file, admin_cn_);
  mqtt::write_broker_config(c, (dir_ / "mosquitto.conf").string());

  const std::string conf = (dir_ / "mosquitto.conf").string();
  std::vector<std::string> args{mosquitto_path, "-c", conf};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  const std::string err = (dir_ / "mosquitto.stderr").string();
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  const int rc = posix_spawn(&pid_, mosquitto_path.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    pid_ = -1;
    throw std::runtime_error("bench-mqtt: cannot start " + mosquitto_path + ": " + std::strerror(rc) +
                             " (Debian: apt-get install mosquitto, or make deps)");
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!bench_port_open(port_)) {
    int status = 0;
    const bool exited = ::waitpid(pid_, &status, WNOHANG) == pid_;
    if (exited) pid_ = -1;
    if (exited || std::chrono::steady_clock::now() > deadline) {
      throw std::runtime_error("bench-mqtt: the broker did not start:\n" + bench_slurp(err) +
                               bench_slurp(dir_ / "mosquitto.log"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void BenchBroker::stop() noexcept {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  for (int i = 0; i < 250; ++i) {  // 5 s for a clean shutdown (it saves its persistence file)
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

}  // namespace pqot::srup_tool
