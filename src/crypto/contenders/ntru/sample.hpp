// NTRU's samplers (round-3 specification, Sample_fg and Sample_rm; the reference's sample.c): from uniform
// bytes to the ternary polynomials f, g (Sample_fg) and r, m (Sample_rm).
#pragma once

#include <cstdint>

#include "poly.hpp"

namespace pqot::crypto::ntru {

/// f, g from sample_bytes() bytes: HPS f = Sample_iid, g = Sample_fixed_type; HRSS both
/// Sample_iid_plus.
void sample_fg(Poly& f, Poly& g, const std::uint8_t* bytes, const Params& p);
/// r, m from sample_bytes() bytes: r = Sample_iid; m = Sample_fixed_type (HPS) or Sample_iid.
void sample_rm(Poly& r, Poly& m, const std::uint8_t* bytes, const Params& p);

/// Sample_iid: coefficient i = bytes[i] mod 3 for i < n-1, and 0.
void sample_iid(Poly& r, const std::uint8_t* bytes, const Params& p);
/// Sample_iid_plus (HRSS): Sample_iid, then the even-index coefficients negated when
/// <x r, r> < 0, so that <x r, r> >= 0.
void sample_iid_plus(Poly& r, const std::uint8_t* bytes, const Params& p);
/// Sample_fixed_type (HPS): weight/2 coefficients 1 and weight/2 coefficients 2 (= -1) among the
/// first n-1, placed by sorting 30-bit random keys (fixed_type_bytes() bytes).
void sample_fixed_type(Poly& r, const std::uint8_t* bytes, const Params& p);

/// Sorts x[0..n) ascending as signed integers with a fixed sequence of compare-exchanges
/// (a sorting network: no branch or index depends on the values).
void sort_int32(std::int32_t* x, std::size_t n);

}  // namespace pqot::crypto::ntru
