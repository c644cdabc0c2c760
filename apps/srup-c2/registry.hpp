// The C2's registry (docs/srup-c2.md, "Registry"): devices, their join codes, monitors and what
// each may read, the outbox of commands awaiting an answer, data and telemetry received, and an
// event log of every change, in one SQLite file (`registry.db` in the C2's state directory).
//
// One Registry owns its file (SQLite's exclusive lock, held while open: a second C2 on the same
// registry is refused). It is used from one thread at a time. Every string and blob from outside
// is checked against its bound (records.hpp) before anything is written; every bound on a count
// comes from RegistryLimits (the configuration). Times are milliseconds since the Unix epoch,
// passed by the caller.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pqot/crypto/bytes.hpp"
#include "records.hpp"

namespace pqot::srup_c2 {

/// Count bounds of the registry (docs/srup-c2.md, "Bounds"); the configuration sets them.
struct RegistryLimits {
  std::size_t max_devices = 10000;            ///< devices not deregistered
  std::size_t pending_max = 100;              ///< devices in state pending
  std::size_t max_monitors = 100;             ///< monitors not revoked
  std::size_t outbox_max_per_device = 16;     ///< pending commands per device
  std::size_t outbox_max_total = 10000;       ///< pending commands in all
  std::size_t outbox_finished_per_device = 64;  ///< finished commands kept per device (oldest go)
  std::uint32_t join_code_attempts = 5;       ///< wrong codes before the join is refused
  std::uint64_t join_code_lifetime_ms = 24ULL * 3600 * 1000;
  std::size_t data_per_device = 1000;         ///< Data values kept per device (oldest go)
  std::size_t telemetry_per_device = 10000;   ///< readings kept per device (oldest go)
  std::size_t events_max = 100000;            ///< event log rows (oldest go)
  std::chrono::milliseconds busy_timeout{5000};
};

/// What enrol_device() needs; the ID comes from the identity.
struct NewDevice {
  std::string type;
  std::string identity_pem;  ///< a public identity file (srup::encode_public_identity)
  JoinMode join_mode = JoinMode::simple;
  std::optional<std::uint64_t> observer;  ///< join mode observed: an enrolled device
};

struct DeviceFilter {
  std::optional<DeviceState> state;
  std::optional<std::string> type;
  std::uint64_t after_id = 0;  ///< paging: IDs above this (unsigned order)
  std::size_t limit = 100;     ///< at most kMaxListLimit
};

enum class JoinCodeCheck {
  accepted,   ///< the code matched; it is deleted (one use)
  wrong,      ///< it did not; the failure is counted
  exhausted,  ///< too many failures: refused without comparing
  expired,    ///< older than join_code_lifetime_ms
  none,       ///< no code for this device
};

struct NewCommand {
  std::uint64_t device = 0;
  crypto::Bytes token;     ///< 0..kMaxTokenLength bytes, unique among the device's commands
  std::uint8_t type = 0;   ///< the message type (srup::MessageType)
  crypto::Bytes envelope;  ///< sent and retransmitted exactly as stored, 1..kMaxEnvelopeBytes
  std::uint64_t created_ms = 0;
  std::uint64_t expires_ms = 0;  ///< after this it is expired by outbox_expire()
  std::uint64_t next_attempt_ms = 0;
  std::optional<FollowUp> follow_up;  ///< the step its answer triggers (state waiting until answered)
  std::uint64_t follow_up_arg = 0;    ///< rehome: the new C2's ID
};

struct OutboxEntry {
  std::int64_t row = 0;
  std::uint64_t device = 0;
  crypto::Bytes token;
  std::uint8_t type = 0;
  crypto::Bytes envelope;
  std::uint64_t created_ms = 0;
  std::uint64_t expires_ms = 0;
  std::uint32_t attempts = 0;
  std::uint64_t next_attempt_ms = 0;
  OutboxState state = OutboxState::pending;
  std::optional<std::uint8_t> status;  ///< answered: the Response's status
  std::optional<std::string> detail;
  std::optional<std::uint64_t> finished_ms;
  std::optional<std::uint64_t> answer_seq;  ///< answered: the answering envelope's sequence number
  std::optional<FollowUp> follow_up;
  std::optional<FollowUpState> follow_up_state;  ///< set exactly when follow_up is
  std::uint64_t follow_up_arg = 0;
};

/// A device's answer to a command (a Response, or Data), as outbox_record_answer() stores it.
struct Answer {
  std::uint64_t device = 0;
  crypto::Bytes token;
  std::uint8_t status = 0;
  std::string detail;  ///< cut to kMaxDetailLength
  std::uint64_t received_ms = 0;
  /// The answering envelope's sequence number (its stream device -> C2): an answer whose number
  /// one of the device's rows holds already is a duplicate and changes nothing.
  std::optional<std::uint64_t> sequence;
  /// Data: (data ID, the value as JSON), stored with the answer (also when no command matches: Data
  /// a device reports by itself).
  std::optional<std::pair<std::string, std::string>> data;
};

enum class AnswerMatch {
  answered,   ///< a pending command with that token is answered now
  duplicate,  ///< a row holds this answer's sequence number already: nothing written
  unmatched,  ///< no pending command has that token (only the Data value, if any, is stored)
};

struct AnswerOutcome {
  AnswerMatch match = AnswerMatch::unmatched;
  std::optional<OutboxEntry> entry;  ///< answered: the row as stored
};

struct DataRecord {
  std::int64_t row = 0;
  std::uint64_t device = 0;
  std::uint64_t received_ms = 0;
  std::string data_id;     ///< at most kMaxDataIdLength bytes
  std::string value_json;  ///< the typed value as JSON text, at most kMaxValueLength
};

struct Reading {
  std::uint64_t device = 0;
  std::uint64_t seq = 0;  ///< the telemetry envelope's sequence number
  std::uint64_t received_ms = 0;
  std::string reading_json;  ///< at most kMaxReadingLength
};

struct Event {
  std::int64_t row = 0;
  std::uint64_t at_ms = 0;
  std::string actor;    ///< who: "control", "join", "c2", ...
  std::string subject;  ///< what: "dev-...", "mon-..."
  std::string action;   ///< "enrol", "state joined", "certificate", "read allow dev-...", ...
  std::string detail;
};

struct PruneCounts {
  std::size_t data = 0, readings = 0, outbox = 0, events = 0, join_codes = 0;
};

class Registry {
 public:
  /// PRAGMA user_version of the newest schema; older files are migrated on open, newer refused.
  static constexpr int kSchemaVersion = 2;
  /// PRAGMA application_id: "SRC2" (0x53524332).
  static constexpr std::int32_t kApplicationId = 0x53524332;
  static constexpr std::size_t kMaxListLimit = 1000;

