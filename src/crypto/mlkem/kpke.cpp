#include "kpke.hpp"

#include <cstring>

#include "ct.hpp"
#include "poly.hpp"
#include "pqot/crypto/secure.hpp"
#include "pqot/crypto/sha3.hpp"

namespace pqot::crypto::mlkem {

namespace {

template <int K>
void polyvec_ntt(PolyVec<K>& v) noexcept {
  for (auto& p : v.p) {
    ntt(p);
    poly_reduce(p);
  }
}

// A vector in the NTT domain together with its multiplication caches.
template <int K>
struct NttVec {
  PolyVec<K> v;
  std::array<MulCache, K> cache;
};

template <int K>
void prepare(NttVec<K>& x) noexcept {
  for (std::size_t j = 0; j < K; ++j) mulcache_compute(x.cache[j], x.v.p[j]);
}

// r = sum_j row_i(j) o v[j], with the matrix row sampled on the fly so the matrix is never stored.
// `transposed` selects A^T (Algorithm 14 line 18) instead of A (Algorithm 13 line 18).
template <int K>
void matrix_row_times(Poly& r, const std::uint8_t rho[kSymBytes], int i, bool transposed,
                      const NttVec<K>& x) noexcept {
  PolyVec<K> row;
  for (int j = 0; j < K; ++j) {
    // A[i][j] = SampleNTT(rho || j || i); A^T[i][j] = A[j][i] = SampleNTT(rho || i || j).
    const auto col = static_cast<std::uint8_t>(transposed ? i : j);
    const auto line = static_cast<std::uint8_t>(transposed ? j : i);
    sample_ntt(row.p[static_cast<std::size_t>(j)], rho, col, line);
  }
  polyvec_basemul_acc_montgomery<K>(r, row, x.v, x.cache);
}

template <class T>
void wipe(T& object) noexcept {
  secure_wipe(&object, sizeof(object));
}

}  // namespace

template <int K>
void kpke_keygen(std::uint8_t* ek, std::uint8_t* dk_pke, const std::uint8_t d[kSymBytes]) noexcept {
  using P = Params<K>;
  // (rho, sigma) = G(d || k)  (line 1; the k byte is FIPS 203's domain separation per rank)
  std::uint8_t input[kSymBytes + 1];
  std::memcpy(input, d, kSymBytes);
  input[kSymBytes] = static_cast<std::uint8_t>(K);
  auto rho_sigma = sha3_512(input);
  const std::uint8_t* rho = rho_sigma.data();
  const std::uint8_t* sigma = rho_sigma.data() + kSymBytes;
  declassify(rho, kSymBytes);  // rho is part of the public key

  NttVec<K> s;
  PolyVec<K> e;
  std::uint8_t nonce = 0;
  for (auto& p : s.v.p) sample_cbd(p, sigma, nonce++, P::eta1);
  for (auto& p : e.p) sample_cbd(p, sigma, nonce++, P::eta1);
  polyvec_ntt(s.v);
  polyvec_ntt(e);
  prepare(s);

  // t = A o s + e  (line 18), then ek = ByteEncode_12(t) || rho, dk_PKE = ByteEncode_12(s).
  for (int i = 0; i < K; ++i) {
    Poly t;
    matrix_row_times<K>(t, rho, i, false, s);
    poly_tomont(t);  // undo the 2^-16 of basemul
    poly_add(t, e.p[static_cast<std::size_t>(i)]);
    poly_reduce(t);
    poly_to_bytes(ek + kPolyBytes * static_cast<std::size_t>(i), t);
  }
  std::memcpy(ek + P::kPolyVecBytes, rho, kSymBytes);
  for (int i = 0; i < K; ++i) {
    poly_to_bytes(dk_pke + kPolyBytes * static_cast<std::size_t>(i),
                  s.v.p[static_cast<std::size_t>(i)]);
  }
  wipe(input);
  wipe(rho_sigma);
  wipe(s);
  wipe(e);
}

template <int K>
void expand_ek(ExpandedEk<K>& out, const std::uint8_t* ek) noexcept {
  using P = Params<K>;
  for (int i = 0; i < K; ++i) {
    poly_from_bytes(out.t_hat.p[static_cast<std::size_t>(i)], ek + kPolyBytes * static_cast<std::size_t>(i));
  }
  std::uint8_t rho[kSymBytes];
  std::memcpy(rho, ek + P::kPolyVecBytes, kSymBytes);
  declassify(rho, kSymBytes);  // public, although decapsulation reads it from inside dk
  for (int i = 0; i < K; ++i) {
    for (int j = 0; j < K; ++j) {
      // A^T[i][j] = A[j][i] = SampleNTT(rho || i || j)
      sample_ntt(out.a_transposed[static_cast<std::size_t>(i)].p[static_cast<std::size_t>(j)], rho,
                 static_cast<std::uint8_t>(i), static_cast<std::uint8_t>(j));
    }
  }
}

template <int K>
void kpke_encrypt(std::uint8_t* ct, const std::uint8_t* ek, const std::uint8_t m[kSymBytes],
                  const std::uint8_t r[kSymBytes]) noexcept {
  ExpandedEk<K> expanded;
  expand_ek<K>(expanded, ek);
  kpke_encrypt_expanded<K>(ct, expanded, m, r);
}

template <int K>
void kpke_encrypt_expanded(std::uint8_t* ct, const ExpandedEk<K>& ek,
                           const std::uint8_t m[kSymBytes], const std::uint8_t r[kSymBytes]) noexcept {
  using P = Params<K>;
  NttVec<K> y;
  PolyVec<K> e1;
  Poly e2;
  std::uint8_t nonce = 0;
  for (auto& p : y.v.p) sample_cbd(p, r, nonce++, P::eta1);
  for (auto& p : e1.p) sample_cbd(p, r, nonce++, P::eta2);
  sample_cbd(e2, r, nonce, P::eta2);
  polyvec_ntt(y.v);
  prepare(y);

  // u = NTT^-1(A^T o y) + e1  (line 19), c1 = ByteEncode_du(Compress_du(u))
  for (int i = 0; i < K; ++i) {
    Poly u;
    polyvec_basemul_acc_montgomery<K>(u, ek.a_transposed[static_cast<std::size_t>(i)], y.v, y.cache);
    invntt_tomont(u);
    poly_add(u, e1.p[static_cast<std::size_t>(i)]);
    poly_compress(ct + 32 * P::du * static_cast<std::size_t>(i), u, P::du);
  }
  // v = NTT^-1(t^T o y) + e2 + mu  (lines 20-21), c2 = ByteEncode_dv(Compress_dv(v))
  Poly v, mu;
  polyvec_basemul_acc_montgomery<K>(v, ek.t_hat, y.v, y.cache);
  invntt_tomont(v);
  poly_from_msg(mu, m);
  poly_add(v, e2);
  poly_add(v, mu);
  poly_compress(ct + P::kCtUBytes, v, P::dv);

  wipe(y);
  wipe(e1);
  wipe(e2);
  wipe(v);
  wipe(mu);
}

template <int K>
void kpke_decrypt(std::uint8_t m[kSymBytes], const std::uint8_t* dk_pke,
                  const std::uint8_t* ct) noexcept {
  // s = ByteDecode_12(dk_PKE)  (line 5)
  PolyVec<K> s;
  for (int i = 0; i < K; ++i) {
    const auto idx = static_cast<std::size_t>(i);
    poly_from_bytes(s.p[idx], dk_pke + kPolyBytes * idx);
  }
  kpke_decrypt_decoded<K>(m, s, ct);
  wipe(s);
}

template <int K>
void kpke_decrypt_decoded(std::uint8_t m[kSymBytes], const PolyVec<K>& s,
                          const std::uint8_t* ct) noexcept {
  using P = Params<K>;
  // u' = Decompress_du(c1), v' = Decompress_dv(c2)  (lines 3-4)
  NttVec<K> u;
  for (int i = 0; i < K; ++i) {
    const auto idx = static_cast<std::size_t>(i);
    poly_decompress(u.v.p[idx], ct + 32 * P::du * idx, P::du);
  }
  Poly v;
  poly_decompress(v, ct + P::kCtUBytes, P::dv);
  polyvec_ntt(u.v);
  prepare(u);

  // w = v' - NTT^-1(s^T o NTT(u'))  (line 6), m = ByteEncode_1(Compress_1(w))  (line 7)
  Poly su;
  polyvec_basemul_acc_montgomery<K>(su, s, u.v, u.cache);
  invntt_tomont(su);
  Poly w;
  poly_sub(w, v, su);
  poly_reduce(w);
  poly_to_msg(m, w);

  wipe(su);
  wipe(w);
}

#define PQOT_INSTANTIATE_KPKE(K)                                                            \
  template void kpke_keygen<K>(std::uint8_t*, std::uint8_t*, const std::uint8_t*) noexcept; \
  template void kpke_encrypt<K>(std::uint8_t*, const std::uint8_t*, const std::uint8_t*,    \
                                const std::uint8_t*) noexcept;                              \
  template void kpke_decrypt<K>(std::uint8_t*, const std::uint8_t*, const std::uint8_t*) noexcept; \
  template void expand_ek<K>(ExpandedEk<K>&, const std::uint8_t*) noexcept;                   \
  template void kpke_encrypt_expanded<K>(std::uint8_t*, const ExpandedEk<K>&,                 \
                                         const std::uint8_t*, const std::uint8_t*) noexcept;  \
  template void kpke_decrypt_decoded<K>(std::uint8_t*, const PolyVec<K>&,                     \
                                        const std::uint8_t*) noexcept;
PQOT_INSTANTIATE_KPKE(2)
PQOT_INSTANTIATE_KPKE(3)
PQOT_INSTANTIATE_KPKE(4)
#undef PQOT_INSTANTIATE_KPKE

}  // namespace pqot::crypto::mlkem
