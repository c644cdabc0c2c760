// srup-device: the action runner (docs/srup-device.md, "Actions").
//
// Completion is watched by one thread per runner in a poll() loop over a pidfd per child, the
// child's output pipe and an eventfd that wakes it for new work. Why not SIGCHLD: a signal
// handler is process-wide and would race with every other waitpid() in the agent (libraries,
// the tests' own children); a pidfd belongs to exactly one child and cannot name a recycled PID.
#include "action_runner.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include "pqot/srup/body.hpp"

namespace pqot::srup_device {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

ActionResult result_of(srup::Status s, std::string detail) {
  ActionResult r;
  r.status = s;
  if (detail.size() > srup::kMaxDetail) detail.resize(srup::kMaxDetail);
  r.detail = std::move(detail);
  return r;
}

/// Closes a file descriptor at the end of its scope.
class RunnerFd {
 public:
  explicit RunnerFd(int fd = -1) : fd_(fd) {}
  ~RunnerFd() { reset(); }
  RunnerFd(const RunnerFd&) = delete;
  RunnerFd& operator=(const RunnerFd&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

std::vector<std::string> environment_of(const std::vector<std::string>& entries) {
  std::vector<std::string> env;
  bool has_path = false;
  for (const auto& e : entries) {
    const auto eq = e.find('=');
    const std::string name = e.substr(0, eq);
    if (name == "PATH") has_path = true;
    if (eq != std::string::npos) {
      env.push_back(e);
    } else if (const char* v = std::getenv(name.c_str())) {
      env.push_back(name + "=" + v);
    }
  }
  if (!has_path) env.insert(env.begin(), std::string("PATH=") + kActionPath);
  return env;
}

}  // namespace

struct ActionRunner::Child {
  pid_t pid = -1;
  RunnerFd pidfd;
  RunnerFd out;  // read end of the output pipe; -1 once it reached end of file
  std::uint32_t timeout_ms = 0;
  Clock::time_point deadline;
  std::optional<Clock::time_point> kill_at;  // set once SIGTERM went out
  bool timed_out = false;
  bool exited = false;
  ActionResult result;
  Done done;
};

struct ActionRunner::Job {
  Builtin handler;
  srup::Value argument;
  Done done;
};

ActionRunner::ActionRunner(std::vector<ActionSpec> actions, std::uint32_t max_concurrent)
    : actions_(std::move(actions)), max_concurrent_(std::max<std::uint32_t>(1, max_concurrent)) {
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) throw std::system_error(errno, std::generic_category(), "eventfd");
  thread_ = std::thread([this] { loop(); });
}

ActionRunner::~ActionRunner() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake();
  thread_.join();
  for (auto& c : children_) {
    ::kill(-c->pid, SIGKILL);
    int status = 0;
    while (::waitpid(c->pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  ::close(wake_fd_);
}

void ActionRunner::register_builtin(const std::string& name, Builtin handler) {
  std::lock_guard lock(mu_);
  builtins_[name] = std::move(handler);
}

std::size_t ActionRunner::running() const {
  std::lock_guard lock(mu_);
  return active_;
}

void ActionRunner::wake() {
  const std::uint64_t one = 1;
  [[maybe_unused]] const auto n = ::write(wake_fd_, &one, sizeof one);  // only fails when already signalled
}

std::optional<ActionResult> ActionRunner::admit_locked() {
  if (active_ >= max_concurrent_) {
    return result_of(srup::Status::busy, "busy: " + std::to_string(active_) + " actions running (limit " +
                                             std::to_string(max_concurrent_) + ")");
  }
  return std::nullopt;
}

std::optional<ActionResult> ActionRunner::start(std::uint8_t id, const srup::Value& argument, Done done) {
  const ActionSpec* spec = nullptr;
  for (const auto& a : actions_)
    if (a.id == id) spec = &a;
  if (spec == nullptr) return result_of(srup::Status::action_unknown, "unknown action " + std::to_string(id));
  std::lock_guard lock(mu_);
  if (auto busy = admit_locked()) return busy;
  if (!spec->builtin.empty()) {
    const auto h = builtins_.find(spec->builtin);
    if (h == builtins_.end())
      return result_of(srup::Status::action_failed, "built-in '" + spec->builtin + "' has no handler");
    jobs_.push_back(std::make_unique<Job>(Job{h->second, argument, std::move(done)}));
    ++active_;
    wake();
    return std::nullopt;
  }
  std::vector<std::string> tail = spec->args;
  if (spec->pass_argument && srup::type_of(argument) != srup::ValueType::none) {
    std::string text = srup::to_text(argument);
    // execve ends each argument at its first NUL: the program would see another argument.
    if (text.find('\0') != std::string::npos)
      return result_of(srup::Status::action_failed, "the argument holds a NUL byte");
    // An argument from the wire is data, never an option of the program ("-rf", "--config=...",
    // and negative numbers alike): refused, unless the program is told where its options end.
    if (spec->end_of_options) {
      tail.emplace_back("--");
    } else if (!text.empty() && text[0] == '-') {
      return result_of(srup::Status::action_failed,
                       "the argument starts with '-' and would be read as an option (action.end_of_options passes it "
                       "after --)");
    }
    tail.push_back(std::move(text));
  }
  return spawn_locked(ProgramSpec{spec->program, {}, spec->env, spec->timeout_ms}, std::move(tail), std::move(done));
}

std::optional<ActionResult> ActionRunner::run_program(const ProgramSpec& spec,
                                                      const std::vector<std::string>& extra_args, Done done) {
  std::lock_guard lock(mu_);
  if (auto busy = admit_locked()) return busy;
  std::vector<std::string> tail = spec.args;
  tail.insert(tail.end(), extra_args.begin(), extra_args.end());
  for (const auto& a : tail)
    if (a.find('\0') != std::string::npos) return result_of(srup::Status::action_failed, "an argument holds a NUL byte");
  return spawn_locked(spec, std::move(tail), std::move(done));
}

std::optional<ActionResult> ActionRunner::spawn_locked(const ProgramSpec& spec, std::vector<std::string> argv_tail,
                                                       Done done) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0)
    return result_of(srup::Status::action_failed, std::string("cannot create a pipe: ") + std::strerror(errno));
  RunnerFd read_end(pipe_fds[0]);
  RunnerFd write_end(pipe_fds[1]);
  ::fcntl(read_end.get(), F_SETFL, O_NONBLOCK);

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, write_end.get(), 1);
  posix_spawn_file_actions_adddup2(&fa, write_end.get(), 2);
  posix_spawn_file_actions_addclosefrom_np(&fa, 3);  // nothing of the agent's leaks into the child
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setpgroup(&attr, 0);  // its own process group: a timeout kills its children too
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<std::string> argv_s;
  argv_s.push_back(spec.program);
  argv_s.insert(argv_s.end(), std::make_move_iterator(argv_tail.begin()), std::make_move_iterator(argv_tail.end()));
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_s = environment_of(spec.env);
  std::vector<char*> envp;
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);

  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, spec.program.c_str(), &fa, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return result_of(srup::Status::action_failed, "cannot start " + spec.program + ": " + std::strerror(rc));
  write_end.reset();

  auto c = std::make_unique<Child>();
  c->pid = pid;
  // Through syscall(): glibc 2.36's <sys/pidfd.h> lacks extern "C" for C++.
  c->pidfd.reset(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  if (c->pidfd.get() < 0) {
    const int e = errno;
    ::kill(-pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return result_of(srup::Status::action_failed, std::string("pidfd_open: ") + std::strerror(e));
  }
  c->out.reset(read_end.release());
  c->timeout_ms = spec.timeout_ms;
  c->deadline = Clock::now() + milliseconds(spec.timeout_ms);
  c->done = std::move(done);
  children_.push_back(std::move(c));
  ++active_;
  wake();
  return std::nullopt;
}

namespace {

/// Reads what the pipe holds now into `r` (kept up to kMaxActionOutput, the rest counted);
/// false at end of file or on an error.
bool drain_output(int fd, ActionResult& r) {
  char buf[16384];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      const std::size_t keep = std::min<std::size_t>(static_cast<std::size_t>(n), kMaxActionOutput - r.output.size());
      r.output.append(buf, keep);
      r.output_dropped += static_cast<std::uint64_t>(n) - keep;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }
}

}  // namespace

