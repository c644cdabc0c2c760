// The NIST AES-256-CTR DRBG of the PQC known-answer generator (PQCgenKAT_kem's `randombytes`).
//
// DETERMINISTIC, for reproducing known answers only: it is a pure function of its 48-byte seed and
// must never be the source of a real key. `pqot kem keygen --seed` uses it for the contenders so
// that a KAT entry's keys can be reproduced from the entry's seed; the KAT tests use it to build the
// single-entry response (docs/crypto.md, "Comparison contenders").
//
// The construction (NIST SP 800-90A CTR_DRBG, AES-256, no derivation function, no personalization,
// as NIST's rng.c): state Key = 0^32, V = 0^16; reseed(entropy48) runs Update(entropy48);
// Update(data): three times {V = V + 1 (128-bit big-endian); block_i = AES-256(Key, V)}, then
// Key‖V = (block_0‖block_1‖block_2) XOR data; randombytes(n): repeat {V = V + 1; out ‖=
// AES-256(Key, V)} until n bytes, truncate, then Update(nothing).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "pqot/crypto/bytes.hpp"
#include "pqot/crypto/kem.hpp"
#include "pqot/crypto/secure.hpp"

/// Deliberately apart from the generator (random.hpp): a namespace of its own, and no name that
/// says "random".
namespace pqot::crypto::kat {

class NistDrbg {
 public:
  static constexpr std::size_t seed_size = 48;

  /// Seeded with `entropy` (exactly 48 bytes; Error{invalid_length} otherwise).
  explicit NistDrbg(ByteView entropy);
  ~NistDrbg();
  NistDrbg(const NistDrbg&) = delete;
  NistDrbg& operator=(const NistDrbg&) = delete;

  /// One `randombytes(out, n)` call of the reference implementations.
  void draw(MutableByteView out);
  SecretBytes draw(std::size_t n);

 private:
  void update(const std::uint8_t* data);  // data: 48 bytes or nullptr
  /// count blocks AES-256(Key, V+1), AES-256(Key, V+2), ... into out; V advances by count.
  void counter_blocks(std::uint8_t* out, std::size_t count);

  std::array<std::uint8_t, 32> key_{};
  std::array<std::uint8_t, 16> v_{};
};

/// The keygen seed `kem` would draw from `drbg`: its reference's randombytes calls
/// (Kem::keygen_randombytes_calls()) made in order and concatenated.
SecretBytes keygen_draws(const Kem& kem, NistDrbg& drbg);

}  // namespace pqot::crypto::kat
