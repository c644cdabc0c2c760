// Sampling from the XOF and the PRF (FIPS 203 section 4.2.2, Algorithms 7-8).
#include <cstring>

#include "poly.hpp"
#include "pqot/crypto/secure.hpp"
#include "pqot/crypto/sha3.hpp"

namespace pqot::crypto::mlkem {

// Algorithm 7. rho is public, so the data-dependent loop length is not a timing leak. Three
// SHAKE128 blocks (504 bytes, 336 candidates) give 256 coefficients with probability
// 1 - 2^-100 or so; further blocks are squeezed one at a time when needed.
void sample_ntt(Poly& r, const std::uint8_t rho[kSymBytes], std::uint8_t x, std::uint8_t y) noexcept {
  std::uint8_t seed[kSymBytes + 2];
  std::memcpy(seed, rho, kSymBytes);
  seed[kSymBytes] = x;
  seed[kSymBytes + 1] = y;
  Shake128 xof;
  xof.absorb(seed);

  constexpr std::size_t kBlock = 168;
  std::uint8_t buf[3 * kBlock];
  xof.squeeze_blocks(buf);
  std::size_t len = sizeof(buf);
  std::size_t pos = 0;
  std::size_t count = 0;
  while (count < kN) {
    if (pos + 3 > len) {
      xof.squeeze_blocks({buf, kBlock});
      len = kBlock;
      pos = 0;
    }
    const std::uint16_t d1 = static_cast<std::uint16_t>(buf[pos] | ((buf[pos + 1] & 0x0f) << 8));
    const std::uint16_t d2 = static_cast<std::uint16_t>((buf[pos + 1] >> 4) | (buf[pos + 2] << 4));
    pos += 3;
    if (d1 < kQ) r.c[count++] = static_cast<std::int16_t>(d1);
    if (d2 < kQ && count < kN) r.c[count++] = static_cast<std::int16_t>(d2);
  }
}

namespace {

inline std::uint32_t load32_le(const std::uint8_t* p) noexcept {
  return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
         (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
}

inline std::uint32_t load24_le(const std::uint8_t* p) noexcept {
  return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
         (static_cast<std::uint32_t>(p[2]) << 16);
}

// Algorithm 8 for eta = 2: each coefficient is (b0 + b1) - (b2 + b3) over four input bits.
void cbd2(Poly& r, const std::uint8_t* buf) noexcept {
  for (std::size_t i = 0; i < kN / 8; ++i) {
    const std::uint32_t t = load32_le(buf + 4 * i);
    const std::uint32_t d = (t & 0x55555555u) + ((t >> 1) & 0x55555555u);
    for (std::size_t j = 0; j < 8; ++j) {
      const auto a = static_cast<std::int16_t>((d >> (4 * j)) & 3);
      const auto b = static_cast<std::int16_t>((d >> (4 * j + 2)) & 3);
      r.c[8 * i + j] = static_cast<std::int16_t>(a - b);
    }
  }
}

// Algorithm 8 for eta = 3: sums of three bits.
void cbd3(Poly& r, const std::uint8_t* buf) noexcept {
  for (std::size_t i = 0; i < kN / 4; ++i) {
    const std::uint32_t t = load24_le(buf + 3 * i);
    const std::uint32_t d = (t & 0x00249249u) + ((t >> 1) & 0x00249249u) + ((t >> 2) & 0x00249249u);
    for (std::size_t j = 0; j < 4; ++j) {
      const auto a = static_cast<std::int16_t>((d >> (6 * j)) & 7);
      const auto b = static_cast<std::int16_t>((d >> (6 * j + 3)) & 7);
      r.c[4 * i + j] = static_cast<std::int16_t>(a - b);
    }
  }
}

}  // namespace

void sample_cbd(Poly& r, const std::uint8_t sigma[kSymBytes], std::uint8_t nonce, int eta) noexcept {
  // PRF_eta(s, b) = SHAKE256(s || b, 64 * eta) (section 4.1).
  std::uint8_t input[kSymBytes + 1];
  std::memcpy(input, sigma, kSymBytes);
  input[kSymBytes] = nonce;
  std::uint8_t buf[64 * 3];
  const std::size_t len = 64 * static_cast<std::size_t>(eta);
  shake256(input, {buf, len});
  if (eta == 2) {
    cbd2(r, buf);
  } else {
    cbd3(r, buf);
  }
  secure_wipe(input, sizeof(input));
  secure_wipe(buf, sizeof(buf));
}

}  // namespace pqot::crypto::mlkem
