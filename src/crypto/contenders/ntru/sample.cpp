// NTRU's samplers (sample.hpp).
#include "sample.hpp"

#include "pqot/crypto/secure.hpp"

namespace pqot::crypto::ntru {

namespace {

// (a, b) = (min, max) as signed integers, in constant time.
inline void min_max(std::int32_t& a, std::int32_t& b) {
  const std::int64_t diff = static_cast<std::int64_t>(b) - static_cast<std::int64_t>(a);
  const auto swap = static_cast<std::int32_t>(diff >> 63);  // -1 iff b < a
  const std::int32_t t = swap & (a ^ b);
  a ^= t;
  b ^= t;
}

}  // namespace

void sort_int32(std::int32_t* x, std::size_t n) {
  // Batcher's merge exchange in the form of djbsort's portable network: for each stride p
  // (a power of two, descending), compare-exchange the pairs (i, i+p) with bit p of i clear,
  // then merge them with the strides q > p.
  if (n < 2) return;
  std::size_t top = 1;
  while (top < n - top) top += top;
  for (std::size_t p = top; p > 0; p >>= 1) {
    for (std::size_t i = 0; i < n - p; ++i) {
      if ((i & p) == 0) min_max(x[i], x[i + p]);
    }
    std::size_t i = 0;
    for (std::size_t q = top; q > p; q >>= 1) {
      for (; i < n - q; ++i) {
        if ((i & p) == 0) {
          std::int32_t a = x[i + p];
          for (std::size_t r = q; r > p; r >>= 1) min_max(a, x[i + r]);
          x[i + p] = a;
        }
      }
    }
  }
}

void sample_iid(Poly& r, const std::uint8_t* bytes, const Params& p) {
  for (std::size_t i = 0; i < p.n - 1; ++i) r.c[i] = mod3(bytes[i]);
  r.c[p.n - 1] = 0;
}

void sample_iid_plus(Poly& r, const std::uint8_t* bytes, const Params& p) {
  const std::size_t n = p.n;
  sample_iid(r, bytes, p);
  // {0, 1, 2} -> {0, 1, -1 mod 2^16}.
  for (std::size_t i = 0; i < n - 1; ++i) {
    r.c[i] = static_cast<std::uint16_t>(r.c[i] | (0 - (r.c[i] >> 1)));
  }
  // s = <x r, r> mod 2^16 (r[n-1] = 0), and its sign: 1 if s >= 0 as int16, else -1.
  std::uint16_t s = 0;
  for (std::size_t i = 0; i < n - 1; ++i) {
    s = static_cast<std::uint16_t>(s + static_cast<std::uint32_t>(r.c[i + 1]) * r.c[i]);
  }
  s = static_cast<std::uint16_t>(1 | (0 - (s >> 15)));
  for (std::size_t i = 0; i < n; i += 2) {
    r.c[i] = static_cast<std::uint16_t>(static_cast<std::uint32_t>(s) * r.c[i]);
  }
  // {0, 1, -1} -> {0, 1, 2}.
  for (std::size_t i = 0; i < n; ++i) {
    r.c[i] = static_cast<std::uint16_t>(3 & (r.c[i] ^ (r.c[i] >> 15)));
  }
}

void sample_fixed_type(Poly& r, const std::uint8_t* u, const Params& p) {
  // 30 random bits per key, above 2 tag bits: the first weight/2 keys are tagged 1, the next
  // weight/2 tagged 2, the rest 0; after the sort the tags are the coefficients.
  const std::size_t count = p.n - 1;  // a multiple of 4 in every HPS set
  std::int32_t s[kMaxN - 1];
  for (std::size_t i = 0; i < count / 4; ++i) {
    const std::uint8_t* b = u + 15 * i;
    const std::uint32_t k0 = (std::uint32_t{b[0]} << 2) | (std::uint32_t{b[1]} << 10) |
                             (std::uint32_t{b[2]} << 18) | (std::uint32_t{b[3]} << 26);
    const std::uint32_t k1 = ((std::uint32_t{b[3]} & 0xc0) >> 4) | (std::uint32_t{b[4]} << 4) |
                             (std::uint32_t{b[5]} << 12) | (std::uint32_t{b[6]} << 20) |
                             (std::uint32_t{b[7]} << 28);
    const std::uint32_t k2 = ((std::uint32_t{b[7]} & 0xf0) >> 2) | (std::uint32_t{b[8]} << 6) |
                             (std::uint32_t{b[9]} << 14) | (std::uint32_t{b[10]} << 22) |
                             (std::uint32_t{b[11]} << 30);
    const std::uint32_t k3 = (std::uint32_t{b[11]} & 0xfc) | (std::uint32_t{b[12]} << 8) |
                             (std::uint32_t{b[13]} << 16) | (std::uint32_t{b[14]} << 24);
    s[4 * i + 0] = static_cast<std::int32_t>(k0);
    s[4 * i + 1] = static_cast<std::int32_t>(k1);
    s[4 * i + 2] = static_cast<std::int32_t>(k2);
    s[4 * i + 3] = static_cast<std::int32_t>(k3);
  }
  for (std::size_t i = 0; i < p.weight / 2; ++i) s[i] |= 1;
  for (std::size_t i = p.weight / 2; i < p.weight; ++i) s[i] |= 2;
  sort_int32(s, count);
  for (std::size_t i = 0; i < count; ++i) r.c[i] = static_cast<std::uint16_t>(s[i] & 3);
  r.c[p.n - 1] = 0;
  secure_wipe(s, sizeof(s));
}

void sample_fg(Poly& f, Poly& g, const std::uint8_t* bytes, const Params& p) {
  if (p.hrss) {
    sample_iid_plus(f, bytes, p);
    sample_iid_plus(g, bytes + p.iid_bytes(), p);
  } else {
    sample_iid(f, bytes, p);
    sample_fixed_type(g, bytes + p.iid_bytes(), p);
  }
}

void sample_rm(Poly& r, Poly& m, const std::uint8_t* bytes, const Params& p) {
  sample_iid(r, bytes, p);
  if (p.hrss) {
    sample_iid(m, bytes + p.iid_bytes(), p);
  } else {
    sample_fixed_type(m, bytes + p.iid_bytes(), p);
  }
}

}  // namespace pqot::crypto::ntru
