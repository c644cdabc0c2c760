// SRUP-PQ's message types, protection modes and suites (docs/srup-pq.md, sections 2.4 and 3).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace pqot::srup {

/// Type codes keep the original SRUP's where it had the type; 0x30 and up are new.
enum class MessageType : std::uint8_t {
  update_initiate = 0x01,
  response = 0x02,
  update_activate = 0x03,
  action = 0x04,
  data = 0x05,
  id_request = 0x06,
  join_request = 0x09,
  join_command = 0x0A,
  human_join_request = 0x0B,
  human_join_response = 0x0C,
  observed_join_request = 0x0D,
  observed_join_response = 0x0E,
  observation_request = 0x0F,
  resign_request = 0x10,
  terminate_command = 0x11,
  deregister_request = 0x12,
  deregister_command = 0x13,
  telemetry = 0x30,
  session_offer = 0x31,
  session_accept = 0x32,
  telemetry_key = 0x33,
  reader_set = 0x34,
  checkpoint = 0x35,
  key_rotation = 0x36,
};

enum class Mode : std::uint8_t { signed_clear = 0, sealed = 1, session = 2, telemetry_group = 3 };

enum class Suite : std::uint8_t {
  mldsa65_mlkem768 = 0x01,  ///< the default
  mldsa65_mlkem1024 = 0x02,
  mldsa65_xwing = 0x03,
  hybrid_xwing = 0x04,      ///< ML-DSA-65+Ed25519 and X-Wing
  mldsa87_mlkem1024 = 0x05,
  ed25519_xwing = 0x06,
  legacy_rsa2048 = 0x7F,    ///< comparison only, never default
};

inline constexpr Suite kDefaultSuite = Suite::mldsa65_mlkem768;

struct SuiteInfo {
  Suite suite;
  std::string_view name;       ///< "ML-DSA-65/ML-KEM-768", ...
  std::string_view signature;  ///< crypto::signature_by_name() name
  std::string_view kem;        ///< crypto::kem_by_name() name ("RSA-2048-OAEP" for the legacy suite)
  bool legacy;
};

/// The suite of a wire byte, or nothing for an unknown one.
std::optional<SuiteInfo> suite_info(std::uint8_t code) noexcept;
SuiteInfo suite_info(Suite suite) noexcept;
/// The suite named "ML-DSA-65/ML-KEM-768" (or its number "1", "0x01"); nothing if unknown.
std::optional<Suite> suite_by_name(std::string_view name) noexcept;

/// The type of a wire byte, or nothing for an unknown or out-of-scope one (SRUP's syndication,
/// Generic and group types).
std::optional<MessageType> message_type(std::uint8_t code) noexcept;
/// "action", "update-initiate", ... (the `srup` tool's --type names).
std::string_view to_string(MessageType t) noexcept;
std::optional<MessageType> message_type_by_name(std::string_view name) noexcept;

/// The mode the spec fixes for a type. Sealed types may also travel in session mode between peers
/// that hold a session (`allows_session`).
Mode required_mode(MessageType t) noexcept;
bool allows_session(MessageType t) noexcept;
/// Commands run at most once and are always answered (docs/srup-pq.md, section 7.3). Data is a
/// command when the C2 sends it.
bool is_command(MessageType t, bool sent_by_c2) noexcept;

}  // namespace pqot::srup
