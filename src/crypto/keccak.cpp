// Keccak-f[1600] and the sponge construction (FIPS 202), used for SHA3-256/512 and SHAKE128/256.
// Why not OpenSSL's EVP: see include/pqot/crypto/sha3.hpp. Lanes are little-endian 64-bit words.
#include <bit>
#include <cstring>

#include "pqot/crypto/secure.hpp"
#include "pqot/crypto/sha3.hpp"

namespace pqot::crypto {

namespace {

constexpr std::uint64_t kRoundConstants[24] = {
    0x0000000000000001ULL, 0x0000000000008082ULL, 0x800000000000808aULL, 0x8000000080008000ULL,
    0x000000000000808bULL, 0x0000000080000001ULL, 0x8000000080008081ULL, 0x8000000000008009ULL,
    0x000000000000008aULL, 0x0000000000000088ULL, 0x0000000080008009ULL, 0x000000008000000aULL,
    0x000000008000808bULL, 0x800000000000008bULL, 0x8000000000008089ULL, 0x8000000000008003ULL,
    0x8000000000008002ULL, 0x8000000000000080ULL, 0x000000000000800aULL, 0x800000008000000aULL,
    0x8000000080008081ULL, 0x8000000000008080ULL, 0x0000000080000001ULL, 0x8000000080008008ULL,
};

inline std::uint64_t rol(std::uint64_t v, int n) noexcept { return std::rotl(v, n); }

static_assert(std::endian::native == std::endian::little,
              "lanes are loaded with memcpy; a big-endian port needs byte swaps here");

inline void xor_lanes(std::uint64_t* state, const std::uint8_t* in, std::size_t bytes) noexcept {
  std::size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    std::uint64_t lane;
    std::memcpy(&lane, in + i, 8);
    state[i / 8] ^= lane;
  }
  for (; i < bytes; ++i) {
    state[i / 8] ^= static_cast<std::uint64_t>(in[i]) << (8 * (i % 8));
  }
}

inline void xor_byte(std::uint64_t* state, std::size_t pos, std::uint8_t value) noexcept {
  state[pos / 8] ^= static_cast<std::uint64_t>(value) << (8 * (pos % 8));
}

inline void extract(const std::uint64_t* state, std::size_t offset, std::uint8_t* out,
                    std::size_t bytes) noexcept {
  // Lanes are little-endian in memory on every target we build for (static_assert above).
  std::memcpy(out, reinterpret_cast<const std::uint8_t*>(state) + offset, bytes);
}

}  // namespace

// FIPS 202 section 3.3: 24 rounds of theta, rho, pi, chi, iota. The round body is written out in
// full (generated from the rho offsets and the pi permutation) so that the lanes stay in registers.
void keccak_f1600(std::uint64_t a[25]) noexcept {
  for (int round = 0; round < 24; ++round) {
    const std::uint64_t c0 = a[0] ^ a[5] ^ a[10] ^ a[15] ^ a[20];
    const std::uint64_t c1 = a[1] ^ a[6] ^ a[11] ^ a[16] ^ a[21];
    const std::uint64_t c2 = a[2] ^ a[7] ^ a[12] ^ a[17] ^ a[22];
    const std::uint64_t c3 = a[3] ^ a[8] ^ a[13] ^ a[18] ^ a[23];
    const std::uint64_t c4 = a[4] ^ a[9] ^ a[14] ^ a[19] ^ a[24];
    const std::uint64_t d0 = c4 ^ rol(c1, 1);
    const std::uint64_t d1 = c0 ^ rol(c2, 1);
    const std::uint64_t d2 = c1 ^ rol(c3, 1);
    const std::uint64_t d3 = c2 ^ rol(c4, 1);
    const std::uint64_t d4 = c3 ^ rol(c0, 1);
    const std::uint64_t b0 = a[0] ^ d0;
    const std::uint64_t b1 = rol(a[6] ^ d1, 44);
    const std::uint64_t b2 = rol(a[12] ^ d2, 43);
    const std::uint64_t b3 = rol(a[18] ^ d3, 21);
    const std::uint64_t b4 = rol(a[24] ^ d4, 14);
    const std::uint64_t b5 = rol(a[3] ^ d3, 28);
    const std::uint64_t b6 = rol(a[9] ^ d4, 20);
    const std::uint64_t b7 = rol(a[10] ^ d0, 3);
    const std::uint64_t b8 = rol(a[16] ^ d1, 45);
    const std::uint64_t b9 = rol(a[22] ^ d2, 61);
    const std::uint64_t b10 = rol(a[1] ^ d1, 1);
    const std::uint64_t b11 = rol(a[7] ^ d2, 6);
    const std::uint64_t b12 = rol(a[13] ^ d3, 25);
    const std::uint64_t b13 = rol(a[19] ^ d4, 8);
    const std::uint64_t b14 = rol(a[20] ^ d0, 18);
    const std::uint64_t b15 = rol(a[4] ^ d4, 27);
    const std::uint64_t b16 = rol(a[5] ^ d0, 36);
    const std::uint64_t b17 = rol(a[11] ^ d1, 10);
    const std::uint64_t b18 = rol(a[17] ^ d2, 15);
    const std::uint64_t b19 = rol(a[23] ^ d3, 56);
    const std::uint64_t b20 = rol(a[2] ^ d2, 62);
    const std::uint64_t b21 = rol(a[8] ^ d3, 55);
    const std::uint64_t b22 = rol(a[14] ^ d4, 39);
    const std::uint64_t b23 = rol(a[15] ^ d0, 41);
    const std::uint64_t b24 = rol(a[21] ^ d1, 2);
    a[0] = b0 ^ (~b1 & b2);
    a[1] = b1 ^ (~b2 & b3);
    a[2] = b2 ^ (~b3 & b4);
    a[3] = b3 ^ (~b4 & b0);
    a[4] = b4 ^ (~b0 & b1);
    a[5] = b5 ^ (~b6 & b7);
    a[6] = b6 ^ (~b7 & b8);
    a[7] = b7 ^ (~b8 & b9);
    a[8] = b8 ^ (~b9 & b5);
    a[9] = b9 ^ (~b5 & b6);
    a[10] = b10 ^ (~b11 & b12);
    a[11] = b11 ^ (~b12 & b13);
    a[12] = b12 ^ (~b13 & b14);
    a[13] = b13 ^ (~b14 & b10);
    a[14] = b14 ^ (~b10 & b11);
    a[15] = b15 ^ (~b16 & b17);
    a[16] = b16 ^ (~b17 & b18);
    a[17] = b17 ^ (~b18 & b19);
    a[18] = b18 ^ (~b19 & b15);
    a[19] = b19 ^ (~b15 & b16);
    a[20] = b20 ^ (~b21 & b22);
    a[21] = b21 ^ (~b22 & b23);
    a[22] = b22 ^ (~b23 & b24);
    a[23] = b23 ^ (~b24 & b20);
    a[24] = b24 ^ (~b20 & b21);
    a[0] ^= kRoundConstants[round];
  }
}

