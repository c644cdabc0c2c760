// The C2 registry (docs/srup-c2.md, "Registry"): opening and migrating the file, devices, join
// codes and monitors. The outbox, data, telemetry, events and backup are registry_store.cpp.
#include "registry.hpp"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <stdexcept>

#include "registry_sql.hpp"

namespace pqot::srup_c2 {

namespace {

using sql::from_sql;
using sql::to_sql;

// Schema version 1 (docs/srup-c2.md, "Schema"). Every u64 ID is stored as the signed 64-bit
// integer with the same bits; times are milliseconds since the Unix epoch.
constexpr const char* kRegistrySchemaV1 = R"sql(
CREATE TABLE devices (
  id                INTEGER PRIMARY KEY,
  username          TEXT NOT NULL UNIQUE CHECK (length(username) = 20),
  type              TEXT NOT NULL CHECK (length(type) BETWEEN 1 AND 64),
  suite             INTEGER NOT NULL CHECK (suite BETWEEN 0 AND 255),
  identity          BLOB NOT NULL CHECK (length(identity) <= 16384),
  state             TEXT NOT NULL CHECK (state IN ('pending', 'joined', 'resigned', 'deregistered')),
  join_mode         TEXT NOT NULL CHECK (join_mode IN ('simple', 'human', 'observed')),
  observer          INTEGER CHECK ((join_mode = 'observed') = (observer IS NOT NULL)),
  enrolled_ms       INTEGER NOT NULL,
  joined_ms         INTEGER,
  last_seen_ms      INTEGER,
  cert_serial       TEXT CHECK (length(cert_serial) <= 64),
  cert_not_after_ms INTEGER CHECK ((cert_serial IS NULL) = (cert_not_after_ms IS NULL))
);
CREATE INDEX devices_state ON devices (state);
CREATE TABLE join_codes (
  device     INTEGER PRIMARY KEY REFERENCES devices (id) ON DELETE CASCADE,
  code       BLOB NOT NULL CHECK (length(code) = 16),
  created_ms INTEGER NOT NULL,
  failed     INTEGER NOT NULL DEFAULT 0 CHECK (failed >= 0)
);
CREATE TABLE monitors (
  id          INTEGER PRIMARY KEY,
  username    TEXT NOT NULL UNIQUE CHECK (length(username) = 20),
  suite       INTEGER NOT NULL CHECK (suite BETWEEN 0 AND 255),
  identity    BLOB NOT NULL CHECK (length(identity) <= 16384),
  state       TEXT NOT NULL CHECK (state IN ('active', 'revoked')),
  enrolled_ms INTEGER NOT NULL
);
CREATE TABLE monitor_devices (
  monitor INTEGER NOT NULL REFERENCES monitors (id) ON DELETE CASCADE,
  device  INTEGER NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
  PRIMARY KEY (monitor, device)
) WITHOUT ROWID;
CREATE INDEX monitor_devices_device ON monitor_devices (device);
CREATE TABLE outbox (
  row         INTEGER PRIMARY KEY,
  device      INTEGER NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
  token       BLOB NOT NULL CHECK (length(token) <= 64),
  type        INTEGER NOT NULL CHECK (type BETWEEN 0 AND 255),
  envelope    BLOB NOT NULL CHECK (length(envelope) BETWEEN 1 AND 65535),
  created_ms  INTEGER NOT NULL,
  expires_ms  INTEGER NOT NULL,
  attempts    INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  next_ms     INTEGER NOT NULL,
  state       TEXT NOT NULL CHECK (state IN ('pending', 'answered', 'expired', 'cancelled')),
  status      INTEGER CHECK (status BETWEEN 0 AND 255),
  detail      TEXT CHECK (length(detail) <= 1024),
  finished_ms INTEGER CHECK ((state = 'pending') = (finished_ms IS NULL))
);
CREATE UNIQUE INDEX outbox_pending_token ON outbox (device, token) WHERE state = 'pending';
CREATE INDEX outbox_token ON outbox (token, row);
CREATE INDEX outbox_due ON outbox (state, next_ms);
CREATE INDEX outbox_device ON outbox (device, state, row);
CREATE TABLE data (
  row         INTEGER PRIMARY KEY,
  device      INTEGER NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
  received_ms INTEGER NOT NULL,
  data_id     TEXT NOT NULL CHECK (length(CAST(data_id AS BLOB)) <= 255),
  value       TEXT NOT NULL CHECK (length(CAST(value AS BLOB)) <= 16384)
);
CREATE INDEX data_device ON data (device, row);
CREATE TABLE readings (
  row         INTEGER PRIMARY KEY,
  device      INTEGER NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
  seq         INTEGER NOT NULL,
  received_ms INTEGER NOT NULL,
  reading     TEXT NOT NULL CHECK (length(CAST(reading AS BLOB)) <= 65536)
);
CREATE INDEX readings_device ON readings (device, row);
CREATE TABLE events (
  row     INTEGER PRIMARY KEY,
  at_ms   INTEGER NOT NULL,
  actor   TEXT NOT NULL CHECK (length(CAST(actor AS BLOB)) <= 64),
  subject TEXT NOT NULL CHECK (length(subject) <= 64),
  action  TEXT NOT NULL CHECK (length(action) <= 64),
  detail  TEXT NOT NULL CHECK (length(CAST(detail AS BLOB)) <= 1024)
);
)sql";

// Schema version 2: each outbox row keeps the sequence number of the envelope that answered it (a
// duplicate answer changes nothing) and the follow-up step its answer triggers, so the step
// survives a restart (docs/srup-c2.md, "Follow-up steps").
constexpr const char* kRegistrySchemaV2 = R"sql(
ALTER TABLE outbox ADD COLUMN answer_seq INTEGER;
ALTER TABLE outbox ADD COLUMN follow_up TEXT CHECK (follow_up IN ('activate', 'resign', 'rehome'));
ALTER TABLE outbox ADD COLUMN follow_up_state TEXT
  CHECK ((follow_up IS NULL) = (follow_up_state IS NULL) AND follow_up_state IN ('waiting', 'due', 'done', 'skipped'));
ALTER TABLE outbox ADD COLUMN follow_up_arg INTEGER NOT NULL DEFAULT 0;
CREATE INDEX outbox_answer_seq ON outbox (device, answer_seq) WHERE answer_seq IS NOT NULL;
CREATE INDEX outbox_follow_up_due ON outbox (row) WHERE follow_up_state = 'due';
)sql";

