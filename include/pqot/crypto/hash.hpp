// SHA-256, SHA-512 and HMAC-SHA-256 over OpenSSL (transcript hashes, link-binding proofs, the
// hybrid signature's message digest).
#pragma once

#include <array>
#include <initializer_list>
#include <span>

#include "pqot/crypto/bytes.hpp"

namespace pqot::crypto {

using Sha256Digest = std::array<std::uint8_t, 32>;
using Sha512Digest = std::array<std::uint8_t, 64>;

Sha256Digest sha256(ByteView data);
/// SHA-256 over the concatenation of `parts`, without copying them together.
Sha256Digest sha256(std::initializer_list<ByteView> parts);
Sha512Digest sha512(ByteView data);

/// SHA-256 over data that arrives in pieces (a file streamed from the network): update() any
/// number of times, then finish() once. Throws crypto::Error on an OpenSSL failure or a use after
/// finish().
class Sha256Hasher {
 public:
  Sha256Hasher();
  ~Sha256Hasher();
  Sha256Hasher(const Sha256Hasher&) = delete;
  Sha256Hasher& operator=(const Sha256Hasher&) = delete;
  void update(ByteView data);
  Sha256Digest finish();

 private:
  void* ctx_;  // EVP_MD_CTX, kept out of this header
  bool finished_ = false;
};
/// HMAC-SHA-256(key, concatenation of parts).
Sha256Digest hmac_sha256(ByteView key, std::span<const ByteView> parts);
inline Sha256Digest hmac_sha256(ByteView key, std::initializer_list<ByteView> parts) {
  return hmac_sha256(key, std::span<const ByteView>(parts.begin(), parts.size()));
}

}  // namespace pqot::crypto
