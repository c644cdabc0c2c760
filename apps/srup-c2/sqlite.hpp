// The C2 registry's SQLite layer (docs/srup-c2.md, "Registry"): the connection, prepared
// statements reset after every use, transactions that roll back unless committed. Errors are
// RegistryError naming the file. The same shape as pqot::srup's state store layer
// (src/srup/state_db.hpp), which is internal to pqot_srup and throws its own error type.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "pqot/crypto/bytes.hpp"
#include "registry_error.hpp"

namespace pqot::srup_c2::sql {

/// SQLite stores signed 64-bit integers: a u64 (an ID) is stored as the same 64 bits.
inline std::int64_t to_sql(std::uint64_t v) noexcept { return static_cast<std::int64_t>(v); }
inline std::uint64_t from_sql(std::int64_t v) noexcept { return static_cast<std::uint64_t>(v); }

class Database {
 public:
  /// Opens an existing file (the caller creates it with its mode) with a busy timeout.
  Database(const std::string& path, int busy_timeout_ms);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  sqlite3* handle() const noexcept { return db_; }
  const std::string& name() const noexcept { return name_; }
  void exec(const char* sql);
  std::int64_t query_int(const char* sql);
  std::string query_text(const char* sql);
  [[noreturn]] void fail(const std::string& what, int rc) const;

 private:
  sqlite3* db_ = nullptr;
  std::string name_;
};

class Statement {
 public:
  Statement(Database& db, const char* sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  /// One execution: binds, steps, and resets when it leaves the scope (also on an exception).
  class Run {
   public:
    explicit Run(Statement& s) noexcept : s_(s) {}
    ~Run();
    Run(const Run&) = delete;
    Run& operator=(const Run&) = delete;

    Run& bind(int index, std::int64_t v);
    Run& bind_u64(int index, std::uint64_t v) { return bind(index, to_sql(v)); }
    Run& bind(int index, crypto::ByteView blob);
    Run& bind_text(int index, std::string_view text);
    Run& bind_null(int index);
    bool step();
    /// Steps to the end; the number of rows changed.
    int done();
    std::int64_t column_int(int col) const;
    std::uint64_t column_u64(int col) const { return from_sql(column_int(col)); }
    bool column_null(int col) const;
    std::string column_text(int col) const;
    crypto::Bytes column_blob(int col) const;
    /// The column's length in bytes, to bound before copying.
    std::size_t column_bytes(int col) const;

   private:
    Statement& s_;
  };

 private:
  Database& db_;
  sqlite3_stmt* stmt_ = nullptr;
};

/// BEGIN IMMEDIATE ... COMMIT; ROLLBACK when destroyed uncommitted.
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

}  // namespace pqot::srup_c2::sql