// kMigrations[v] takes a file from user_version v to v + 1 (v = 0: the empty file). A later schema
// adds its step here; each runs in its own transaction with the user_version it reaches.
constexpr const char* kMigrations[] = {kRegistrySchemaV1, kRegistrySchemaV2};
static_assert(std::size(kMigrations) == Registry::kSchemaVersion);

// Created here with mode 0600 (SQLite would use 0644): the registry holds every device's keys and
// the join codes. SQLite gives the -wal file the same mode.
void registry_create_file(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
  if (fd >= 0) {
    ::close(fd);
  } else if (errno != EEXIST) {
    throw RegistryError("C2 registry " + path.string() + ": cannot create: " + std::strerror(errno));
  }
}

std::string registry_actor(std::string_view actor) {
  registry_rows::check_length(actor.size(), kMaxActorLength, "actor");
  return std::string(actor);
}

std::uint64_t identity_id_or_throw(const srup::PublicIdentity& pub) {
  if (pub.id == 0 || pub.id == ~std::uint64_t{0}) throw std::invalid_argument("reserved ID in the identity");
  return pub.id;
}

}  // namespace

namespace registry_rows {

void check_length(std::size_t size, std::size_t max, const char* what) {
  if (size > max) {
    throw std::invalid_argument(std::string(what) + ": " + std::to_string(size) + " bytes (at most " +
                                std::to_string(max) + ")");
  }
}

namespace {
std::optional<std::int64_t> opt_int(const sql::Statement::Run& run, int col) {
  if (run.column_null(col)) return std::nullopt;
  return run.column_int(col);
}
}  // namespace

Device read_device(sql::Statement::Run& run, const std::string& db_name) {
  DeviceRecord r;
  r.id = run.column_int(0);
  r.username = run.column_text(1);
  r.type = run.column_text(2);
  r.suite = run.column_int(3);
  // Bounded before copying: a file edited by hand could hold anything.
  if (run.column_bytes(4) > kMaxIdentityBytes) {
    throw RegistryError(db_name + ": device " + device_username(from_sql(r.id)) + ": identity too long");
  }
  r.identity = run.column_blob(4);
  r.state = run.column_text(5);
  r.join_mode = run.column_text(6);
  r.observer = opt_int(run, 7);
  r.enrolled_ms = run.column_int(8);
  r.joined_ms = opt_int(run, 9);
  r.last_seen_ms = opt_int(run, 10);
  if (!run.column_null(11)) r.cert_serial = run.column_text(11);
  r.cert_not_after_ms = opt_int(run, 12);
  return check_device_record(r, db_name + ": device " + device_username(from_sql(r.id)));
}

Monitor read_monitor(sql::Statement::Run& run, const std::string& db_name) {
  MonitorRecord r;
  r.id = run.column_int(0);
  r.username = run.column_text(1);
  r.suite = run.column_int(2);
  if (run.column_bytes(3) > kMaxIdentityBytes) {
    throw RegistryError(db_name + ": monitor " + monitor_username(from_sql(r.id)) + ": identity too long");
  }
  r.identity = run.column_blob(3);
  r.state = run.column_text(4);
  r.enrolled_ms = run.column_int(5);
  return check_monitor_record(r, db_name + ": monitor " + monitor_username(from_sql(r.id)));
}

}  // namespace registry_rows

