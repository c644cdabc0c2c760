// AES-256-GCM over OpenSSL, with counter nonces (docs/crypto.md, "Nonces").
//
// A nonce is 12 bytes: a 4-byte prefix naming the direction and purpose of the key, then a 64-bit
// big-endian message counter. A key is never used with two prefixes for the same purpose, and a
// counter never repeats: NonceSequence refuses to go past its last value, so the caller must rekey.
#pragma once

#include <array>
#include <cstdint>
#include <memory>

#include "pqot/crypto/bytes.hpp"

namespace pqot::crypto {

inline constexpr std::size_t kAesGcmTagSize = 16;
inline constexpr std::size_t kAesGcmNonceSize = 12;
inline constexpr std::size_t kAes256KeySize = 32;

using NoncePrefix = std::array<std::uint8_t, 4>;
using Nonce = std::array<std::uint8_t, kAesGcmNonceSize>;

/// prefix || big-endian counter.
Nonce make_nonce(const NoncePrefix& prefix, std::uint64_t counter) noexcept;

/// AES-256-GCM with a fixed key. The key schedule is done once; seal/open may be called many times.
/// Not thread-safe: one instance per direction per thread.
class Aes256Gcm {
 public:
  /// Throws Error{invalid_length} unless key is 32 bytes.
  explicit Aes256Gcm(ByteView key);
  ~Aes256Gcm();
  Aes256Gcm(Aes256Gcm&&) noexcept;
  Aes256Gcm& operator=(Aes256Gcm&&) noexcept;
  Aes256Gcm(const Aes256Gcm&) = delete;
  Aes256Gcm& operator=(const Aes256Gcm&) = delete;

  /// Returns ciphertext || 16-byte tag.
  Bytes seal(const Nonce& nonce, ByteView aad, ByteView plaintext);
  /// Writes ciphertext || tag into `out` (size plaintext.size() + 16). `out` may alias nothing.
  void seal_into(const Nonce& nonce, ByteView aad, ByteView plaintext, MutableByteView out);
  /// Input is ciphertext || tag. Throws Error{auth_failed} if the tag does not verify (no
  /// plaintext is released), Error{invalid_length} if shorter than a tag.
  Bytes open(const Nonce& nonce, ByteView aad, ByteView sealed);
  /// Writes the plaintext (size sealed.size() - 16) into `out`; on failure `out` is wiped and
  /// Error{auth_failed} thrown.
  void open_into(const Nonce& nonce, ByteView aad, ByteView sealed, MutableByteView out);
  /// As open_into, but a tag that does not verify returns false (`out` wiped) instead of
  /// throwing: for receivers that drop forgeries by the thousand (TRIP's datagrams). Wrong sizes
  /// still throw, as there.
  bool try_open_into(const Nonce& nonce, ByteView aad, ByteView sealed, MutableByteView out);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Hands out counter values first, first + 1, ... up to `last` inclusive, then refuses
/// (Error{nonce_exhausted}, every time) rather than wrap.
class NonceSequence {
 public:
  explicit NonceSequence(NoncePrefix prefix, std::uint64_t first = 0,
                         std::uint64_t last = UINT64_MAX - 1)
      : prefix_(prefix), next_(first), last_(last) {}
  /// The counter of the next nonce, then advances. Throws when exhausted.
  std::uint64_t next_counter();
  Nonce next() { return make_nonce(prefix_, next_counter()); }
  /// Counters left; 0 once exhausted (also when last == UINT64_MAX, where next_ cannot pass
  /// last_), saturating at UINT64_MAX for the full 2^64 range.
  std::uint64_t remaining() const noexcept {
    if (exhausted_ || next_ > last_) return 0;
    return last_ - next_ == UINT64_MAX ? UINT64_MAX : last_ - next_ + 1;
  }
  const NoncePrefix& prefix() const noexcept { return prefix_; }

 private:
  NoncePrefix prefix_;
  std::uint64_t next_;
  std::uint64_t last_;
  bool exhausted_ = false;
};

/// Low-level AES-GCM for any AES key size (16/24/32) and any non-empty IV, 16-byte tag. Used by the
/// Wycheproof tests; protocol code uses Aes256Gcm with counter nonces.
Bytes aes_gcm_encrypt(ByteView key, ByteView iv, ByteView aad, ByteView plaintext);
/// Throws Error{auth_failed} on a bad tag, Error{invalid_length} on bad key/iv/input sizes.
Bytes aes_gcm_decrypt(ByteView key, ByteView iv, ByteView aad, ByteView sealed);

}  // namespace pqot::crypto
