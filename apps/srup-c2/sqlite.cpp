// The C2 registry's SQLite layer (sqlite.hpp).
#include "sqlite.hpp"

#include <cstring>

namespace pqot::srup_c2::sql {

Database::Database(const std::string& path, int busy_timeout_ms) : name_(path) {
  // NOMUTEX: the registry is used from one thread at a time (registry.hpp).
  const int rc = sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
                                 nullptr);
  if (rc != SQLITE_OK) {
    const std::string msg = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close_v2(db_);
    db_ = nullptr;
    throw RegistryError("C2 registry " + name_ + ": cannot open: " + msg);
  }
  sqlite3_extended_result_codes(db_, 1);
  sqlite3_busy_timeout(db_, busy_timeout_ms);
}

Database::~Database() { sqlite3_close_v2(db_); }

void Database::fail(const std::string& what, int rc) const {
  const int primary = rc & 0xff;
  std::string cause = sqlite3_errmsg(db_);
  if (primary == SQLITE_NOTADB) cause = "not a SQLite database";
  if (primary == SQLITE_BUSY) cause = "in use by another process (database is locked)";
  throw RegistryError("C2 registry " + name_ + ": " + what + ": " + cause);
}

void Database::exec(const char* sql) {
  const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) fail(sql, rc);
}

std::int64_t Database::query_int(const char* sql) {
  Statement s(*this, sql);
  Statement::Run run(s);
  if (!run.step()) throw RegistryError("C2 registry " + name_ + ": " + sql + " returned nothing");
  return run.column_int(0);
}

std::string Database::query_text(const char* sql) {
  Statement s(*this, sql);
  Statement::Run run(s);
  if (!run.step()) throw RegistryError("C2 registry " + name_ + ": " + sql + " returned nothing");
  return run.column_text(0);
}

Statement::Statement(Database& db, const char* sql) : db_(db) {
  const int rc = sqlite3_prepare_v3(db.handle(), sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr);
  if (rc != SQLITE_OK) db.fail(std::string("preparing ") + sql, rc);
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement::Run::~Run() {
  sqlite3_reset(s_.stmt_);
  sqlite3_clear_bindings(s_.stmt_);
}

Statement::Run& Statement::Run::bind(int index, std::int64_t v) {
  const int rc = sqlite3_bind_int64(s_.stmt_, index, v);
  if (rc != SQLITE_OK) s_.db_.fail("bind", rc);
  return *this;
}

Statement::Run& Statement::Run::bind(int index, crypto::ByteView blob) {
  // A zero-length blob must still be a blob, not NULL: pass a non-null pointer.
  static const std::uint8_t kEmpty = 0;
  const void* data = blob.empty() ? &kEmpty : blob.data();
  const int rc = sqlite3_bind_blob64(s_.stmt_, index, data, blob.size(), SQLITE_TRANSIENT);
  if (rc != SQLITE_OK) s_.db_.fail("bind", rc);
  return *this;
}

Statement::Run& Statement::Run::bind_text(int index, std::string_view text) {
  static const char kEmpty = 0;
  const char* data = text.empty() ? &kEmpty : text.data();
  const int rc = sqlite3_bind_text64(s_.stmt_, index, data, text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  if (rc != SQLITE_OK) s_.db_.fail("bind", rc);
  return *this;
}

Statement::Run& Statement::Run::bind_null(int index) {
  const int rc = sqlite3_bind_null(s_.stmt_, index);
  if (rc != SQLITE_OK) s_.db_.fail("bind", rc);
  return *this;
}

bool Statement::Run::step() {
  const int rc = sqlite3_step(s_.stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  s_.db_.fail(sqlite3_sql(s_.stmt_), rc);
}

int Statement::Run::done() {
  while (step()) {
  }
  return sqlite3_changes(s_.db_.handle());
}

std::int64_t Statement::Run::column_int(int col) const { return sqlite3_column_int64(s_.stmt_, col); }

bool Statement::Run::column_null(int col) const {
  return sqlite3_column_type(s_.stmt_, col) == SQLITE_NULL;
}

std::size_t Statement::Run::column_bytes(int col) const {
  return static_cast<std::size_t>(sqlite3_column_bytes(s_.stmt_, col));
}

std::string Statement::Run::column_text(int col) const {
  const unsigned char* p = sqlite3_column_text(s_.stmt_, col);
  const int n = sqlite3_column_bytes(s_.stmt_, col);
  return p == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(n));
}

crypto::Bytes Statement::Run::column_blob(int col) const {
  const void* p = sqlite3_column_blob(s_.stmt_, col);
  const int n = sqlite3_column_bytes(s_.stmt_, col);
  crypto::Bytes out(static_cast<std::size_t>(n));
  if (n > 0) std::memcpy(out.data(), p, out.size());
  return out;
}

Transaction::Transaction(Database& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }

Transaction::~Transaction() {
  if (open_) sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
  db_.exec("COMMIT");
  open_ = false;
}

}  // namespace pqot::srup_c2::sql
