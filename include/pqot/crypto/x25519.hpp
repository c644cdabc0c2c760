// X25519 (RFC 7748) over OpenSSL.
#pragma once

#include <array>
#include <memory>
#include <optional>

#include "pqot/crypto/bytes.hpp"
#include "pqot/crypto/secure.hpp"

namespace pqot::crypto {

inline constexpr std::size_t kX25519Size = 32;
using X25519Public = std::array<std::uint8_t, kX25519Size>;

/// A private key loaded once: its public key is computed once, and any number of shared secrets
/// can be derived from it (X-Wing uses both, so each costs one scalar multiplication, not two).
class X25519PrivateKey {
 public:
  /// Throws Error{invalid_length} unless 32 bytes.
  explicit X25519PrivateKey(ByteView private_key);
  ~X25519PrivateKey();
  X25519PrivateKey(const X25519PrivateKey&) = delete;
  X25519PrivateKey& operator=(const X25519PrivateKey&) = delete;

  const X25519Public& public_key() const noexcept { return public_; }
  /// As x25519() below.
  std::optional<Secret<kX25519Size>> shared_secret(ByteView peer_public) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  X25519Public public_{};
};

/// The public key (scalar times the base point) of a 32-byte private key.
/// Throws Error{invalid_length}.
X25519Public x25519_public_key(ByteView private_key);

/// The shared secret X25519(private_key, peer_public). Returns std::nullopt when the result is the
/// all-zero value (a low-order peer key; RFC 7748 section 6.1 lets callers abort). Throws
/// Error{invalid_length} for wrong sizes.
std::optional<Secret<kX25519Size>> x25519(ByteView private_key, ByteView peer_public);

}  // namespace pqot::crypto
