// The `srup` tool's view of a message: header and body as JSON (`--json`) or as key=value lines.
#pragma once

#include <nlohmann/json.hpp>

#include "pqot/srup/body.hpp"
#include "pqot/srup/envelope.hpp"

namespace pqot::srup_tool {

nlohmann::ordered_json header_json(const srup::Header& h);
/// The body's fields; key material appears as its size and SHA-256 prefix, never in full, and a
/// telemetry key not at all.
nlohmann::ordered_json body_json(const srup::Body& body);
/// `j` as one JSON line, or as "key=value" lines with nested keys joined by dots.
void print_message(const nlohmann::ordered_json& j, bool as_json);

}  // namespace pqot::srup_tool
