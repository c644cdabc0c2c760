// A small RAII layer over SQLite for the SRUP-PQ state store (docs/srup-pq.md, section 7):
// the connection, prepared statements that are always reset after use and finalized, and
// transactions that roll back on every path that does not commit. Errors are StateError.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>

#include "pqot/srup/state.hpp"

namespace pqot::srup::db {

/// SQLite stores signed 64-bit integers: a u64 is stored as the same 64 bits (section 7.4).
inline std::int64_t to_sql(std::uint64_t v) noexcept { return static_cast<std::int64_t>(v); }
inline std::uint64_t from_sql(std::int64_t v) noexcept { return static_cast<std::uint64_t>(v); }

class Database {
 public:
  /// Opens (never creates: the caller creates the file with its mode) with a busy timeout.
  Database(const std::string& path, int busy_timeout_ms);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  sqlite3* handle() const noexcept { return db_; }
  const std::string& name() const noexcept { return name_; }
  /// Runs SQL without results (pragmas, DDL, BEGIN/COMMIT).
  void exec(const char* sql);
  /// A pragma's integer value.
  std::int64_t pragma_int(const char* sql);
  std::string pragma_text(const char* sql);
  [[noreturn]] void fail(const std::string& what, int rc) const;

 private:
  sqlite3* db_ = nullptr;
  std::string name_;
};

/// A prepared statement, kept for the store's lifetime. Use it through Statement::Run, which
/// binds, steps and resets (also when an exception leaves the scope).
class Statement {
 public:
  Statement(Database& db, const char* sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  class Run {
   public:
    explicit Run(Statement& s) noexcept : s_(s) {}
    ~Run();
    Run(const Run&) = delete;
    Run& operator=(const Run&) = delete;

    Run& bind(int index, std::int64_t v);
    Run& bind_u64(int index, std::uint64_t v) { return bind(index, to_sql(v)); }
    Run& bind(int index, ByteView blob);
    /// True while there is a row; false when done. Throws StateError on an error.
    bool step();
    /// Steps to completion (a statement without results); the number of rows it changed.
    int done();
    std::int64_t column_int(int col) const;
    std::uint64_t column_u64(int col) const { return from_sql(column_int(col)); }
    bool column_null(int col) const;
    std::string column_text(int col) const;
    Bytes column_blob(int col) const;

   private:
    Statement& s_;
  };

 private:
  Database& db_;
  sqlite3_stmt* stmt_ = nullptr;
};

/// BEGIN IMMEDIATE ... COMMIT; ROLLBACK when destroyed uncommitted (an exception, an early return).
class Transaction {
 public:
  explicit Transaction(Database& db);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  Database& db_;
  bool open_ = true;
};

}  // namespace pqot::srup::db
