// Internal to the registry's files: the connection with its statements, the schema and the row
// readers they share.
#pragma once

#include <map>
#include <memory>

#include "registry.hpp"
#include "sqlite.hpp"

namespace pqot::srup_c2 {

struct Registry::Sql {
  Sql(const std::string& path, int busy_ms) : db(path, busy_ms) {}
  sql::Database db;
  /// The prepared statement for `text` (a string literal: keyed by its address), made on first use
  /// and kept for the registry's lifetime.
  sql::Statement& st(const char* text) {
    auto& slot = statements[text];
    if (!slot) slot = std::make_unique<sql::Statement>(db, text);
    return *slot;
  }

 private:
  std::map<const char*, std::unique_ptr<sql::Statement>> statements;
};

namespace registry_rows {

/// The column list read_device() expects.
inline constexpr const char* kDeviceColumns =
    "id, username, type, suite, identity, state, join_mode, observer, enrolled_ms, joined_ms, "
    "last_seen_ms, cert_serial, cert_not_after_ms";
inline constexpr const char* kOutboxColumns =
    "row, device, token, type, envelope, created_ms, expires_ms, attempts, next_ms, state, status, "
    "detail, finished_ms, answer_seq, follow_up, follow_up_state, follow_up_arg";

Device read_device(sql::Statement::Run& run, const std::string& db_name);
Monitor read_monitor(sql::Statement::Run& run, const std::string& db_name);
OutboxEntry read_outbox(sql::Statement::Run& run, const std::string& db_name);

/// Throws std::invalid_argument "WHAT: N bytes (at most MAX)" when `size` > `max`.
void check_length(std::size_t size, std::size_t max, const char* what);

}  // namespace registry_rows

}  // namespace pqot::srup_c2