using registry_rows::check_length;

Registry::Registry(const std::filesystem::path& path, RegistryLimits limits)
    : limits_(limits), path_(path) {
  if (limits_.max_devices == 0 || limits_.pending_max == 0 || limits_.max_monitors == 0 ||
      limits_.outbox_max_per_device == 0 || limits_.outbox_max_total == 0 ||
      limits_.join_code_attempts == 0 || limits_.join_code_lifetime_ms == 0 ||
      limits_.data_per_device == 0 || limits_.telemetry_per_device == 0 || limits_.events_max == 0) {
    throw std::invalid_argument("C2 registry: every limit must be at least 1");
  }
  registry_create_file(path);
  sql_ = std::make_unique<Sql>(path.string(), static_cast<int>(limits_.busy_timeout.count()));
  sql::Database& d = sql_->db;
  const std::string name = "C2 registry " + path.string();
  d.exec("PRAGMA locking_mode = EXCLUSIVE");  // one C2 per registry, held until close
  const std::int64_t app = d.query_int("PRAGMA application_id");  // SQLITE_NOTADB shows here
  const std::int64_t version = d.query_int("PRAGMA user_version");
  const std::int64_t tables = d.query_int("SELECT count(*) FROM sqlite_master");
  const bool fresh = app == 0 && version == 0 && tables == 0;
  if (!fresh && app != kApplicationId) {
    throw RegistryError(name + ": not a SRUP-PQ C2 registry (another application's SQLite database)");
  }
  if (version > kSchemaVersion) {
    throw RegistryError(name + ": schema version " + std::to_string(version) +
                        " is newer than this program's (" + std::to_string(kSchemaVersion) + ")");
  }
  if (!fresh && version < 1) throw RegistryError(name + ": no schema version");
  if (d.query_text("PRAGMA journal_mode = WAL") != "wal") {
    throw RegistryError(name + ": the file system does not support SQLite's WAL mode");
  }
  // Enrolments, state changes and the outbox must survive power loss.
  d.exec("PRAGMA synchronous = FULL");
  d.exec("PRAGMA foreign_keys = ON");
  for (auto v = version; v < kSchemaVersion; ++v) {
    sql::Transaction tx(d);
    if (v == 0) {
      d.exec("PRAGMA application_id = 1397900082");  // "SRC2"
    }
    d.exec(kMigrations[v]);
    const std::string set_version = "PRAGMA user_version = " + std::to_string(v + 1);
    d.exec(set_version.c_str());
    tx.commit();
  }
  // Takes the exclusive lock now, also for a file that needed no migration.
  sql::Transaction tx(d);
  tx.commit();
}

Registry::~Registry() = default;

void Registry::event(std::uint64_t now_ms, std::string_view actor, std::string_view subject,
                     std::string_view action, std::string_view detail) {
  check_length(detail.size(), kMaxDetailLength, "event detail");
  {
    sql::Statement::Run run(sql_->st(
        "INSERT INTO events (at_ms, actor, subject, action, detail) VALUES (?1, ?2, ?3, ?4, ?5)"));
    run.bind_u64(1, now_ms).bind_text(2, actor).bind_text(3, subject).bind_text(4, action).bind_text(5, detail);
    run.done();
  }
  // Oldest first beyond events_max (rows only grow: the row number orders them).
  sql::Statement::Run prune(sql_->st("DELETE FROM events WHERE row <= (SELECT max(row) FROM events) - ?1"));
  prune.bind(1, static_cast<std::int64_t>(limits_.events_max));
  prune.done();
}

