// srup-c2's configuration: typed TOML getters with "FILE:LINE: message" errors (config_reader.hpp).
#include "config_reader.hpp"

#include <algorithm>
#include <filesystem>

#include "config.hpp"

namespace pqot::srup_c2::config {

namespace {

std::string c2_toml_type(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    case toml::node_type::none: break;
  }
  return "nothing";
}

}  // namespace

std::string c2_quoted(std::string_view s) {
  // Built by appending: "'" + s + "'" trips a GCC 12 -Wrestrict false positive.
  std::string out;
  out.reserve(s.size() + 2);
  out.push_back('\'');
  out.append(s);
  out.push_back('\'');
  return out;
}

void Reader::fail_at(std::uint32_t line, const std::string& msg) const {
  throw ConfigError(name_ + ":" + std::to_string(line) + ": " + msg);
}

void Reader::fail(const toml::source_region& at, const std::string& msg) const { fail_at(at.begin.line, msg); }

const toml::table& Reader::table_of(const toml::node& n, std::string_view what) const {
  if (const auto* t = n.as_table()) return *t;
  fail(n.source(), std::string(what) + " must be a table, not " + c2_toml_type(n));
}

std::string Reader::string_of(const toml::node& n, std::string_view what) const {
  if (const auto* s = n.as_string()) return s->get();
  fail(n.source(), std::string(what) + " must be a string, not " + c2_toml_type(n));
}

std::int64_t Reader::int_of(const toml::node& n, std::string_view what, std::int64_t lo, std::int64_t hi) const {
  const auto* i = n.as_integer();
  if (!i) fail(n.source(), std::string(what) + " must be an integer, not " + c2_toml_type(n));
  const std::int64_t v = i->get();
  if (v < lo || v > hi) {
    fail(n.source(), std::string(what) + " = " + std::to_string(v) + " is out of range " + std::to_string(lo) +
                         ".." + std::to_string(hi));
  }
  return v;
}

bool Reader::bool_of(const toml::node& n, std::string_view what) const {
  if (const auto* b = n.as_boolean()) return b->get();
  fail(n.source(), std::string(what) + " must be true or false, not " + c2_toml_type(n));
}

std::string Reader::resolve(const std::string& path) const {
  const std::filesystem::path p(path);
  if (p.is_relative() && !base_dir_.empty()) return (std::filesystem::path(base_dir_) / p).string();
  return path;
}

std::string Reader::path_of(const toml::node& n, std::string_view what) const {
  const std::string s = string_of(n, what);
  if (s.empty()) fail(n.source(), std::string(what) + ": empty path");
  if (s.find('\0') != std::string::npos) fail(n.source(), std::string(what) + ": a path cannot hold NUL");
  if (s.size() > 4096) fail(n.source(), std::string(what) + ": path longer than 4096 bytes");
  return resolve(s);
}

void Reader::only_keys(const toml::table& t, std::string_view section,
                       std::initializer_list<std::string_view> known) const {
  for (auto&& [k, v] : t) {
    if (std::find(known.begin(), known.end(), k.str()) != known.end()) continue;
    std::string list;
    for (std::string_view name : known) {
      if (!list.empty()) list += ", ";
      list += name;
    }
    fail(k.source(), "unknown key " + c2_quoted(k.str()) + " in [" + std::string(section) + "] (expected " + list + ")");
  }
}

}  // namespace pqot::srup_c2::config
