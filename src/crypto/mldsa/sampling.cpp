// Pseudorandom sampling of FIPS 204 section 7.3 (Algorithms 29-34) from SHAKE128 (G) and SHAKE256
// (H). The XOF output is a stream, so squeezing whole blocks and consuming them byte by byte
// equals the standard's squeezes of 1, 3 or 8 bytes.
#include <cstring>

#include "ct.hpp"
#include "poly.hpp"
#include "pqot/crypto/secure.hpp"
#include "pqot/crypto/sha3.hpp"

namespace pqot::crypto::mldsa {

// Algorithm 30 with CoeffFromThreeBytes (Algorithm 14). rho is public, so the data-dependent loop
// length is no leak. Five SHAKE128 blocks (280 candidates) almost always suffice; more are
// squeezed one at a time when needed.
void sample_ntt(Poly& a, const std::uint8_t rho[kSeedBytes], std::uint8_t s,
                std::uint8_t r) noexcept {
  std::uint8_t seed[kSeedBytes + 2];
  std::memcpy(seed, rho, kSeedBytes);
  seed[kSeedBytes] = s;
  seed[kSeedBytes + 1] = r;
  Shake128 g;
  g.absorb(seed);

  constexpr std::size_t kBlock = 168;  // a multiple of 3: no candidate straddles two blocks
  std::uint8_t buf[5 * kBlock];
  g.squeeze_blocks(buf);
  std::size_t len = sizeof(buf);
  std::size_t pos = 0;
  std::size_t j = 0;
  while (j < kN) {
    if (pos == len) {
      g.squeeze_blocks({buf, kBlock});
      len = kBlock;
      pos = 0;
    }
    // Algorithm 14: the top bit of b2 is dropped; z is rejected unless z < q.
    const std::int32_t z = static_cast<std::int32_t>(buf[pos]) |
                           (static_cast<std::int32_t>(buf[pos + 1]) << 8) |
                           (static_cast<std::int32_t>(buf[pos + 2] & 0x7f) << 16);
    pos += 3;
    if (z < kQ) a.c[j++] = z;
  }
}

namespace {

// Algorithm 15, CoeffFromHalfByte, split into its two parts so that neither branches on the nibble
// b: accept_half_byte is 1 iff b < 15 (eta = 2) or b < 9 (eta = 4), else 0 (the standard's bottom);
// coeff_from_half_byte is eta - (b mod 5) or eta - b, meaningful only for an accepted b.
inline std::uint32_t accept_half_byte(std::uint32_t b, int eta) noexcept {
  const std::uint32_t bound = eta == 2 ? 15 : 9;
  return (b - bound) >> 31;  // b < bound <=> b - bound wraps around
}

inline std::int32_t coeff_from_half_byte(std::uint32_t b, int eta) noexcept {
  if (eta == 2) {
    // b mod 5 = b - 5 floor(b / 5), floor(b / 5) = (205 b) >> 10 for b < 16: no division.
    return 2 - static_cast<std::int32_t>(b - 5 * ((205 * b) >> 10));
  }
  return 4 - static_cast<std::int32_t>(b);
}

}  // namespace

// Algorithm 31. The nibbles come from H(rho' || nonce) with rho' secret, and the coefficients they
// give are secret; only whether each nibble is accepted is declassified (mldsa/ct.hpp, item 2),
// one byte's two decisions at a time. Branching on those decisions is what lets the loop end after
// 256 accepted nibbles; the coefficient values are computed without a branch or a table.
void sample_eta(Poly& a, const std::uint8_t rho_prime[kCrhBytes], std::uint16_t nonce,
                int eta) noexcept {
  std::uint8_t seed[kCrhBytes + 2];
  std::memcpy(seed, rho_prime, kCrhBytes);
  seed[kCrhBytes] = static_cast<std::uint8_t>(nonce);
  seed[kCrhBytes + 1] = static_cast<std::uint8_t>(nonce >> 8);
  Shake256 h;
  h.absorb(seed);

  constexpr std::size_t kBlock = 136;
  std::uint8_t buf[kBlock];
  std::size_t pos = kBlock;
  std::size_t j = 0;
  while (j < kN) {
    if (pos == kBlock) {
      h.squeeze_blocks(buf);
      pos = 0;
    }
    const std::uint32_t z = buf[pos++];
    const std::uint32_t b0 = z & 0x0f;
    const std::uint32_t b1 = z >> 4;
    // Bit 0: the low nibble is accepted; bit 1: the high nibble is (lines 6-13).
    std::uint32_t accepted = accept_half_byte(b0, eta) | (accept_half_byte(b1, eta) << 1);
    declassify(&accepted, sizeof(accepted));
    if (accepted & 1) a.c[j++] = coeff_from_half_byte(b0, eta);
    if ((accepted & 2) && j < kN) a.c[j++] = coeff_from_half_byte(b1, eta);
  }
  secure_wipe(seed, sizeof(seed));
  secure_wipe(buf, sizeof(buf));
}

void sample_mask(Poly& y, const std::uint8_t rho2[kCrhBytes], std::uint16_t nonce,
                 std::int32_t gamma1, int z_bits) noexcept {
  std::uint8_t seed[kCrhBytes + 2];
  std::memcpy(seed, rho2, kCrhBytes);
  seed[kCrhBytes] = static_cast<std::uint8_t>(nonce);
  seed[kCrhBytes + 1] = static_cast<std::uint8_t>(nonce >> 8);
  std::uint8_t buf[32 * 20];
  const std::size_t len = 32 * static_cast<std::size_t>(z_bits);
  shake256(seed, {buf, len});
  poly_unpack(y, buf, gamma1, z_bits);
  secure_wipe(seed, sizeof(seed));
  secure_wipe(buf, sizeof(buf));
}

// Algorithm 29. Called on c~, which is public once the signature is out; the positions of the
// nonzero coefficients depend on it through the rejection loop and the index j.
void sample_in_ball(Poly& c, const std::uint8_t* c_tilde, std::size_t c_tilde_len,
                    int tau) noexcept {
  Shake256 h;
  h.absorb({c_tilde, c_tilde_len});
  constexpr std::size_t kBlock = 136;
  std::uint8_t buf[kBlock];
  h.squeeze_blocks(buf);
  std::uint64_t signs = 0;  // the 64 bits h of line 3
  for (std::size_t i = 0; i < 8; ++i) signs |= static_cast<std::uint64_t>(buf[i]) << (8 * i);
  std::size_t pos = 8;

  c.c.fill(0);
  for (int i = kN - tau; i < kN; ++i) {
    std::size_t j = 0;
    do {
      if (pos == kBlock) {
        h.squeeze_blocks(buf);
        pos = 0;
      }
      j = buf[pos++];
    } while (j > static_cast<std::size_t>(i));
    c.c[static_cast<std::size_t>(i)] = c.c[j];
    c.c[j] = 1 - 2 * static_cast<std::int32_t>(signs & 1);  // (-1)^h[i + tau - 256]
    signs >>= 1;
  }
}

}  // namespace pqot::crypto::mldsa