// ---- devices ------------------------------------------------------------------------------------

std::optional<Device> Registry::device(std::uint64_t id) {
  static const std::string q = std::string("SELECT ") + registry_rows::kDeviceColumns + " FROM devices WHERE id = ?1";
  sql::Statement::Run run(sql_->st(q.c_str()));
  run.bind_u64(1, id);
  if (!run.step()) return std::nullopt;
  return registry_rows::read_device(run, sql_->db.name());
}

Device Registry::require_device(std::uint64_t id) {
  auto d = device(id);
  if (!d) throw std::out_of_range("no device " + device_username(id) + " in the registry");
  return std::move(*d);
}

std::optional<Device> Registry::device_by_username(std::string_view username) {
  if (username.size() != 20 || !username.starts_with("dev-")) return std::nullopt;
  static const std::string q =
      std::string("SELECT ") + registry_rows::kDeviceColumns + " FROM devices WHERE username = ?1";
  sql::Statement::Run run(sql_->st(q.c_str()));
  run.bind_text(1, username);
  if (!run.step()) return std::nullopt;
  return registry_rows::read_device(run, sql_->db.name());
}

std::vector<Device> Registry::list_devices(const DeviceFilter& f) {
  if (f.limit == 0 || f.limit > kMaxListLimit) {
    throw std::invalid_argument("list limit must be 1.." + std::to_string(kMaxListLimit));
  }
  if (f.type) check_length(f.type->size(), kMaxTypeLength, "device type");
  // Unsigned order over signed storage: IDs below 2^63 are the non-negative integers. Paging goes
  // through both halves: (after, 2^63) as non-negative, then the negative ones.
  static const std::string q = std::string("SELECT ") + registry_rows::kDeviceColumns +
                               " FROM devices WHERE (?1 IS NULL OR state = ?1) AND (?2 IS NULL OR type = ?2)"
                               " AND ((?3 >= 0 AND (id > ?3 OR id < 0)) OR (?3 < 0 AND id < 0 AND id > ?3))"
                               " ORDER BY (id < 0), id LIMIT ?4";
  sql::Statement::Run run(sql_->st(q.c_str()));
  if (f.state) run.bind_text(1, to_string(*f.state)); else run.bind_null(1);
  if (f.type) run.bind_text(2, *f.type); else run.bind_null(2);
  run.bind_u64(3, f.after_id).bind(4, static_cast<std::int64_t>(f.limit));
  std::vector<Device> out;
  while (run.step()) out.push_back(registry_rows::read_device(run, sql_->db.name()));
  return out;
}

std::size_t Registry::count_devices(std::optional<DeviceState> state) {
  sql::Statement::Run run(sql_->st("SELECT count(*) FROM devices WHERE ?1 IS NULL OR state = ?1"));
  if (state) run.bind_text(1, to_string(*state)); else run.bind_null(1);
  run.step();
  return static_cast<std::size_t>(run.column_int(0));
}

Device Registry::enrol_device(const NewDevice& nd, std::uint64_t now_ms, std::string_view actor) {
  const std::string who = registry_actor(actor);
  if (!is_device_type(nd.type)) {
    throw std::invalid_argument("device type: 1.." + std::to_string(kMaxTypeLength) +
                                " printable characters without spaces");
  }
  const srup::PublicIdentity pub = decode_identity(crypto::ByteView(
      reinterpret_cast<const std::uint8_t*>(nd.identity_pem.data()), nd.identity_pem.size()));
  const std::uint64_t id = identity_id_or_throw(pub);
  if ((nd.join_mode == JoinMode::observed) != nd.observer.has_value()) {
    throw std::invalid_argument("an observer is given exactly for join mode observed");
  }
  sql::Transaction tx(sql_->db);
  if (device(id)) throw std::invalid_argument(device_username(id) + " is already enrolled");
  if (nd.observer) {
    const auto obs = device(*nd.observer);
    if (!obs || obs->state != DeviceState::joined) {
      throw std::invalid_argument("observer " + device_username(*nd.observer) + " is not a joined device");
    }
  }
  {
    sql::Statement::Run run(sql_->st("SELECT count(*) FROM devices WHERE state != 'deregistered'"));
    run.step();
    if (static_cast<std::size_t>(run.column_int(0)) >= limits_.max_devices) {
      throw RegistryFull("the registry holds max_devices = " + std::to_string(limits_.max_devices) + " devices");
    }
  }
  if (count_devices(DeviceState::pending) >= limits_.pending_max) {
    throw RegistryFull("pending_max = " + std::to_string(limits_.pending_max) + " devices are pending");
  }
  const std::string username = device_username(id);
  {
    sql::Statement::Run run(sql_->st(
        "INSERT INTO devices (id, username, type, suite, identity, state, join_mode, observer, enrolled_ms) "
        "VALUES (?1, ?2, ?3, ?4, ?5, 'pending', ?6, ?7, ?8)"));
    run.bind_u64(1, id).bind_text(2, username).bind_text(3, nd.type)
        .bind(4, static_cast<std::int64_t>(pub.keys.suite))
        .bind(5, crypto::ByteView(reinterpret_cast<const std::uint8_t*>(nd.identity_pem.data()),
                                  nd.identity_pem.size()))
        .bind_text(6, to_string(nd.join_mode));
    if (nd.observer) run.bind_u64(7, *nd.observer); else run.bind_null(7);
    run.bind_u64(8, now_ms);
    run.done();
  }
  event(now_ms, who, username, "enrol", std::string("type ") + nd.type + ", join " + to_string(nd.join_mode));
  tx.commit();
  return require_device(id);
}

