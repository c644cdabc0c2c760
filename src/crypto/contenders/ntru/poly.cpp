// NTRU's ring arithmetic (poly.hpp): products, the reductions between R_q, S_q and S_3, and Lift.
#include "poly.hpp"

#include <algorithm>
#include <cstring>

#include "pqot/crypto/secure.hpp"

namespace pqot::crypto::ntru {

Poly::~Poly() { secure_wipe(c.data(), sizeof(c)); }

namespace {

// Eight uint16 lanes (GCC/Clang vector extension: SSE2 on x86-64, NEON on AArch64); lane
// arithmetic wraps mod 2^16 as R_q's does.
typedef std::uint16_t Lanes __attribute__((vector_size(16)));
constexpr std::size_t kLanes = 8;
constexpr std::size_t kGroup = 8;  // output blocks accumulated together, in registers
constexpr std::size_t kGroupCoefficients = kLanes * kGroup;
static_assert(kPolyLength % kGroupCoefficients == 0);

}  // namespace

void mul_rq(Poly& r, const Poly& a, const Poly& b, std::size_t n) {
  // Output-wise: r[k] = sum_i a[i] b[(k - i) mod n], with b repeated (ext[m] = b[m mod n]) so
  // that lane t of block k reads ext[n + k + t - i] for every i, the same full-width
  // multiply-add at every step. Eight blocks of eight outputs share each broadcast of a[i] and
  // stay in registers. Blocks past n compute values nobody reads.
  alignas(32) std::uint16_t ext[2 * kPolyLength + kGroupCoefficients];
  constexpr std::size_t kExt = sizeof(ext) / sizeof(ext[0]);
  for (std::size_t m = 0; m < kExt; m += n) {  // b, b, b, ... (no division per coefficient)
    std::memcpy(ext + m, b.c.data(), std::min(n, kExt - m) * sizeof(std::uint16_t));
  }
  alignas(32) std::uint16_t out[kPolyLength];
  for (std::size_t k = 0; k < n; k += kGroupCoefficients) {
    Lanes acc[kGroup] = {};
    const std::uint16_t* base = ext + n + k;
    for (std::size_t i = 0; i < n; ++i) {
      const Lanes ai = Lanes{} + a.c[i];
      for (std::size_t g = 0; g < kGroup; ++g) {
        Lanes x;
        std::memcpy(&x, base + kLanes * g - i, sizeof(x));
        acc[g] += ai * x;
      }
    }
    std::memcpy(out + k, acc, sizeof(acc));
  }
  std::memcpy(r.c.data(), out, n * sizeof(std::uint16_t));
  secure_wipe(ext, sizeof(ext));
  secure_wipe(out, sizeof(out));
}

void mod_q_phi(Poly& r, std::size_t n) {
  const std::uint16_t last = r.c[n - 1];
  for (std::size_t i = 0; i < n; ++i) r.c[i] = static_cast<std::uint16_t>(r.c[i] - last);
}

void mod_3_phi(Poly& r, std::size_t n) {
  const std::uint16_t last2 = static_cast<std::uint16_t>(2 * r.c[n - 1]);
  for (std::size_t i = 0; i < n; ++i) r.c[i] = mod3(static_cast<std::uint16_t>(r.c[i] + last2));
}

void mul_sq(Poly& r, const Poly& a, const Poly& b, std::size_t n) {
  mul_rq(r, a, b, n);
  mod_q_phi(r, n);
}

void mul_s3(Poly& r, const Poly& a, const Poly& b, const Params& p) {
  // As the reference: the R_q product, an explicit reduction mod q, then mod (3, Phi_n).
  mul_rq(r, a, b, p.n);
  const std::uint16_t mask = static_cast<std::uint16_t>(p.q() - 1);
  for (std::size_t i = 0; i < p.n; ++i) r.c[i] &= mask;
  mod_3_phi(r, p.n);
}

void rq_to_s3(Poly& r, const Poly& a, const Params& p) {
  // A coefficient v >= q/2 stands for v - q; adding (-q) mod 3 = 2^(1 - (logq mod 2)) makes the
  // later reduction mod 3 see v - q (specification, "Rq_to_S3").
  const std::uint16_t mask = static_cast<std::uint16_t>(p.q() - 1);
  const unsigned add_shift = 1 - (p.logq & 1);
  for (std::size_t i = 0; i < p.n; ++i) {
    const std::uint16_t v = a.c[i] & mask;
    const std::uint16_t upper = static_cast<std::uint16_t>(v >> (p.logq - 1));
    r.c[i] = static_cast<std::uint16_t>(v + (upper << add_shift));
  }
  mod_3_phi(r, p.n);
}

void z3_to_zq(Poly& r, const Params& p) {
  const std::uint16_t qmask = static_cast<std::uint16_t>(p.q() - 1);
  for (std::size_t i = 0; i < p.n; ++i) {
    const std::uint16_t two = static_cast<std::uint16_t>(0 - (r.c[i] >> 1));  // 0xffff iff 2
    r.c[i] = static_cast<std::uint16_t>(r.c[i] | (two & qmask));
  }
}

void trinary_zq_to_z3(Poly& r, const Params& p) {
  const std::uint16_t qmask = static_cast<std::uint16_t>(p.q() - 1);
  for (std::size_t i = 0; i < p.n; ++i) {
    const std::uint16_t v = r.c[i] & qmask;
    r.c[i] = static_cast<std::uint16_t>(3 & (v ^ (v >> (p.logq - 1))));
  }
}

void lift(Poly& r, const Poly& m, const Params& p) {
  const std::size_t n = p.n;
  if (!p.hrss) {
    r = m;
    z3_to_zq(r, p);
    return;
  }
  // HRSS: r = (x - 1) * b with b the representative of m/(x - 1) in S_3 of degree < n-1.
  // With c = (m mod Phi_n) + k Phi_n, k chosen so that c(1) = 0 mod 3 (c(1) = m(1) + k n), c is
  // divisible by (x - 1) in Z_3[x]/(x^n - 1) and b[i] = c[i+1] + ... + c[n-1] solves
  // (x - 1) b = c there; b[n-1] = 0 already, so b is the canonical representative.
  Poly c = m;
  mod_3_phi(c, n);
  std::uint16_t sum = 0;
  for (std::size_t i = 0; i < n; ++i) sum = mod3(static_cast<std::uint16_t>(sum + c.c[i]));
  // k = -sum / n mod 3; 1/n = n mod 3 (both 1 and 2 are their own inverses mod 3).
  const std::uint16_t k = mod3(static_cast<std::uint16_t>((3 - sum) * (n % 3)));
  Poly b;
  std::uint16_t acc = 0;
  for (std::size_t i = n; i-- > 0;) {
    b.c[i] = acc;
    acc = mod3(static_cast<std::uint16_t>(acc + c.c[i] + k));
  }
  z3_to_zq(b, p);
  r.c[0] = static_cast<std::uint16_t>(0 - b.c[0]);  // b[n-1] - b[0], b[n-1] = 0
  for (std::size_t i = 1; i < n; ++i) r.c[i] = static_cast<std::uint16_t>(b.c[i - 1] - b.c[i]);
}

}  // namespace pqot::crypto::ntru
