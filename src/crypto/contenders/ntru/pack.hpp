// NTRU's encodings (round-3 specification, the encodings of R_q, S_q and S_3 elements; the reference's packq.c and
// pack3.c). All are little-endian bit strings: coefficient i occupies bits [i w, (i+1) w).
#pragma once

#include <cstdint>

#include "poly.hpp"

namespace pqot::crypto::ntru {

/// Coefficients 0 .. n-2, each mod q in logq bits (packed_q_bytes() bytes; unused bits zero).
void sq_to_bytes(std::uint8_t* out, const Poly& a, const Params& p);
/// The inverse of sq_to_bytes; r[n-1] = 0. Unused bits of the last byte are ignored.
void sq_from_bytes(Poly& r, const std::uint8_t* in, const Params& p);
/// sq_from_bytes, then r[n-1] chosen so that the coefficients sum to 0 mod q (Rq_sum_zero).
void rq_sum_zero_from_bytes(Poly& r, const std::uint8_t* in, const Params& p);

/// Coefficients 0 .. n-2 in {0, 1, 2}, five to a byte as base-3 digits (trinary_bytes()).
void s3_to_bytes(std::uint8_t* out, const Poly& a, const Params& p);
/// The inverse: digit j of byte b is floor(b / 3^j) mod 3 (so bytes above 242 decode as the
/// reference decodes them), then reduced mod (3, Phi_n).
void s3_from_bytes(Poly& r, const std::uint8_t* in, const Params& p);

}  // namespace pqot::crypto::ntru