void ActionRunner::finish(Child& c) {
  // The leader is a zombie (its PID still held), so the group ID cannot have been reused:
  // whatever it left running goes with it.
  ::kill(-c.pid, SIGKILL);
  int status = 0;
  while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (c.out.get() >= 0) drain_output(c.out.get(), c.result);
  c.out.reset();
  std::string detail;
  srup::Status s = srup::Status::action_failed;
  if (c.timed_out) {
    detail = "timeout after " + std::to_string(c.timeout_ms) + " ms";
  } else if (WIFEXITED(status)) {
    detail = "exit " + std::to_string(WEXITSTATUS(status));
    if (WEXITSTATUS(status) == 0) s = srup::Status::action_success;
  } else if (WIFSIGNALED(status)) {
    const char* name = ::sigabbrev_np(WTERMSIG(status));
    detail = "killed by signal " + std::to_string(WTERMSIG(status));
    if (name != nullptr) detail.append(" (SIG").append(name).append(")");
  } else {
    detail = "ended with wait status " + std::to_string(status);
  }
  ActionResult r = std::move(c.result);
  r.status = s;
  r.detail = std::move(detail);
  c.result = std::move(r);
}

void ActionRunner::loop() {
  for (;;) {
    std::vector<std::unique_ptr<Job>> jobs;
    std::vector<Child*> children;
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
      jobs.swap(jobs_);
      for (auto& c : children_) children.push_back(c.get());
    }
    for (auto& j : jobs) {
      ActionResult r;
      try {
        r = j->handler(j->argument);
      } catch (const std::exception& e) {
        r = result_of(srup::Status::action_failed, std::string("built-in failed: ") + e.what());
      }
      if (r.detail.size() > srup::kMaxDetail) r.detail.resize(srup::kMaxDetail);
      {
        std::lock_guard lock(mu_);
        --active_;
      }
      j->done(std::move(r));
    }
    if (!jobs.empty()) continue;  // look for more before sleeping

    // Timeouts: SIGTERM to the group at the deadline, SIGKILL after the grace period.
    const auto now = Clock::now();
    auto next = now + std::chrono::hours(1);
    for (Child* c : children) {
      if (c->exited) continue;
      if (!c->kill_at && now >= c->deadline) {
        c->timed_out = true;
        ::kill(-c->pid, SIGTERM);
        c->kill_at = now + milliseconds(kKillGraceMs);
      } else if (c->kill_at && now >= *c->kill_at) {
        ::kill(-c->pid, SIGKILL);
        c->kill_at = now + std::chrono::hours(1);  // the pidfd reports the end
      }
      next = std::min(next, c->kill_at ? *c->kill_at : c->deadline);
    }

    std::vector<pollfd> fds{{wake_fd_, POLLIN, 0}};
    for (Child* c : children) {
      fds.push_back({c->pidfd.get(), POLLIN, 0});
      fds.push_back({c->out.get(), POLLIN, 0});  // a negative fd is ignored by poll
    }
    const auto wait_ms = std::chrono::duration_cast<milliseconds>(next - now).count() + 1;
    const int n = ::poll(fds.data(), fds.size(), static_cast<int>(std::clamp<long long>(wait_ms, 0, 3'600'000)));
    if (n < 0 && errno != EINTR) continue;
    if (fds[0].revents & POLLIN) {
      std::uint64_t v = 0;
      [[maybe_unused]] const auto r = ::read(wake_fd_, &v, sizeof v);
    }
    std::vector<Child*> ended;
    for (std::size_t i = 0; i < children.size(); ++i) {
      Child* c = children[i];
      if (fds[2 + 2 * i].revents != 0 && c->out.get() >= 0) {
        if (!drain_output(c->out.get(), c->result)) c->out.reset();
      }
      if (fds[1 + 2 * i].revents != 0) ended.push_back(c);
    }
    for (Child* c : ended) {
      finish(*c);
      std::unique_ptr<Child> owned;
      {
        std::lock_guard lock(mu_);
        const auto it = std::find_if(children_.begin(), children_.end(), [c](const auto& p) { return p.get() == c; });
        owned = std::move(*it);
        children_.erase(it);
        --active_;
      }
      owned->done(std::move(owned->result));
    }
  }
}

}  // namespace pqot::srup_device