  /// Opens `path` or creates it (mode 0600; the directory must exist). Throws RegistryError for
  /// a file that is not a SQLite database, another application's, a newer schema, or one another
  /// process holds; std::invalid_argument for limits of 0.
  explicit Registry(const std::filesystem::path& path, RegistryLimits limits = {});
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  const RegistryLimits& limits() const noexcept { return limits_; }

  // ---- devices ----------------------------------------------------------------------------------
  /// Enrols a device in state pending. Throws std::invalid_argument for a bad type, identity,
  /// observer or an ID already enrolled; RegistryFull over max_devices or pending_max.
  Device enrol_device(const NewDevice& d, std::uint64_t now_ms, std::string_view actor);
  /// Changes the state if transition_allowed(); TransitionError otherwise, std::out_of_range for
  /// an unknown device. Entering joined sets joined_ms.
  Device set_state(std::uint64_t id, DeviceState to, std::uint64_t now_ms, std::string_view actor);
  /// Records the device's broker certificate (pki::IssuedCertificate's serial and notAfter).
  void set_certificate(std::uint64_t id, std::string_view serial_hex, std::int64_t not_after_ms,
                       std::uint64_t now_ms, std::string_view actor);
  /// last_seen_ms = now (no event: it changes with every message).
  void touch(std::uint64_t id, std::uint64_t now_ms);
  std::optional<Device> device(std::uint64_t id);
  std::optional<Device> device_by_username(std::string_view username);
  std::vector<Device> list_devices(const DeviceFilter& filter);
  std::size_t count_devices(std::optional<DeviceState> state);

  // ---- join codes (human join) ------------------------------------------------------------------
  /// Sets (or replaces, resetting the failures) the device's one-time code; the device must be
  /// pending. std::invalid_argument unless the code is kJoinCodeBytes long.
  void set_join_code(std::uint64_t device, crypto::ByteView code, std::uint64_t now_ms,
                     std::string_view actor);
  /// Compares in constant time; see JoinCodeCheck.
  JoinCodeCheck check_join_code(std::uint64_t device, crypto::ByteView code, std::uint64_t now_ms);

  // ---- monitors ---------------------------------------------------------------------------------
  Monitor enrol_monitor(std::string_view identity_pem, std::uint64_t now_ms, std::string_view actor);
  /// active -> revoked only (TransitionError otherwise); revoking drops every read grant.
  void revoke_monitor(std::uint64_t id, std::uint64_t now_ms, std::string_view actor);
  std::optional<Monitor> monitor(std::uint64_t id);
  std::vector<Monitor> list_monitors(std::uint64_t after_id, std::size_t limit);
  /// The monitor (active) may read the device's telemetry (not deregistered); idempotent.
  void allow_read(std::uint64_t monitor, std::uint64_t device, std::uint64_t now_ms, std::string_view actor);
  void revoke_read(std::uint64_t monitor, std::uint64_t device, std::uint64_t now_ms, std::string_view actor);
  std::vector<std::uint64_t> readable_devices(std::uint64_t monitor);
  /// Active monitors that may read `device`.
  std::vector<std::uint64_t> readers_of(std::uint64_t device);

