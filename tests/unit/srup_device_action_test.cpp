// srup-device's action runner (docs/srup-device.md, "Actions"): exit codes to SRUP statuses
// (docs/srup-pq.md 2.5), no shell between the argument and the program, a clean environment,
// bounded output, timeouts that take the whole process group, and the concurrency bound.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>

#include <cerrno>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "../support/temp_dir.hpp"
#include "../support/wait.hpp"
#include "srup-device/action_runner.hpp"

namespace {

using namespace pqot::srup_device;
using pqot::srup::Status;

/// Where a callback leaves its result.
struct DevactOutcome {
  std::mutex mu;
  std::optional<ActionResult> result;
  int calls = 0;
  ActionRunner::Done done() {
    return [this](ActionResult r) {
      std::lock_guard lock(mu);
      result = std::move(r);
      ++calls;
    };
  }
  /// The result once the callback came (a test failure if not within the patience).
  ActionResult wait() {
    EXPECT_TRUE(pqot::test::eventually([this] {
      std::lock_guard lock(mu);
      return result.has_value();
    })) << "no completion";
    std::lock_guard lock(mu);
    return result.value_or(ActionResult{});
  }
};

ActionSpec devact_program(std::uint8_t id, std::string program, std::vector<std::string> args = {},
                          std::uint32_t timeout_ms = 10'000) {
  ActionSpec a;
  a.id = id;
  a.program = std::move(program);
  a.args = std::move(args);
  a.timeout_ms = timeout_ms;
  return a;
}

std::string devact_script(const pqot::test::TempDir& dir, const std::string& name, const std::string& body) {
  const auto path = (dir.path() / name).string();
  std::ofstream(path) << "#!/bin/sh\n" << body;
  ::chmod(path.c_str(), 0755);
  return path;
}

/// Runs action `id` to completion (it must start).
ActionResult devact_run(ActionRunner& runner, std::uint8_t id, const pqot::srup::Value& arg = {}) {
  DevactOutcome o;
  const auto now = runner.start(id, arg, o.done());
  EXPECT_FALSE(now.has_value()) << "refused at once: " << (now ? now->detail : "");
  if (now) return *now;
  return o.wait();
}

TEST(SrupDeviceActions, ExitCodesMapToActionStatuses) {
  ActionRunner runner({devact_program(1, "/bin/true"), devact_program(2, "/bin/false"),
                       devact_program(3, "/bin/sh", {"-c", "exit 3"})},
                      4);
  auto r = devact_run(runner, 1);
  EXPECT_EQ(r.status, Status::action_success);
  EXPECT_EQ(r.detail, "exit 0");
  r = devact_run(runner, 2);
  EXPECT_EQ(r.status, Status::action_failed);
  EXPECT_EQ(r.detail, "exit 1");
  r = devact_run(runner, 3);
  EXPECT_EQ(r.status, Status::action_failed);
  EXPECT_EQ(r.detail, "exit 3");
  EXPECT_EQ(runner.running(), 0u);
}

TEST(SrupDeviceActions, UnknownIdIsRefusedAtOnceWithoutCallback) {
  ActionRunner runner({devact_program(1, "/bin/true")}, 4);
  DevactOutcome o;
  const auto r = runner.start(9, {}, o.done());
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, Status::action_unknown);
  EXPECT_EQ(r->detail, "unknown action 9");
  EXPECT_EQ(o.calls, 0);
}

TEST(SrupDeviceActions, MissingProgramFailsAtOnce) {
  ActionRunner runner({devact_program(1, "/nonexistent/program")}, 4);
  DevactOutcome o;
  const auto r = runner.start(1, {}, o.done());
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, Status::action_failed);
  EXPECT_NE(r->detail.find("cannot start /nonexistent/program"), std::string::npos) << r->detail;
  EXPECT_EQ(runner.running(), 0u);
}

TEST(SrupDeviceActions, ArgumentIsOneArgvElementNeverAShellCommand) {
  pqot::test::TempDir dir;
  const auto marker = dir.path() / "marker";
  const auto script = devact_script(dir, "args.sh", "echo \"$#\"\nprintf '%s\\n' \"$1\"\n");
  auto spec = devact_program(1, script);
  spec.pass_argument = true;
  auto fixed = devact_program(2, script, {"fixed"});
  ActionRunner runner({spec, fixed}, 4);
  const std::string hostile = "x; touch " + marker.string() + " ;rm -rf / $(id) `id` | cat";
  auto r = devact_run(runner, 1, pqot::srup::string_value(hostile));
  EXPECT_EQ(r.status, Status::action_success) << r.output;
  EXPECT_EQ(r.output, "1\n" + hostile + "\n");
  EXPECT_FALSE(std::filesystem::exists(marker));
  // A typed value is passed in its text form (docs/srup-pq.md 2.6).
  r = devact_run(runner, 1, pqot::srup::Value(std::int32_t{42}));
  EXPECT_EQ(r.output, "1\n42\n");
  // No argument: nothing appended.
  r = devact_run(runner, 1);
  EXPECT_EQ(r.output, "0\n\n");
  // Without pass_argument the SRUP argument is ignored.
  r = devact_run(runner, 2, pqot::srup::string_value("ignored"));
  EXPECT_EQ(r.output, "1\nfixed\n");
  // A NUL would split the argument in two for execve: refused.
  const auto nul = runner.start(1, pqot::srup::string_value(std::string("a\0b", 3)), [](ActionResult) {});
  ASSERT_TRUE(nul.has_value());
  EXPECT_EQ(nul->status, Status::action_failed);
}

