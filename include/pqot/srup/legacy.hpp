// The original SRUP version-5 envelope (dstl/srup, HEAD ff478a2) as pqot's explicit legacy suite:
// decode, verify and emit, for migration to SRUP-PQ and as the benchmark baseline. The layout,
// byte by byte, every refusal and the measured facts about the original it rests on are in
// docs/srup-legacy.md.
//
// Legacy only: RSA-2048 PKCS#1 v1.5 is not quantum-safe, the recipient and the MQTT topic are
// not signed (a message to device A replays to device B), and nothing is confidential. Never
// chosen by default. The library does not log; every caller that decodes, verifies or emits one
// of these envelopes should log kLegacyWarning (once per peer or message, as it sees fit).
//
// In scope: the 17 types the original builds and signs (Initiate 0x01 ... Deregister Command 0x13,
// without the group types). Refused by name (UNSUPPORTED_TYPE): Generic 0x00 (parse-only in the
// original, it cannot be signed), Group Add/Delete/Destroy 0x07/0x08/0x14 (never built, removed in
// the original's v4) and the syndication types 0x21-0x2F (out of scope for SRUP-PQ, issue 12).
// Every other type code is UNKNOWN_TYPE.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>

#include "pqot/crypto/bytes.hpp"

namespace pqot::srup::legacy {

using crypto::Bytes;
using crypto::ByteView;

/// What every caller using the legacy suite should log (as a warning), so no use goes unseen.
inline constexpr std::string_view kLegacyWarning =
    "original SRUP version-5 envelope (legacy suite RSA-2048-PKCS1): not quantum-safe, recipient "
    "and topic unsigned, no confidentiality; migrate the peer to SRUP-PQ";

inline constexpr std::uint8_t kVersion = 0x05;
/// The only signature this suite carries: RSA-2048, so exactly 256 bytes (see docs/srup-legacy.md).
inline constexpr std::size_t kSignatureSize = 256;
/// The Signature suite (pqot::crypto::signature_by_name) that signs and verifies these envelopes.
inline constexpr std::string_view kSuiteName = "RSA-2048-PKCS1";

/// Type codes of the original (reference section 1, "Body after the signature").
enum class Type : std::uint8_t {
  initiate = 0x01,
  response = 0x02,
  activate = 0x03,
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
};

// ---- bodies: one struct per type, in type-code order
// --------------------------------------------- Variable fields carry a u16 big-endian length on
// the wire, so each is at most 65,535 bytes.

struct Initiate {  // 0x01: url, digest (the original sends the SHA-256 as hex text)
  std::string url;
  std::string digest;
  bool operator==(const Initiate&) const = default;
};
struct Response {  // 0x02: one status code (reference section 1, "Response status codes")
  std::uint8_t status = 0;
  bool operator==(const Response&) const = default;
};
struct Activate {  // 0x03
  bool operator==(const Activate&) const = default;
};
struct Action {  // 0x04
  std::uint8_t action_id = 0;
  bool operator==(const Action&) const = default;
};
struct Data {  // 0x05: no type tag on the wire (the original copies host-order bytes)
  Bytes data_id;
  Bytes data;
  bool operator==(const Data&) const = default;
};
struct IdRequest {  // 0x06
  bool operator==(const IdRequest&) const = default;
};
struct JoinRequest {  // 0x09
  bool operator==(const JoinRequest&) const = default;
};
struct JoinCommand {  // 0x0A: u64 little-endian
  std::uint64_t device_id = 0;
  bool operator==(const JoinCommand&) const = default;
};
struct HumanJoinRequest {  // 0x0B
  bool operator==(const HumanJoinRequest&) const = default;
};
struct HumanJoinResponse {  // 0x0C: the original's EVP_Seal blob, kept opaque
  Bytes blob;
  bool operator==(const HumanJoinResponse&) const = default;
};
struct ObservedJoinRequest {  // 0x0D: u64 little-endian
  std::uint64_t observer_id = 0;
  bool operator==(const ObservedJoinRequest&) const = default;
};
struct ObservedJoinResponse {  // 0x0E
  Bytes blob;
  bool operator==(const ObservedJoinResponse&) const = default;
};
struct ObservationRequest {  // 0x0F: u64 little-endian, then the blob
  std::uint64_t joining_device_id = 0;
  Bytes blob;
  bool operator==(const ObservationRequest&) const = default;
};
struct ResignRequest {  // 0x10
  bool operator==(const ResignRequest&) const = default;
};
struct TerminateCommand {  // 0x11
  bool operator==(const TerminateCommand&) const = default;
};
struct DeregisterRequest {  // 0x12
  bool operator==(const DeregisterRequest&) const = default;
};
struct DeregisterCommand {  // 0x13
  bool operator==(const DeregisterCommand&) const = default;
};

using Body = std::variant<Initiate, Response, Activate, Action, Data, IdRequest, JoinRequest,
                          JoinCommand, HumanJoinRequest, HumanJoinResponse, ObservedJoinRequest,
                          ObservedJoinResponse, ObservationRequest, ResignRequest, TerminateCommand,
                          DeregisterRequest, DeregisterCommand>;

/// The type code a body is sent with.
std::uint8_t type_of(const Body& body) noexcept;

struct LegacyEnvelope {
  std::uint8_t type = 0;       ///< must equal type_of(body); encode() checks
  std::uint64_t sequence = 0;  ///< u64 little-endian on the wire
  std::uint64_t sender = 0;    ///< u64 little-endian on the wire
  Bytes token;                 ///< the original uses a 36-byte UUID4 string
  Bytes signature;             ///< kSignatureSize bytes once signed; empty before
  Body body;
  bool operator==(const LegacyEnvelope&) const = default;
};

/// An unsigned envelope with type taken from the body.
LegacyEnvelope make_envelope(std::uint64_t sequence, std::uint64_t sender, Bytes token, Body body);

// ---- errors ----------------------------------------------------------------------------------

enum class Reason {
  malformed,              ///< truncated, a length past the end, trailing bytes
  unsupported_version,    ///< version byte not 0x05
  unsupported_type,       ///< a type the original defines but this suite refuses (see above)
  unknown_type,           ///< a type code the original does not define
  unsupported_signature,  ///< signature length not kSignatureSize (not RSA-2048)
  invalid_argument,       ///< encode/sign only: a field over 65,535 bytes, type != type_of(body)
};

/// "MALFORMED", "UNSUPPORTED_VERSION", ... (the refusal names of issue 12's `srup` tool).
const char* to_string(Reason reason) noexcept;

/// The one error this API throws for bad envelopes and bad arguments. (verify() and sign() also
/// pass on crypto::Error for an unusable key; see there.)
class LegacyError : public std::runtime_error {
 public:
  LegacyError(Reason reason, const std::string& what);
  Reason reason() const noexcept { return reason_; }

