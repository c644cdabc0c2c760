// Nonce prefixes for AES-256-GCM counter nonces (docs/channel.md, "Nonces"). A channel has two
// directions, each with its own keys; within a direction several counter spaces (per path, per
// message stream) share a key and are kept apart by the 4-byte prefix in front of the 8-byte
// counter (crypto::make_nonce). These are the two prefix shapes the protocols use.
#pragma once

#include <cstdint>

#include "pqot/crypto/aead.hpp"

namespace pqot::channel {

/// Which side sends: the connecting side (client, device, tunnel initiator) or the other one.
enum class Direction : std::uint8_t { client_to_server = 0, server_to_client = 1 };

constexpr Direction reverse(Direction d) noexcept {
  return d == Direction::client_to_server ? Direction::server_to_client : Direction::client_to_server;
}

/// Per-path prefix: bit 31 is the direction (1 = server to client), bits 0..30 the path id (higher
/// bits of `path_id` are dropped, so ids must stay below 2^31), big-endian.
constexpr crypto::NoncePrefix path_prefix(Direction dir, std::uint32_t path_id) noexcept {
  const std::uint32_t v = (dir == Direction::server_to_client ? 0x80000000u : 0u) | (path_id & 0x7fffffffu);
  return {static_cast<std::uint8_t>(v >> 24), static_cast<std::uint8_t>(v >> 16), static_cast<std::uint8_t>(v >> 8),
          static_cast<std::uint8_t>(v)};
}

/// Per-stream prefix: a tag byte naming the counter space, two zero bytes, the direction byte.
constexpr crypto::NoncePrefix tagged_prefix(std::uint8_t tag, Direction dir) noexcept {
  return {tag, 0x00, 0x00, static_cast<std::uint8_t>(dir)};
}

}  // namespace pqot::channel
