// The typed bodies of SRUP-PQ messages (docs/srup-pq.md, sections 2.4 and 2.7): one struct per
// body, an encoder for senders and the decoder of step 11 of the receive order.
//
// Every decoder reads exactly its bytes, checks every length against its limit before reading or
// allocating, and accepts one spelling per body: encode_body(decode_body(x)) == x for every x it
// accepts (tests/fuzz/srup_body.cpp checks this).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "pqot/crypto/secure.hpp"
#include "pqot/srup/refusal.hpp"
#include "pqot/srup/status.hpp"
#include "pqot/srup/types.hpp"
#include "pqot/srup/value.hpp"

namespace pqot::srup {

// Limits of section 2.3 and 2.7.
inline constexpr std::size_t kMaxUrl = 2048;
inline constexpr std::size_t kMaxDetail = 256;
inline constexpr std::size_t kMaxDataId = 255;
inline constexpr std::size_t kMaxChannels = 64;
inline constexpr std::size_t kMaxReaders = 16;
/// The legacy suite's public keys are DER SPKI of no fixed size: 1 to 1,024 bytes.
inline constexpr std::size_t kMaxLegacyPublicKey = 1024;
inline constexpr std::size_t kTelemetryKeySize = 32;
inline constexpr std::uint32_t kMaxSessionMessages = 1u << 20;  // section 4.2
inline constexpr std::uint32_t kMaxSessionSeconds = 3600;
inline constexpr std::uint16_t kMaxCheckpointMessages = 1024;  // section 5.2
inline constexpr std::uint16_t kMaxCheckpointSeconds = 3600;

using Digest = std::array<std::uint8_t, 32>;
using OneTimeCodeBytes = std::array<std::uint8_t, 16>;
using SessionId = std::array<std::uint8_t, 8>;

/// Update Activate, ID Request, Resign, Terminate, Deregister Request and Command: no body.
struct Empty {
  bool operator==(const Empty&) const = default;
};

struct UpdateInitiate {
  std::string url;  ///< 1..2,048 bytes UTF-8
  Digest digest{};  ///< SHA-256 of the file
  bool operator==(const UpdateInitiate&) const = default;
};

struct Response {
  std::uint8_t status = 0;  ///< section 2.5 (Status); unknown codes pass through
  std::string detail;       ///< 0..256 bytes UTF-8
  bool operator==(const Response&) const = default;
};

struct Action {
  std::uint8_t action_id = 0;
  Value argument;  ///< none (tag 0x00) when the action takes no argument
  bool operator==(const Action&) const = default;
};

struct Data {
  std::string data_id;  ///< 1..255 bytes UTF-8
  Value value;
  bool operator==(const Data&) const = default;
};

/// A peer's long-term public keys, each u16 length ‖ bytes of exactly the suite's size
/// (legacy suite: 1..1,024 bytes of DER SPKI). Only sizes are checked here: whoever enrols the
/// keys runs the algorithm's check_public_key().
struct PublicKeys {
  Bytes signature_public;
  Bytes kem_public;
  bool operator==(const PublicKeys&) const = default;
};

/// Join Request and Human Join Request: the keys of the envelope's suite.
struct JoinRequest {
  PublicKeys keys;
  bool operator==(const JoinRequest&) const = default;
};

struct ObservedJoinRequest {
  PublicKeys keys;
  std::uint64_t observer = 0;  ///< a peer ID: not 0, not all-ones
  bool operator==(const ObservedJoinRequest&) const = default;
};

/// Re-homing: the new C2's ID, its suite and its keys (of that suite, not the envelope's).
struct JoinCommand {
  std::uint64_t c2_id = 0;  ///< not 0, not all-ones
  Suite suite = kDefaultSuite;
  PublicKeys keys;
  bool operator==(const JoinCommand&) const = default;
};

/// Human and Observed Join Response.
struct OneTimeCode {
  OneTimeCodeBytes code{};
  bool operator==(const OneTimeCode&) const = default;
};

struct ObservationRequest {
  std::uint64_t device = 0;  ///< the joining device: not 0, not all-ones
  OneTimeCodeBytes code{};
  bool operator==(const ObservationRequest&) const = default;
};

struct ChannelValue {
  std::uint16_t channel = 0;
  Value value;  ///< any type but none
  bool operator==(const ChannelValue&) const = default;
};

/// Telemetry (section 5.3): 1..64 channels in strictly ascending channel order.
struct Reading {
  std::uint64_t timestamp_ms = 0;
  std::vector<ChannelValue> channels;
  bool operator==(const Reading&) const = default;
};

/// Section 4.1: the ephemeral key is of the envelope suite's KEM; limits 1..2^20 messages and
/// 1..3,600 seconds per epoch.
struct SessionOffer {
  Bytes ephemeral_public;
  SessionId session_id{};
  std::uint32_t max_messages = 0;
  std::uint32_t max_epoch_seconds = 0;
  bool operator==(const SessionOffer&) const = default;
};

struct SessionAccept {
  SessionId session_id{};
  Bytes kem_ciphertext;  ///< of the envelope suite's KEM
  Digest offer_hash{};   ///< SHA-256 of the whole offer envelope
  bool operator==(const SessionAccept&) const = default;
};

/// Section 5.1. The key is exactly 32 bytes, held in wiping storage; no operator== (a secret is
/// compared with crypto::ct_equal, if at all). Checkpoint interval: 1..1,024 messages,
/// 1..3,600 seconds.
struct TelemetryKey {
  std::uint32_t epoch = 0;
  crypto::SecretBytes key;
  std::uint16_t checkpoint_messages = 64;
  std::uint16_t checkpoint_seconds = 60;
};

struct Reader {
  std::uint64_t id = 0;  ///< not 0, not all-ones
  Suite suite = kDefaultSuite;
  Bytes kem_public;  ///< of the reader's own suite
  bool operator==(const Reader&) const = default;
};

/// 1..16 readers in strictly ascending ID order.
struct ReaderSet {
  std::vector<Reader> readers;
  bool operator==(const ReaderSet&) const = default;
};

/// Section 5.2: covers sequences first_sequence .. first_sequence + count − 1 (count 1..1,024,
/// first_sequence ≥ 1, no wrap past 2^64 − 1).
struct Checkpoint {
  std::uint32_t epoch = 0;
  std::uint64_t first_sequence = 0;
  std::uint16_t count = 0;
  Digest digest{};
  bool operator==(const Checkpoint&) const = default;
};

/// Section 8: the new keys (of the envelope's suite: a rotation does not change the suite) and
/// the new signature key's signature (exactly the suite's signature size).
struct KeyRotation {
  PublicKeys keys;
  Bytes new_key_signature;
  bool operator==(const KeyRotation&) const = default;
};

using Body =
    std::variant<Empty, UpdateInitiate, Response, Action, Data, JoinRequest, ObservedJoinRequest,
                 JoinCommand, OneTimeCode, ObservationRequest, Reading, SessionOffer, SessionAccept,
                 TelemetryKey, ReaderSet, Checkpoint, KeyRotation>;

/// The variant index of the body a type carries (Empty for update activate, ID request, ...).
std::size_t body_index(MessageType type) noexcept;

/// Sizes a suite fixes for the key fields of section 2.7. For the legacy suite the public key
/// sizes are 0: variable DER, 1..kMaxLegacyPublicKey bytes.
struct KeySizes {
  std::size_t signature_public;
  std::size_t kem_public;
  std::size_t signature;
  std::size_t kem_ciphertext;
};
KeySizes key_sizes(Suite suite);

/// The body bytes of `body` for a message of `type` whose envelope has suite `suite`. Throws
/// std::invalid_argument if the alternative is not the type's or a field breaks a limit of
/// section 2.7 (a sender bug). The TelemetryKey body holds the key in the clear: wipe the result
/// (crypto::secure_wipe) once it is sealed; it is written without reallocation, so no other copy
/// is left behind.
Bytes encode_body(MessageType type, Suite suite, const Body& body);

/// Step 11 of the receive order: the body of a message of `type` with envelope suite `suite`.
/// Throws Refused{Refusal::bad_request} for anything section 2.7 does not allow, naming the field
/// but quoting no bytes. A TelemetryKey's key is copied from `plain` straight into wiping storage.
Body decode_body(MessageType type, Suite suite, ByteView plain);

}  // namespace pqot::srup
