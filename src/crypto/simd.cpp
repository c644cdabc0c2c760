// Run-time choice between the AVX2 and the portable code (simd.hpp).
#include "simd.hpp"

#include <atomic>

namespace pqot::crypto::simd {

namespace {

std::atomic<bool> g_simd_forced_portable{false};

bool detect_avx2() noexcept {
#if defined(__x86_64__)
  // Also checks that the OS saves the YMM registers (XGETBV), not only the CPUID bit.
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") != 0;
#else
  return false;
#endif
}

}  // namespace

bool avx2_available() noexcept {
  static const bool available = detect_avx2();
  return available;
}

bool use_avx2() noexcept {
  return avx2_available() && !g_simd_forced_portable.load(std::memory_order_relaxed);
}

bool force_portable(bool on) noexcept {
  return g_simd_forced_portable.exchange(on, std::memory_order_relaxed);
}

}  // namespace pqot::crypto::simd
