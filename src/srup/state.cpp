// docs/srup-pq.md section 7: counters, replay windows and the command journal in SQLite. The
// schema, pragmas and the order of the transactions are the ones section 7.4 states.
#include "pqot/srup/state.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

#include "state_db.hpp"

namespace pqot::srup {

namespace {

constexpr std::int64_t kJournalDone = 2;  // 1 is accepted
constexpr std::uint64_t kJournalAgePruneEveryMs = 60 * 60 * 1000;

// Section 7.4. Every u64 is stored as the signed 64-bit integer with the same bits.
constexpr const char* kStateSchema = R"sql(
CREATE TABLE counters (
  self         INTEGER NOT NULL,
  peer         INTEGER NOT NULL,
  reserved_end INTEGER NOT NULL,
  PRIMARY KEY (self, peer)
) WITHOUT ROWID;
CREATE TABLE windows (
  sender    INTEGER NOT NULL,
  recipient INTEGER NOT NULL,
  state     BLOB NOT NULL CHECK (length(state) = 146),
  PRIMARY KEY (sender, recipient)
) WITHOUT ROWID;
CREATE TABLE journal (
  sender      INTEGER NOT NULL,
  recipient   INTEGER NOT NULL,
  seq         INTEGER NOT NULL,
  state       INTEGER NOT NULL CHECK (state IN (1, 2)),
  type        INTEGER NOT NULL CHECK (type BETWEEN 0 AND 255),
  token       BLOB NOT NULL CHECK (length(token) <= 64),
  accepted_ms INTEGER NOT NULL,
  response    BLOB CHECK ((state = 2) = (response IS NOT NULL)),
  PRIMARY KEY (sender, recipient, seq)
);
CREATE INDEX journal_age ON journal (accepted_ms);
PRAGMA application_id = 1397903441;
PRAGMA user_version = 1;
)sql";

std::string state_stream_name(StreamKey k) {
  return "stream " + std::to_string(k.sender) + " -> " + std::to_string(k.recipient);
}

// Created here with mode 0600 (SQLite would use 0644): the journal holds responses and tokens.
// SQLite gives the -wal file the database file's mode.
void create_state_file(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
  if (fd >= 0) {
    ::close(fd);
  } else if (errno != EEXIST) {
    throw StateError("SRUP-PQ state " + path.string() + ": cannot create: " + std::strerror(errno));
  }
}

}  // namespace

struct StateStore::Sql {
  Sql(const std::string& path, int busy_ms) : db(path, busy_ms) {}
  db::Database db;
  std::optional<db::Statement> counter_get, counter_put, window_get, window_put, journal_get,
      journal_insert, journal_done, journal_count, journal_oldest_low, journal_oldest_high,
      journal_delete, journal_age;

  void prepare() {
    counter_get.emplace(db, "SELECT reserved_end FROM counters WHERE self = ?1 AND peer = ?2");
    counter_put.emplace(db,
                        "INSERT INTO counters (self, peer, reserved_end) VALUES (?1, ?2, ?3) "
                        "ON CONFLICT (self, peer) DO UPDATE SET reserved_end = excluded.reserved_end");
    window_get.emplace(db, "SELECT state FROM windows WHERE sender = ?1 AND recipient = ?2");
    window_put.emplace(db,
                       "INSERT INTO windows (sender, recipient, state) VALUES (?1, ?2, ?3) "
                       "ON CONFLICT (sender, recipient) DO UPDATE SET state = excluded.state");
    journal_get.emplace(db,
                        "SELECT state, type, token, response FROM journal "
                        "WHERE sender = ?1 AND recipient = ?2 AND seq = ?3");
    journal_insert.emplace(db,
                           "INSERT INTO journal (sender, recipient, seq, state, type, token, accepted_ms) "
                           "VALUES (?1, ?2, ?3, 1, ?4, ?5, ?6)");
    journal_done.emplace(db,
                         "UPDATE journal SET state = 2, response = ?4 "
                         "WHERE sender = ?1 AND recipient = ?2 AND seq = ?3 AND state = 1");
    journal_count.emplace(db, "SELECT count(*) FROM journal WHERE sender = ?1 AND recipient = ?2");
    // Oldest first in unsigned order: numbers below 2^63 are the non-negative integers.
    journal_oldest_low.emplace(db,
                               "SELECT seq FROM journal WHERE sender = ?1 AND recipient = ?2 "
                               "AND seq >= 0 ORDER BY seq LIMIT ?3");
    journal_oldest_high.emplace(db,
                                "SELECT seq FROM journal WHERE sender = ?1 AND recipient = ?2 "
                                "AND seq < 0 ORDER BY seq LIMIT ?3");
    journal_delete.emplace(db, "DELETE FROM journal WHERE sender = ?1 AND recipient = ?2 AND seq = ?3");
    journal_age.emplace(db, "DELETE FROM journal WHERE accepted_ms < ?1");
  }
};