KeccakSponge::~KeccakSponge() { secure_wipe(state_, sizeof(state_)); }

void KeccakSponge::absorb(ByteView data) noexcept {
  const std::uint8_t* in = data.data();
  std::size_t len = data.size();
  if (pos_ != 0) {
    const std::size_t take = std::min(len, rate_ - pos_);
    for (std::size_t i = 0; i < take; ++i) xor_byte(state_, pos_ + i, in[i]);
    pos_ += take;
    in += take;
    len -= take;
    if (pos_ < rate_) return;
    keccak_f1600(state_);
    pos_ = 0;
  }
  while (len >= rate_) {
    xor_lanes(state_, in, rate_);
    keccak_f1600(state_);
    in += rate_;
    len -= rate_;
  }
  xor_lanes(state_, in, len);
  pos_ = len;
}

void KeccakSponge::finish() noexcept {
  // pad10*1 with the domain suffix bits (FIPS 202 sections 5.1 and 6).
  xor_byte(state_, pos_, suffix_);
  xor_byte(state_, rate_ - 1, 0x80);
  keccak_f1600(state_);
  pos_ = 0;
  squeezing_ = true;
}

void KeccakSponge::squeeze(MutableByteView out) noexcept {
  if (!squeezing_) finish();
  std::uint8_t* dst = out.data();
  std::size_t len = out.size();
  while (len > 0) {
    if (pos_ == rate_) {
      keccak_f1600(state_);
      pos_ = 0;
    }
    const std::size_t take = std::min(len, rate_ - pos_);
    extract(state_, pos_, dst, take);
    pos_ += take;
    dst += take;
    len -= take;
  }
}

void KeccakSponge::squeeze_blocks(MutableByteView out) noexcept {
  if (!squeezing_) {
    finish();
  } else if (pos_ != 0) {
    // Continue mid-block with the general path.
    squeeze(out);
    return;
  }
  std::uint8_t* dst = out.data();
  std::size_t len = out.size();
  while (len >= rate_) {
    extract(state_, 0, dst, rate_);
    keccak_f1600(state_);
    dst += rate_;
    len -= rate_;
  }
  // pos_ stays 0: the state holds the next unread block.
  if (len > 0) squeeze({dst, len});
}

std::array<std::uint8_t, 32> sha3_256(ByteView data) noexcept {
  KeccakSponge s(136, 0x06);
  s.absorb(data);
  std::array<std::uint8_t, 32> out;
  s.squeeze(out);
  return out;
}

std::array<std::uint8_t, 64> sha3_512(ByteView data) noexcept {
  KeccakSponge s(72, 0x06);
  s.absorb(data);
  std::array<std::uint8_t, 64> out;
  s.squeeze(out);
  return out;
}

void shake128(ByteView data, MutableByteView out) noexcept {
  Shake128 s;
  s.absorb(data);
  s.squeeze(out);
}

void shake256(ByteView data, MutableByteView out) noexcept {
  Shake256 s;
  s.absorb(data);
  s.squeeze(out);
}

}  // namespace pqot::crypto
