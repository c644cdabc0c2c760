// srmcpd configuration: typed TOML getters with "FILE:LINE: message" errors.
#include "reader.hpp"

#include <cmath>
#include <filesystem>

#include "pqot/srmcp/config.hpp"

namespace pqot::srmcp::config {

std::string toml_type(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
    case toml::node_type::none:
      break;
  }
  return "nothing";
}

std::string in_quotes(std::string_view s) {
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
void Reader::fail(const toml::source_region& at, const std::string& msg) const {
  fail_at(at.begin.line, msg);
}

const toml::table& Reader::table_of(const toml::node& n, std::string_view what) const {
  if (const auto* t = n.as_table()) return *t;
  fail(n.source(), std::string(what) + " must be a table, not " + toml_type(n));
}

std::string Reader::string_of(const toml::node& n, std::string_view what) const {
  if (const auto* s = n.as_string()) return s->get();
  fail(n.source(), std::string(what) + " must be a string, not " + toml_type(n));
}

std::int64_t Reader::int_of(const toml::node& n, std::string_view what, std::int64_t lo, std::int64_t hi) const {
  const auto* i = n.as_integer();
  if (!i) fail(n.source(), std::string(what) + " must be an integer, not " + toml_type(n));
  const std::int64_t v = i->get();
  if (v < lo || v > hi) {
    fail(n.source(), std::string(what) + " = " + std::to_string(v) + " is out of range " +
                         std::to_string(lo) + ".." + std::to_string(hi));
  }
  return v;
}

double Reader::number_of(const toml::node& n, std::string_view what) const {
  double v = 0;
  if (const auto* i = n.as_integer()) {
    v = static_cast<double>(i->get());
  } else if (const auto* f = n.as_floating_point()) {
    v = f->get();
  } else {
    fail(n.source(), std::string(what) + " must be a number, not " + toml_type(n));
  }
  if (!std::isfinite(v)) fail(n.source(), std::string(what) + " must be finite");
  return v;
}

std::vector<std::string> Reader::strings_of(const toml::node& n, std::string_view what) const {
  const auto* a = n.as_array();
  if (!a)
    fail(n.source(), std::string(what) + " must be an array of strings, not " + toml_type(n));
  std::vector<std::string> out;
  for (const auto& e : *a) {
    std::string s = string_of(e, std::string(what) + " entries");
    if (s.empty()) fail(e.source(), std::string(what) + ": empty string");
    out.push_back(std::move(s));
  }
  return out;
}

std::string Reader::path_of(const toml::node& v, const std::string& what) const {
  const std::string s = string_of(v, what);
  if (s.empty()) fail(v.source(), what + ": empty path");
  const std::filesystem::path p(s);
  if (p.is_relative() && !base_dir_.empty())
    return (std::filesystem::path(base_dir_) / p).string();
  return s;
}

const toml::array& Reader::tables_of(const toml::node& n, const std::string& what) const {
  static const toml::array none;
  const auto* arr = n.as_array();
  if (arr && arr->empty()) return none;
  if (!arr || !arr->is_array_of_tables()) {
    fail(n.source(), what + " must be an array of tables: write each " + what + " as [[" + what + "]]");
  }
  return *arr;
}

}  // namespace pqot::srmcp::config
