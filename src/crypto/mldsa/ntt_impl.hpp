// The two implementations behind ntt(), invntt_tomont(), poly_pointwise() and poly_dot()
// (poly.hpp): portable C++ (ntt.cpp) and AVX2 (ntt_avx2.cpp, x86-64 only). The functions of
// poly.hpp choose one per call (../simd.hpp); both compute the same bits for every input within
// the bounds stated in poly.hpp. Declared here for that dispatch and for the tests comparing them.
#pragma once

#include <cstddef>

#include "poly.hpp"

namespace pqot::crypto::mldsa {

namespace portable {
void ntt(Poly& a) noexcept;
void invntt_tomont(Poly& a) noexcept;
void poly_pointwise(Poly& r, const Poly& a, const Poly& b) noexcept;
/// n in {4, 5, 7} (checked by the caller, poly_dot).
void poly_dot(Poly& r, const Poly* a, const Poly* b, std::size_t n) noexcept;
}  // namespace portable

#if defined(__x86_64__)
/// Callable only where simd::avx2_available().
namespace avx2 {
void ntt(Poly& a) noexcept;
void invntt_tomont(Poly& a) noexcept;
void poly_pointwise(Poly& r, const Poly& a, const Poly& b) noexcept;
/// n <= 7.
void poly_dot(Poly& r, const Poly* a, const Poly* b, std::size_t n) noexcept;
}  // namespace avx2
#endif

}  // namespace pqot::crypto::mldsa
