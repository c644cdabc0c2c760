// Four Keccak-f[1600] permutations at once and the four-way SHAKE over them (keccak_x4.hpp).
#include "keccak_x4.hpp"

#include <cstdlib>
#include <cstring>

#include "keccak_constants.hpp"
#include "pqot/crypto/secure.hpp"
#include "pqot/crypto/sha3.hpp"
#include "simd.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace pqot::crypto {

namespace portable {

void keccak_f1600_x4(KeccakX4State& s) noexcept {
  for (std::size_t j = 0; j < 4; ++j) {
    std::uint64_t one[25];
    for (std::size_t i = 0; i < 25; ++i) one[i] = s.lane[i][j];
    keccak_f1600(one);
    for (std::size_t i = 0; i < 25; ++i) s.lane[i][j] = one[i];
    secure_wipe(one, sizeof(one));
  }
}

}  // namespace portable

#if defined(__x86_64__)

namespace avx2 {

namespace {

#define PQOT_AVX2_INLINE __attribute__((target("avx2"), always_inline)) inline

template <int N>
PQOT_AVX2_INLINE __m256i rol(__m256i v) {
  if constexpr (N == 0) {
    return v;
  } else {
    return _mm256_or_si256(_mm256_slli_epi64(v, N), _mm256_srli_epi64(v, 64 - N));
  }
}

// One output row y of rho, pi and chi (FIPS 202 sections 3.2.2-3.2.4): b_x = rol(a[src_x] ^ d,
// rho offset), e[5y + x] = b_x ^ (~b_{x+1} & b_{x+2}). The sources and offsets are those of the
// written-out scalar round in keccak.cpp (e.g. row 0 reads lanes 0, 6, 12, 18, 24).
template <int S0, int R0, int S1, int R1, int S2, int R2, int S3, int R3, int S4, int R4>
PQOT_AVX2_INLINE void chi_row(__m256i* e, const __m256i* a, const __m256i* d) {
  const __m256i b0 = rol<R0>(_mm256_xor_si256(a[S0], d[S0 % 5]));
  const __m256i b1 = rol<R1>(_mm256_xor_si256(a[S1], d[S1 % 5]));
  const __m256i b2 = rol<R2>(_mm256_xor_si256(a[S2], d[S2 % 5]));
  const __m256i b3 = rol<R3>(_mm256_xor_si256(a[S3], d[S3 % 5]));
  const __m256i b4 = rol<R4>(_mm256_xor_si256(a[S4], d[S4 % 5]));
  e[0] = _mm256_xor_si256(b0, _mm256_andnot_si256(b1, b2));
  e[1] = _mm256_xor_si256(b1, _mm256_andnot_si256(b2, b3));
  e[2] = _mm256_xor_si256(b2, _mm256_andnot_si256(b3, b4));
  e[3] = _mm256_xor_si256(b3, _mm256_andnot_si256(b4, b0));
  e[4] = _mm256_xor_si256(b4, _mm256_andnot_si256(b0, b1));
}

// One round from a into e: theta, then rho, pi and chi row by row, then iota.
PQOT_AVX2_INLINE void round_x4(__m256i* e, const __m256i* a, std::uint64_t rc) {
  __m256i c[5], d[5];
  for (int x = 0; x < 5; ++x) {
    c[x] = _mm256_xor_si256(_mm256_xor_si256(a[x], a[x + 5]),
                            _mm256_xor_si256(_mm256_xor_si256(a[x + 10], a[x + 15]), a[x + 20]));
  }
  for (int x = 0; x < 5; ++x) d[x] = _mm256_xor_si256(c[(x + 4) % 5], rol<1>(c[(x + 1) % 5]));
  // Lane 5y + x of the result takes, before chi, lane x' + 5y' with (x, y) = pi(x', y') rotated
  // by its rho offset.
  chi_row<0, 0, 6, 44, 12, 43, 18, 21, 24, 14>(e + 0, a, d);
  chi_row<3, 28, 9, 20, 10, 3, 16, 45, 22, 61>(e + 5, a, d);
  chi_row<1, 1, 7, 6, 13, 25, 19, 8, 20, 18>(e + 10, a, d);
  chi_row<4, 27, 5, 36, 11, 10, 17, 15, 23, 56>(e + 15, a, d);
  chi_row<2, 62, 8, 55, 14, 39, 15, 41, 21, 2>(e + 20, a, d);
  e[0] = _mm256_xor_si256(e[0], _mm256_set1_epi64x(static_cast<long long>(rc)));
}

#undef PQOT_AVX2_INLINE

}  // namespace

__attribute__((target("avx2"))) void keccak_f1600_x4(KeccakX4State& s) noexcept {
  __m256i a[25], e[25];
  for (std::size_t i = 0; i < 25; ++i) {
    a[i] = _mm256_load_si256(reinterpret_cast<const __m256i*>(s.lane[i]));
  }
  for (std::size_t round = 0; round < 24; round += 2) {
    round_x4(e, a, kKeccakRoundConstants[round]);
    round_x4(a, e, kKeccakRoundConstants[round + 1]);
  }
  for (std::size_t i = 0; i < 25; ++i) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(s.lane[i]), a[i]);
  }
  // No wipe of a and e: they are registers and stack slots of this frame, like the scalar
  // permutation's locals.
}

}  // namespace avx2

