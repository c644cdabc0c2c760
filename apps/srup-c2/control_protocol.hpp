// The C2's control protocol (docs/srup-c2.md, "Control socket"): what `srup c2 ...` sends to the
// daemon over its local socket, one JSON object per line each way. This file parses and checks a
// request line into a typed request (every field named, typed and bounded before the daemon sees
// it) and formats answers. No I/O; fuzzed (tests/fuzz/srup_c2_control.cpp).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>

#include <nlohmann/json.hpp>

#include "pqot/srup/body.hpp"
#include "pqot/srup/value.hpp"

namespace pqot::srup_c2 {

/// Bounds of the protocol (docs/srup-c2.md). A request line longer than the configured
/// `request_max_bytes` (at most kMaxRequestLine) is refused before it is parsed.
inline constexpr std::size_t kMaxRequestLine = 256 * 1024;
inline constexpr std::size_t kMaxPem = 64 * 1024;        ///< an identity.pub or CSR in a request
inline constexpr std::size_t kMaxDeviceType = 64;
inline constexpr std::uint32_t kMaxWaitMs = 600'000;     ///< how long a request may wait for an answer
inline constexpr std::uint32_t kMaxListLimit = 1'000;  ///< the registry's own bound per query

/// The error classes of an answer's "code" field.
enum class ControlErrorCode { bad_request, not_found, conflict, busy, unavailable, internal };
std::string_view to_string(ControlErrorCode c) noexcept;

/// A request that cannot be served; what() is the text the client shows.
class ControlError : public std::runtime_error {
 public:
  ControlError(ControlErrorCode code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  ControlErrorCode code() const noexcept { return code_; }

 private:
  ControlErrorCode code_;
};

struct StatusRequest {};
struct ListDevices {
  std::optional<std::string> state;  ///< pending, joined, resigned, deregistered
};
struct ShowDevice {
  std::uint64_t device = 0;
};
/// A device's or a monitor's enrolment: its identity.pub and broker CSR (PEM text).
struct Enrol {
  bool monitor = false;
  std::string public_identity;
  std::string csr;
  std::string type;                 ///< devices: 1-64 printable ASCII
  std::string join = "simple";      ///< devices: simple, human, observed
  std::optional<std::uint64_t> observer;
};
struct JoinCode {
  std::uint64_t device = 0;
  std::array<std::uint8_t, 16> code{};
};
/// A command to one device; wait_ms > 0 holds the answer until the device answered or the time
/// passed (then the command stays in the outbox and the answer says "pending").
struct SendCommand {
  srup::MessageType type = srup::MessageType::action;
  std::uint64_t device = 0;
  srup::Body body;
  bool activate = true;  ///< updates: send Update Activate after a successful download
  std::uint32_t wait_ms = 0;
};
struct Authorize {
  std::uint64_t monitor = 0;
  std::uint64_t device = 0;
  bool allow = true;
};
struct ListCommands {
  std::optional<std::uint64_t> device;
  std::optional<std::string> state;  ///< pending, answered, expired, cancelled
  std::uint32_t limit = 100;
};
struct ShowCommand {
  std::string token_hex;  ///< 2-128 hex digits
};
struct History {
  std::uint64_t device = 0;
  std::string kind;  ///< data, telemetry, events
  std::uint32_t limit = 20;
};
struct Backup {
  std::string path;  ///< absolute
};

using ControlRequest = std::variant<StatusRequest, ListDevices, ShowDevice, Enrol, JoinCode,
                                    SendCommand, Authorize, ListCommands, ShowCommand, History, Backup>;

/// Parses one request line (without its newline). Throws ControlError{bad_request} naming the
/// field for anything malformed: not a JSON object, an unknown "cmd", a missing, unknown, mistyped
/// or out-of-range field.
ControlRequest parse_control_request(std::string_view line);

/// The answer lines: {"ok":true,"result":...} and {"ok":false,"code":"...","error":"..."}.
std::string format_result(const nlohmann::json& result);
std::string format_error(ControlErrorCode code, std::string_view message);

/// The ID written as 1-16 hex digits, optionally prefixed "dev-", "mon-" or "c2-"; nothing for
/// anything else (0 and all-ones included). The text form is srup::id_text (pqot/srup/topics.hpp).
std::optional<std::uint64_t> parse_peer_id(std::string_view text);

}  // namespace pqot::srup_c2
