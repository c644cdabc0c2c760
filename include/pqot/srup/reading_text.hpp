// A reading's values as text for people and spreadsheets (srup monitor's table and CSV formats,
// docs/srup-tool.md "monitor"): a device's strings are peer text and must neither drive the
// terminal nor become a spreadsheet formula. JSON is reading_json.hpp.
#pragma once

#include <string>

#include "pqot/srup/value.hpp"

namespace pqot::srup {

/// For a terminal table: numbers and booleans as to_text(), bytes in hex, a string in double
/// quotes with common::terminal_text()'s escapes and `"` as `\"` (so a string cannot pass for
/// another field: `label="a b=1"`).
std::string value_table_text(const Value& value);

/// One CSV field (RFC 4180): numbers and booleans as to_text() and bytes in hex, unquoted; a
/// string always in double quotes, `"` doubled, with common::terminal_text()'s escapes, and a
/// `'` put before it when it starts with `=`, `+`, `-` or `@` (a spreadsheet would run it as a
/// formula; OWASP's "CSV injection").
std::string value_csv_field(const Value& value);

}  // namespace pqot::srup
