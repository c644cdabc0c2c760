// srup-device configuration: typed TOML getters whose errors are "FILE:LINE: message"
// (ConfigError). The same pattern as srmcpd's (src/srmcp/config/reader.hpp), over this program's
// error type; internal to the configuration.
#pragma once

#include <toml++/toml.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace pqot::srup_device::config {

std::string in_quotes(std::string_view s);

class Reader {
 public:
  Reader(std::string name, std::string base_dir) : name_(std::move(name)), base_dir_(std::move(base_dir)) {}

  [[noreturn]] void fail_at(std::uint32_t line, const std::string& msg) const;
  [[noreturn]] void fail(const toml::node& at, const std::string& msg) const;

  const toml::table& table_of(const toml::node& n, std::string_view what) const;
  std::string string_of(const toml::node& n, std::string_view what) const;
  bool bool_of(const toml::node& n, std::string_view what) const;
  std::int64_t int_of(const toml::node& n, std::string_view what, std::int64_t lo, std::int64_t hi) const;
  std::vector<std::string> strings_of(const toml::node& n, std::string_view what) const;
  /// The [[what]] tables ("what = []" is none).
  const toml::array& tables_of(const toml::node& n, const std::string& what) const;
  /// A non-empty path; relative paths resolve against the file's directory.
  std::string path_of(const toml::node& n, const std::string& what) const;
  /// Refuses every key of `t` not in `known`, naming the section and what is valid.
  void only_keys(const toml::table& t, std::string_view section, std::initializer_list<std::string_view> known) const;

 private:
  std::string name_;
  std::string base_dir_;
};

}  // namespace pqot::srup_device::config
