// srup-device configuration: typed TOML getters with "FILE:LINE: message" errors.
#include "config_reader.hpp"

#include <filesystem>

#include "config.hpp"

namespace pqot::srup_device::config {
namespace {

std::string device_toml_type(const toml::node& n) {
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
  std::string out;
  out.reserve(s.size() + 2);
  out.push_back('\'');
  out.append(s);
  out.push_back('\'');
  return out;
}

void Reader::fail_at(std::uint32_t line, const std::string& msg) const {
  std::string text = name_;
  text.append(":").append(std::to_string(line)).append(": ").append(msg);
  throw ConfigError(text);
}

void Reader::fail(const toml::node& at, const std::string& msg) const { fail_at(at.source().begin.line, msg); }

const toml::table& Reader::table_of(const toml::node& n, std::string_view what) const {
  if (const auto* t = n.as_table()) return *t;
  fail(n, std::string(what) + " must be a table, not " + device_toml_type(n));
}

std::string Reader::string_of(const toml::node& n, std::string_view what) const {
  if (const auto* s = n.as_string()) return s->get();
  fail(n, std::string(what) + " must be a string, not " + device_toml_type(n));
}

bool Reader::bool_of(const toml::node& n, std::string_view what) const {
  if (const auto* b = n.as_boolean()) return b->get();
  fail(n, std::string(what) + " must be true or false, not " + device_toml_type(n));
}

std::int64_t Reader::int_of(const toml::node& n, std::string_view what, std::int64_t lo, std::int64_t hi) const {
  const auto* i = n.as_integer();
  if (!i) fail(n, std::string(what) + " must be an integer, not " + device_toml_type(n));
  const std::int64_t v = i->get();
  if (v < lo || v > hi) {
    fail(n, std::string(what) + " = " + std::to_string(v) + " is out of range " + std::to_string(lo) + ".." +
                std::to_string(hi));
  }
  return v;
}

std::vector<std::string> Reader::strings_of(const toml::node& n, std::string_view what) const {
  const auto* a = n.as_array();
  if (!a) fail(n, std::string(what) + " must be an array of strings, not " + device_toml_type(n));
  std::vector<std::string> out;
  for (const auto& e : *a) out.push_back(string_of(e, std::string(what) + " entries"));
  return out;
}

const toml::array& Reader::tables_of(const toml::node& n, const std::string& what) const {
  static const toml::array none;
  const auto* arr = n.as_array();
  if (arr && arr->empty()) return none;
  if (!arr || !arr->is_array_of_tables())
    fail(n, what + " must be an array of tables: write each as [[" + what + "]]");
  return *arr;
}

std::string Reader::path_of(const toml::node& n, const std::string& what) const {
  const std::string s = string_of(n, what);
  if (s.empty()) fail(n, what + ": empty path");
  if (s.find('\0') != std::string::npos) fail(n, what + ": a path cannot contain NUL");
  const std::filesystem::path p(s);
  if (p.is_relative() && !base_dir_.empty()) return (std::filesystem::path(base_dir_) / p).lexically_normal().string();
  return s;
}

void Reader::only_keys(const toml::table& t, std::string_view section,
                       std::initializer_list<std::string_view> known) const {
  for (auto&& [k, v] : t) {
    bool ok = false;
    for (auto name : known) ok = ok || k.str() == name;
    if (ok) continue;
    std::string valid;
    for (auto name : known) {
      if (!valid.empty()) valid.append(", ");
      valid.append(name);
    }
    fail_at(k.source().begin.line,
            "unknown key " + in_quotes(k.str()) + " in " + std::string(section) + " (valid: " + valid + ")");
  }
}

}  // namespace pqot::srup_device::config