  // ---- outbox -----------------------------------------------------------------------------------
  /// Adds a pending command; its row. std::invalid_argument for bounds or a token the device has
  /// in another row, RegistryFull over outbox_max_per_device / outbox_max_total.
  std::int64_t outbox_add(const NewCommand& c);
  /// Pending commands with next_attempt_ms <= now and expires_ms > now, earliest first.
  std::vector<OutboxEntry> outbox_due(std::uint64_t now_ms, std::size_t limit);
  /// After a (re)transmission: attempts + 1, the next attempt's time.
  void outbox_attempted(std::int64_t row, std::uint64_t next_attempt_ms);
  /// The device's pending command with `token` becomes answered; nullopt if there is none (a late
  /// or unknown answer: nothing is written). outbox_record_answer() without a sequence or data.
  std::optional<OutboxEntry> outbox_answer(std::uint64_t device, crypto::ByteView token,
                                           std::uint8_t status, std::string_view detail,
                                           std::uint64_t now_ms);
  /// In one transaction: refuses a duplicate (a.sequence already stored for the device: nothing
  /// written), stores a.data, and marks the device's pending command with a.token answered with
  /// the status, detail and sequence; its follow-up becomes due (follow_up_triggered) or skipped.
  AnswerOutcome outbox_record_answer(const Answer& a);
  /// Answered commands whose follow-up is due (not yet taken), oldest first.
  std::vector<OutboxEntry> outbox_follow_ups_due(std::size_t limit);
  /// Takes the due follow-up of `row` by adding `c` (the Update Activate) as a pending command, in
  /// the transaction that marks the follow-up done; false (nothing written) if it is not due. The
  /// command takes the place its answered command freed: the count bounds are not applied.
  bool outbox_follow_up_send(std::int64_t row, const NewCommand& c);
  /// Takes the due follow-up (resign, rehome) of `row`: in one transaction the device, if joined,
  /// becomes resigned (event by `actor`), its pending commands are cancelled and the follow-up is
  /// done; false (nothing written) if it is not due.
  bool outbox_follow_up_resign(std::int64_t row, std::uint64_t now_ms, std::string_view actor);
  /// Pending commands whose expires_ms <= now become expired; how many.
  std::size_t outbox_expire(std::uint64_t now_ms);
  /// A pending command becomes cancelled; false if it was not pending.
  bool outbox_cancel(std::int64_t row, std::uint64_t now_ms);
  std::optional<OutboxEntry> outbox_entry(std::int64_t row);
  /// Newest first, optionally of one device and in one state.
  std::vector<OutboxEntry> outbox_list(std::optional<std::uint64_t> device, std::optional<OutboxState> state,
                                       std::size_t limit);
  /// Every command carrying `token`, newest first (an update's Initiate and Activate share one).
  std::vector<OutboxEntry> outbox_by_token(crypto::ByteView token, std::size_t limit);
  std::optional<OutboxEntry> outbox_oldest_pending(std::uint64_t device);
  std::size_t outbox_pending(std::optional<std::uint64_t> device);

  // ---- data and telemetry -----------------------------------------------------------------------
  /// Stores a Data value; the device's oldest go beyond data_per_device.
  void add_data(std::uint64_t device, std::uint64_t received_ms, std::string_view data_id,
                std::string_view value_json);
  /// Newest first.
  std::vector<DataRecord> data(std::uint64_t device, std::size_t limit);
  /// Stores readings in one transaction; each device's oldest go beyond telemetry_per_device.
  void add_readings(std::span<const Reading> readings);
  /// Newest first.
  std::vector<Reading> readings(std::uint64_t device, std::size_t limit);

  // ---- events, retention, backup ----------------------------------------------------------------
  /// Events with row > after_row, oldest first.
  std::vector<Event> events(std::int64_t after_row, std::size_t limit);
  /// Events about `subject` ("dev-..."), newest first.
  std::vector<Event> events_of(std::string_view subject, std::size_t limit);
  /// Applies every retention bound now (inserts apply their own as they go), and deletes join
  /// codes past their lifetime.
  PruneCounts prune(std::uint64_t now_ms);
  /// A consistent copy of the registry in a new file `path` (mode 0600, never overwriting),
  /// through SQLite's online backup API. Throws RegistryError.
  void backup(const std::filesystem::path& path);

 private:
  struct Sql;
  void event(std::uint64_t now_ms, std::string_view actor, std::string_view subject,
             std::string_view action, std::string_view detail);
  Device require_device(std::uint64_t id);
  void prune_finished(std::uint64_t device);
  void insert_data(std::uint64_t device, std::uint64_t received_ms, std::string_view data_id,
                   std::string_view value_json);
  void insert_command(const NewCommand& c);

  RegistryLimits limits_;
  std::filesystem::path path_;
  std::unique_ptr<Sql> sql_;
};

}  // namespace pqot::srup_c2
