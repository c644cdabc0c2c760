// The C2 registry (docs/srup-c2.md, "Registry"): the outbox of commands awaiting an answer, Data
// and telemetry received, the event log, retention and backup.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <stdexcept>

#include "registry.hpp"
#include "registry_sql.hpp"

namespace pqot::srup_c2 {

using registry_rows::check_length;

namespace registry_rows {

OutboxEntry read_outbox(sql::Statement::Run& run, const std::string& db_name) {
  OutboxEntry e;
  e.row = run.column_int(0);
  e.device = run.column_u64(1);
  const std::string where = db_name + ": outbox row " + std::to_string(e.row);
  if (run.column_bytes(2) > kMaxTokenLength || run.column_bytes(4) > kMaxEnvelopeBytes) {
    throw RegistryError(where + ": token or envelope too long");
  }
  e.token = run.column_blob(2);
  const std::int64_t type = run.column_int(3);
  if (type < 0 || type > 255) throw RegistryError(where + ": invalid type");
  e.type = static_cast<std::uint8_t>(type);
  e.envelope = run.column_blob(4);
  e.created_ms = run.column_u64(5);
  e.expires_ms = run.column_u64(6);
  const std::int64_t attempts = run.column_int(7);
  if (attempts < 0 || attempts > 0xffffffffLL) throw RegistryError(where + ": invalid attempts");
  e.attempts = static_cast<std::uint32_t>(attempts);
  e.next_attempt_ms = run.column_u64(8);
  const auto state = parse_outbox_state(run.column_text(9));
  if (!state) throw RegistryError(where + ": unknown state");
  e.state = *state;
  if (!run.column_null(10)) {
    const std::int64_t status = run.column_int(10);
    if (status < 0 || status > 255) throw RegistryError(where + ": invalid status");
    e.status = static_cast<std::uint8_t>(status);
  }
  if (!run.column_null(11)) {
    if (run.column_bytes(11) > kMaxDetailLength) throw RegistryError(where + ": detail too long");
    e.detail = run.column_text(11);
  }
  if (!run.column_null(12)) e.finished_ms = run.column_u64(12);
  if (!run.column_null(13)) e.answer_seq = run.column_u64(13);
  if (!run.column_null(14)) {
    e.follow_up = parse_follow_up(run.column_text(14));
    e.follow_up_state = parse_follow_up_state(run.column_text(15));
    if (!e.follow_up || !e.follow_up_state) throw RegistryError(where + ": unknown follow-up");
  }
  e.follow_up_arg = run.column_u64(16);
  return e;
}

}  // namespace registry_rows

namespace {

std::string outbox_select(const char* where_order) {
  return std::string("SELECT ") + registry_rows::kOutboxColumns + " FROM outbox " + where_order;
}

void check_list_limit(std::size_t limit) {
  if (limit == 0 || limit > Registry::kMaxListLimit) {
    throw std::invalid_argument("list limit must be 1.." + std::to_string(Registry::kMaxListLimit));
  }
}

}  // namespace

// ---- outbox -------------------------------------------------------------------------------------

std::int64_t Registry::outbox_add(const NewCommand& c) {
  check_length(c.token.size(), kMaxTokenLength, "command token");
  check_length(c.envelope.size(), kMaxEnvelopeBytes, "command envelope");
  if (c.envelope.empty()) throw std::invalid_argument("command envelope: empty");
  sql::Transaction tx(sql_->db);
  require_device(c.device);
  if (outbox_pending(c.device) >= limits_.outbox_max_per_device) {
    throw RegistryFull(device_username(c.device) + " has outbox_max_per_device = " +
                       std::to_string(limits_.outbox_max_per_device) + " commands pending");
  }
  if (outbox_pending(std::nullopt) >= limits_.outbox_max_total) {
    throw RegistryFull("outbox_max_total = " + std::to_string(limits_.outbox_max_total) +
                       " commands are pending");
  }
  {
    // One pending command per token: an answer names exactly one. A finished command's token may
    // be used again (Update Activate carries its Update Initiate's token, docs/srup-mqtt.md 4.4).
    sql::Statement::Run run(sql_->st("SELECT 1 FROM outbox WHERE device = ?1 AND token = ?2 AND state = 'pending'"));
    run.bind_u64(1, c.device).bind(2, c.token);
    if (run.step()) {
      throw std::invalid_argument("the token is already used by a pending command to " + device_username(c.device));
    }
  }
  insert_command(c);
  const std::int64_t row = sqlite3_last_insert_rowid(sql_->db.handle());
  tx.commit();
  return row;
}

// Inside the caller's transaction, after the bounds were checked.
void Registry::insert_command(const NewCommand& c) {
  sql::Statement::Run run(sql_->st(
      "INSERT INTO outbox (device, token, type, envelope, created_ms, expires_ms, attempts, next_ms, state, "
      "follow_up, follow_up_state, follow_up_arg) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, 0, ?7, 'pending', ?8, CASE WHEN ?8 IS NULL THEN NULL ELSE 'waiting' END, ?9)"));
  run.bind_u64(1, c.device).bind(2, c.token).bind(3, c.type).bind(4, c.envelope)
      .bind_u64(5, c.created_ms).bind_u64(6, c.expires_ms).bind_u64(7, c.next_attempt_ms);
  if (c.follow_up) run.bind_text(8, to_string(*c.follow_up)); else run.bind_null(8);
  run.bind_u64(9, c.follow_up_arg);
  run.done();
}

std::size_t Registry::outbox_pending(std::optional<std::uint64_t> device) {
  sql::Statement::Run run(sql_->st(
      "SELECT count(*) FROM outbox WHERE state = 'pending' AND (?1 IS NULL OR device = ?1)"));
  if (device) run.bind_u64(1, *device); else run.bind_null(1);
  run.step();
  return static_cast<std::size_t>(run.column_int(0));
}

std::vector<OutboxEntry> Registry::outbox_due(std::uint64_t now_ms, std::size_t limit) {
  check_list_limit(limit);
  static const std::string q =
      outbox_select("WHERE state = 'pending' AND next_ms <= ?1 AND expires_ms > ?1 ORDER BY next_ms, row LIMIT ?2");
  sql::Statement::Run run(sql_->st(q.c_str()));
  run.bind_u64(1, now_ms).bind(2, static_cast<std::int64_t>(limit));
  std::vector<OutboxEntry> out;
  while (run.step()) out.push_back(registry_rows::read_outbox(run, sql_->db.name()));
  return out;
}

void Registry::outbox_attempted(std::int64_t row, std::uint64_t next_attempt_ms) {
  sql::Statement::Run run(sql_->st(
      "UPDATE outbox SET attempts = attempts + 1, next_ms = ?2 WHERE row = ?1 AND state = 'pending'"));
  run.bind(1, row).bind_u64(2, next_attempt_ms);
  run.done();
}

std::optional<OutboxEntry> Registry::outbox_entry(std::int64_t row) {
  static const std::string q = outbox_select("WHERE row = ?1");
  sql::Statement::Run run(sql_->st(q.c_str()));
  run.bind(1, row);
  if (!run.step()) return std::nullopt;
  return registry_rows::read_outbox(run, sql_->db.name());
}

std::vector<OutboxEntry> Registry::outbox_list(std::optional<std::uint64_t> device,
                                               std::optional<OutboxState> state, std::size_t limit) {
  check_list_limit(limit);
  static const std::string q = outbox_select(
      "WHERE (?1 IS NULL OR device = ?1) AND (?2 IS NULL OR state = ?2) ORDER BY row DESC LIMIT ?3");
  sql::Statement::Run run(sql_->st(q.c_str()));
  if (device) run.bind_u64(1, *device);
  if (state) run.bind_text(2, to_string(*state));
  run.bind(3, static_cast<std::int64_t>(limit));
  std::vector<OutboxEntry> out;
  while (run.step()) out.push_back(registry_rows::read_outbox(run, sql_->db.name()));
  return out;
}

std::vector<OutboxEntry> Registry::outbox_by_token(crypto::ByteView token, std::size_t limit) {
  check_list_limit(limit);
  static const std::string q = outbox_select("WHERE token = ?1 ORDER BY row DESC LIMIT ?2");
  sql::Statement::Run run(sql_->st(q.c_str()));
  run.bind(1, token).bind(2, static_cast<std::int64_t>(limit));
  std::vector<OutboxEntry> out;
  while (run.step()) out.push_back(registry_rows::read_outbox(run, sql_->db.name()));
  return out;
}

std::optional<OutboxEntry> Registry::outbox_oldest_pending(std::uint64_t device) {
  static const std::string q = outbox_select("WHERE device = ?1 AND state = 'pending' ORDER BY row LIMIT 1");
  sql::Statement::Run run(sql_->st(q.c_str()));
  run.bind_u64(1, device);
  if (!run.step()) return std::nullopt;
  return registry_rows::read_outbox(run, sql_->db.name());
}

std::optional<OutboxEntry> Registry::outbox_answer(std::uint64_t device, crypto::ByteView token,
                                                   std::uint8_t status, std::string_view detail,
                                                   std::uint64_t now_ms) {
  Answer a;
  a.device = device;
  a.token.assign(token.begin(), token.end());
  a.status = status;
  a.detail = std::string(detail);
  a.received_ms = now_ms;
  return outbox_record_answer(a).entry;
}

AnswerOutcome Registry::outbox_record_answer(const Answer& a) {
  if (a.data) {
    check_length(a.data->first.size(), kMaxDataIdLength, "data ID");
    check_length(a.data->second.size(), kMaxValueLength, "data value");
  }
  // A peer's detail text: cut to the bound rather than losing the answer.
  const std::string_view kept = std::string_view(a.detail).substr(0, std::min(a.detail.size(), kMaxDetailLength));
  sql::Transaction tx(sql_->db);
  if (a.sequence) {
    // The same envelope again (a broker's redelivery, or the device's journal answering a
    // retransmission sent before the first copy was recorded): the answer stands as stored.
    sql::Statement::Run run(sql_->st("SELECT 1 FROM outbox WHERE device = ?1 AND answer_seq = ?2"));
    run.bind_u64(1, a.device).bind_u64(2, *a.sequence);
    if (run.step()) return {AnswerMatch::duplicate, std::nullopt};
  }
  if (a.data) {
    require_device(a.device);
    insert_data(a.device, a.received_ms, a.data->first, a.data->second);
  }
  std::int64_t row = 0;
  std::optional<FollowUp> follow_up;
  if (a.token.size() <= kMaxTokenLength) {  // no command has a longer token
    sql::Statement::Run run(sql_->st(
        "SELECT row, follow_up FROM outbox WHERE device = ?1 AND token = ?2 AND state = 'pending'"));
    run.bind_u64(1, a.device).bind(2, a.token);
    if (run.step()) {
      row = run.column_int(0);
      if (!run.column_null(1)) follow_up = parse_follow_up(run.column_text(1));
    }
  }
  if (row == 0) {
    tx.commit();  // the Data value, if any
    return {AnswerMatch::unmatched, std::nullopt};
  }
  const char* follow_up_state =
      follow_up ? (follow_up_triggered(*follow_up, a.status) ? "due" : "skipped") : nullptr;
  {
    sql::Statement::Run run(sql_->st(
        "UPDATE outbox SET state = 'answered', status = ?2, detail = ?3, finished_ms = ?4, answer_seq = ?5, "
        "follow_up_state = ?6 WHERE row = ?1"));
    run.bind(1, row).bind(2, a.status).bind_text(3, kept).bind_u64(4, a.received_ms);
    if (a.sequence) run.bind_u64(5, *a.sequence); else run.bind_null(5);
    if (follow_up_state) run.bind_text(6, follow_up_state); else run.bind_null(6);
    run.done();
  }
  prune_finished(a.device);
  tx.commit();
  return {AnswerMatch::answered, outbox_entry(row)};
}

std::vector<OutboxEntry> Registry::outbox_follow_ups_due(std::size_t limit) {
  check_list_limit(limit);
  static const std::string q = outbox_select("WHERE follow_up_state = 'due' ORDER BY row LIMIT ?1");
  sql::Statement::Run run(sql_->st(q.c_str()));
  run.bind(1, static_cast<std::int64_t>(limit));
  std::vector<OutboxEntry> out;
  while (run.step()) out.push_back(registry_rows::read_outbox(run, sql_->db.name()));
  return out;
}

bool Registry::outbox_follow_up_send(std::int64_t row, const NewCommand& c) {
  check_length(c.token.size(), kMaxTokenLength, "command token");
  check_length(c.envelope.size(), kMaxEnvelopeBytes, "command envelope");
  if (c.envelope.empty()) throw std::invalid_argument("command envelope: empty");
  sql::Transaction tx(sql_->db);
  const auto e = outbox_entry(row);
  if (!e || e->follow_up_state != FollowUpState::due) return false;
  if (c.device != e->device) throw std::invalid_argument("a follow-up command goes to its command's device");
  insert_command(c);  // the unique index on pending (device, token) refuses a second pending row
  {
    sql::Statement::Run run(sql_->st("UPDATE outbox SET follow_up_state = 'done' WHERE row = ?1"));
    run.bind(1, row);
    run.done();
  }
  tx.commit();
  return true;
}

bool Registry::outbox_follow_up_resign(std::int64_t row, std::uint64_t now_ms, std::string_view actor) {
  check_length(actor.size(), kMaxActorLength, "actor");
  sql::Transaction tx(sql_->db);
  const auto e = outbox_entry(row);
  if (!e || e->follow_up_state != FollowUpState::due) return false;
  int resigned = 0;
  {
    sql::Statement::Run run(sql_->st("UPDATE devices SET state = 'resigned' WHERE id = ?1 AND state = 'joined'"));
    run.bind_u64(1, e->device);
    resigned = run.done();
  }
  if (resigned > 0) event(now_ms, actor, device_username(e->device), "state resigned", "from joined");
  {
    // It obeys this C2 no more: what was still pending for it is cancelled, not retried.
    sql::Statement::Run run(sql_->st(
        "UPDATE outbox SET state = 'cancelled', finished_ms = ?2, follow_up_state = "
        "CASE WHEN follow_up_state = 'waiting' THEN 'skipped' ELSE follow_up_state END "
        "WHERE device = ?1 AND state = 'pending'"));
    run.bind_u64(1, e->device).bind_u64(2, now_ms);
    run.done();
  }
  {
    sql::Statement::Run run(sql_->st("UPDATE outbox SET follow_up_state = 'done' WHERE row = ?1"));
    run.bind(1, row);
    run.done();
  }
  prune_finished(e->device);
  tx.commit();
  return true;
}

std::size_t Registry::outbox_expire(std::uint64_t now_ms) {
  sql::Transaction tx(sql_->db);
  std::vector<std::uint64_t> devices;
  {
    sql::Statement::Run run(sql_->st(
        "SELECT DISTINCT device FROM outbox WHERE state = 'pending' AND expires_ms <= ?1"));
    run.bind_u64(1, now_ms);
    while (run.step()) devices.push_back(run.column_u64(0));
  }
  int changed = 0;
  {
    sql::Statement::Run run(sql_->st(
        "UPDATE outbox SET state = 'expired', finished_ms = ?1, follow_up_state = "
        "CASE WHEN follow_up_state = 'waiting' THEN 'skipped' ELSE follow_up_state END "
        "WHERE state = 'pending' AND expires_ms <= ?1"));
    run.bind_u64(1, now_ms);
    changed = run.done();
  }
  for (std::uint64_t d : devices) prune_finished(d);
  tx.commit();
  return static_cast<std::size_t>(changed);
}

bool Registry::outbox_cancel(std::int64_t row, std::uint64_t now_ms) {
  sql::Transaction tx(sql_->db);
  const auto e = outbox_entry(row);
  if (!e || e->state != OutboxState::pending) return false;
  {
    sql::Statement::Run run(sql_->st(
        "UPDATE outbox SET state = 'cancelled', finished_ms = ?2, follow_up_state = "
        "CASE WHEN follow_up_state = 'waiting' THEN 'skipped' ELSE follow_up_state END "
        "WHERE row = ?1 AND state = 'pending'"));
    run.bind(1, row).bind_u64(2, now_ms);
    run.done();
  }
  prune_finished(e->device);
  tx.commit();
  return true;
}

// Finished rows (answered, expired, cancelled) beyond outbox_finished_per_device go, oldest first;
// a row whose follow-up is still due stays until the step is taken.
void Registry::prune_finished(std::uint64_t device) {
  sql::Statement::Run run(sql_->st(
      "DELETE FROM outbox WHERE device = ?1 AND state != 'pending' AND follow_up_state IS NOT 'due' AND row NOT IN "
      "(SELECT row FROM outbox WHERE device = ?1 AND state != 'pending' ORDER BY row DESC LIMIT ?2)"));
  run.bind_u64(1, device).bind(2, static_cast<std::int64_t>(limits_.outbox_finished_per_device));
  run.done();
}

// ---- data and telemetry -------------------------------------------------------------------------

void Registry::add_data(std::uint64_t device, std::uint64_t received_ms, std::string_view data_id,
                        std::string_view value_json) {
  check_length(data_id.size(), kMaxDataIdLength, "data ID");
  check_length(value_json.size(), kMaxValueLength, "data value");
  sql::Transaction tx(sql_->db);
  require_device(device);
  insert_data(device, received_ms, data_id, value_json);
  tx.commit();
}

// Inside the caller's transaction; the device's oldest values go beyond data_per_device.
void Registry::insert_data(std::uint64_t device, std::uint64_t received_ms, std::string_view data_id,
                           std::string_view value_json) {
  {
    sql::Statement::Run run(sql_->st(
        "INSERT INTO data (device, received_ms, data_id, value) VALUES (?1, ?2, ?3, ?4)"));
    run.bind_u64(1, device).bind_u64(2, received_ms).bind_text(3, data_id).bind_text(4, value_json);
    run.done();
  }
  {
    sql::Statement::Run run(sql_->st(
        "DELETE FROM data WHERE device = ?1 AND row NOT IN "
        "(SELECT row FROM data WHERE device = ?1 ORDER BY row DESC LIMIT ?2)"));
    run.bind_u64(1, device).bind(2, static_cast<std::int64_t>(limits_.data_per_device));
    run.done();
  }
}

std::vector<DataRecord> Registry::data(std::uint64_t device, std::size_t limit) {
  check_list_limit(limit);
  sql::Statement::Run run(sql_->st(
      "SELECT row, device, received_ms, data_id, value FROM data WHERE device = ?1 ORDER BY row DESC LIMIT ?2"));
  run.bind_u64(1, device).bind(2, static_cast<std::int64_t>(limit));
  std::vector<DataRecord> out;
  while (run.step()) {
    if (run.column_bytes(3) > kMaxDataIdLength || run.column_bytes(4) > kMaxValueLength) {
      throw RegistryError(sql_->db.name() + ": data row " + std::to_string(run.column_int(0)) + ": too long");
    }
    out.push_back({run.column_int(0), run.column_u64(1), run.column_u64(2), run.column_text(3), run.column_text(4)});
  }
  return out;
}

void Registry::add_readings(std::span<const Reading> readings) {
  for (const Reading& r : readings) check_length(r.reading_json.size(), kMaxReadingLength, "telemetry reading");
  sql::Transaction tx(sql_->db);
  std::map<std::uint64_t, bool> devices;
  for (const Reading& r : readings) {
    if (devices.emplace(r.device, true).second) require_device(r.device);
    sql::Statement::Run run(sql_->st(
        "INSERT INTO readings (device, seq, received_ms, reading) VALUES (?1, ?2, ?3, ?4)"));
    run.bind_u64(1, r.device).bind_u64(2, r.seq).bind_u64(3, r.received_ms).bind_text(4, r.reading_json);
    run.done();
  }
  for (const auto& [device, unused] : devices) {
    sql::Statement::Run run(sql_->st(
        "DELETE FROM readings WHERE device = ?1 AND row NOT IN "
        "(SELECT row FROM readings WHERE device = ?1 ORDER BY row DESC LIMIT ?2)"));
    run.bind_u64(1, device).bind(2, static_cast<std::int64_t>(limits_.telemetry_per_device));
    run.done();
  }
  tx.commit();
}

std::vector<Reading> Registry::readings(std::uint64_t device, std::size_t limit) {
  check_list_limit(limit);
  sql::Statement::Run run(sql_->st(
      "SELECT device, seq, received_ms, reading FROM readings WHERE device = ?1 ORDER BY row DESC LIMIT ?2"));
  run.bind_u64(1, device).bind(2, static_cast<std::int64_t>(limit));
  std::vector<Reading> out;
  while (run.step()) {
    if (run.column_bytes(3) > kMaxReadingLength) throw RegistryError(sql_->db.name() + ": reading too long");
    out.push_back({run.column_u64(0), run.column_u64(1), run.column_u64(2), run.column_text(3)});
  }
  return out;
}

// ---- events, retention, backup ------------------------------------------------------------------

std::vector<Event> Registry::events(std::int64_t after_row, std::size_t limit) {
  check_list_limit(limit);
  sql::Statement::Run run(sql_->st(
      "SELECT row, at_ms, actor, subject, action, detail FROM events WHERE row > ?1 ORDER BY row LIMIT ?2"));
  run.bind(1, after_row).bind(2, static_cast<std::int64_t>(limit));
  std::vector<Event> out;
  while (run.step()) {
    out.push_back({run.column_int(0), run.column_u64(1), run.column_text(2), run.column_text(3),
                   run.column_text(4), run.column_text(5)});
  }
  return out;
}

std::vector<Event> Registry::events_of(std::string_view subject, std::size_t limit) {
  check_list_limit(limit);
  sql::Statement::Run run(sql_->st(
      "SELECT row, at_ms, actor, subject, action, detail FROM events WHERE subject = ?1 ORDER BY row DESC LIMIT ?2"));
  run.bind_text(1, subject).bind(2, static_cast<std::int64_t>(limit));
  std::vector<Event> out;
  while (run.step()) {
    out.push_back({run.column_int(0), run.column_u64(1), run.column_text(2), run.column_text(3),
                   run.column_text(4), run.column_text(5)});
  }
  return out;
}

PruneCounts Registry::prune(std::uint64_t now_ms) {
  PruneCounts n;
  sql::Transaction tx(sql_->db);
  auto exec = [&](const char* text, std::int64_t bound) {
    sql::Statement::Run run(sql_->st(text));
    run.bind(1, bound);
    return static_cast<std::size_t>(run.done());
  };
  // Window functions number each device's rows newest first; those past the bound go.
  n.data = exec("DELETE FROM data WHERE row IN (SELECT row FROM (SELECT row, row_number() OVER "
                "(PARTITION BY device ORDER BY row DESC) AS k FROM data) WHERE k > ?1)",
                static_cast<std::int64_t>(limits_.data_per_device));
  n.readings = exec("DELETE FROM readings WHERE row IN (SELECT row FROM (SELECT row, row_number() OVER "
                    "(PARTITION BY device ORDER BY row DESC) AS k FROM readings) WHERE k > ?1)",
                    static_cast<std::int64_t>(limits_.telemetry_per_device));
  n.outbox = exec("DELETE FROM outbox WHERE row IN (SELECT row FROM (SELECT row, row_number() OVER "
                  "(PARTITION BY device ORDER BY row DESC) AS k FROM outbox WHERE state != 'pending') "
                  "WHERE k > ?1) AND follow_up_state IS NOT 'due'",
                  static_cast<std::int64_t>(limits_.outbox_finished_per_device));
  n.events = exec("DELETE FROM events WHERE row <= (SELECT max(row) FROM events) - ?1",
                  static_cast<std::int64_t>(limits_.events_max));
  const std::uint64_t cutoff = now_ms > limits_.join_code_lifetime_ms ? now_ms - limits_.join_code_lifetime_ms : 0;
  n.join_codes = exec("DELETE FROM join_codes WHERE created_ms < ?1", sql::to_sql(cutoff));
  tx.commit();
  return n;
}

void Registry::backup(const std::filesystem::path& path) {
  const std::string name = "C2 registry backup " + path.string();
  const int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    throw RegistryError(name + ": cannot create" + (errno == EEXIST ? " (it exists; a backup never overwrites)" : "") +
                        ": " + std::strerror(errno));
  }
  ::close(fd);
  bool ok = false;
  std::string cause;
  {
    sql::Database target(path.string(), static_cast<int>(limits_.busy_timeout.count()));
    sqlite3_backup* b = sqlite3_backup_init(target.handle(), "main", sql_->db.handle(), "main");
    if (b == nullptr) {
      cause = sqlite3_errmsg(target.handle());
    } else {
      const int rc = sqlite3_backup_step(b, -1);  // the whole file in one step: we hold the lock anyway
      sqlite3_backup_finish(b);
      ok = rc == SQLITE_DONE;
      if (!ok) cause = sqlite3_errstr(rc);
    }
    if (ok) {
      // The copy is a registry of its own: keep it in rollback-journal mode, one file.
      try {
        target.exec("PRAGMA journal_mode = DELETE");
      } catch (const RegistryError& e) {
        ok = false;
        cause = e.what();
      }
    }
  }
  if (!ok) {
    ::unlink(path.c_str());
    throw RegistryError(name + ": " + cause);
  }
  const int sync_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (sync_fd >= 0) {
    ::fsync(sync_fd);
    ::close(sync_fd);
  }
}

}  // namespace pqot::srup_c2
