// Issue 12's exactly-once test (docs/srup-pq.md section 7.3): a real receiver process
// (srup_receiver_driver: open_protected, the StateStore, an fsync'ed effect, a sealed Response) is
// killed with SIGKILL at each point between receive, accepted, act and done; the C2 then
// retransmits the same envelope, twice. The command never runs twice, runs exactly once when the
// crash came after the act, and every retry is answered: the cached Response, or 0x90 INTERRUPTED
// when the crash fell between accepted and done. REPLAY never executes.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "../support/child_process.hpp"
#include "../support/programs.hpp"
#include "../support/srup_peers.hpp"
#include "../support/temp_dir.hpp"
#include "pqot/srup/protect.hpp"

namespace pqot::test::srup_exactly_once {
namespace {

namespace fs = std::filesystem;

const std::string kDriver = bin("srup_receiver_driver");
constexpr int kKilled = 128 + SIGKILL;

std::uint64_t wall_ms() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
}

// The C2's Action 7 (no argument) with sequence `seq`, sealed to the device.
srup::Bytes action_envelope(std::uint64_t seq, const std::string& token) {
  const SrupPeer c2 = srup_c2();
  const SrupPeer device = srup_device();
  srup::Header h;
  h.type = srup::MessageType::action;
  h.suite = c2.identity.suite;
  h.mode = srup::Mode::sealed;
  h.sender = c2.identity.id;
  h.recipient = device.identity.id;
  h.sequence = seq;
  h.timestamp_ms = wall_ms();
  h.lifetime_ms = 600'000;
  h.topic = srup::topic_tag(kSrupCommandTopic);
  h.token.assign(token.begin(), token.end());
  return srup::protect(h, srup::Bytes{0x07, 0x00}, c2.identity, &device.keys);
}

struct Answer {
  std::uint8_t status = 0;
  std::string token;
};

// The C2 opens the Response as any received envelope (steps 1-9).
Answer open_answer(const std::string& wire) {
  const SrupPeer c2 = srup_c2();
  const SrupPeer device = srup_device();
  const srup::Opened o = srup::open_protected(
      crypto::as_bytes(wire), kSrupResponseTopic, wall_ms(), c2.identity,
      [&](std::uint64_t id) { return id == device.identity.id ? &device.keys : nullptr; });
  EXPECT_EQ(o.header.type, srup::MessageType::response);
  EXPECT_GE(o.body.size(), 3u);
  return {o.body.empty() ? std::uint8_t{0} : o.body[0], std::string(o.header.token.begin(), o.header.token.end())};
}

class Receiver {
 public:
  fs::path envelope(std::uint64_t seq, const std::string& token) const {
    const fs::path p = dir_.path() / ("cmd-" + std::to_string(seq) + "-" + token);
    const srup::Bytes wire = action_envelope(seq, token);
    std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(wire.data()),
                                            static_cast<std::streamsize>(wire.size()));
    return p;
  }
  /// One delivery: a fresh receiver process; the answer it wrote (or nothing) is in answer().
  ProcessResult deliver(const fs::path& envelope, const std::string& crash_at = "") const {
    fs::remove(out());
    std::vector<std::string> args = {"--db",      (dir_.path() / "state.db").string(),
                                     "--envelope", envelope.string(),
                                     "--effects",  effects().string(),
                                     "--out",      out().string()};
    if (!crash_at.empty()) args.insert(args.end(), {"--crash-at", crash_at});
    return run_process(kDriver, args);
  }
  bool answered() const { return fs::exists(out()); }
  std::string answer() const { return slurp(out()); }
  std::size_t executions(std::uint64_t seq) const {
    return count_of(slurp(effects()), "executed 194 " + std::to_string(seq) + "\n");
  }

 private:
  fs::path effects() const { return dir_.path() / "effects"; }
  fs::path out() const { return dir_.path() / "answer"; }
  TempDir dir_{"pqot-srup-once"};
};

struct CrashCase {
  std::string point;
  std::size_t executions;    // in the effects file at the end
  std::uint8_t first_status;  // of the first retry's answer
  std::string first_verdict;
  friend void PrintTo(const CrashCase& c, std::ostream* os) { *os << "crash at " << c.point; }
};

class SrupExactlyOnce : public ::testing::TestWithParam<CrashCase> {};

TEST_P(SrupExactlyOnce, KilledThenRetransmittedNeverRunsTwiceAlwaysAnswered) {
  const CrashCase& c = GetParam();
  Receiver rx;
  const fs::path cmd = rx.envelope(42, "tok-42");
  const ProcessResult crashed = rx.deliver(cmd, c.point);
  ASSERT_EQ(crashed.exit_code, kKilled) << crashed.err;
  EXPECT_FALSE(rx.answered());

  const ProcessResult retry = rx.deliver(cmd);
  ASSERT_EQ(retry.exit_code, 0) << retry.err;
  EXPECT_EQ(retry.out, c.first_verdict + "\n");
  ASSERT_TRUE(rx.answered());
  const std::string first = rx.answer();
  const Answer a = open_answer(first);
  EXPECT_EQ(a.status, c.first_status);
  EXPECT_EQ(a.token, "tok-42");

  const ProcessResult again = rx.deliver(cmd);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, "answer_cached\n");
  EXPECT_EQ(rx.answer(), first);  // the same envelope, byte for byte

  EXPECT_EQ(rx.executions(42), c.executions);
}

// received: nothing durable yet, the retry runs it. accepted: journaled but not run, the retry
// gets INTERRUPTED and it never runs. acted: run, not done: INTERRUPTED, not run again. done:
// the cached success.
INSTANTIATE_TEST_SUITE_P(
    Section7_3, SrupExactlyOnce,
    ::testing::Values(CrashCase{"received", 1, 0x20, "execute"},
                      CrashCase{"accepted", 0, 0x90, "interrupted"},
                      CrashCase{"acted", 1, 0x90, "interrupted"},
                      CrashCase{"done", 1, 0x20, "answer_cached"}),
    [](const ::testing::TestParamInfo<CrashCase>& info) { return info.param.point; });

TEST(SrupExactlyOnceReplay, Section7_3_ReplayNeverExecutes) {
  Receiver rx;
  ASSERT_EQ(rx.deliver(rx.envelope(5000, "a")).exit_code, 0);
  EXPECT_EQ(rx.executions(5000), 1u);
  // Never seen, but older than the window: REPLAY, not run, not answered.
  const ProcessResult old = rx.deliver(rx.envelope(3, "b"));
  EXPECT_EQ(old.exit_code, 4);
  EXPECT_NE(old.err.find("REPLAY"), std::string::npos) << old.err;
  EXPECT_FALSE(rx.answered());
  // The same number with another command: a reused sequence, not a retransmission.
  const ProcessResult reused = rx.deliver(rx.envelope(5000, "c"));
  EXPECT_EQ(reused.exit_code, 4);
  EXPECT_FALSE(rx.answered());
  EXPECT_EQ(rx.executions(3), 0u);
  EXPECT_EQ(rx.executions(5000), 1u);
}

}  // namespace
}  // namespace pqot::test::srup_exactly_once
