// Network namespaces for TRIP's system tests: created by the test, named trip-<pid>-<role> so that
// a later run can tell the leftovers of a killed run (whose pid is gone) from a live run's, and
// removed, with whatever still runs in them, when the lab ends. Root is needed.
#pragma once

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "../../support/child_process.hpp"

namespace pqot::test {

/// The absolute path of a system program (`ip`, `tc`), or an exception naming the package: a test
/// whose tool is missing fails, it does not pass quietly.
inline std::string system_program(const std::string& name, const std::string& package) {
  for (const char* dir : {"/usr/sbin", "/usr/bin", "/sbin", "/bin"}) {
    const std::filesystem::path p = std::filesystem::path(dir) / name;
    if (::access(p.c_str(), X_OK) == 0) return p.string();
  }
  throw std::runtime_error(name + " not found (Debian package " + package + "; make deps installs it)");
}

/// Runs `program args...` to completion; its standard output, or an exception with what it said.
inline std::string run_checked(const std::string& program, const std::vector<std::string>& args) {
  const ProcessResult r = run_process(program, args, std::nullopt, std::chrono::seconds(30));
  if (r.exit_code != 0) {
    std::string cmd = program;
    for (const auto& a : args) cmd += " " + a;
    throw std::runtime_error(cmd + ": exit " + std::to_string(r.exit_code) + ": " + r.err);
  }
  return r.out;
}

/// Runs `f` on a thread that has joined network namespace `ns`; sockets `f` opens stay in `ns`
/// (and may be used from any thread afterwards). What `f` returns or throws comes back here.
template <class F>
auto in_namespace(const std::string& ns, F f) -> decltype(f()) {
  using R = decltype(f());
  std::exception_ptr failure;
  std::optional<std::conditional_t<std::is_void_v<R>, int, R>> result;
  std::thread t([&] {
    try {
      const std::string path = "/var/run/netns/" + ns;
      const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
      const int rc = ::setns(fd, CLONE_NEWNET);
      const int err = errno;
      ::close(fd);
      if (rc != 0) throw std::runtime_error("setns " + ns + ": " + std::strerror(err));
      if constexpr (std::is_void_v<R>) {
        f();
        result.emplace(0);
      } else {
        result.emplace(f());
      }
    } catch (...) {
      failure = std::current_exception();
    }
  });
  t.join();
  if (failure) std::rethrow_exception(failure);
  if constexpr (!std::is_void_v<R>) return std::move(*result);
}

class NetnsLab {
 public:
  NetnsLab() : ip_(system_program("ip", "iproute2")), tc_(system_program("tc", "iproute2")) { remove_stale(); }
  NetnsLab(const NetnsLab&) = delete;
  NetnsLab& operator=(const NetnsLab&) = delete;
  ~NetnsLab() {
    for (auto it = names_.rbegin(); it != names_.rend(); ++it) remove(*it);
  }

  /// A new namespace for `role` (a few letters), with its loopback up; its name.
  std::string add(const std::string& role) {
    const std::string name = prefix(::getpid()) + role;
    run_checked(ip_, {"netns", "add", name});
    names_.push_back(name);
    ip({"-n", name, "link", "set", "lo", "up"});
    return name;
  }

  /// A veth pair between two namespaces, each end with its IPv4 address/prefix, up.
  void veth(const std::string& ns_a, const std::string& dev_a, const std::string& addr_a,
            const std::string& ns_b, const std::string& dev_b, const std::string& addr_b) {
    ip({"-n", ns_a, "link", "add", dev_a, "type", "veth", "peer", "name", dev_b, "netns", ns_b});
    ip({"-n", ns_a, "addr", "add", addr_a, "dev", dev_a});
    ip({"-n", ns_b, "addr", "add", addr_b, "dev", dev_b});
    ip({"-n", ns_a, "link", "set", dev_a, "up"});
    ip({"-n", ns_b, "link", "set", dev_b, "up"});
  }

  std::string ip(const std::vector<std::string>& args) const { return run_checked(ip_, args); }
  std::string tc(const std::vector<std::string>& args) const { return run_checked(tc_, args); }

  /// The argument list that runs `argv` inside `ns` (`ip netns exec` execs it: the pid is the
  /// program's own, so a signal to the ChildProcess reaches it).
  std::vector<std::string> exec_args(const std::string& ns, std::vector<std::string> argv) const {
    argv.insert(argv.begin(), {"netns", "exec", ns});
    return argv;
  }
  const std::string& ip_program() const { return ip_; }

 private:
  static std::string prefix(pid_t pid) { return "trip-" + std::to_string(pid) + "-"; }

  void remove(const std::string& name) const {
    // Whatever still runs there (a program a failed test left) goes first.
    const ProcessResult pids = run_process(ip_, {"netns", "pids", name});
    std::istringstream in(pids.out);
    for (pid_t pid; in >> pid;) ::kill(pid, SIGKILL);
    (void)run_process(ip_, {"netns", "del", name});
  }

  /// trip-<pid>-* namespaces of runs whose process is gone (a test killed mid-way).
  void remove_stale() const {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/var/run/netns", ec)) {
      const std::string name = e.path().filename().string();
      if (name.rfind("trip-", 0) != 0) continue;
      const pid_t pid = std::atoi(name.c_str() + 5);
      if (pid <= 0 || name != prefix(pid) + name.substr(prefix(pid).size())) continue;
      if (pid == ::getpid() || is_live_lab(pid)) continue;
      remove(name);
    }
  }

  /// Whether `pid` is a test program that may own a lab (a pid reused by anything else is not).
  static bool is_live_lab(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return cmdline.find("_tests") != std::string::npos;
  }

  std::string ip_;
  std::string tc_;
  std::vector<std::string> names_;
};

}  // namespace pqot::test
