// Keccak-f[1600] and the sponge construction (FIPS 202), used for SHA3-256/512 and SHAKE128/256.
// Why not OpenSSL's EVP: see include/pqot/crypto/sha3.hpp. Lanes are little-endian 64-bit words.
#include <bit>
#include <cstring>

#include "keccak_constants.hpp"
#include "pqot/crypto/secure.hpp"
#include "pqot/crypto/sha3.hpp"

namespace pqot::crypto {

namespace {

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
// full (generated from the rho offsets and the pi permutation), two rounds per iteration that
// alternate between the lane sets a and e, so that the state lives in local variables the compiler
// can keep in registers instead of memory behind a pointer. For each output row, rho+pi gives the
// five lanes b0..b4 and chi combines them. Chi uses the lane complementing transform (Keccak
// implementation overview; XKCP calls the pattern "Bebigokimisa"): lanes 1, 2, 8, 12, 17 and 20 are
// held inverted between rounds, which turns most of chi's NOT-AND into OR or AND without a NOT
// (5 NOTs per round instead of 25); they are inverted on entry and exit.
void keccak_f1600(std::uint64_t s[25]) noexcept {
  std::uint64_t a0 = s[0], a1 = ~s[1], a2 = ~s[2], a3 = s[3], a4 = s[4], a5 = s[5], a6 = s[6], a7 = s[7], a8 = ~s[8], a9 = s[9], a10 = s[10], a11 = s[11], a12 = ~s[12], a13 = s[13], a14 = s[14], a15 = s[15], a16 = s[16], a17 = ~s[17], a18 = s[18], a19 = s[19], a20 = ~s[20], a21 = s[21], a22 = s[22], a23 = s[23], a24 = s[24];
  std::uint64_t e0, e1, e2, e3, e4, e5, e6, e7, e8, e9, e10, e11, e12, e13, e14, e15, e16, e17, e18, e19, e20, e21, e22, e23, e24;
  std::uint64_t c0, c1, c2, c3, c4, d0, d1, d2, d3, d4, b0, b1, b2, b3, b4;
  for (int round = 0; round < 24; round += 2) {
    c0 = a0 ^ a5 ^ a10 ^ a15 ^ a20;
    c1 = a1 ^ a6 ^ a11 ^ a16 ^ a21;
    c2 = a2 ^ a7 ^ a12 ^ a17 ^ a22;
    c3 = a3 ^ a8 ^ a13 ^ a18 ^ a23;
    c4 = a4 ^ a9 ^ a14 ^ a19 ^ a24;
    d0 = c4 ^ rol(c1, 1);
    d1 = c0 ^ rol(c2, 1);
    d2 = c1 ^ rol(c3, 1);
    d3 = c2 ^ rol(c4, 1);
    d4 = c3 ^ rol(c0, 1);
    b0 = a0 ^ d0;
    b1 = rol(a6 ^ d1, 44);
    b2 = rol(a12 ^ d2, 43);
    b3 = rol(a18 ^ d3, 21);
    b4 = rol(a24 ^ d4, 14);
    e0 = b0 ^ (b1 | b2) ^ kKeccakRoundConstants[round];
    e1 = b1 ^ (~b2 | b3);
    e2 = b2 ^ (b3 & b4);
    e3 = b3 ^ (b4 | b0);
    e4 = b4 ^ (b0 & b1);
    b0 = rol(a3 ^ d3, 28);
    b1 = rol(a9 ^ d4, 20);
    b2 = rol(a10 ^ d0, 3);
    b3 = rol(a16 ^ d1, 45);
    b4 = rol(a22 ^ d2, 61);
    e5 = b0 ^ (b1 | b2);
    e6 = b1 ^ (b2 & b3);
    e7 = b2 ^ (b3 | ~b4);
    e8 = b3 ^ (b4 | b0);
    e9 = b4 ^ (b0 & b1);
    b0 = rol(a1 ^ d1, 1);
    b1 = rol(a7 ^ d2, 6);
    b2 = rol(a13 ^ d3, 25);
    b3 = rol(a19 ^ d4, 8);
    b4 = rol(a20 ^ d0, 18);
    e10 = b0 ^ (b1 | b2);
    e11 = b1 ^ (b2 & b3);
    e12 = b2 ^ (~b3 & b4);
    e13 = ~b3 ^ (b4 | b0);
    e14 = b4 ^ (b0 & b1);
    b0 = rol(a4 ^ d4, 27);
    b1 = rol(a5 ^ d0, 36);
    b2 = rol(a11 ^ d1, 10);
    b3 = rol(a17 ^ d2, 15);
    b4 = rol(a23 ^ d3, 56);
    e15 = b0 ^ (b1 & b2);
    e16 = b1 ^ (b2 | b3);
    e17 = b2 ^ (~b3 | b4);
    e18 = ~b3 ^ (b4 & b0);
    e19 = b4 ^ (b0 | b1);
    b0 = rol(a2 ^ d2, 62);
    b1 = rol(a8 ^ d3, 55);
    b2 = rol(a14 ^ d4, 39);
    b3 = rol(a15 ^ d0, 41);
    b4 = rol(a21 ^ d1, 2);
    e20 = b0 ^ (~b1 & b2);
    e21 = ~b1 ^ (b2 | b3);
    e22 = b2 ^ (b3 & b4);
    e23 = b3 ^ (b4 | b0);
    e24 = b4 ^ (b0 & b1);
    c0 = e0 ^ e5 ^ e10 ^ e15 ^ e20;
    c1 = e1 ^ e6 ^ e11 ^ e16 ^ e21;
    c2 = e2 ^ e7 ^ e12 ^ e17 ^ e22;
    c3 = e3 ^ e8 ^ e13 ^ e18 ^ e23;
    c4 = e4 ^ e9 ^ e14 ^ e19 ^ e24;
    d0 = c4 ^ rol(c1, 1);
    d1 = c0 ^ rol(c2, 1);
    d2 = c1 ^ rol(c3, 1);
    d3 = c2 ^ rol(c4, 1);
    d4 = c3 ^ rol(c0, 1);
    b0 = e0 ^ d0;
    b1 = rol(e6 ^ d1, 44);
    b2 = rol(e12 ^ d2, 43);
    b3 = rol(e18 ^ d3, 21);
    b4 = rol(e24 ^ d4, 14);
    a0 = b0 ^ (b1 | b2) ^ kKeccakRoundConstants[round + 1];
    a1 = b1 ^ (~b2 | b3);
    a2 = b2 ^ (b3 & b4);
    a3 = b3 ^ (b4 | b0);
    a4 = b4 ^ (b0 & b1);
    b0 = rol(e3 ^ d3, 28);
    b1 = rol(e9 ^ d4, 20);
    b2 = rol(e10 ^ d0, 3);
    b3 = rol(e16 ^ d1, 45);
    b4 = rol(e22 ^ d2, 61);
    a5 = b0 ^ (b1 | b2);
    a6 = b1 ^ (b2 & b3);
    a7 = b2 ^ (b3 | ~b4);
    a8 = b3 ^ (b4 | b0);
    a9 = b4 ^ (b0 & b1);
    b0 = rol(e1 ^ d1, 1);
    b1 = rol(e7 ^ d2, 6);
    b2 = rol(e13 ^ d3, 25);
    b3 = rol(e19 ^ d4, 8);
    b4 = rol(e20 ^ d0, 18);
    a10 = b0 ^ (b1 | b2);
    a11 = b1 ^ (b2 & b3);
    a12 = b2 ^ (~b3 & b4);
    a13 = ~b3 ^ (b4 | b0);
    a14 = b4 ^ (b0 & b1);
    b0 = rol(e4 ^ d4, 27);
    b1 = rol(e5 ^ d0, 36);
    b2 = rol(e11 ^ d1, 10);
    b3 = rol(e17 ^ d2, 15);
    b4 = rol(e23 ^ d3, 56);
    a15 = b0 ^ (b1 & b2);
    a16 = b1 ^ (b2 | b3);
    a17 = b2 ^ (~b3 | b4);
    a18 = ~b3 ^ (b4 & b0);
    a19 = b4 ^ (b0 | b1);
    b0 = rol(e2 ^ d2, 62);
    b1 = rol(e8 ^ d3, 55);
    b2 = rol(e14 ^ d4, 39);
    b3 = rol(e15 ^ d0, 41);
    b4 = rol(e21 ^ d1, 2);
    a20 = b0 ^ (~b1 & b2);
    a21 = ~b1 ^ (b2 | b3);
    a22 = b2 ^ (b3 & b4);
    a23 = b3 ^ (b4 | b0);
    a24 = b4 ^ (b0 & b1);
  }
  s[0] = a0;
  s[1] = ~a1;
  s[2] = ~a2;
  s[3] = a3;
  s[4] = a4;
  s[5] = a5;
  s[6] = a6;
  s[7] = a7;
  s[8] = ~a8;
  s[9] = a9;
  s[10] = a10;
  s[11] = a11;
  s[12] = ~a12;
  s[13] = a13;
  s[14] = a14;
  s[15] = a15;
  s[16] = a16;
  s[17] = ~a17;
  s[18] = a18;
  s[19] = a19;
  s[20] = ~a20;
  s[21] = a21;
  s[22] = a22;
  s[23] = a23;
  s[24] = a24;
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
