// Four Keccak-f[1600] permutations at once and four SHAKE instances over them (FIPS 202), for
// callers that hash four independent inputs of the same length: ML-DSA's ExpandA and ExpandMask
// (mldsa/sampling_x4.cpp). With AVX2 one 256-bit register holds the same lane of the four states;
// without it (or forced off, simd.hpp) the four states go through keccak_f1600 one after another.
// Both give the same bytes as four separate Shake128/Shake256 instances
// (tests/unit/simd_test.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

namespace pqot::crypto {

/// Four Keccak states, interleaved: lane[i][j] is lane i (FIPS 202 section 3.1.2 numbering, as in
/// keccak_f1600) of state j.
struct KeccakX4State {
  alignas(32) std::uint64_t lane[25][4];
};

/// Keccak-f[1600] on each of the four states (AVX2 where simd::use_avx2(), else portable).
void keccak_f1600_x4(KeccakX4State& s) noexcept;

namespace portable {
void keccak_f1600_x4(KeccakX4State& s) noexcept;
}
#if defined(__x86_64__)
namespace avx2 {
/// Callable only where simd::avx2_available().
void keccak_f1600_x4(KeccakX4State& s) noexcept;
}  // namespace avx2
#endif

/// Four SHAKE128 (rate 168) or SHAKE256 (rate 136) instances, each absorbing one input of the same
/// length at once and then squeezed in whole blocks, all four together. The state is wiped on
/// destruction (the inputs may be secret, as rho'' of ExpandMask is).
class ShakeX4 {
 public:
  /// rate 168 (SHAKE128) or 136 (SHAKE256); anything else aborts (a programming error).
  explicit ShakeX4(std::size_t rate) noexcept;
  ~ShakeX4();
  ShakeX4(const ShakeX4&) = delete;
  ShakeX4& operator=(const ShakeX4&) = delete;

  /// Absorbs in[j] (len bytes each) into instance j and pads (suffix 0x1f, pad10*1). Call once,
  /// before squeezing.
  void absorb_once(const std::uint8_t* const in[4], std::size_t len) noexcept;
  /// Writes the next `blocks` blocks of instance j to out[j] (blocks * rate bytes each).
  void squeeze_blocks(std::uint8_t* const out[4], std::size_t blocks) noexcept;
  std::size_t rate() const noexcept { return rate_; }

 private:
  KeccakX4State state_{};
  std::size_t rate_;
};

}  // namespace pqot::crypto
