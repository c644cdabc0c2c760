// Typed TOML getters with "FILE:LINE: message" errors (include/pqot/config/toml_reader.hpp).
#include "pqot/config/toml_reader.hpp"

#include <algorithm>
#include <filesystem>

namespace pqot::config {

namespace {

std::string toml_type_name(const toml::node& n) {
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

std::string in_quotes(std::string_view s) {
  // Built by appending: "'" + s + "'" trips a GCC 12 -Wrestrict false positive.
  std::string out;
  out.reserve(s.size() + 2);
  out.push_back('\'');
  out.append(s);
  out.push_back('\'');
  return out;
}

toml::table TomlReader::parse(std::string_view text) const {
  try {
    return toml::parse(text, name_);
  } catch (const toml::parse_error& e) {
    fail_at(e.source().begin.line, std::string(e.description()));
  }
}

void TomlReader::fail_at(std::uint32_t line, const std::string& msg) const {
  throw ConfigError(name_ + ":" + std::to_string(line) + ": " + msg);
}

void TomlReader::fail(const toml::node& at, const std::string& msg) const { fail_at(at.source().begin.line, msg); }

void TomlReader::fail_file(const std::string& msg) const { throw ConfigError(name_ + ": " + msg); }

const toml::table& TomlReader::table_of(const toml::node& n, std::string_view what) const {
  if (const auto* t = n.as_table()) return *t;
  fail(n, std::string(what) + " must be a table, not " + toml_type_name(n));
}

std::string TomlReader::string_of(const toml::node& n, std::string_view what) const {
  if (const auto* s = n.as_string()) return s->get();
  fail(n, std::string(what) + " must be a string, not " + toml_type_name(n));
}

std::int64_t TomlReader::int_of(const toml::node& n, std::string_view what, std::int64_t lo, std::int64_t hi) const {
  const auto* i = n.as_integer();
  if (!i) fail(n, std::string(what) + " must be an integer, not " + toml_type_name(n));
  const std::int64_t v = i->get();
  if (v < lo || v > hi) {
    fail(n, std::string(what) + " = " + std::to_string(v) + " is out of range " + std::to_string(lo) + ".." +
                std::to_string(hi));
  }
  return v;
}

bool TomlReader::bool_of(const toml::node& n, std::string_view what) const {
  if (const auto* b = n.as_boolean()) return b->get();
  fail(n, std::string(what) + " must be true or false, not " + toml_type_name(n));
}

std::vector<std::string> TomlReader::strings_of(const toml::node& n, std::string_view what, std::size_t max) const {
  const auto* a = n.as_array();
  if (!a) fail(n, std::string(what) + " must be an array of strings, not " + toml_type_name(n));
  if (a->size() > max) fail(n, std::string(what) + " has more than " + std::to_string(max) + " entries");
  std::vector<std::string> out;
  out.reserve(a->size());
  for (const toml::node& e : *a) out.push_back(string_of(e, std::string(what) + " entry"));
  return out;
}

std::vector<const toml::table*> TomlReader::tables_of(const toml::node& n, std::string_view what, std::size_t max) const {
  const auto* a = n.as_array();
  if (!a) fail(n, std::string(what) + " must be written [[" + std::string(what) + "]], not " + toml_type_name(n));
  if (a->size() > max) fail(n, "more than " + std::to_string(max) + " [[" + std::string(what) + "]] tables");
  std::vector<const toml::table*> out;
  out.reserve(a->size());
  for (const toml::node& e : *a) out.push_back(&table_of(e, "[[" + std::string(what) + "]]"));
  return out;
}

std::string TomlReader::path_of(const toml::node& n, std::string_view what) const {
  const std::string s = string_of(n, what);
  if (s.empty()) fail(n, std::string(what) + ": empty path");
  if (s.find('\0') != std::string::npos) fail(n, std::string(what) + ": a path cannot hold NUL");
  if (s.size() > 4096) fail(n, std::string(what) + ": path longer than 4096 bytes");
  const std::filesystem::path p(s);
  if (p.is_relative() && !base_dir_.empty()) return (std::filesystem::path(base_dir_) / p).string();
  return s;
}

void TomlReader::only_keys(const toml::table& t, std::string_view section,
                           std::initializer_list<std::string_view> known) const {
  for (auto&& [k, v] : t) {
    if (std::find(known.begin(), known.end(), k.str()) != known.end()) continue;
    std::string list;
    for (std::string_view name : known) {
      if (!list.empty()) list += ", ";
      list += name;
    }
    fail_at(k.source().begin.line,
            "unknown key " + in_quotes(k.str()) + " in [" + std::string(section) + "] (expected " + list + ")");
  }
}

}  // namespace pqot::config
