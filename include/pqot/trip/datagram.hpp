// TRIP's datagrams (docs/trip.md §2): a 12-byte header, the sealed legacy datagram or keepalive
// body, a 16-byte AES-256-GCM tag. 28 bytes per copy; the nonce is (type, flow, counter) under a
// key of one session, direction and epoch, so it never repeats (docs/trip.md §2, "Why a nonce
// never repeats").
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "pqot/crypto/aead.hpp"
#include "pqot/crypto/bytes.hpp"

namespace pqot::trip {

inline constexpr std::size_t kHeaderSize = 12;
inline constexpr std::size_t kTagSize = crypto::kAesGcmTagSize;
/// Bytes a TRIP copy adds to the legacy datagram.
inline constexpr std::size_t kOverhead = kHeaderSize + kTagSize;
/// A keepalive's body: echo (u64), held_us (u32).
inline constexpr std::size_t kKeepaliveBodySize = 12;
inline constexpr std::size_t kKeepaliveSize = kOverhead + kKeepaliveBodySize;
/// The largest legacy datagram any configuration may allow: what fits one UDP datagram of IPv4
/// (65,507 bytes of payload) with TRIP's overhead.
inline constexpr std::size_t kMaxPayload = 65'507 - kOverhead;

enum class DatagramType : std::uint8_t { data = 0, keepalive = 1 };

struct Header {
  DatagramType type = DatagramType::data;
  std::uint8_t epoch_low = 0;  ///< the sender's epoch modulo 64
  std::uint8_t session = 0;    ///< the path's session number modulo 256
  std::uint16_t flow = 0;      ///< the flow id (data); 0 (keepalive)
  std::uint64_t counter = 0;   ///< the label (data); the keepalive counter (keepalive)

  friend bool operator==(const Header&, const Header&) = default;
};

/// The header of a received datagram, or nothing if the datagram is malformed (docs/trip.md §2.1
/// step 1): shorter than kOverhead, type 2 or 3, a keepalive that is not kKeepaliveSize bytes, a
/// keepalive with a non-zero flow, or data for flow 0. Touches nothing but `datagram`.
std::optional<Header> parse_header(std::span<const std::uint8_t> datagram) noexcept;

/// The 12 header bytes. Throws std::invalid_argument for an epoch_low over 63 or a header
/// parse_header would refuse (keepalive with a flow, data for flow 0).
void write_header(const Header& h, std::span<std::uint8_t, kHeaderSize> out);

/// type (1 byte), 0x00, flow (u16 BE), counter (u64 BE).
crypto::Nonce datagram_nonce(const Header& h) noexcept;

/// Writes header || ciphertext || tag into `out`, which must be exactly
/// kOverhead + payload.size() bytes and must not overlap `payload`. Throws std::invalid_argument
/// otherwise, or for a payload over kMaxPayload.
void seal_datagram(crypto::Aes256Gcm& key, const Header& h, crypto::ByteView payload, crypto::MutableByteView out);
/// The same, into a new buffer.
crypto::Bytes seal_datagram(crypto::Aes256Gcm& key, const Header& h, crypto::ByteView payload);

/// Opens a datagram whose header `h` was parsed from it, writing the plaintext into `out`
/// (exactly datagram.size() - kOverhead bytes). False if the tag does not verify (`out` wiped).
bool open_datagram(crypto::Aes256Gcm& key, const Header& h, crypto::ByteView datagram, crypto::MutableByteView out);

/// A keepalive's body (docs/trip.md §7).
struct KeepaliveBody {
  std::uint64_t echo = 0;     ///< the highest keepalive counter received from the peer (0: none)
  std::uint32_t held_us = 0;  ///< microseconds since it arrived, saturated
  friend bool operator==(const KeepaliveBody&, const KeepaliveBody&) = default;
};
std::array<std::uint8_t, kKeepaliveBodySize> encode_keepalive(const KeepaliveBody& b) noexcept;
/// Exactly kKeepaliveBodySize bytes, else nothing.
std::optional<KeepaliveBody> decode_keepalive(std::span<const std::uint8_t> body) noexcept;

}  // namespace pqot::trip
