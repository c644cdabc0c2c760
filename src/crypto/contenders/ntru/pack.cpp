// NTRU's encodings (pack.hpp).
#include "pack.hpp"

namespace pqot::crypto::ntru {

void sq_to_bytes(std::uint8_t* out, const Poly& a, const Params& p) {
  const std::uint32_t mask = p.q() - 1u;
  std::uint32_t acc = 0;
  unsigned bits = 0;
  std::size_t o = 0;
  for (std::size_t i = 0; i < p.pack_deg(); ++i) {
    acc |= (a.c[i] & mask) << bits;
    bits += p.logq;
    while (bits >= 8) {
      out[o++] = static_cast<std::uint8_t>(acc);
      acc >>= 8;
      bits -= 8;
    }
  }
  if (bits > 0) out[o] = static_cast<std::uint8_t>(acc);
}

void sq_from_bytes(Poly& r, const std::uint8_t* in, const Params& p) {
  const std::uint32_t mask = p.q() - 1u;
  std::uint32_t acc = 0;
  unsigned bits = 0;
  std::size_t o = 0;
  for (std::size_t i = 0; i < p.pack_deg(); ++i) {
    while (bits < p.logq) {
      acc |= static_cast<std::uint32_t>(in[o++]) << bits;
      bits += 8;
    }
    r.c[i] = static_cast<std::uint16_t>(acc & mask);
    acc >>= p.logq;
    bits -= p.logq;
  }
  r.c[p.n - 1] = 0;
}

void rq_sum_zero_from_bytes(Poly& r, const std::uint8_t* in, const Params& p) {
  sq_from_bytes(r, in, p);
  std::uint16_t sum = 0;
  for (std::size_t i = 0; i < p.pack_deg(); ++i) sum = static_cast<std::uint16_t>(sum + r.c[i]);
  r.c[p.n - 1] = static_cast<std::uint16_t>(0 - sum);
}

void s3_to_bytes(std::uint8_t* out, const Poly& a, const Params& p) {
  const std::size_t deg = p.pack_deg();
  for (std::size_t i = 0; i < p.trinary_bytes(); ++i) {
    unsigned c = 0;
    // Most significant digit first: c = a0 + 3 a1 + 9 a2 + 27 a3 + 81 a4.
    for (std::size_t j = 5; j-- > 0;) {
      if (5 * i + j < deg) c = (3 * c + a.c[5 * i + j]) & 0xff;
    }
    out[i] = static_cast<std::uint8_t>(c);
  }
}

void s3_from_bytes(Poly& r, const std::uint8_t* in, const Params& p) {
  const std::size_t deg = p.pack_deg();
  for (std::size_t i = 0; i < p.trinary_bytes(); ++i) {
    unsigned c = in[i];
    for (std::size_t j = 0; j < 5 && 5 * i + j < deg; ++j) {
      r.c[5 * i + j] = static_cast<std::uint16_t>(c);  // reduced mod 3 below
      c = (c * 171) >> 9;                               // floor(c / 3) for c < 256
    }
  }
  r.c[p.n - 1] = 0;
  mod_3_phi(r, p.n);
}

}  // namespace pqot::crypto::ntru
