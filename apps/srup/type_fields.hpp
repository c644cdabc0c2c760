// The `srup seal` flags that fill a message body, named after docs/srup-pq.md section 2.7's fields.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "pqot/srup/body.hpp"
#include "pqot/srup/identity.hpp"

namespace pqot::srup_tool {

struct TypeFields {
  std::optional<std::string> action;      // action: the action ID, 0-255
  std::optional<std::string> arg;         // action: the argument's text
  std::optional<std::string> arg_type;    // action: its type (section 2.6 name)
  std::optional<std::string> data_id;     // data
  std::optional<std::string> value;       // data: the value's text
  std::optional<std::string> value_type;  // data: its type (default: inferred from the text)
  std::optional<std::string> url;         // update-initiate
  std::optional<std::string> digest;      // update-initiate: SHA-256, 64 hex digits
  std::optional<std::string> file;        // update-initiate: the file whose SHA-256 is the digest
  std::optional<std::string> status;      // response: a name (ACTION_SUCCESS) or a number
  std::optional<std::string> detail;      // response
  std::optional<std::string> code;        // human/observed join response, observation request: 32 hex digits
  std::optional<std::string> device;      // observation request: 16 hex digits
  std::optional<std::string> observer;    // observed join request: 16 hex digits
  std::optional<std::string> c2_pub;      // join command: the new C2's identity.pub
};

void add_type_field_options(CLI::App& cmd, TypeFields& fields);

/// The body of a `type` message from `me`, from the flags; UsageError for a missing field, a
/// field the type does not have, or a value out of range.
srup::Body build_body(srup::MessageType type, const TypeFields& f, const srup::LoadedIdentity& me);

}  // namespace pqot::srup_tool
