// SRUP-PQ's durable state (docs/srup-pq.md, section 7) in one SQLite file: the sender's counter
// blocks (7.1), the receiver's replay windows (7.2) and the command journal that runs a command at
// most once and answers every retry (7.3).
//
// One StateStore owns its file: it holds SQLite's exclusive lock for as long as it is open, so a
// second process (or a second StateStore) cannot share the state and break exactly-once. It is
// used from one thread at a time (debug builds check that calls never overlap). Every stream
// (sender, recipient) it keeps is one the caller passed after steps 1-9 of the receive order
// authenticated the envelope: unauthenticated input never creates state.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>

#include "pqot/channel/replay_window.hpp"
#include "pqot/srup/envelope.hpp"
#include "pqot/srup/types.hpp"

namespace pqot::srup {

/// One direction between two peers: the window and journal are per stream (section 7.2).
struct StreamKey {
  std::uint64_t sender = 0;
  std::uint64_t recipient = 0;
  friend auto operator<=>(const StreamKey&, const StreamKey&) = default;
};

/// The store cannot be used: not a SQLite file, a newer schema, corrupt saved state, locked by
/// another process, or an I/O error. what() names the file and the cause.
class StateError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// StateStore's bounds (docs/srup-pq.md section 7.5).
struct StateStoreOptions {
  std::size_t journal_rows_per_sender = 65536;  ///< per stream; oldest sequence pruned first
  std::size_t telemetry_batch = 64;             ///< accept_batched commits at this many
  std::chrono::milliseconds telemetry_flush{1000};
  std::chrono::milliseconds busy_timeout{5000};  ///< waiting for a previous owner to let go
  /// Section 7.1: numbers reserved per durable write (1..kCounterBlock). A long-running sender
  /// keeps the default; a one-shot process (the `srup seal` tool) reserves 1, so consecutive runs
  /// number 1, 2, 3 rather than 1, 1025, 2049.
  std::uint64_t counter_block = 1024;
  /// accept_batched: the furthest a telemetry number may lie above the highest one seen.
  std::uint64_t telemetry_max_lead = 65536;
  /// Milliseconds since the Unix epoch (journal ages); the system clock if empty.
  std::function<std::uint64_t()> now_ms;
};

class StateStore {
 public:
  /// PRAGMA user_version of the schema this code writes (section 7.4); a newer one is refused.
  static constexpr int kSchemaVersion = 1;
  /// PRAGMA application_id: "SRPQ" (0x53525051), so another program's SQLite file is refused.
  static constexpr std::int32_t kApplicationId = 0x53525051;
  /// Section 7.1: the most numbers reserved per durable write (Options::counter_block).
  static constexpr std::uint64_t kCounterBlock = 1024;
  /// Section 7.3: a journal row older than this can never be consulted (the longest lifetime, 7
  /// days, plus the 5 minutes a timestamp may lie in the future: every copy is EXPIRED by then).
  static constexpr std::uint64_t kJournalRetentionMs = kMaxLifetimeMs + 5 * 60 * 1000;

  using Options = StateStoreOptions;

  /// Opens `db`, or creates it with mode 0600 (the directory must exist). Throws StateError for a
  /// file that is not a SQLite database, another application's database, a schema newer than
  /// kSchemaVersion, or a file another StateStore holds.
  explicit StateStore(const std::filesystem::path& db, Options options = {});
  /// Commits pending telemetry windows (flush()); a failure then is swallowed (a destructor does
  /// not throw): at most the batch is lost, as in a crash.
  ~StateStore();
  StateStore(const StateStore&) = delete;
  StateStore& operator=(const StateStore&) = delete;

  // ---- 7.1 counters (sender side) ---------------------------------------------------------------
  /// The next sequence number for envelopes from `self` to `peer` (peer 0: telemetry), never
  /// returned twice for the same pair, also across crashes: a block's end is durably written before
  /// its first number is returned. Throws StateError on a write failure (no number is returned
  /// then) and std::overflow_error when the 64-bit space is used up.
  std::uint64_t next_sequence(std::uint64_t self, std::uint64_t peer);

  // ---- 7.2 replay windows (non-command messages) ------------------------------------------------
  // The calls below that name a stream throw StateError if its stored window is corrupt (section
  // 7.2: an error, never a reset) or the database fails.

