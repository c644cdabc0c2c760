// SHA-3 and SHAKE (FIPS 202) on pqot's own Keccak-f[1600] (src/crypto/keccak.cpp).
//
// OpenSSL 3.0's EVP interface can squeeze a SHAKE context only once, while ML-KEM's SampleNTT needs
// an incremental squeeze, and its per-call overhead is large next to one permutation; so the sponge
// lives here. Tests check it byte for byte against OpenSSL (docs/crypto.md, "Keccak").
#pragma once

#include <array>
#include <cstdint>

#include "pqot/crypto/bytes.hpp"

namespace pqot::crypto {

/// Keccak-f[1600] on 25 little-endian lanes (FIPS 202, section 3).
void keccak_f1600(std::uint64_t state[25]) noexcept;

/// An incremental Keccak sponge: absorb any number of times, then squeeze any number of times.
class KeccakSponge {
 public:
  /// rate in bytes (168 SHAKE128, 136 SHAKE256/SHA3-256, 72 SHA3-512); suffix the domain bits
  /// (0x1f SHAKE, 0x06 SHA-3).
  KeccakSponge(std::size_t rate, std::uint8_t suffix) noexcept : rate_(rate), suffix_(suffix) {}
  ~KeccakSponge();
  KeccakSponge(const KeccakSponge&) = default;
  KeccakSponge& operator=(const KeccakSponge&) = default;

  void absorb(ByteView data) noexcept;
  /// The first call pads and finishes absorbing; later absorb() calls are a programming error.
  void squeeze(MutableByteView out) noexcept;
  /// Squeezes whole blocks of `rate` bytes straight into `out` (out.size() a multiple of rate).
  void squeeze_blocks(MutableByteView out) noexcept;
  std::size_t rate() const noexcept { return rate_; }

 private:
  void finish() noexcept;

  std::uint64_t state_[25] = {};
  std::size_t rate_;
  std::size_t pos_ = 0;  // byte position within the current block
  std::uint8_t suffix_;
  bool squeezing_ = false;
};

struct Shake128 : KeccakSponge {
  Shake128() noexcept : KeccakSponge(168, 0x1f) {}
};
struct Shake256 : KeccakSponge {
  Shake256() noexcept : KeccakSponge(136, 0x1f) {}
};

std::array<std::uint8_t, 32> sha3_256(ByteView data) noexcept;
std::array<std::uint8_t, 64> sha3_512(ByteView data) noexcept;
void shake128(ByteView data, MutableByteView out) noexcept;
void shake256(ByteView data, MutableByteView out) noexcept;

}  // namespace pqot::crypto
