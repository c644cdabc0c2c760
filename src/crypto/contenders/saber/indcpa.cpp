#include "indcpa.hpp"

#include <cstring>

#include "../../declassify.hpp"
#include "pack.hpp"
#include "poly_mul.hpp"
#include "pqot/crypto/secure.hpp"
#include "pqot/crypto/sha3.hpp"
#include "sampling.hpp"

namespace pqot::crypto::saber {

namespace {

using u16 = std::uint16_t;

template <class T>
void wipe(T& object) noexcept {
  secure_wipe(&object, sizeof(object));
}

// r = A s, or A^T s when `transposed`: r[i] = sum_j A[i][j] s[j] (A^T: A[j][i] s[j]).
template <int L>
void matrix_vector_mul(PolyVec<L>& r, const PolyMatrix<L>& a, const PolyVec<L>& s,
                       bool transposed) noexcept {
  for (std::size_t i = 0; i < L; ++i) {
    r.p[i].c.fill(0);
    for (std::size_t j = 0; j < L; ++j) {
      poly_mul_acc(r.p[i], transposed ? a[j].p[i] : a[i].p[j], s.p[j]);
    }
  }
}

// r = sum_j b[j] s[j], the inner product of R^L.
template <int L>
void inner_product(Poly& r, const PolyVec<L>& b, const PolyVec<L>& s) noexcept {
  r.c.fill(0);
  for (std::size_t j = 0; j < L; ++j) poly_mul_acc(r, b.p[j], s.p[j]);
}

// The rounding from q to p: (x + h1) >> (eq - ep), on every coefficient.
template <int L>
void round_q_to_p(PolyVec<L>& v) noexcept {
  for (auto& p : v.p) {
    for (auto& c : p.c) c = static_cast<u16>(static_cast<u16>(c + kH1) >> (kEq - kEp));
  }
}

}  // namespace

template <int L>
void pke_keygen(std::uint8_t* pk, std::uint8_t* sk, const std::uint8_t seed_a[kSeedBytes],
                const std::uint8_t seed_s[kNoiseSeedBytes]) noexcept {
  using P = Params<L>;
  std::uint8_t seed_a_hashed[kSeedBytes];
  shake128({seed_a, kSeedBytes}, seed_a_hashed);
  declassify(seed_a_hashed, kSeedBytes);  // part of the public key

  PolyMatrix<L> a;
  PolyVec<L> s{}, b{};
  gen_matrix<L>(a, seed_a_hashed);
  gen_secret<L>(s, seed_s);
  // b = ((A^T s + h) mod q) >> (eq - ep), with h = h1 in every coefficient.
  matrix_vector_mul<L>(b, a, s, true);
  round_q_to_p<L>(b);

  pack_polyvec<L>(sk, s, kEq);
  pack_polyvec<L>(pk, b, kEp);
  std::memcpy(pk + P::kPolyVecCompressedBytes, seed_a_hashed, kSeedBytes);
  wipe(s);
}

template <int L>
void pke_encrypt(std::uint8_t* ct, const std::uint8_t m[kKeyBytes],
                 const std::uint8_t seed_sp[kNoiseSeedBytes], const std::uint8_t* pk) noexcept {
  using P = Params<L>;
  std::uint8_t seed_a[kSeedBytes];
  std::memcpy(seed_a, pk + P::kPolyVecCompressedBytes, kSeedBytes);
  declassify(seed_a, kSeedBytes);  // public, although decapsulation reads it from inside sk

  PolyMatrix<L> a;
  PolyVec<L> sp{}, bp{}, b{};
  gen_matrix<L>(a, seed_a);
  gen_secret<L>(sp, seed_sp);
  // b' = ((A s' + h) mod q) >> (eq - ep)
  matrix_vector_mul<L>(bp, a, sp, false);
  round_q_to_p<L>(bp);
  pack_polyvec<L>(ct, bp, kEp);

  // v' = b^T (s' mod p); c_m = ((v' - 2^(ep-1) m + h1) mod p) >> (ep - et)
  unpack_polyvec<L>(b, pk, kEp);
  Poly v{}, mp{};
  inner_product<L>(v, b, sp);
  unpack_poly(mp, m, 1);
  for (std::size_t i = 0; i < kN; ++i) {
    v.c[i] =
        static_cast<u16>(static_cast<u16>(v.c[i] - (mp.c[i] << (kEp - 1)) + kH1) >> (kEp - P::et));
  }
  pack_poly(ct + P::kPolyVecCompressedBytes, v, P::et);
  wipe(sp);
  wipe(v);
  wipe(mp);
}

template <int L>
void pke_decrypt(std::uint8_t m[kKeyBytes], const std::uint8_t* sk,
                 const std::uint8_t* ct) noexcept {
  using P = Params<L>;
  PolyVec<L> s{}, bp{};
  unpack_polyvec<L>(s, sk, kEq);
  unpack_polyvec<L>(bp, ct, kEp);
  // v = b'^T (s mod p); m' = ((v - 2^(ep-et) c_m + h2) mod p) >> (ep - 1)
  Poly v{}, cm{};
  inner_product<L>(v, bp, s);
  unpack_poly(cm, ct + P::kPolyVecCompressedBytes, P::et);
  for (std::size_t i = 0; i < kN; ++i) {
    v.c[i] = static_cast<u16>(static_cast<u16>(v.c[i] + P::h2 - (cm.c[i] << (kEp - P::et))) >>
                              (kEp - 1));
  }
  pack_poly(m, v, 1);  // the low bit of each coefficient
  wipe(s);
  wipe(v);
}

template void pke_keygen<2>(std::uint8_t*, std::uint8_t*, const std::uint8_t*,
                            const std::uint8_t*) noexcept;
template void pke_keygen<3>(std::uint8_t*, std::uint8_t*, const std::uint8_t*,
                            const std::uint8_t*) noexcept;
template void pke_keygen<4>(std::uint8_t*, std::uint8_t*, const std::uint8_t*,
                            const std::uint8_t*) noexcept;
template void pke_encrypt<2>(std::uint8_t*, const std::uint8_t*, const std::uint8_t*,
                             const std::uint8_t*) noexcept;
template void pke_encrypt<3>(std::uint8_t*, const std::uint8_t*, const std::uint8_t*,
                             const std::uint8_t*) noexcept;
template void pke_encrypt<4>(std::uint8_t*, const std::uint8_t*, const std::uint8_t*,
                             const std::uint8_t*) noexcept;
template void pke_decrypt<2>(std::uint8_t*, const std::uint8_t*, const std::uint8_t*) noexcept;
template void pke_decrypt<3>(std::uint8_t*, const std::uint8_t*, const std::uint8_t*) noexcept;
template void pke_decrypt<4>(std::uint8_t*, const std::uint8_t*, const std::uint8_t*) noexcept;

}  // namespace pqot::crypto::saber
