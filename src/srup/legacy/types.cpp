// Type codes, their names and the errors of the legacy suite (docs/srup-legacy.md, "Types").
#include <array>
#include <type_traits>
#include <utility>

#include "pqot/srup/legacy.hpp"

namespace pqot::srup::legacy {

namespace {

template <typename T>
constexpr Type code_of() {
  if constexpr (std::is_same_v<T, Initiate>) return Type::initiate;
  if constexpr (std::is_same_v<T, Response>) return Type::response;
  if constexpr (std::is_same_v<T, Activate>) return Type::activate;
  if constexpr (std::is_same_v<T, Action>) return Type::action;
  if constexpr (std::is_same_v<T, Data>) return Type::data;
  if constexpr (std::is_same_v<T, IdRequest>) return Type::id_request;
  if constexpr (std::is_same_v<T, JoinRequest>) return Type::join_request;
  if constexpr (std::is_same_v<T, JoinCommand>) return Type::join_command;
  if constexpr (std::is_same_v<T, HumanJoinRequest>) return Type::human_join_request;
  if constexpr (std::is_same_v<T, HumanJoinResponse>) return Type::human_join_response;
  if constexpr (std::is_same_v<T, ObservedJoinRequest>) return Type::observed_join_request;
  if constexpr (std::is_same_v<T, ObservedJoinResponse>) return Type::observed_join_response;
  if constexpr (std::is_same_v<T, ObservationRequest>) return Type::observation_request;
  if constexpr (std::is_same_v<T, ResignRequest>) return Type::resign_request;
  if constexpr (std::is_same_v<T, TerminateCommand>) return Type::terminate_command;
  if constexpr (std::is_same_v<T, DeregisterRequest>) return Type::deregister_request;
  if constexpr (std::is_same_v<T, DeregisterCommand>) return Type::deregister_command;
}

// The type code of each of Body's alternatives, indexed as the variant is.
template <std::size_t... I>
constexpr auto make_body_types(std::index_sequence<I...>) {
  return std::array<Type, sizeof...(I)>{code_of<std::variant_alternative_t<I, Body>>()...};
}
constexpr auto kBodyTypes = make_body_types(std::make_index_sequence<std::variant_size_v<Body>>{});

}  // namespace

std::uint8_t type_of(const Body& body) noexcept {
  // Only a throwing assignment leaves a body valueless (encode() refuses such a body).
  if (body.valueless_by_exception()) return 0;
  return static_cast<std::uint8_t>(kBodyTypes[body.index()]);
}

LegacyEnvelope make_envelope(std::uint64_t sequence, std::uint64_t sender, Bytes token, Body body) {
  LegacyEnvelope e;
  e.type = type_of(body);
  e.sequence = sequence;
  e.sender = sender;
  e.token = std::move(token);
  e.body = std::move(body);
  return e;
}

const char* to_string(Reason reason) noexcept {
  switch (reason) {
    case Reason::malformed:
      return "MALFORMED";
    case Reason::unsupported_version:
      return "UNSUPPORTED_VERSION";
    case Reason::unsupported_type:
      return "UNSUPPORTED_TYPE";
    case Reason::unknown_type:
      return "UNKNOWN_TYPE";
    case Reason::unsupported_signature:
      return "UNSUPPORTED_SIGNATURE";
    case Reason::invalid_argument:
      return "INVALID_ARGUMENT";
  }
  return "?";
}

LegacyError::LegacyError(Reason reason, const std::string& what)
    : std::runtime_error(std::string(to_string(reason)) + ": " + what), reason_(reason) {}

// Names as the original's message classes call them (reference section 1).
std::string_view type_name(std::uint8_t type) noexcept {
  switch (type) {
    case 0x00:
      return "Generic";
    case 0x01:
      return "Initiate";
    case 0x02:
      return "Response";
    case 0x03:
      return "Activate";
    case 0x04:
      return "Action";
    case 0x05:
      return "Data";
    case 0x06:
      return "ID Request";
    case 0x07:
      return "Group Add";
    case 0x08:
      return "Group Delete";
    case 0x09:
      return "Join Request";
    case 0x0A:
      return "Join Command";
    case 0x0B:
      return "Human Join Request";
    case 0x0C:
      return "Human Join Response";
    case 0x0D:
      return "Observed Join Request";
    case 0x0E:
      return "Observed Join Response";
    case 0x0F:
      return "Observation Request";
    case 0x10:
      return "Resign Request";
    case 0x11:
      return "Terminate Command";
    case 0x12:
      return "Deregister Request";
    case 0x13:
      return "Deregister Command";
    case 0x14:
      return "Group Destroy";
    case 0x21:
      return "Syndication Init";
    case 0x24:
      return "Syndicated Action";
    case 0x25:
      return "Syndicated Data";
    case 0x26:
      return "Syndicated ID Request";
    case 0x27:
      return "Syndicated Device Count";
    case 0x28:
      return "Syndicated Device List";
    case 0x29:
      return "Syndication Request";
    case 0x2C:
      return "Syndicated C2 Request";
    case 0x2E:
      return "Syndicated End Request";
    case 0x2F:
      return "Syndicated Terminate";
    default:
      break;
  }
  // The original's syndication range has codes the reference lists no body for (0x22, 0x23,
  // 0x2A, 0x2B, 0x2D); they are refused with the range, by its name.
  if (type >= 0x21 && type <= 0x2F) return "Syndication";
  return {};
}

}  // namespace pqot::srup::legacy
