// Child processes for the tests: pqot-modbus-sim (docs/modbus-sim.md) on 127.0.0.1 with any port,
// any daemon (srmcpd, the example server), or a command-line tool run to completion (run_process).
// stdout and stderr go to files of a private directory, and the process is killed at the end of
// the scope.
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "temp_dir.hpp"
#include "wait.hpp"

extern char** environ;

namespace pqot::test {

inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

inline std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

/// An environment for a child ("NAME=VALUE" entries): this process's own, with `set` added or
/// replaced and every variable named in `unset` removed.
inline std::vector<std::string> environment_with(const std::map<std::string, std::string>& set,
                                                 const std::vector<std::string>& unset = {}) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    bool drop = set.count(name) > 0;
    for (const auto& u : unset) drop = drop || u == name;
    if (!drop) env.push_back(entry);
  }
  for (const auto& [name, value] : set) env.push_back(name + "=" + value);
  return env;
}

class ChildProcess {
 public:
  /// With `listen_any`, starts `program` (pqot-modbus-sim) with `--listen 127.0.0.1:0 --port-file F`
  /// before `args` and waits until it has announced its port. Otherwise the arguments are passed
  /// as they are and nothing is awaited. `env` replaces the environment (see environment_with).
  ChildProcess(const std::string& program, std::vector<std::string> args, bool listen_any = true,
               std::optional<std::vector<std::string>> env = std::nullopt) {
    if (listen_any) args.insert(args.begin(), {"--listen", "127.0.0.1:0", "--port-file", port_file().string()});
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, out_file().c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, log_file().c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<char*> argv{const_cast<char*>(program.c_str())};
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<char*> envp;
    if (env) {
      for (auto& e : *env) envp.push_back(e.data());
      envp.push_back(nullptr);
    }
    const int rc = posix_spawn(&pid_, program.c_str(), &actions, nullptr, argv.data(),
                               env ? envp.data() : environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) throw std::runtime_error("cannot start " + program);
    if (!listen_any) return;
    const bool ready = eventually([this] {
      const std::string text = slurp(port_file());
      if (!text.empty() && text.back() == '\n') port_ = std::stoi(text);
      return port_ > 0 || exited();
    });
    if (!ready || port_ <= 0) throw std::runtime_error(program + " did not start:\n" + log());
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess() {
    if (!exit_code_) {
      ::kill(pid_, SIGKILL);
      int status = 0;
      ::waitpid(pid_, &status, 0);
    }
  }

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  std::string out() const { return slurp(out_file()); }
  std::string log() const { return slurp(log_file()); }
  void signal(int sig) const { ::kill(pid_, sig); }

  /// Waits until stderr holds `needle` at least `times` times.
  bool wait_for_log(const std::string& needle, std::size_t times = 1) const {
    return eventually([&] { return count_of(log(), needle) >= times; });
  }
  /// Waits until stdout holds `needle` at least `times` times.
  bool wait_for_out(const std::string& needle, std::size_t times = 1) const {
    return eventually([&] { return count_of(out(), needle) >= times; });
  }
  /// The exit code (128 + signal if killed) once the process has ended within `limit`.
  std::optional<int> wait_exit(std::chrono::milliseconds limit = kPatience) {
    eventually([this] { return exited(); }, limit);
    return exit_code_;
  }
  /// Sends `sig` (SIGTERM by default) and returns the exit code, or -1 if it did not end.
  int stop(int sig = SIGTERM) {
    if (!exit_code_) signal(sig);
    return wait_exit().value_or(-1);
  }

 private:
  std::filesystem::path port_file() const { return dir_.path() / "port"; }
  std::filesystem::path out_file() const { return dir_.path() / "stdout"; }
  std::filesystem::path log_file() const { return dir_.path() / "stderr"; }
  bool exited() {
    if (exit_code_) return true;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) != pid_) return false;
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return true;
  }

  TempDir dir_{"pqot-child"};
  pid_t pid_ = -1;
  int port_ = 0;
  std::optional<int> exit_code_;
};

/// What a command-line tool printed, and how it ended.
struct ProcessResult {
  int exit_code = -1;  ///< exit status, 128 + signal number, or -1 if it had to be killed
  std::string out;
  std::string err;
};

/// Runs `program` to completion (stdin is /dev/null), bounded by `limit`: a tool still running
/// then is killed, and the result says so in `err` with exit code -1.
inline ProcessResult run_process(const std::string& program, const std::vector<std::string>& args,
                                 std::optional<std::vector<std::string>> env = std::nullopt,
                                 std::chrono::milliseconds limit = std::chrono::minutes(2)) {
  ChildProcess child(program, args, false, std::move(env));
  ProcessResult r;
  const auto code = child.wait_exit(limit);
  r.exit_code = code.value_or(-1);
  r.out = child.out();
  r.err = child.log();
  if (!code) {
    r.err += "\n[test: " + program + " still running after " + std::to_string(limit.count()) +
             " ms, killed]\n";
  }
  return r;
}

}  // namespace pqot::test
