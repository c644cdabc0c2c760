// SRUP-PQ Response status codes (docs/srup-pq.md, section 2.5). On the wire a status is one byte,
// and the body decoder passes codes this version does not name through unchanged: a newer peer may
// send one, and the byte is only reported, never acted on.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace pqot::srup {

/// SRUP's codes where SRUP had them; pqot's own in the 0x90 group.
enum class Status : std::uint8_t {
  update_success = 0x00,
  activate_success = 0x10,
  activate_failed = 0x1F,
  action_success = 0x20,
  action_unknown = 0x2E,
  action_failed = 0x2F,
  data_type_unknown = 0x3F,
  join_success = 0x50,
  join_refused = 0x5E,
  join_failed = 0x5F,
  observed_join_valid = 0x60,
  observed_join_invalid = 0x6E,
  observed_join_failed = 0x6F,
  resign_success = 0x70,
  resign_failed = 0x7F,
  deregister_success = 0x80,
  deregister_failed = 0x8F,
  interrupted = 0x90,  ///< accepted before a crash, outcome unknown; not run again (section 7.3)
  busy = 0x91,         ///< refused for load, nothing done; retry later
  bad_request = 0x92,  ///< authenticated, but the body is not valid for its type (step 11)
  update_http_error = 0xFC,
  update_server_error = 0xFD,
  update_file_error = 0xFE,
  update_digest_mismatch = 0xFF,
};

/// The code's name ("ACTION_SUCCESS", "BAD_REQUEST", ...) or "UNKNOWN" for a byte section 2.5
/// does not define.
std::string_view to_string(Status s) noexcept;
std::string_view status_name(std::uint8_t code) noexcept;
/// The status of a wire byte, or nothing for a code this version does not define.
std::optional<Status> status_of(std::uint8_t code) noexcept;

}  // namespace pqot::srup