#endif  // defined(__x86_64__)

void keccak_f1600_x4(KeccakX4State& s) noexcept {
#if defined(__x86_64__)
  if (simd::use_avx2()) return avx2::keccak_f1600_x4(s);
#endif
  portable::keccak_f1600_x4(s);
}

ShakeX4::ShakeX4(std::size_t rate) noexcept : rate_(rate) {
  if (rate != 168 && rate != 136) std::abort();  // SHAKE128 or SHAKE256 only
}

ShakeX4::~ShakeX4() {
  secure_wipe(&state_, sizeof(state_));
}

namespace {

// XORs bytes [0, len) of in into the first len bytes of state j (little-endian lanes).
void keccak_x4_xor_bytes(KeccakX4State& s, std::size_t j, const std::uint8_t* in,
                         std::size_t len) noexcept {
  for (std::size_t i = 0; i < len; ++i) {
    s.lane[i / 8][j] ^= static_cast<std::uint64_t>(in[i]) << (8 * (i % 8));
  }
}

}  // namespace

void ShakeX4::absorb_once(const std::uint8_t* const in[4], std::size_t len) noexcept {
  std::size_t done = 0;
  while (len - done >= rate_) {
    for (std::size_t j = 0; j < 4; ++j) keccak_x4_xor_bytes(state_, j, in[j] + done, rate_);
    keccak_f1600_x4(state_);
    done += rate_;
  }
  const std::size_t tail = len - done;
  for (std::size_t j = 0; j < 4; ++j) {
    keccak_x4_xor_bytes(state_, j, in[j] + done, tail);
    // pad10*1 with SHAKE's suffix bits 1111 (FIPS 202 sections 5.1 and 6.2)
    state_.lane[tail / 8][j] ^= std::uint64_t{0x1f} << (8 * (tail % 8));
    state_.lane[(rate_ - 1) / 8][j] ^= std::uint64_t{0x80} << (8 * ((rate_ - 1) % 8));
  }
}

void ShakeX4::squeeze_blocks(std::uint8_t* const out[4], std::size_t blocks) noexcept {
  for (std::size_t b = 0; b < blocks; ++b) {
    keccak_f1600_x4(state_);
    for (std::size_t j = 0; j < 4; ++j) {
      std::uint8_t* dst = out[j] + b * rate_;
      for (std::size_t i = 0; i < rate_ / 8; ++i) {
        const std::uint64_t lane = state_.lane[i][j];
        std::memcpy(dst + 8 * i, &lane, 8);  // little-endian hosts (keccak.cpp asserts it)
      }
    }
  }
}

}  // namespace pqot::crypto