Device Registry::set_state(std::uint64_t id, DeviceState to, std::uint64_t now_ms, std::string_view actor) {
  const std::string who = registry_actor(actor);
  sql::Transaction tx(sql_->db);
  const Device d = require_device(id);
  if (!transition_allowed(d.state, to)) {
    throw TransitionError(d.username + ": " + to_string(d.state) + " -> " + to_string(to) +
                          " is not allowed (docs/srup-c2.md, \"States\")");
  }
  {
    sql::Statement::Run run(sql_->st(
        "UPDATE devices SET state = ?2, joined_ms = CASE WHEN ?2 = 'joined' THEN ?3 ELSE joined_ms END "
        "WHERE id = ?1"));
    run.bind_u64(1, id).bind_text(2, to_string(to)).bind_u64(3, now_ms);
    run.done();
  }
  if (to != DeviceState::pending) {
    sql::Statement::Run run(sql_->st("DELETE FROM join_codes WHERE device = ?1"));
    run.bind_u64(1, id);
    run.done();
  }
  if (to == DeviceState::deregistered) {
    sql::Statement::Run run(sql_->st("DELETE FROM monitor_devices WHERE device = ?1"));
    run.bind_u64(1, id);
    run.done();
  }
  event(now_ms, who, d.username, std::string("state ") + to_string(to), std::string("from ") + to_string(d.state));
  tx.commit();
  return require_device(id);
}

void Registry::set_certificate(std::uint64_t id, std::string_view serial_hex, std::int64_t not_after_ms,
                               std::uint64_t now_ms, std::string_view actor) {
  const std::string who = registry_actor(actor);
  if (serial_hex.empty() || serial_hex.size() > kMaxSerialLength ||
      serial_hex.find_first_not_of("0123456789abcdef") != std::string_view::npos) {
    throw std::invalid_argument("certificate serial: 1.." + std::to_string(kMaxSerialLength) +
                                " lower-case hex digits");
  }
  sql::Transaction tx(sql_->db);
  const Device d = require_device(id);
  {
    sql::Statement::Run run(sql_->st("UPDATE devices SET cert_serial = ?2, cert_not_after_ms = ?3 WHERE id = ?1"));
    run.bind_u64(1, id).bind_text(2, serial_hex).bind(3, not_after_ms);
    run.done();
  }
  event(now_ms, who, d.username, "certificate", std::string("serial ") + std::string(serial_hex));
  tx.commit();
}

void Registry::touch(std::uint64_t id, std::uint64_t now_ms) {
  sql::Statement::Run run(sql_->st("UPDATE devices SET last_seen_ms = ?2 WHERE id = ?1"));
  run.bind_u64(1, id).bind_u64(2, now_ms);
  run.done();
}

// ---- join codes ---------------------------------------------------------------------------------

