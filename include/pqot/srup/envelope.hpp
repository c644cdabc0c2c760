// The SRUP-PQ v1 envelope (docs/srup-pq.md, section 2): header layout, bounded parsing (steps 1-2
// of the receive order) and header encoding. Protection (signing, sealing, sessions) is in
// protect.hpp; the typed bodies in body.hpp.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "pqot/crypto/bytes.hpp"
#include "pqot/srup/refusal.hpp"
#include "pqot/srup/types.hpp"

namespace pqot::srup {

using crypto::ByteView;
using crypto::Bytes;

inline constexpr std::size_t kMaxEnvelope = 65535;
inline constexpr std::size_t kMaxToken = 64;
inline constexpr std::uint32_t kMaxLifetimeMs = 604'800'000;  // 7 days
inline constexpr std::array<std::uint8_t, 4> kMagic = {'S', 'R', 'P', 'Q'};
inline constexpr std::uint8_t kVersion = 1;
/// Header bytes without the token: magic .. token length, and the body length after the token.
inline constexpr std::size_t kFixedHeader = 55;
inline constexpr std::size_t kAeadTag = 16;
inline constexpr std::size_t kEpochSize = 4;

using TopicTag = std::array<std::uint8_t, 8>;

/// The first 8 bytes of SHA-256(topic) (section 2.1).
TopicTag topic_tag(std::string_view topic);

struct Header {
  MessageType type = MessageType::action;
  Suite suite = kDefaultSuite;
  Mode mode = Mode::sealed;
  std::uint64_t sender = 0;
  std::uint64_t recipient = 0;
  std::uint64_t sequence = 0;
  std::uint64_t timestamp_ms = 0;
  std::uint32_t lifetime_ms = 0;
  TopicTag topic{};
  Bytes token;

  bool operator==(const Header&) const = default;
};

/// Sizes the suite fixes on the wire.
struct WireSizes {
  std::size_t signature;       ///< modes 0 and 1
  std::size_t kem_ciphertext;  ///< mode 1
};
WireSizes wire_sizes(Suite suite);

/// A parsed envelope: views into the wire bytes, valid as long as they are.
struct EnvelopeView {
  Header header;
  ByteView header_bytes;    ///< the authenticated header, bytes [0, 55 + token length)
  ByteView kem_ciphertext;  ///< mode 1
  std::uint32_t epoch = 0;  ///< modes 2 and 3
  ByteView body;            ///< clear in mode 0; AEAD ciphertext with its tag in modes 1-3
  ByteView signature;       ///< modes 0 and 1
  ByteView signed_part;     ///< modes 0 and 1: every byte before the signature
};

/// Steps 1-2 of the receive order and the suite check of step 4 that needs no peer (an unknown
/// suite byte): every length is checked against what remains before it is used, nothing is
/// allocated but the token copy (at most 64 bytes). Throws Refused{malformed} or
/// Refused{unsupported_suite}.
EnvelopeView parse_envelope(ByteView wire);

/// The header bytes of `h` followed by the body length field: what is signed (with what follows)
/// and what AEAD modes use as associated data. Throws std::invalid_argument for a header no
/// receiver would accept (token over 64 bytes, zero lifetime, a reserved ID, the wrong mode).
Bytes encode_header(const Header& h, std::size_t body_length);

}  // namespace pqot::srup