 private:
  Reason reason_;
};

/// The original's name of any type code ("Action", "Syndicated Data", ...), or "" if it has none.
std::string_view type_name(std::uint8_t type) noexcept;

// ---- codec (no crypto) -----------------------------------------------------------------------

/// Parses one complete envelope. Bounded: every length is checked against what remains before
/// use, nothing larger than the input is allocated, trailing bytes are refused. Throws
/// LegacyError and nothing else (but std::bad_alloc).
LegacyEnvelope decode(ByteView wire);

/// The wire form of a signed envelope. decode(encode(e)) == e, and for every accepted input,
/// encode(decode(wire)) == wire (the format has one encoding per envelope).
/// Throws LegacyError{invalid_argument} for a field over 65,535 bytes or a type that is not
/// type_of(body), LegacyError{unsupported_signature} for a signature not kSignatureSize bytes.
Bytes encode(const LegacyEnvelope& envelope);

/// What the original signs (reference section 2): the serialization with the whole signature
/// field, its length included, removed. The signature field itself is ignored here.
Bytes signed_bytes(const LegacyEnvelope& envelope);
/// The same, cut out of received bytes (which are decoded first, so errors as decode()).
Bytes signed_bytes(ByteView wire);

// ---- signatures: RSA-2048 PKCS#1 v1.5 with SHA-256 (kSuiteName) --------------------------------

/// True when the signature verifies over signed_bytes(envelope) under the DER
/// SubjectPublicKeyInfo of an RSA-2048 key (crypto::decode_public_key reads PEM files into it).
/// Throws crypto::Error{invalid_key} or {invalid_encoding} for a key that is not such a key.
bool verify(const LegacyEnvelope& envelope, ByteView rsa_public_key_spki_der);

/// `envelope` signed with an RSA-2048 PKCS#8 DER secret key (any previous signature replaced).
/// Throws LegacyError{invalid_argument} as encode() and crypto::Error for an unusable key.
LegacyEnvelope sign(LegacyEnvelope envelope, ByteView rsa_secret_key_pkcs8_der);

}  // namespace pqot::srup::legacy
