#include "pqot/mqtt/broker_runner.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

extern char** environ;

namespace pqot::mqtt {

namespace {

sockaddr_in runner_loopback(std::uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

std::string runner_slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

constexpr auto kRunnerPoll = std::chrono::milliseconds(20);

}  // namespace

bool loopback_port_open(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const sockaddr_in a = runner_loopback(port);
  const bool ok = ::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

std::uint16_t free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("cannot find a free port on 127.0.0.1: socket: " + std::string(std::strerror(errno)));
  sockaddr_in a = runner_loopback(0);
  socklen_t len = sizeof a;
  const bool ok = ::bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0;
  const int err = errno;
  ::close(fd);
  if (!ok) throw std::runtime_error("cannot find a free port on 127.0.0.1: " + std::string(std::strerror(err)));
  return ntohs(a.sin_port);
}

BrokerRunner::BrokerRunner(BrokerConfig config, BrokerRunOptions options)
    : config_(std::move(config)), options_(std::move(options)) {
  if (::access(options_.mosquitto.c_str(), X_OK) != 0) {
    throw std::runtime_error(options_.mosquitto + " not found: running a broker needs mosquitto 2.0 (Debian: "
                             "apt-get install mosquitto, or make deps)");
  }
  for (int attempt = 0; attempt < std::max(options_.port_attempts, 1); ++attempt) {
    config_.port = free_loopback_port();
    write_broker_config(config_, options_.config_file.string(), true);
    if (launch()) return;
    if (output().find("Address already in use") == std::string::npos) break;
  }
  throw std::runtime_error("mosquitto did not start:\n" + output());
}

BrokerRunner::~BrokerRunner() { stop(); }

std::string BrokerRunner::output() const {
  std::string text = runner_slurp(options_.output_file);
  if (!config_.log_file.empty()) text += runner_slurp(config_.log_file);
  return text;
}

bool BrokerRunner::launch() {
  const std::string conf = options_.config_file.string();
  const std::string out = options_.output_file.string();
  std::vector<std::string> args{options_.mosquitto, "-c", conf};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  const int rc = posix_spawn(&pid_, options_.mosquitto.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    pid_ = -1;
    throw std::runtime_error("cannot start " + options_.mosquitto + ": " + std::strerror(rc));
  }
  const auto deadline = std::chrono::steady_clock::now() + options_.start_timeout;
  while (!loopback_port_open(config_.port)) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return false;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      stop(SIGKILL);
      return false;
    }
    std::this_thread::sleep_for(kRunnerPoll);
  }
  return true;
}

int BrokerRunner::stop(int sig, std::chrono::milliseconds grace) noexcept {
  if (pid_ <= 0) return -1;
  ::kill(pid_, sig);
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + grace;
  pid_t done = 0;
  while ((done = ::waitpid(pid_, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(kRunnerPoll);
  }
  if (done == 0) {
    ::kill(pid_, SIGKILL);
    done = ::waitpid(pid_, &status, 0);
  }
  pid_ = -1;
  if (done < 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void BrokerRunner::restart(std::chrono::milliseconds patience) {
  stop(SIGKILL);
  const auto deadline = std::chrono::steady_clock::now() + patience;
  while (!launch()) {
    if (std::chrono::steady_clock::now() > deadline) throw std::runtime_error("mosquitto did not restart:\n" + output());
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace pqot::mqtt
