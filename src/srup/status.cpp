// The status table of docs/srup-pq.md section 2.5.
#include "pqot/srup/status.hpp"

#include <array>
#include <utility>

namespace pqot::srup {

namespace {

constexpr std::array<std::pair<Status, std::string_view>, 24> kStatusNames = {{
    {Status::update_success, "UPDATE_SUCCESS"},
    {Status::activate_success, "ACTIVATE_SUCCESS"},
    {Status::activate_failed, "ACTIVATE_FAILED"},
    {Status::action_success, "ACTION_SUCCESS"},
    {Status::action_unknown, "ACTION_UNKNOWN"},
    {Status::action_failed, "ACTION_FAILED"},
    {Status::data_type_unknown, "DATA_TYPE_UNKNOWN"},
    {Status::join_success, "JOIN_SUCCESS"},
    {Status::join_refused, "JOIN_REFUSED"},
    {Status::join_failed, "JOIN_FAILED"},
    {Status::observed_join_valid, "OBSERVED_JOIN_VALID"},
    {Status::observed_join_invalid, "OBSERVED_JOIN_INVALID"},
    {Status::observed_join_failed, "OBSERVED_JOIN_FAILED"},
    {Status::resign_success, "RESIGN_SUCCESS"},
    {Status::resign_failed, "RESIGN_FAILED"},
    {Status::deregister_success, "DEREGISTER_SUCCESS"},
    {Status::deregister_failed, "DEREGISTER_FAILED"},
    {Status::interrupted, "INTERRUPTED"},
    {Status::busy, "BUSY"},
    {Status::bad_request, "BAD_REQUEST"},
    {Status::update_http_error, "UPDATE_HTTP_ERROR"},
    {Status::update_server_error, "UPDATE_SERVER_ERROR"},
    {Status::update_file_error, "UPDATE_FILE_ERROR"},
    {Status::update_digest_mismatch, "UPDATE_DIGEST_MISMATCH"},
}};

}  // namespace

std::optional<Status> status_of(std::uint8_t code) noexcept {
  for (const auto& [status, name] : kStatusNames) {
    if (static_cast<std::uint8_t>(status) == code) return status;
  }
  return std::nullopt;
}

std::string_view status_name(std::uint8_t code) noexcept {
  for (const auto& [status, name] : kStatusNames) {
    if (static_cast<std::uint8_t>(status) == code) return name;
  }
  return "UNKNOWN";
}

std::string_view to_string(Status s) noexcept {
  return status_name(static_cast<std::uint8_t>(s));
}

}  // namespace pqot::srup
