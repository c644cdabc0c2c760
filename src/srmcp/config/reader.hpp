// srmcpd configuration, shared by its parts: reading TOML values with every error reported as
// "FILE:LINE: message" (ConfigError), so an operator can fix the file without guessing.
#pragma once

#include <toml++/toml.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pqot::srmcp::config {

/// "a table", "an integer", ...: what a TOML value is, for messages.
std::string toml_type(const toml::node& n);
/// 's' (for names in messages).
std::string in_quotes(std::string_view s);

/// Typed getters over one file: each checks the value and throws ConfigError at its line.
class Reader {
 public:
  Reader(std::string name, std::string base_dir) : name_(std::move(name)), base_dir_(std::move(base_dir)) {}

  [[noreturn]] void fail_at(std::uint32_t line, const std::string& msg) const;
  [[noreturn]] void fail(const toml::source_region& at, const std::string& msg) const;

  const toml::table& table_of(const toml::node& n, std::string_view what) const;
  std::string string_of(const toml::node& n, std::string_view what) const;
  std::int64_t int_of(const toml::node& n, std::string_view what, std::int64_t lo, std::int64_t hi) const;
  /// An integer or a finite float.
  double number_of(const toml::node& n, std::string_view what) const;
  /// An array of non-empty strings.
  std::vector<std::string> strings_of(const toml::node& n, std::string_view what) const;
  /// The [[what]] tables of the file ("node = []" is none); anything else is an error at its line.
  const toml::array& tables_of(const toml::node& n, const std::string& what) const;
  /// A non-empty path; relative paths are resolved against the file's directory.
  std::string path_of(const toml::node& v, const std::string& what) const;

 private:
  std::string name_;
  std::string base_dir_;
};

}  // namespace pqot::srmcp::config
