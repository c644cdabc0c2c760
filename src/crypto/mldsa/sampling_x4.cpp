// Four entries of ExpandA (Algorithm 32 via RejNTTPoly, Algorithm 30) or of ExpandMask
// (Algorithm 34) at once, over the four-way SHAKE of ../keccak_x4.hpp: the same polynomials as
// four calls of sample_ntt or sample_mask (sampling.cpp), with one AVX2 permutation doing the work
// of four where the CPU has AVX2.
#include <cstring>

#include "../keccak_x4.hpp"
#include "poly.hpp"
#include "pqot/crypto/secure.hpp"

namespace pqot::crypto::mldsa {

// Algorithm 30 on four streams. rho is public, so the data-dependent loop lengths are no leak.
// Five blocks (280 candidates) almost always suffice (tests pass fewer to reach the rest);
// otherwise one more block of every stream is squeezed (168 is a multiple of 3: no candidate
// straddles two blocks) and the streams still short go on.
void sample_ntt_x4(Poly* const a[4], const std::uint8_t rho[kSeedBytes], const std::uint8_t s[4],
                   const std::uint8_t r[4], std::size_t first_blocks) noexcept {
  constexpr std::size_t kBlock = 168;
  std::uint8_t seeds[4][kSeedBytes + 2];
  for (std::size_t k = 0; k < 4; ++k) {
    std::memcpy(seeds[k], rho, kSeedBytes);
    seeds[k][kSeedBytes] = s[k];
    seeds[k][kSeedBytes + 1] = r[k];
  }
  const std::uint8_t* const in[4] = {seeds[0], seeds[1], seeds[2], seeds[3]};
  ShakeX4 g(kBlock);
  g.absorb_once(in, sizeof(seeds[0]));

  std::uint8_t buf[4][5 * kBlock];
  std::uint8_t* const out[4] = {buf[0], buf[1], buf[2], buf[3]};
  if (first_blocks == 0 || first_blocks > 5) first_blocks = 5;
  g.squeeze_blocks(out, first_blocks);
  std::size_t len = first_blocks * kBlock;
  std::size_t pos[4] = {0, 0, 0, 0};
  std::size_t filled[4] = {0, 0, 0, 0};
  for (;;) {
    bool short_of_coefficients = false;
    for (std::size_t k = 0; k < 4; ++k) {
      while (filled[k] < kN && pos[k] < len) {
        // Algorithm 14: the top bit of b2 is dropped; z is rejected unless z < q.
        const std::uint8_t* b = buf[k] + pos[k];
        const std::int32_t z = static_cast<std::int32_t>(b[0]) |
                               (static_cast<std::int32_t>(b[1]) << 8) |
                               (static_cast<std::int32_t>(b[2] & 0x7f) << 16);
        pos[k] += 3;
        if (z < kQ) a[k]->c[filled[k]++] = z;
      }
      short_of_coefficients |= filled[k] < kN;
    }
    if (!short_of_coefficients) break;
    g.squeeze_blocks(out, 1);
    len = kBlock;
    for (auto& p : pos) p = 0;
  }
}

void sample_mask_x4(Poly* const y[4], const std::uint8_t rho2[kCrhBytes],
                    const std::uint16_t nonce[4], std::int32_t gamma1, int z_bits) noexcept {
  constexpr std::size_t kBlock = 136;
  std::uint8_t seeds[4][kCrhBytes + 2];
  for (std::size_t k = 0; k < 4; ++k) {
    std::memcpy(seeds[k], rho2, kCrhBytes);
    seeds[k][kCrhBytes] = static_cast<std::uint8_t>(nonce[k]);
    seeds[k][kCrhBytes + 1] = static_cast<std::uint8_t>(nonce[k] >> 8);
  }
  const std::uint8_t* const in[4] = {seeds[0], seeds[1], seeds[2], seeds[3]};
  // 32 * z_bits <= 640 bytes of H output per polynomial: five blocks.
  std::uint8_t buf[4][5 * kBlock];
  static_assert(5 * kBlock >= 32 * 20);
  std::uint8_t* const out[4] = {buf[0], buf[1], buf[2], buf[3]};
  {
    ShakeX4 h(kBlock);
    h.absorb_once(in, sizeof(seeds[0]));
    h.squeeze_blocks(out, 5);
  }
  for (std::size_t k = 0; k < 4; ++k) poly_unpack(*y[k], buf[k], gamma1, z_bits);
  secure_wipe(seeds, sizeof(seeds));
  secure_wipe(buf, sizeof(buf));
}

}  // namespace pqot::crypto::mldsa