// Debug builds: a call that overlaps another (two threads, no strand) aborts.
class StateStore::CallGuard {
 public:
  explicit CallGuard(const StateStore& s) noexcept : s_(s) {
    [[maybe_unused]] const bool was_busy = s_.busy_.exchange(true);
    assert(!was_busy && "pqot::srup::StateStore used from two threads at once");
  }
  ~CallGuard() { s_.busy_.store(false); }
  CallGuard(const CallGuard&) = delete;
  CallGuard& operator=(const CallGuard&) = delete;

 private:
  const StateStore& s_;
};

StateStore::StateStore(const std::filesystem::path& path, Options options)
    : options_(std::move(options)) {
  if (options_.journal_rows_per_sender == 0 || options_.telemetry_batch == 0) {
    throw std::invalid_argument("SRUP-PQ state: journal rows and telemetry batch must be at least 1");
  }
  if (options_.counter_block == 0 || options_.counter_block > kCounterBlock) {
    throw std::invalid_argument("SRUP-PQ state: counter_block must be 1 to 1024");
  }
  create_state_file(path);
  sql_ = std::make_unique<Sql>(path.string(), static_cast<int>(options_.busy_timeout.count()));
  db::Database& d = sql_->db;
  const std::string name = "SRUP-PQ state " + path.string();
  // Held until close: no second process shares (and silently diverges from) this state.
  d.exec("PRAGMA locking_mode = EXCLUSIVE");
  const std::int64_t app = d.pragma_int("PRAGMA application_id");  // SQLITE_NOTADB shows here
  const std::int64_t version = d.pragma_int("PRAGMA user_version");
  const std::int64_t tables = d.pragma_int("SELECT count(*) FROM sqlite_master");
  const bool fresh = app == 0 && version == 0 && tables == 0;
  if (!fresh && app != kApplicationId) {
    throw StateError(name + ": not a SRUP-PQ state store (another application's SQLite database)");
  }
  if (!fresh && version > kSchemaVersion) {
    throw StateError(name + ": schema version " + std::to_string(version) +
                     " is newer than this program's (" + std::to_string(kSchemaVersion) + ")");
  }
  if (!fresh && version != kSchemaVersion) {
    throw StateError(name + ": unknown schema version " + std::to_string(version));
  }
  if (d.pragma_text("PRAGMA journal_mode = WAL") != "wal") {
    throw StateError(name + ": the file system does not support SQLite's WAL mode");
  }
  d.exec("PRAGMA synchronous = FULL");
  {
    // Also takes the exclusive lock for good when the file already existed.
    db::Transaction tx(d);
    if (fresh) d.exec(kStateSchema);
    tx.commit();
  }
  sql_->prepare();
  const std::uint64_t now = now_ms();
  {
    db::Transaction tx(d);
    prune_by_age(now);
    tx.commit();
  }
  next_age_prune_ms_ = now + kJournalAgePruneEveryMs;
}

StateStore::~StateStore() {
  try {
    flush_pending();
  } catch (...) {
    // A destructor does not throw; what is lost is at most the pending batch, as in a crash.
  }
}

std::uint64_t StateStore::now_ms() const {
  if (options_.now_ms) return options_.now_ms();
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
}

// ---- 7.1 --------------------------------------------------------------------------------------

std::uint64_t StateStore::next_sequence(std::uint64_t self, std::uint64_t peer) {
  CallGuard guard(*this);
  auto it = counters_.find({self, peer});
  if (it == counters_.end()) {
    // Numbers below the stored end may have been used before a crash: continue from the end.
    Counter c{1, 1};
    {
      db::Statement::Run run(*sql_->counter_get);
      run.bind_u64(1, self).bind_u64(2, peer);
      if (run.step()) c.next = c.reserved_end = run.column_u64(0);
    }
    it = counters_.emplace(std::make_pair(self, peer), c).first;
  }
  Counter& c = it->second;
  if (c.next == c.reserved_end) {
    const std::uint64_t block = options_.counter_block;
    if (c.reserved_end > std::numeric_limits<std::uint64_t>::max() - block) {
      throw std::overflow_error("SRUP-PQ state: sequence numbers used up");
    }
    const std::uint64_t end = c.reserved_end + block;
    db::Transaction tx(sql_->db);
    db::Statement::Run(*sql_->counter_put).bind_u64(1, self).bind_u64(2, peer).bind_u64(3, end).done();
    tx.commit();  // durable (synchronous = FULL) before the block's first number is returned
    c.reserved_end = end;
  }
  return c.next++;
}