void Registry::set_join_code(std::uint64_t id, crypto::ByteView code, std::uint64_t now_ms, std::string_view actor) {
  const std::string who = registry_actor(actor);
  if (code.size() != kJoinCodeBytes) {
    throw std::invalid_argument("a join code has " + std::to_string(kJoinCodeBytes) + " bytes");
  }
  sql::Transaction tx(sql_->db);
  const Device d = require_device(id);
  if (d.state != DeviceState::pending) {
    throw TransitionError(d.username + " is " + to_string(d.state) + ": join codes are for pending devices");
  }
  {
    sql::Statement::Run run(sql_->st(
        "INSERT INTO join_codes (device, code, created_ms, failed) VALUES (?1, ?2, ?3, 0) "
        "ON CONFLICT (device) DO UPDATE SET code = excluded.code, created_ms = excluded.created_ms, failed = 0"));
    run.bind_u64(1, id).bind(2, code).bind_u64(3, now_ms);
    run.done();
  }
  event(now_ms, who, d.username, "join code", "");  // never the code itself
  tx.commit();
}

JoinCodeCheck Registry::check_join_code(std::uint64_t id, crypto::ByteView code, std::uint64_t now_ms) {
  sql::Transaction tx(sql_->db);
  crypto::Bytes stored;
  std::uint64_t created = 0;
  std::int64_t failed = 0;
  {
    sql::Statement::Run run(sql_->st("SELECT code, created_ms, failed FROM join_codes WHERE device = ?1"));
    run.bind_u64(1, id);
    if (!run.step()) return JoinCodeCheck::none;
    if (run.column_bytes(0) != kJoinCodeBytes) {
      throw RegistryError(sql_->db.name() + ": join code of " + device_username(id) + " is not 16 bytes");
    }
    stored = run.column_blob(0);
    created = run.column_u64(1);
    failed = run.column_int(2);
  }
  if (failed >= static_cast<std::int64_t>(limits_.join_code_attempts)) return JoinCodeCheck::exhausted;
  if (now_ms >= created && now_ms - created > limits_.join_code_lifetime_ms) return JoinCodeCheck::expired;
  const bool match = code.size() == kJoinCodeBytes && CRYPTO_memcmp(code.data(), stored.data(), kJoinCodeBytes) == 0;
  OPENSSL_cleanse(stored.data(), stored.size());
  if (match) {
    sql::Statement::Run run(sql_->st("DELETE FROM join_codes WHERE device = ?1"));
    run.bind_u64(1, id);
    run.done();
  } else {
    sql::Statement::Run run(sql_->st("UPDATE join_codes SET failed = failed + 1 WHERE device = ?1"));
    run.bind_u64(1, id);
    run.done();
  }
  event(now_ms, "join", device_username(id), match ? "join code accepted" : "join code wrong",
        match ? "" : "failure " + std::to_string(failed + 1));
  tx.commit();
  return match ? JoinCodeCheck::accepted : JoinCodeCheck::wrong;
}

// ---- monitors -----------------------------------------------------------------------------------

std::optional<Monitor> Registry::monitor(std::uint64_t id) {
  sql::Statement::Run run(sql_->st(
      "SELECT id, username, suite, identity, state, enrolled_ms FROM monitors WHERE id = ?1"));
  run.bind_u64(1, id);
  if (!run.step()) return std::nullopt;
  return registry_rows::read_monitor(run, sql_->db.name());
}

std::vector<Monitor> Registry::list_monitors(std::uint64_t after_id, std::size_t limit) {
  if (limit == 0 || limit > kMaxListLimit) {
    throw std::invalid_argument("list limit must be 1.." + std::to_string(kMaxListLimit));
  }
  sql::Statement::Run run(sql_->st(
      "SELECT id, username, suite, identity, state, enrolled_ms FROM monitors "
      "WHERE (?1 >= 0 AND (id > ?1 OR id < 0)) OR (?1 < 0 AND id < 0 AND id > ?1) "
      "ORDER BY (id < 0), id LIMIT ?2"));
  run.bind_u64(1, after_id).bind(2, static_cast<std::int64_t>(limit));
  std::vector<Monitor> out;
  while (run.step()) out.push_back(registry_rows::read_monitor(run, sql_->db.name()));
  return out;
}

