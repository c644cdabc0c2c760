// A reading's values as text for people and spreadsheets (reading_text.hpp).
#include "pqot/srup/reading_text.hpp"

#include "pqot/common/printable.hpp"

namespace pqot::srup {

std::string value_table_text(const Value& value) {
  const auto* s = std::get_if<std::string>(&value);
  if (s == nullptr) return to_text(value);
  std::string out = "\"";
  for (const char c : common::terminal_text(*s)) {
    if (c == '"') out += '\\';
    out += c;
  }
  out += '"';
  return out;
}

std::string value_csv_field(const Value& value) {
  const auto* s = std::get_if<std::string>(&value);
  if (s == nullptr) return to_text(value);
  const std::string text = common::terminal_text(*s);
  std::string out = "\"";
  if (!text.empty() && (text[0] == '=' || text[0] == '+' || text[0] == '-' || text[0] == '@')) out += '\'';
  for (const char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

}  // namespace pqot::srup