// ---- 7.2 --------------------------------------------------------------------------------------

StateStore::Stream* StateStore::find_stream(StreamKey key) const {
  const auto it = streams_.find(key);
  if (it != streams_.end()) return &it->second;
  Bytes state;
  {
    db::Statement::Run run(*sql_->window_get);
    run.bind_u64(1, key.sender).bind_u64(2, key.recipient);
    if (!run.step()) return nullptr;
    state = run.column_blob(0);
  }
  Stream s;
  try {
    s.window = channel::ReplayWindow::restore(state);
  } catch (const std::invalid_argument& e) {
    // Never a silently reset window: that would accept every number again.
    throw StateError("SRUP-PQ state " + sql_->db.name() + ": corrupt replay window of " +
                     state_stream_name(key) + ": " + e.what());
  }
  return &streams_.emplace(key, s).first->second;
}

StateStore::Stream& StateStore::stream(StreamKey key) const {
  if (Stream* s = find_stream(key)) return *s;
  return streams_.emplace(key, Stream{}).first->second;
}

void StateStore::write_window(StreamKey key, const channel::ReplayWindow& w) {
  const auto state = w.save();
  db::Statement::Run(*sql_->window_put)
      .bind_u64(1, key.sender)
      .bind_u64(2, key.recipient)
      .bind(3, ByteView(state))
      .done();
}

bool StateStore::would_accept(StreamKey key, std::uint64_t seq) const {
  CallGuard guard(*this);
  const Stream* s = find_stream(key);
  return s == nullptr || s->window.would_accept(seq);
}

bool StateStore::accept(StreamKey key, std::uint64_t seq) {
  CallGuard guard(*this);
  Stream& s = stream(key);
  if (!s.window.would_accept(seq)) return false;
  channel::ReplayWindow next = s.window;
  next.accept(seq);
  db::Transaction tx(sql_->db);
  write_window(key, next);
  tx.commit();
  s.window = next;
  s.dirty = false;  // the state written holds the batched numbers too
  return true;
}

bool StateStore::accept_batched(StreamKey key, std::uint64_t seq) {
  CallGuard guard(*this);
  Stream& s = stream(key);
  if (!s.window.empty() && seq > s.window.highest() && seq - s.window.highest() > options_.telemetry_max_lead) {
    return false;
  }
  if (!s.window.accept(seq)) return false;
  s.dirty = true;
  const auto now = std::chrono::steady_clock::now();
  if (pending_ == 0) first_pending_ = now;
  ++pending_;
  if (pending_ >= options_.telemetry_batch || now - first_pending_ >= options_.telemetry_flush) {
    flush_pending();
  }
  return true;
}

void StateStore::flush() {
  CallGuard guard(*this);
  flush_pending();
}

void StateStore::flush_pending() {
  if (pending_ == 0) return;
  db::Transaction tx(sql_->db);
  for (const auto& [key, s] : streams_) {
    if (s.dirty) write_window(key, s.window);
  }
  tx.commit();
  for (auto& [key, s] : streams_) s.dirty = false;
  pending_ = 0;
}

// ---- 7.3 --------------------------------------------------------------------------------------

StateStore::Admission StateStore::admit_command(StreamKey key, std::uint64_t seq, ByteView token,
                                                MessageType type) {
  CallGuard guard(*this);
  if (token.size() > kMaxToken) throw std::invalid_argument("SRUP-PQ state: token over 64 bytes");
  Stream& s = stream(key);
  const auto id = std::make_tuple(key.sender, key.recipient, seq);
  if (s.window.would_accept(seq)) {
    channel::ReplayWindow next = s.window;
    next.accept(seq);
    const std::uint64_t now = now_ms();
    db::Transaction tx(sql_->db);
    write_window(key, next);
    try {
      db::Statement::Run(*sql_->journal_insert)
          .bind_u64(1, key.sender)
          .bind_u64(2, key.recipient)
          .bind_u64(3, seq)
          .bind(4, static_cast<std::int64_t>(type))
          .bind(5, token)
          .bind(6, static_cast<std::int64_t>(now))
          .done();
    } catch (const StateError& e) {
      throw StateError(std::string(e.what()) + " (" + state_stream_name(key) + ", sequence " +
                       std::to_string(seq) + ": a journal row for a number the window accepts)");
    }
    const bool age = now >= next_age_prune_ms_;
    if (age) prune_by_age(now);
    if (!s.rows_known || age) {
      db::Statement::Run run(*sql_->journal_count);
      run.bind_u64(1, key.sender).bind_u64(2, key.recipient);
      run.step();
      s.journal_rows = static_cast<std::size_t>(run.column_int(0));
      s.rows_known = true;
    } else {
      ++s.journal_rows;
    }
    try {
      prune_journal(key);
      tx.commit();
    } catch (...) {
      s.rows_known = false;  // the rolled-back count is unknown
      throw;
    }
    if (age) next_age_prune_ms_ = now + kJournalAgePruneEveryMs;
    s.window = next;
    s.dirty = false;
    in_flight_.insert(id);
    return {Verdict::execute, {}};
  }
  db::Statement::Run run(*sql_->journal_get);
  run.bind_u64(1, key.sender).bind_u64(2, key.recipient).bind_u64(3, seq);
  if (!run.step()) return {Verdict::replay, {}};  // outside the window or pruned: never run again
  const Bytes stored_token = run.column_blob(2);
  if (run.column_int(1) != static_cast<std::int64_t>(type) ||
      !std::equal(stored_token.begin(), stored_token.end(), token.begin(), token.end())) {
    return {Verdict::replay, {}};  // a reused number, not a retransmission
  }
  if (run.column_int(0) == kJournalDone) return {Verdict::answer_cached, run.column_blob(3)};
  if (in_flight_.count(id) != 0) return {Verdict::in_progress, {}};
  in_flight_.insert(id);  // the caller answers INTERRUPTED; duplicates meanwhile: in_progress
  return {Verdict::interrupted, {}};
}

