// Typed getters over a parsed TOML file whose every error is "FILE:LINE: message" (ConfigError),
// for the daemons' configuration files. One reader for the programs that have none of their own
// yet (tripd); srmcpd, srup-c2 and srup-device keep older copies of the same contract (docs/
// architecture.md, "Left open").
#pragma once

#include <toml++/toml.h>

#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace pqot::config {

/// A configuration the program refuses: "FILE:LINE: message", or "FILE: message".
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// 's', for names in messages.
std::string in_quotes(std::string_view s);

class TomlReader {
 public:
  /// `name`: the file's name in messages; `base_dir`: what relative paths resolve against.
  TomlReader(std::string name, std::string base_dir) : name_(std::move(name)), base_dir_(std::move(base_dir)) {}

  /// Parses `text`, refusing a syntax error at its line.
  toml::table parse(std::string_view text) const;

  [[noreturn]] void fail_at(std::uint32_t line, const std::string& msg) const;
  [[noreturn]] void fail(const toml::node& at, const std::string& msg) const;
  [[noreturn]] void fail_file(const std::string& msg) const;

  const toml::table& table_of(const toml::node& n, std::string_view what) const;
  std::string string_of(const toml::node& n, std::string_view what) const;
  std::int64_t int_of(const toml::node& n, std::string_view what, std::int64_t lo, std::int64_t hi) const;
  bool bool_of(const toml::node& n, std::string_view what) const;
  /// An array of strings (at most `max` of them).
  std::vector<std::string> strings_of(const toml::node& n, std::string_view what, std::size_t max = 1024) const;
  /// The tables of an array of tables ([[what]]; "what = []" is none), at most `max`.
  std::vector<const toml::table*> tables_of(const toml::node& n, std::string_view what, std::size_t max = 1024) const;
  /// A non-empty path without NUL, at most 4,096 bytes; relative paths resolve against base_dir.
  std::string path_of(const toml::node& n, std::string_view what) const;
  /// Refuses any key of `t` not in `known`, at its line, naming the valid keys.
  void only_keys(const toml::table& t, std::string_view section, std::initializer_list<std::string_view> known) const;

  const std::string& name() const noexcept { return name_; }

 private:
  std::string name_;
  std::string base_dir_;
};

}  // namespace pqot::config
