// The tables of docs/srup-pq.md sections 2.4 and 3.
#include "pqot/srup/types.hpp"

#include <array>
#include <charconv>

namespace pqot::srup {

namespace {

constexpr std::array<SuiteInfo, 7> kSuites = {{
    {Suite::mldsa65_mlkem768, "ML-DSA-65/ML-KEM-768", "ML-DSA-65", "ML-KEM-768", false},
    {Suite::mldsa65_mlkem1024, "ML-DSA-65/ML-KEM-1024", "ML-DSA-65", "ML-KEM-1024", false},
    {Suite::mldsa65_xwing, "ML-DSA-65/X-Wing", "ML-DSA-65", "X-Wing", false},
    {Suite::hybrid_xwing, "ML-DSA-65+Ed25519/X-Wing", "ML-DSA-65+Ed25519", "X-Wing", false},
    {Suite::mldsa87_mlkem1024, "ML-DSA-87/ML-KEM-1024", "ML-DSA-87", "ML-KEM-1024", false},
    {Suite::ed25519_xwing, "Ed25519/X-Wing", "Ed25519", "X-Wing", false},
    {Suite::legacy_rsa2048, "RSA-2048 (legacy)", "RSA-2048-PKCS1", "RSA-2048-OAEP", true},
}};

struct TypeRow {
  MessageType type;
  std::string_view name;
  Mode mode;
  bool session;   // may also travel in session mode
  bool command;   // run at most once, always answered
};

constexpr std::array<TypeRow, 24> kTypes = {{
    {MessageType::update_initiate, "update-initiate", Mode::sealed, true, true},
    {MessageType::response, "response", Mode::sealed, true, false},
    {MessageType::update_activate, "update-activate", Mode::sealed, true, true},
    {MessageType::action, "action", Mode::sealed, true, true},
    {MessageType::data, "data", Mode::sealed, true, false},
    {MessageType::id_request, "id-request", Mode::sealed, true, true},
    {MessageType::join_request, "join-request", Mode::signed_clear, false, false},
    {MessageType::join_command, "join-command", Mode::sealed, false, true},
    {MessageType::human_join_request, "human-join-request", Mode::signed_clear, false, false},
    {MessageType::human_join_response, "human-join-response", Mode::sealed, false, true},
    {MessageType::observed_join_request, "observed-join-request", Mode::signed_clear, false, false},
    {MessageType::observed_join_response, "observed-join-response", Mode::sealed, false, true},
    {MessageType::observation_request, "observation-request", Mode::sealed, false, true},
    {MessageType::resign_request, "resign-request", Mode::sealed, true, false},
    {MessageType::terminate_command, "terminate-command", Mode::sealed, true, true},
    {MessageType::deregister_request, "deregister-request", Mode::sealed, true, false},
    {MessageType::deregister_command, "deregister-command", Mode::sealed, true, true},
    {MessageType::telemetry, "telemetry", Mode::telemetry_group, false, false},
    {MessageType::session_offer, "session-offer", Mode::signed_clear, false, false},
    {MessageType::session_accept, "session-accept", Mode::signed_clear, false, false},
    {MessageType::telemetry_key, "telemetry-key", Mode::sealed, false, false},
    {MessageType::reader_set, "reader-set", Mode::sealed, false, true},
    {MessageType::checkpoint, "checkpoint", Mode::signed_clear, false, false},
    {MessageType::key_rotation, "key-rotation", Mode::sealed, false, false},
}};

const TypeRow* row(MessageType t) noexcept {
  for (const auto& r : kTypes) {
    if (r.type == t) return &r;
  }
  return nullptr;
}

}  // namespace

std::optional<SuiteInfo> suite_info(std::uint8_t code) noexcept {
  for (const auto& s : kSuites) {
    if (static_cast<std::uint8_t>(s.suite) == code) return s;
  }
  return std::nullopt;
}

SuiteInfo suite_info(Suite suite) noexcept {
  for (const auto& s : kSuites) {
    if (s.suite == suite) return s;
  }
  return kSuites.front();  // unreachable for a valid enumerator
}

std::optional<Suite> suite_by_name(std::string_view name) noexcept {
  for (const auto& s : kSuites) {
    if (s.name == name) return s.suite;
  }
  int base = 10;
  if (name.starts_with("0x")) {
    name.remove_prefix(2);
    base = 16;
  }
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), value, base);
  if (ec != std::errc() || end != name.data() + name.size() || value > 0xff) return std::nullopt;
  if (auto info = suite_info(static_cast<std::uint8_t>(value))) return info->suite;
  return std::nullopt;
}

std::optional<MessageType> message_type(std::uint8_t code) noexcept {
  if (const TypeRow* r = row(static_cast<MessageType>(code))) return r->type;
  return std::nullopt;
}

std::string_view to_string(MessageType t) noexcept {
  const TypeRow* r = row(t);
  return r != nullptr ? r->name : "unknown";
}

std::optional<MessageType> message_type_by_name(std::string_view name) noexcept {
  for (const auto& r : kTypes) {
    if (r.name == name) return r.type;
  }
  return std::nullopt;
}

Mode required_mode(MessageType t) noexcept {
  const TypeRow* r = row(t);
  return r != nullptr ? r->mode : Mode::sealed;
}

bool allows_session(MessageType t) noexcept {
  const TypeRow* r = row(t);
  return r != nullptr && r->session;
}

bool is_command(MessageType t, bool sent_by_c2) noexcept {
  if (t == MessageType::data) return sent_by_c2;
  const TypeRow* r = row(t);
  return r != nullptr && r->command;
}

}  // namespace pqot::srup