void StateStore::complete_command(StreamKey key, std::uint64_t seq, ByteView response_envelope) {
  CallGuard guard(*this);
  const auto id = std::make_tuple(key.sender, key.recipient, seq);
  if (in_flight_.count(id) == 0) {
    throw std::logic_error("SRUP-PQ state: complete_command for a command not in flight");
  }
  if (response_envelope.size() > kMaxEnvelope) {
    throw std::invalid_argument("SRUP-PQ state: response envelope over 65,535 bytes");
  }
  db::Transaction tx(sql_->db);
  // No row changes if age pruning removed it (in flight for over 7 days): no copy of the command
  // can pass step 8 any more, so nothing would ever read it.
  db::Statement::Run(*sql_->journal_done)
      .bind_u64(1, key.sender)
      .bind_u64(2, key.recipient)
      .bind_u64(3, seq)
      .bind(4, response_envelope)
      .done();
  tx.commit();
  in_flight_.erase(id);
}

void StateStore::abandon_command(StreamKey key, std::uint64_t seq) {
  CallGuard guard(*this);
  if (in_flight_.erase(std::make_tuple(key.sender, key.recipient, seq)) == 0) {
    throw std::logic_error("SRUP-PQ state: abandon_command for a command not in flight");
  }
}

// At most journal_rows_per_sender rows per stream: the oldest sequence numbers go first, never a
// row in flight (its answer is still to be written).
void StateStore::prune_journal(StreamKey key) {
  Stream& s = streams_.at(key);
  const std::size_t cap = options_.journal_rows_per_sender;
  if (s.journal_rows <= cap) return;
  const std::size_t excess = s.journal_rows - cap;
  const auto lo = in_flight_.lower_bound({key.sender, key.recipient, 0});
  const auto hi = in_flight_.upper_bound(
      {key.sender, key.recipient, std::numeric_limits<std::uint64_t>::max()});
  const auto flying = static_cast<std::size_t>(std::distance(lo, hi));
  std::vector<std::uint64_t> victims;
  for (db::Statement* q : {&*sql_->journal_oldest_low, &*sql_->journal_oldest_high}) {
    db::Statement::Run run(*q);
    run.bind_u64(1, key.sender).bind_u64(2, key.recipient).bind(3, static_cast<std::int64_t>(excess + flying));
    while (victims.size() < excess && run.step()) {
      const std::uint64_t seq = run.column_u64(0);
      if (in_flight_.count({key.sender, key.recipient, seq}) == 0) victims.push_back(seq);
    }
    if (victims.size() == excess) break;
  }
  for (const std::uint64_t seq : victims) {
    db::Statement::Run(*sql_->journal_delete)
        .bind_u64(1, key.sender)
        .bind_u64(2, key.recipient)
        .bind_u64(3, seq)
        .done();
  }
  s.journal_rows -= victims.size();
}

// Rows accepted more than kJournalRetentionMs ago: every copy of their command is EXPIRED at
// step 8 before it could reach the journal.
void StateStore::prune_by_age(std::uint64_t now) {
  if (now <= kJournalRetentionMs) return;
  db::Statement::Run(*sql_->journal_age).bind(1, static_cast<std::int64_t>(now - kJournalRetentionMs)).done();
  for (auto& [key, s] : streams_) s.rows_known = false;
}

}  // namespace pqot::srup
