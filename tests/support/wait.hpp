// Bounded waits for the tests: wait until something holds or a deadline passes, then let the test
// fail with a message. Never a fixed sleep, and never a statement about how long anything takes.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

namespace pqot::test {

/// How long a test waits for something that happens asynchronously before it calls it a failure.
/// Generous: the tests share two cores with the sanitizer build and with other engineers' builds.
inline constexpr std::chrono::milliseconds kPatience{std::chrono::seconds(10)};

/// Checks `done` every 10 ms until it holds or `limit` has passed; whether it held.
inline bool eventually(const std::function<bool()>& done,
                       std::chrono::milliseconds limit = kPatience) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    if (done()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace pqot::test

namespace pqot::test {

/// Sets `stop` and joins `thread` when the scope ends, however the test leaves it (a failed
/// ASSERT included), so that no thread outlives the objects it uses.
class StopAndJoin {
 public:
  StopAndJoin(std::atomic<bool>& stop, std::thread& thread) : stop_(stop), thread_(thread) {}
  StopAndJoin(const StopAndJoin&) = delete;
  StopAndJoin& operator=(const StopAndJoin&) = delete;
  ~StopAndJoin() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::atomic<bool>& stop_;
  std::thread& thread_;
};

}  // namespace pqot::test
