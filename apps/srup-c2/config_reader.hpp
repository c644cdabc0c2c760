// srup-c2's configuration, reading TOML values with every error as "FILE:LINE: message"
// (ConfigError). The same contract as srmcpd's reader (src/srmcp/config/reader.hpp), which is
// internal to pqot_srmcp_config and throws SRMCP's error type; SRUP-PQ and SRMCP never include one
// another, so the C2 keeps this small one.
#pragma once

#include <toml++/toml.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

namespace pqot::srup_c2::config {

/// 's' (for names in messages).
std::string c2_quoted(std::string_view s);

class Reader {
 public:
  Reader(std::string name, std::string base_dir) : name_(std::move(name)), base_dir_(std::move(base_dir)) {}

  [[noreturn]] void fail_at(std::uint32_t line, const std::string& msg) const;
  [[noreturn]] void fail(const toml::source_region& at, const std::string& msg) const;

  const toml::table& table_of(const toml::node& n, std::string_view what) const;
  std::string string_of(const toml::node& n, std::string_view what) const;
  std::int64_t int_of(const toml::node& n, std::string_view what, std::int64_t lo, std::int64_t hi) const;
  bool bool_of(const toml::node& n, std::string_view what) const;
  /// A non-empty path without NUL; relative paths are resolved against the file's directory.
  std::string path_of(const toml::node& n, std::string_view what) const;
  /// Refuses any key of [section] not in `known`, at its line, naming the valid keys.
  void only_keys(const toml::table& t, std::string_view section, std::initializer_list<std::string_view> known) const;
  /// The resolved form of a path given relative to the file's directory.
  std::string resolve(const std::string& path) const;

 private:
  std::string name_;
  std::string base_dir_;
};

}  // namespace pqot::srup_c2::config