Monitor Registry::enrol_monitor(std::string_view identity_pem, std::uint64_t now_ms, std::string_view actor) {
  const std::string who = registry_actor(actor);
  const crypto::ByteView bytes(reinterpret_cast<const std::uint8_t*>(identity_pem.data()), identity_pem.size());
  const srup::PublicIdentity pub = decode_identity(bytes);
  const std::uint64_t id = identity_id_or_throw(pub);
  sql::Transaction tx(sql_->db);
  if (monitor(id)) throw std::invalid_argument(monitor_username(id) + " is already enrolled");
  {
    sql::Statement::Run run(sql_->st("SELECT count(*) FROM monitors WHERE state = 'active'"));
    run.step();
    if (static_cast<std::size_t>(run.column_int(0)) >= limits_.max_monitors) {
      throw RegistryFull("the registry holds max_monitors = " + std::to_string(limits_.max_monitors) + " monitors");
    }
  }
  {
    sql::Statement::Run run(sql_->st(
        "INSERT INTO monitors (id, username, suite, identity, state, enrolled_ms) "
        "VALUES (?1, ?2, ?3, ?4, 'active', ?5)"));
    run.bind_u64(1, id).bind_text(2, monitor_username(id)).bind(3, static_cast<std::int64_t>(pub.keys.suite))
        .bind(4, bytes).bind_u64(5, now_ms);
    run.done();
  }
  event(now_ms, who, monitor_username(id), "enrol", "");
  tx.commit();
  return *monitor(id);
}

void Registry::revoke_monitor(std::uint64_t id, std::uint64_t now_ms, std::string_view actor) {
  const std::string who = registry_actor(actor);
  sql::Transaction tx(sql_->db);
  const auto m = monitor(id);
  if (!m) throw std::out_of_range("no monitor " + monitor_username(id) + " in the registry");
  if (m->state != MonitorState::active) throw TransitionError(m->username + " is already revoked");
  {
    sql::Statement::Run run(sql_->st("UPDATE monitors SET state = 'revoked' WHERE id = ?1"));
    run.bind_u64(1, id);
    run.done();
  }
  {
    sql::Statement::Run run(sql_->st("DELETE FROM monitor_devices WHERE monitor = ?1"));
    run.bind_u64(1, id);
    run.done();
  }
  event(now_ms, who, m->username, "state revoked", "");
  tx.commit();
}

void Registry::allow_read(std::uint64_t mon, std::uint64_t dev, std::uint64_t now_ms, std::string_view actor) {
  const std::string who = registry_actor(actor);
  sql::Transaction tx(sql_->db);
  const auto m = monitor(mon);
  if (!m) throw std::out_of_range("no monitor " + monitor_username(mon) + " in the registry");
  if (m->state != MonitorState::active) throw TransitionError(m->username + " is revoked");
  const Device d = require_device(dev);
  if (d.state == DeviceState::deregistered) throw TransitionError(d.username + " is deregistered");
  int added = 0;
  {
    sql::Statement::Run run(sql_->st(
        "INSERT INTO monitor_devices (monitor, device) VALUES (?1, ?2) ON CONFLICT DO NOTHING"));
    run.bind_u64(1, mon).bind_u64(2, dev);
    added = run.done();
  }
  if (added > 0) event(now_ms, who, m->username, "read allow", d.username);
  tx.commit();
}

void Registry::revoke_read(std::uint64_t mon, std::uint64_t dev, std::uint64_t now_ms, std::string_view actor) {
  const std::string who = registry_actor(actor);
  sql::Transaction tx(sql_->db);
  int removed = 0;
  {
    sql::Statement::Run run(sql_->st("DELETE FROM monitor_devices WHERE monitor = ?1 AND device = ?2"));
    run.bind_u64(1, mon).bind_u64(2, dev);
    removed = run.done();
  }
  if (removed > 0) event(now_ms, who, monitor_username(mon), "read revoke", device_username(dev));
  tx.commit();
}

std::vector<std::uint64_t> Registry::readable_devices(std::uint64_t mon) {
  sql::Statement::Run run(sql_->st("SELECT device FROM monitor_devices WHERE monitor = ?1 ORDER BY device"));
  run.bind_u64(1, mon);
  std::vector<std::uint64_t> out;
  while (run.step()) out.push_back(run.column_u64(0));
  return out;
}

std::vector<std::uint64_t> Registry::readers_of(std::uint64_t dev) {
  sql::Statement::Run run(sql_->st(
      "SELECT md.monitor FROM monitor_devices md JOIN monitors m ON m.id = md.monitor "
      "WHERE md.device = ?1 AND m.state = 'active' ORDER BY md.monitor"));
  run.bind_u64(1, dev);
  std::vector<std::uint64_t> out;
  while (run.step()) out.push_back(run.column_u64(0));
  return out;
}

}  // namespace pqot::srup_c2