  /// Whether `seq` would be accepted on `stream`; changes nothing, in memory or in the file.
  bool would_accept(StreamKey stream, std::uint64_t seq) const;
  /// Records `seq` and commits the window before returning true; false (nothing written) for a
  /// duplicate or a number older than the window.
  bool accept(StreamKey stream, std::uint64_t seq);
  /// Telemetry: as accept(), but the window is committed once `telemetry_batch` numbers are
  /// pending or `telemetry_flush` has passed since the first pending one (checked on each call),
  /// or at flush() / destruction. A crash forgets at most the pending numbers.
  /// A number more than `telemetry_max_lead` above the window's highest is refused (false, nothing
  /// recorded): telemetry numbers rise one by one, and a key holder's forged far-ahead number must
  /// not push the device's own numbers out of the window (docs/srup-pq.md section 7.2).
  bool accept_batched(StreamKey stream, std::uint64_t seq);
  /// Commits every pending window now (the caller's timer, when telemetry stops).
  void flush();

  // ---- 7.3 commands -----------------------------------------------------------------------------
  enum class Verdict {
    execute,        ///< new: the window and the journal row `accepted` are committed; act, then complete_command
    in_progress,    ///< a duplicate of a command this process is running: drop it, the answer comes
    answer_cached,  ///< a duplicate of a done command: send `response` (the stored envelope) again
    interrupted,    ///< accepted before a crash, outcome unknown: never run it; answer 0x90 INTERRUPTED via complete_command
    replay,         ///< refused (REPLAY): the window refuses it and the journal has no matching row
  };
  struct Admission {
    Verdict verdict;
    Bytes response;  ///< answer_cached only
  };
  /// Steps 10 and 12's first write for a command (type, token: of the authenticated envelope).
  /// A duplicate whose type or token differs from the journal row is a reused sequence number,
  /// not a retransmission: replay. Throws StateError on a database failure (nothing changed).
  Admission admit_command(StreamKey stream, std::uint64_t seq, ByteView token, MessageType type);
  /// After execute or interrupted: stores `response_envelope` and marks the row `done` in one
  /// transaction. Throws std::logic_error if (stream, seq) is not in flight in this process,
  /// std::invalid_argument for an envelope over 65,535 bytes, StateError on a database failure
  /// (the command stays in flight: call again).
  void complete_command(StreamKey stream, std::uint64_t seq, ByteView response_envelope);
  /// After execute or interrupted, when no Response can be made (the action threw, the Response
  /// would not fit): the command leaves the in-flight set with its row still `accepted`, so the
  /// next retry gets `interrupted` and is answered 0x90, never run again and never dropped.
  /// Throws std::logic_error if (stream, seq) is not in flight.
  void abandon_command(StreamKey stream, std::uint64_t seq);

 private:
  struct Stream {
    channel::ReplayWindow window;
    bool dirty = false;             ///< accept_batched numbers not yet committed
    std::size_t journal_rows = 0;   ///< valid when rows_known
    bool rows_known = false;
  };
  struct Counter {
    std::uint64_t next = 0;
    std::uint64_t reserved_end = 0;  ///< first number not yet durably reserved
  };
  class CallGuard;

  Stream& stream(StreamKey key) const;           // loads it (or an empty window) into the cache
  Stream* find_stream(StreamKey key) const;      // cached or stored; nullptr if neither
  void write_window(StreamKey key, const channel::ReplayWindow& w);
  void prune_journal(StreamKey key);
  std::uint64_t now_ms() const;

  struct Sql;  // the connection and its prepared statements (state.cpp)
  void flush_pending();
  void prune_by_age(std::uint64_t now);

  Options options_;
  std::unique_ptr<Sql> sql_;
  mutable std::map<StreamKey, Stream> streams_;
  std::map<std::pair<std::uint64_t, std::uint64_t>, Counter> counters_;
  std::set<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>> in_flight_;
  std::size_t pending_ = 0;  // accept_batched numbers not yet committed
  std::chrono::steady_clock::time_point first_pending_{};
  std::uint64_t next_age_prune_ms_ = 0;
  mutable std::atomic<bool> busy_{false};
};

}  // namespace pqot::srup
