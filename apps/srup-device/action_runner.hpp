// srup-device: runs SRUP-PQ Actions (docs/srup-device.md, "Actions"). An action ID maps to a
// program, run without a shell, in its own process group, with a clean environment, stdin from
// /dev/null and its output captured to a bounded buffer, under a timeout; or to a built-in
// handler registered in C++. Asynchronous: start() returns at once, and the outcome arrives
// through a callback from the runner's own thread, so the agent's loop never waits for a child.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "pqot/srup/status.hpp"
#include "pqot/srup/value.hpp"
#include "srup-device/config.hpp"

namespace pqot::srup_device {

/// Output kept per action (stdout and stderr together); the rest is counted, not kept.
inline constexpr std::size_t kMaxActionOutput = 4096;
/// Between SIGTERM and SIGKILL when an action overruns its timeout.
inline constexpr std::uint32_t kKillGraceMs = 2000;
/// The PATH every program gets unless its `env` sets one.
inline constexpr const char* kActionPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// An action's outcome, ready for a Response (docs/srup-pq.md 2.5).
struct ActionResult {
  srup::Status status = srup::Status::action_failed;
  std::string detail;               ///< <= srup::kMaxDetail bytes: "exit 0", "timeout after 5000 ms", ...
  std::string output;               ///< the first kMaxActionOutput bytes of stdout + stderr
  std::uint64_t output_dropped = 0;  ///< bytes beyond those
};

/// A program to run: the fields of [[action]] or of [update]'s apply command.
struct ProgramSpec {
  std::string program;              ///< absolute path
  std::vector<std::string> args;    ///< argv[1..]
  std::vector<std::string> env;     ///< "NAME=VALUE", or "NAME" copied from this process's
  std::uint32_t timeout_ms = 10'000;
};

class ActionRunner {
 public:
  using Done = std::function<void(ActionResult)>;
  /// A built-in action: runs on the runner's thread, so it must be quick and thread-safe.
  using Builtin = std::function<ActionResult(const srup::Value& argument)>;

  /// `actions` as configured; at most `max_concurrent` programs and built-ins at a time.
  ActionRunner(std::vector<ActionSpec> actions, std::uint32_t max_concurrent);
  /// Kills what still runs (SIGKILL to each process group) and waits for it; callbacks of those
  /// actions are not called (the journal then answers a retry INTERRUPTED, docs/srup-pq.md 7.3).
  ~ActionRunner();
  ActionRunner(const ActionRunner&) = delete;
  ActionRunner& operator=(const ActionRunner&) = delete;

  /// Registers the handler of built-in `name` (before the first start()).
  void register_builtin(const std::string& name, Builtin handler);

  /// Starts action `id`. Returns the outcome at once if there is nothing to wait for: 0x2E for an
  /// ID the configuration does not name, 0x91 BUSY at the concurrency limit, 0x2F if the program
  /// cannot be started (missing, not executable), the argument cannot be passed (it holds NUL, or
  /// starts with '-' and the action has no end_of_options), or a built-in has no handler.
  /// Otherwise returns nothing, and `done` is called exactly once, later, from the runner's thread.
  std::optional<ActionResult> start(std::uint8_t id, const srup::Value& argument, Done done);

  /// Runs `spec` with `extra_args` appended (the update's apply command): as start().
  std::optional<ActionResult> run_program(const ProgramSpec& spec, const std::vector<std::string>& extra_args,
                                          Done done);

  /// Actions started and not yet completed.
  std::size_t running() const;

 private:
  struct Child;
  struct Job;
  void loop();
  void wake();
  std::optional<ActionResult> admit_locked();
  std::optional<ActionResult> spawn_locked(const ProgramSpec& spec, std::vector<std::string> argv_tail, Done done);
  void finish(Child& c);

  std::vector<ActionSpec> actions_;
  std::uint32_t max_concurrent_;
  std::map<std::string, Builtin> builtins_;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Child>> children_;  // running programs (guarded by mu_)
  std::vector<std::unique_ptr<Job>> jobs_;        // queued built-ins (guarded by mu_)
  std::size_t active_ = 0;                        // programs + built-ins admitted, not completed
  bool stopping_ = false;
  int wake_fd_ = -1;
  std::thread thread_;
};

}  // namespace pqot::srup_device