// An argument from the wire never becomes an option of the program: one that starts with '-'
// (an option, or a negative number, which getopt reads as options too) is refused at once, unless
// the action says the program ends its options at "--"; then it comes after "--".
TEST(SrupDeviceActions, AnArgumentStartingWithADashIsNeverAnOption) {
  pqot::test::TempDir dir;
  const auto script = devact_script(dir, "args.sh", "echo \"$#\"\nprintf '%s\\n' \"$@\"\n");
  auto plain = devact_program(1, script, {"--fixed"});
  plain.pass_argument = true;
  auto ended = devact_program(2, script, {"--fixed"});
  ended.pass_argument = true;
  ended.end_of_options = true;
  ActionRunner runner({plain, ended}, 4);
  for (const auto& arg : {pqot::srup::string_value("--config=/tmp/evil"), pqot::srup::string_value("-rf"),
                          pqot::srup::Value(std::int32_t{-42})}) {
    DevactOutcome o;
    const auto now = runner.start(1, arg, o.done());
    ASSERT_TRUE(now.has_value()) << pqot::srup::to_text(arg);
    EXPECT_EQ(now->status, Status::action_failed);
    EXPECT_EQ(now->detail, "the argument starts with '-' and would be read as an option (action.end_of_options "
                           "passes it after --)");
    EXPECT_EQ(o.calls, 0);
  }
  EXPECT_EQ(runner.running(), 0u);
  // Other arguments are passed as before, without "--".
  auto r = devact_run(runner, 1, pqot::srup::string_value("on"));
  EXPECT_EQ(r.output, "2\n--fixed\non\n");
  // With end_of_options: "--", then the argument, whatever it starts with.
  r = devact_run(runner, 2, pqot::srup::string_value("--config=/tmp/evil"));
  EXPECT_EQ(r.status, Status::action_success) << r.detail;
  EXPECT_EQ(r.output, "3\n--fixed\n--\n--config=/tmp/evil\n");
  r = devact_run(runner, 2, pqot::srup::Value(std::int32_t{-42}));
  EXPECT_EQ(r.output, "3\n--fixed\n--\n-42\n");
  // No argument: neither "--" nor anything else is appended.
  r = devact_run(runner, 2);
  EXPECT_EQ(r.output, "1\n--fixed\n");
}

TEST(SrupDeviceActions, EnvironmentIsOnlyPathAndWhatTheConfigLists) {
  ::setenv("SRUP_DEVACT_SECRET", "leak", 1);
  ::setenv("SRUP_DEVACT_PASSED", "kept", 1);
  auto spec = devact_program(1, "/usr/bin/env");
  spec.env = {"LANG=C", "SRUP_DEVACT_PASSED", "SRUP_DEVACT_UNSET_NAME"};
  ActionRunner runner({spec}, 4);
  const auto r = devact_run(runner, 1);
  EXPECT_EQ(r.output, std::string("PATH=") + kActionPath + "\nLANG=C\nSRUP_DEVACT_PASSED=kept\n");
  ::unsetenv("SRUP_DEVACT_SECRET");
  ::unsetenv("SRUP_DEVACT_PASSED");
}

TEST(SrupDeviceActions, NoDescriptorOfTheAgentLeaksIntoTheChild) {
  // A descriptor without close-on-exec, as a careless library might leave one.
  const int leaky = ::open("/dev/null", O_RDONLY);
  ASSERT_GE(leaky, 3);
  ActionRunner runner({devact_program(1, "/bin/sh", {"-c", "ls /proc/$$/fd"})}, 4);
  const auto r = devact_run(runner, 1);
  ::close(leaky);
  EXPECT_EQ(r.output, "0\n1\n2\n") << "the shell may hold its own fd only while listing";
}

TEST(SrupDeviceActions, StdinIsDevNullAndOutputIsBounded) {
  ActionRunner runner({devact_program(1, "/bin/cat"),
                       devact_program(2, "/bin/sh", {"-c", "head -c 10000 /dev/zero; echo err >&2"})},
                      4);
  auto r = devact_run(runner, 1);
  EXPECT_EQ(r.status, Status::action_success);
  EXPECT_EQ(r.output, "");
  r = devact_run(runner, 2);
  EXPECT_EQ(r.output.size(), kMaxActionOutput);
  EXPECT_EQ(r.output_dropped, 10000u + 4u - kMaxActionOutput);
}

