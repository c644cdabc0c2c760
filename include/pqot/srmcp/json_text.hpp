// Compact JSON text for message bodies (docs/srmcp.md §9), written several times faster than
// nlohmann::json::dump(): strings are copied in runs up to the next character that needs an
// escape instead of being decoded character by character, and numbers go through std::to_chars.
// The output parses back to an equal value; it equals dump() except for the spelling of some
// doubles (both are shortest round-trip forms).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace pqot::srmcp {

/// Appends `value` as compact JSON to `out`. Like dump(), non-finite doubles become null, and a
/// string that is not valid UTF-8 throws nlohmann::json::type_error (316).
void append_json(std::string& out, const nlohmann::json& value);

/// Appends `text` as a JSON string (quoted and escaped) to `out`; same rules as append_json.
void append_json_string(std::string& out, std::string_view text);

/// `append_json` into a new string.
std::string to_json_text(const nlohmann::json& value);

}  // namespace pqot::srmcp
