// SRUP-PQ's durable state (docs/srup-pq.md section 7): counters never reused across restarts and
// crashes (7.1), replay windows per direction that survive a restart (7.2), the command journal's
// verdicts and bounds (7.3, 7.5), and the files it refuses (7.4). Crashes are simulated by copying
// the files of an open store or by a child that ends with _exit (no destructor, no flush).
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "../support/temp_dir.hpp"
#include "pqot/srup/state.hpp"

namespace pqot::srup {
namespace {

namespace fs = std::filesystem;
using Verdict = StateStore::Verdict;

constexpr StreamKey kC2ToDevice{0xc2, 0xa1};
constexpr StreamKey kDeviceToC2{0xa1, 0xc2};
const Bytes kToken = {'t', 'o', 'k'};

Bytes file_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Another program's view of the file (the store must be closed: it holds an exclusive lock).
void raw_exec(const fs::path& db, const std::string& sql) {
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(h, sql.c_str(), nullptr, nullptr, &err);
  const std::string msg = err != nullptr ? err : "";
  sqlite3_free(err);
  sqlite3_close(h);
  ASSERT_EQ(rc, SQLITE_OK) << msg;
}

std::int64_t raw_int(const fs::path& db, const std::string& sql) {
  sqlite3* h = nullptr;
  EXPECT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(h, sql.c_str(), -1, &st, nullptr), SQLITE_OK);
  EXPECT_EQ(sqlite3_step(st), SQLITE_ROW);
  const std::int64_t v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(h);
  return v;
}

// The files of a live store copied as they are: what a power cut or kill -9 would leave.
fs::path copy_live(const fs::path& db, const fs::path& dir) {
  fs::create_directories(dir);
  for (const char* suffix : {"", "-wal"}) {
    const fs::path from = db.string() + suffix;
    if (fs::exists(from)) fs::copy_file(from, dir / (db.filename().string() + suffix));
  }
  return dir / db.filename();
}

// Runs `body` in a child process; `body` ends it with _exit (no destructor runs, nothing is
// flushed: a crash) or returns (an orderly end).
template <typename F>
void in_crashing_child(F body) {
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    try {
      body();
    } catch (...) {
      ::_exit(2);
    }
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
}

class SrupState : public ::testing::Test {
 protected:
  test::TempDir dir{"pqot-srup-state"};
  fs::path db = dir.path() / "state.db";
};

TEST_F(SrupState, Section7_1_CountersNeverReusedAcrossReopen) {
  {
    StateStore s(db);
    EXPECT_EQ(s.next_sequence(0xc2, 0xa1), 1u);
    EXPECT_EQ(s.next_sequence(0xc2, 0xa1), 2u);
    EXPECT_EQ(s.next_sequence(0xa1, 0xc2), 1u);  // each direction its own counter
    EXPECT_EQ(s.next_sequence(0xc2, 0), 1u);     // telemetry
  }
  StateStore s(db);
  // The rest of the reserved block is skipped, never reused.
  EXPECT_EQ(s.next_sequence(0xc2, 0xa1), 1025u);
  EXPECT_EQ(s.next_sequence(0xa1, 0xc2), 1025u);
  EXPECT_EQ(raw_int(dir.path() / "state.db", "SELECT 1"), 1);  // a plain SQLite file for others
}

TEST_F(SrupState, Section7_1_CrashMidBlockContinuesPastTheReservedEnd) {
  StateStore s(db);
  std::uint64_t last = 0;
  for (int i = 0; i < 10; ++i) last = s.next_sequence(0xc2, 0xa1);
  EXPECT_EQ(last, 10u);
  {
    StateStore crashed(copy_live(db, dir.path() / "crash1"));
    EXPECT_EQ(crashed.next_sequence(0xc2, 0xa1), 1025u);
  }
  for (int i = 0; i < 1020; ++i) last = s.next_sequence(0xc2, 0xa1);
  EXPECT_EQ(last, 1030u);  // the second block is reserved and in use
  StateStore crashed(copy_live(db, dir.path() / "crash2"));
  EXPECT_EQ(crashed.next_sequence(0xc2, 0xa1), 2049u);
}

TEST_F(SrupState, Section7_1_CrashInAChildNeverReusesANumber) {
  in_crashing_child([&] {
    StateStore s(db);
    for (int i = 0; i < 1500; ++i) s.next_sequence(0xc2, 0xa1);
    ::_exit(0);
  });
  StateStore s(db);
  EXPECT_EQ(s.next_sequence(0xc2, 0xa1), 2049u);
}

// A one-shot sender (srup seal) reserves one number per run: consecutive runs count 1, 2, 3.
TEST_F(SrupState, Section7_1_SmallerBlocksForOneShotSenders) {
  StateStore::Options one;
  one.counter_block = 1;
  for (std::uint64_t want = 1; want <= 3; ++want) {
    StateStore s(db, one);
    EXPECT_EQ(s.next_sequence(0xc2, 0xa1), want);
  }
  {
    StateStore s(db);  // a long-running sender takes over where the one-shot runs stopped
    EXPECT_EQ(s.next_sequence(0xc2, 0xa1), 4u);
  }
  for (std::uint64_t bad : {std::uint64_t{0}, StateStore::kCounterBlock + 1}) {
    StateStore::Options o;
    o.counter_block = bad;
    EXPECT_THROW(StateStore(dir.path() / "other.db", o), std::invalid_argument) << bad;
  }
}

TEST_F(SrupState, Section7_2_WindowDuplicatesReorderingDirections) {
  {
    StateStore s(db);
    EXPECT_TRUE(s.accept(kC2ToDevice, 5));
    EXPECT_FALSE(s.accept(kC2ToDevice, 5));  // QoS-1 duplicate
    EXPECT_TRUE(s.accept(kC2ToDevice, 3));   // reordered, inside the window
    EXPECT_TRUE(s.accept(kDeviceToC2, 5));   // the other direction has its own window
    EXPECT_TRUE(s.accept(kC2ToDevice, 2000));
    EXPECT_FALSE(s.accept(kC2ToDevice, 976));  // 2000 - 1024: just outside
    EXPECT_TRUE(s.accept(kC2ToDevice, 977));   // 2000 - 1023: the window's oldest number
  }
  StateStore s(db);  // restart: everything accepted stays refused
  EXPECT_FALSE(s.would_accept(kC2ToDevice, 2000));
  EXPECT_FALSE(s.would_accept(kC2ToDevice, 977));
  EXPECT_TRUE(s.would_accept(kC2ToDevice, 978));
  EXPECT_FALSE(s.accept(kDeviceToC2, 5));
  EXPECT_TRUE(s.accept(kDeviceToC2, 6));
  EXPECT_TRUE(s.would_accept(StreamKey{0xb2, 0xa1}, 1));  // an unknown stream: empty
}

// Section 6: a refused envelope changes no state; would_accept and a refused admission only read.
TEST_F(SrupState, Section6_RefusalsLeaveTheFilesByteForByte) {
  StateStore s(db);
  ASSERT_TRUE(s.accept(kC2ToDevice, 3000));
  const fs::path wal = db.string() + "-wal";
  const Bytes before_db = file_bytes(db), before_wal = file_bytes(wal);
  EXPECT_TRUE(s.would_accept(kC2ToDevice, ~std::uint64_t{0}));  // a forged 2^64 - 1
  EXPECT_TRUE(s.would_accept(StreamKey{0xee, 0xa1}, 7));
  EXPECT_FALSE(s.accept(kC2ToDevice, 3000));
  EXPECT_EQ(s.admit_command(kC2ToDevice, 3000, kToken, MessageType::action).verdict, Verdict::replay);
  EXPECT_EQ(s.admit_command(kC2ToDevice, 1, kToken, MessageType::action).verdict, Verdict::replay);
  EXPECT_EQ(file_bytes(db), before_db);
  EXPECT_EQ(file_bytes(wal), before_wal);
  EXPECT_TRUE(s.would_accept(kC2ToDevice, 3001));
  EXPECT_FALSE(s.would_accept(kC2ToDevice, 3000));
}

TEST_F(SrupState, Section7_3_DuplicateInProgressThenCachedBytes) {
  StateStore s(db);
  const Bytes response = {0x53, 0x52, 0x50, 0x51, 0x20, 0x00, 0x02, 'o', 'k'};
  EXPECT_EQ(s.admit_command(kC2ToDevice, 7, kToken, MessageType::action).verdict, Verdict::execute);
  EXPECT_EQ(s.admit_command(kC2ToDevice, 7, kToken, MessageType::action).verdict, Verdict::in_progress);
  s.complete_command(kC2ToDevice, 7, response);
  const auto again = s.admit_command(kC2ToDevice, 7, kToken, MessageType::action);
  EXPECT_EQ(again.verdict, Verdict::answer_cached);
  EXPECT_EQ(again.response, response);
  EXPECT_THROW(s.complete_command(kC2ToDevice, 7, response), std::logic_error);  // not in flight
  EXPECT_THROW(s.complete_command(kC2ToDevice, 8, response), std::logic_error);  // never admitted
}

// A command whose action failed without a Response is abandoned: never dropped, never run again.
TEST_F(SrupState, Section7_3_AbandonedCommandIsAnsweredInterrupted) {
  StateStore s(db);
  const Bytes interrupted = {0x53, 0x52, 0x50, 0x51, 0x90};
  EXPECT_EQ(s.admit_command(kC2ToDevice, 9, kToken, MessageType::action).verdict, Verdict::execute);
  s.abandon_command(kC2ToDevice, 9);
  EXPECT_THROW(s.abandon_command(kC2ToDevice, 9), std::logic_error);  // no longer in flight
  EXPECT_EQ(s.admit_command(kC2ToDevice, 9, kToken, MessageType::action).verdict, Verdict::interrupted);
  s.complete_command(kC2ToDevice, 9, interrupted);
  const auto again = s.admit_command(kC2ToDevice, 9, kToken, MessageType::action);
  EXPECT_EQ(again.verdict, Verdict::answer_cached);
  EXPECT_EQ(again.response, interrupted);
}

// A forged far-ahead telemetry number is refused before it can move the window.
TEST_F(SrupState, Section7_2_TelemetryNumbersFarAheadAreRefused) {
  StateStore::Options o;
  o.telemetry_max_lead = 100;
  StateStore s(db, o);
  const StreamKey telemetry{0xa1, 0};
  EXPECT_TRUE(s.accept_batched(telemetry, 1));
  EXPECT_FALSE(s.accept_batched(telemetry, 102));  // 101 ahead
  EXPECT_TRUE(s.accept_batched(telemetry, 101));   // 100 ahead
  EXPECT_TRUE(s.accept_batched(telemetry, 2));     // the device's own numbers still fit
}

TEST_F(SrupState, Section7_3_AcceptedBeforeACrashIsInterruptedNeverRunAgain) {
  in_crashing_child([&] {
    StateStore s(db);
    if (s.admit_command(kC2ToDevice, 9, kToken, MessageType::action).verdict != Verdict::execute) {
      ::_exit(3);
    }
    ::_exit(0);
  });
  StateStore s(db);
  EXPECT_EQ(s.admit_command(kC2ToDevice, 9, kToken, MessageType::action).verdict, Verdict::interrupted);
  // While the INTERRUPTED answer is being built, a further copy is dropped.
  EXPECT_EQ(s.admit_command(kC2ToDevice, 9, kToken, MessageType::action).verdict, Verdict::in_progress);
  const Bytes interrupted = {0x90, 0x00, 0x00};
  s.complete_command(kC2ToDevice, 9, interrupted);
  const auto again = s.admit_command(kC2ToDevice, 9, kToken, MessageType::action);
  EXPECT_EQ(again.verdict, Verdict::answer_cached);
  EXPECT_EQ(again.response, interrupted);
}

TEST_F(SrupState, Section7_3_ReusedNumberWithAnotherTokenOrTypeIsReplay) {
  StateStore s(db);
  ASSERT_EQ(s.admit_command(kC2ToDevice, 4, kToken, MessageType::action).verdict, Verdict::execute);
  s.complete_command(kC2ToDevice, 4, Bytes{1});
  EXPECT_EQ(s.admit_command(kC2ToDevice, 4, Bytes{'x'}, MessageType::action).verdict, Verdict::replay);
  EXPECT_EQ(s.admit_command(kC2ToDevice, 4, kToken, MessageType::update_activate).verdict,
            Verdict::replay);
  // A number the window took as non-command traffic has no journal row: replay, not executed.
  ASSERT_TRUE(s.accept(kC2ToDevice, 5));
  EXPECT_EQ(s.admit_command(kC2ToDevice, 5, kToken, MessageType::action).verdict, Verdict::replay);
}

TEST_F(SrupState, Section7_5_JournalBoundedPerStreamOldestFirstNeverInFlight) {
  StateStore::Options o;
  o.journal_rows_per_sender = 3;
  {
    StateStore s(db, o);
    ASSERT_EQ(s.admit_command(kC2ToDevice, 1, kToken, MessageType::action).verdict, Verdict::execute);
    for (std::uint64_t seq = 2; seq <= 10; ++seq) {
      ASSERT_EQ(s.admit_command(kC2ToDevice, seq, kToken, MessageType::action).verdict, Verdict::execute);
      s.complete_command(kC2ToDevice, seq, Bytes{static_cast<std::uint8_t>(seq)});
    }
    // Another stream has its own bound.
    ASSERT_EQ(s.admit_command(kDeviceToC2, 1, kToken, MessageType::action).verdict, Verdict::execute);
    EXPECT_EQ(s.admit_command(kC2ToDevice, 1, kToken, MessageType::action).verdict, Verdict::in_progress);
    EXPECT_EQ(s.admit_command(kC2ToDevice, 2, kToken, MessageType::action).verdict, Verdict::replay);
    EXPECT_EQ(s.admit_command(kC2ToDevice, 8, kToken, MessageType::action).verdict, Verdict::replay);
    EXPECT_EQ(s.admit_command(kC2ToDevice, 9, kToken, MessageType::action).verdict, Verdict::answer_cached);
    s.complete_command(kC2ToDevice, 1, Bytes{1});
    ASSERT_EQ(s.admit_command(kC2ToDevice, 11, kToken, MessageType::action).verdict, Verdict::execute);
    s.complete_command(kC2ToDevice, 11, Bytes{11});
  }
  EXPECT_EQ(raw_int(db, "SELECT count(*) FROM journal WHERE sender = 194"), 3);
  EXPECT_EQ(raw_int(db, "SELECT min(seq) FROM journal WHERE sender = 194"), 9);
}

TEST_F(SrupState, Section7_5_JournalRowsOutliveEveryValidCopyThenGo) {
  std::uint64_t now = 1'790'000'000'000;
  StateStore::Options o;
  o.now_ms = [&] { return now; };
  StateStore s(db, o);
  ASSERT_EQ(s.admit_command(kC2ToDevice, 1, kToken, MessageType::action).verdict, Verdict::execute);
  s.complete_command(kC2ToDevice, 1, Bytes{1});
  now += StateStore::kJournalRetentionMs;  // a copy could still be valid: kept
  ASSERT_EQ(s.admit_command(kC2ToDevice, 2, kToken, MessageType::action).verdict, Verdict::execute);
  s.complete_command(kC2ToDevice, 2, Bytes{2});
  EXPECT_EQ(s.admit_command(kC2ToDevice, 1, kToken, MessageType::action).verdict, Verdict::answer_cached);
  now += 2 * 60 * 60 * 1000;  // past the retention and the hourly pruning
  ASSERT_EQ(s.admit_command(kC2ToDevice, 3, kToken, MessageType::action).verdict, Verdict::execute);
  EXPECT_EQ(s.admit_command(kC2ToDevice, 1, kToken, MessageType::action).verdict, Verdict::replay);
  EXPECT_EQ(s.admit_command(kC2ToDevice, 2, kToken, MessageType::action).verdict, Verdict::answer_cached);
}

TEST_F(SrupState, Section7_2_TelemetryCrashLosesAtMostTheBatch) {
  StateStore::Options o;
  o.telemetry_batch = 8;
  o.telemetry_flush = std::chrono::hours(1);  // only the count triggers a commit here
  in_crashing_child([&] {
    StateStore s(db, o);
    for (std::uint64_t seq = 1; seq <= 20; ++seq) s.accept_batched(StreamKey{0xa1, 0}, seq);
    ::_exit(0);  // before the destructor could flush
  });
  {
    StateStore s(db, o);
    for (std::uint64_t seq = 1; seq <= 16; ++seq) EXPECT_FALSE(s.would_accept(StreamKey{0xa1, 0}, seq));
    // The 4 pending numbers were lost: accepted again after the crash (fewer than the batch).
    for (std::uint64_t seq = 17; seq <= 20; ++seq) EXPECT_TRUE(s.would_accept(StreamKey{0xa1, 0}, seq));
    // A batch not yet full is committed by flush() and by the destructor.
    EXPECT_TRUE(s.accept_batched(StreamKey{0xa1, 0}, 17));
    EXPECT_FALSE(s.accept_batched(StreamKey{0xa1, 0}, 17));
    s.flush();
    EXPECT_TRUE(s.accept_batched(StreamKey{0xa1, 0}, 18));
  }
  in_crashing_child([&] {
    StateStore s(db, o);
    if (s.would_accept(StreamKey{0xa1, 0}, 17) || s.would_accept(StreamKey{0xa1, 0}, 18)) ::_exit(3);
  });
}

TEST_F(SrupState, Section7_4_NewerSchemaRefused) {
  { StateStore s(db); }
  raw_exec(db, "PRAGMA user_version = 2");
  try {
    StateStore s(db);
    FAIL() << "opened";
  } catch (const StateError& e) {
    EXPECT_NE(std::string(e.what()).find("schema version 2 is newer"), std::string::npos) << e.what();
  }
}

TEST_F(SrupState, Section7_4_NotSqliteOrAnotherApplicationRefused) {
  {
    std::ofstream out(db, std::ios::binary);
    out << std::string(4096, 'x');
  }
  try {
    StateStore s(db);
    FAIL() << "opened";
  } catch (const StateError& e) {
    EXPECT_NE(std::string(e.what()).find("not a SQLite database"), std::string::npos) << e.what();
  }
  const fs::path other = dir.path() / "other.db";
  raw_exec(other, "CREATE TABLE readings (t INTEGER)");
  try {
    StateStore s(other);
    FAIL() << "opened";
  } catch (const StateError& e) {
    EXPECT_NE(std::string(e.what()).find("not a SRUP-PQ state store"), std::string::npos) << e.what();
  }
}

TEST_F(SrupState, Section7_4_CorruptWindowIsAnErrorNeverAReset) {
  {
    StateStore s(db);
    ASSERT_TRUE(s.accept(kC2ToDevice, 5));
  }
  raw_exec(db, "UPDATE windows SET state = zeroblob(146)");  // version 0: no window wrote this
  StateStore s(db);
  EXPECT_THROW((void)s.would_accept(kC2ToDevice, 5), StateError);
  EXPECT_THROW(s.accept(kC2ToDevice, 6), StateError);
  EXPECT_THROW(s.admit_command(kC2ToDevice, 6, kToken, MessageType::action), StateError);
  EXPECT_TRUE(s.accept(kDeviceToC2, 1));  // other streams are unaffected
}

TEST_F(SrupState, Section7_4_OneOwnerPrivateFile) {
  StateStore::Options o;
  o.busy_timeout = std::chrono::milliseconds(50);
  { StateStore first(db, o); }
  StateStore s(db, o);  // an existing file: the lock is taken at opening, not at the first write
  try {
    StateStore second(db, o);
    FAIL() << "a second owner opened the store";
  } catch (const StateError& e) {
    EXPECT_NE(std::string(e.what()).find("in use by another process"), std::string::npos) << e.what();
  }
  struct stat st {};
  ASSERT_EQ(::stat(db.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_TRUE(s.accept(kC2ToDevice, 1));
  ASSERT_EQ(::stat((db.string() + "-wal").c_str(), &st), 0);  // the log holds the same data
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  try {
    StateStore second(db, o);
    FAIL() << "a second owner opened the store";
  } catch (const StateError& e) {
    EXPECT_NE(std::string(e.what()).find("in use by another process"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(s.accept(kC2ToDevice, 2));  // the first owner is unaffected
}

}  // namespace
}  // namespace pqot::srup