TEST(SrupDeviceActions, TimeoutKillsTheWholeProcessGroup) {
  pqot::test::TempDir dir;
  const auto pid_file = dir.path() / "child.pid";
  // The shell starts a grandchild and waits; both must go.
  ActionRunner runner({devact_program(1, "/bin/sleep", {"30"}, 200),
                       devact_program(2, "/bin/sh", {"-c", "sleep 30 & echo $! > " + pid_file.string() + "; wait"}, 300)},
                      4);
  auto r = devact_run(runner, 1);
  EXPECT_EQ(r.status, Status::action_failed);
  EXPECT_EQ(r.detail, "timeout after 200 ms");
  r = devact_run(runner, 2);
  EXPECT_EQ(r.detail, "timeout after 300 ms");
  std::ifstream in(pid_file);
  pid_t grandchild = 0;
  ASSERT_TRUE(in >> grandchild);
  // Killed and (re-parented to init or a subreaper) reaped: no such process any more, or a zombie
  // of a subreaper that is not us. kill(0) on a zombie succeeds, so check /proc's state.
  EXPECT_TRUE(pqot::test::eventually([&] {
    std::ifstream stat("/proc/" + std::to_string(grandchild) + "/stat");
    std::string pid, comm, state;
    return !(stat >> pid >> comm >> state) || state == "Z";
  }));
}

TEST(SrupDeviceActions, ASignalIsAFailureNamingIt) {
  ActionRunner runner({devact_program(1, "/bin/sh", {"-c", "kill -9 $$"})}, 4);
  const auto r = devact_run(runner, 1);
  EXPECT_EQ(r.status, Status::action_failed);
  EXPECT_EQ(r.detail, "killed by signal 9 (SIGKILL)");
}

TEST(SrupDeviceActions, BeyondTheConcurrencyLimitIsBusy) {
  ActionRunner runner({devact_program(1, "/bin/sleep", {"30"}, 300), devact_program(2, "/bin/true")}, 1);
  DevactOutcome first;
  ASSERT_FALSE(runner.start(1, {}, first.done()).has_value());
  EXPECT_EQ(runner.running(), 1u);
  const auto busy = runner.start(2, {}, [](ActionResult) {});
  ASSERT_TRUE(busy.has_value());
  EXPECT_EQ(busy->status, Status::busy);
  const auto busy2 = runner.run_program(ProgramSpec{"/bin/true", {}, {}, 1000}, {}, [](ActionResult) {});
  ASSERT_TRUE(busy2.has_value());
  EXPECT_EQ(busy2->status, Status::busy);
  EXPECT_EQ(first.wait().detail, "timeout after 300 ms");
  EXPECT_TRUE(pqot::test::eventually([&] { return runner.running() == 0; }));
  EXPECT_EQ(devact_run(runner, 2).status, Status::action_success);
}

TEST(SrupDeviceActions, BuiltinsRunTheirRegisteredHandler) {
  ActionSpec log;
  log.id = 5;
  log.builtin = "log";
  ActionSpec reboot;
  reboot.id = 6;
  reboot.builtin = "reboot-simulated";
  ActionRunner runner({log, reboot}, 4);
  std::string seen;
  runner.register_builtin("log", [&](const pqot::srup::Value& v) {
    seen = pqot::srup::to_text(v);
    return ActionResult{Status::action_success, "logged", {}, 0};
  });
  const auto r = devact_run(runner, 5, pqot::srup::string_value("hello"));
  EXPECT_EQ(r.status, Status::action_success);
  EXPECT_EQ(r.detail, "logged");
  EXPECT_EQ(seen, "hello");
  DevactOutcome o;
  const auto missing = runner.start(6, {}, o.done());
  ASSERT_TRUE(missing.has_value());
  EXPECT_EQ(missing->status, Status::action_failed);
  EXPECT_EQ(missing->detail, "built-in 'reboot-simulated' has no handler");
  runner.register_builtin("reboot-simulated", [](const pqot::srup::Value&) -> ActionResult {
    throw std::runtime_error("disk on fire");
  });
  const auto thrown = devact_run(runner, 6);
  EXPECT_EQ(thrown.status, Status::action_failed);
  EXPECT_EQ(thrown.detail, "built-in failed: disk on fire");
}

TEST(SrupDeviceActions, DestructionKillsWhatRuns) {
  pid_t pid = 0;
  {
    pqot::test::TempDir dir;
    const auto pid_file = dir.path() / "pid";
    ActionRunner runner({devact_program(1, "/bin/sh", {"-c", "echo $$ > " + pid_file.string() + "; exec sleep 30"}, 60'000)}, 4);
    ASSERT_FALSE(runner.start(1, {}, [](ActionResult) {}).has_value());
    ASSERT_TRUE(pqot::test::eventually([&] {
      std::ifstream in(pid_file);
      return static_cast<bool>(in >> pid);
    }));
  }
  EXPECT_EQ(::kill(pid, 0), -1);  // reaped by the runner's destructor
  EXPECT_EQ(errno, ESRCH);
}

}  // namespace
