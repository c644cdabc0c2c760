// Which vector code the crypto core runs (docs/crypto.md, "Vector code and its dispatch"). A
// function with an AVX2 version (ML-DSA's NTT and its products) asks use_avx2() on every call and
// otherwise runs its portable C++ code; both give the same bits for every input their callers pass.
#pragma once

namespace pqot::crypto::simd {

/// True iff this is an x86-64 build and the CPU and OS support AVX2 (CPUID through
/// __builtin_cpu_supports, asked once). Always false on other architectures.
bool avx2_available() noexcept;

/// True iff the AVX2 code runs: avx2_available() and not forced off by force_portable().
bool use_avx2() noexcept;

/// Test hook: while on, every dispatched function takes its portable code, so that the known-answer
/// and constant-time tests cover both paths on an AVX2 machine. Returns the previous setting.
bool force_portable(bool on) noexcept;

/// force_portable(true) for a scope (tests only).
class PortableScope {
 public:
  PortableScope() noexcept : previous_(force_portable(true)) {}
  ~PortableScope() { force_portable(previous_); }
  PortableScope(const PortableScope&) = delete;
  PortableScope& operator=(const PortableScope&) = delete;

 private:
  bool previous_;
};

}  // namespace pqot::crypto::simd
