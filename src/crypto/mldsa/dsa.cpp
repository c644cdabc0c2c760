// ML-DSA.KeyGen_internal, Sign_internal and Verify_internal (FIPS 204 section 6, Algorithms 6-8)
// with the encodings of section 7.2 (Algorithms 20-28). Every secret intermediate is wiped.
#include "dsa.hpp"

#include <array>
#include <cstring>

#include "ct.hpp"
#include "poly.hpp"
#include "pqot/crypto/secure.hpp"
#include "pqot/crypto/sha3.hpp"

namespace pqot::crypto::mldsa {

namespace {

// The K l entries A_hat[r][s] = RejNTTPoly(rho || s || r) go four at a time through the four-way
// sampler (four SHAKE128 streams per Keccak pass on AVX2), the last K l mod 4 one at a time; one
// loop with a counter (a separate remainder loop draws a false -Waggressive-loop-optimizations
// from GCC 12 for K = 4).
template <int K>
void expand_a(Matrix<K>& a, const std::uint8_t rho[kSeedBytes]) noexcept {
  constexpr int L = Params<K>::l;
  constexpr int kEntries = K * L;
  int e = 0;
  while (e < kEntries) {
    if (e + 4 <= kEntries) {
      Poly* out[4];
      std::uint8_t s[4], r[4];
      for (int k = 0; k < 4; ++k) {
        r[k] = static_cast<std::uint8_t>((e + k) / L);
        s[k] = static_cast<std::uint8_t>((e + k) % L);
        out[k] = &a.row[r[k]].p[s[k]];
      }
      sample_ntt_x4(out, rho, s, r);
      e += 4;
    } else {
      const int r = e / L, s = e % L;
      sample_ntt(a.row[static_cast<std::size_t>(r)].p[static_cast<std::size_t>(s)], rho,
                 static_cast<std::uint8_t>(s), static_cast<std::uint8_t>(r));
      ++e;
    }
  }
}

template <int N>
void polyvec_ntt(PolyVec<N>& v) noexcept {
  for (auto& p : v.p) ntt(p);
}

// r = NTT^-1(sum_j row[j] o v_hat[j]), |r| < q: the matrix-vector product of Algorithms 6-8.
template <int L>
void row_times(Poly& r, const PolyVec<L>& row, const PolyVec<L>& v_hat) noexcept {
  poly_dot(r, row.p.data(), v_hat.p.data(), L);
  poly_reduce(r);
  invntt_tomont(r);
}

// r = NTT^-1(c_hat o v_hat), reduced by reduce32.
void times_challenge(Poly& r, const Poly& c_hat, const Poly& v_hat) noexcept {
  poly_pointwise(r, c_hat, v_hat);
  invntt_tomont(r);
  poly_reduce(r);
}

template <class T>
void wipe(T& object) noexcept {
  secure_wipe(&object, sizeof(object));
}

// Algorithm 20, HintBitPack: the positions of the ones, then the running count per polynomial.
template <int K>
void hint_pack(std::uint8_t* out, const Veck<K>& h) noexcept {
  constexpr int omega = Params<K>::omega;
  std::memset(out, 0, omega + K);
  std::size_t index = 0;
  for (std::size_t i = 0; i < K; ++i) {
    for (std::size_t j = 0; j < kN; ++j) {
      if (h.p[i].c[j] != 0) out[index++] = static_cast<std::uint8_t>(j);
    }
    out[omega + i] = static_cast<std::uint8_t>(index);
  }
}

// Algorithm 21, HintBitUnpack, with every check: counts non-decreasing and at most omega,
// positions strictly increasing within a polynomial, unused slots zero.
template <int K>
bool hint_unpack(Veck<K>& h, const std::uint8_t* in) noexcept {
  constexpr std::size_t omega = Params<K>::omega;
  for (auto& p : h.p) p.c.fill(0);
  std::size_t index = 0;
  for (std::size_t i = 0; i < K; ++i) {
    const std::size_t limit = in[omega + i];
    if (limit < index || limit > omega) return false;
    const std::size_t first = index;
    for (; index < limit; ++index) {
      if (index > first && in[index - 1] >= in[index]) return false;
      h.p[i].c[in[index]] = 1;
    }
  }
  for (std::size_t i = index; i < omega; ++i) {
    if (in[i] != 0) return false;
  }
  return true;
}

// w1Encode (Algorithm 28) of one polynomial, then c~ = H(mu || w1Encode(w1), lambda/4)
// (Algorithm 7 line 15, Algorithm 8 line 12), absorbing polynomial by polynomial.
template <int K>
void challenge_hash(std::uint8_t* c_tilde, const std::uint8_t mu[kCrhBytes],
                    const Veck<K>& w1) noexcept {
  using P = Params<K>;
  Shake256 h;
  h.absorb({mu, kCrhBytes});
  std::uint8_t buf[P::kW1PolyBytes];
  for (const auto& p : w1.p) {
    poly_pack_simple(buf, p, P::w1_bits);
    h.absorb(buf);
  }
  h.squeeze({c_tilde, P::kCTildeBytes});
}

}  // namespace

void public_key_hash(std::uint8_t tr[kCrhBytes], ByteView pk) noexcept {
  shake256(pk, {tr, kCrhBytes});
}

void message_representative(std::uint8_t mu[kCrhBytes], const std::uint8_t tr[kCrhBytes],
                            ByteView prefix, ByteView msg) noexcept {
  Shake256 h;
  h.absorb({tr, kCrhBytes});
  h.absorb(prefix);
  h.absorb(msg);
  h.squeeze({mu, kCrhBytes});
}

template <int K>
void keygen_internal(std::uint8_t* pk, std::uint8_t* sk,
                     const std::uint8_t xi[kSeedBytes]) noexcept {
  using P = Params<K>;
  constexpr int L = P::l;
  // (rho, rho', K) = H(xi || IntegerToBytes(k, 1) || IntegerToBytes(l, 1), 128)  (line 1)
  struct Secrets {
    std::uint8_t input[kSeedBytes + 2];
    std::uint8_t seeds[2 * kSeedBytes + kCrhBytes];
    Vecl<K> s1, s1_hat;
    Veck<K> s2, t, t0;
  } sec;
  std::memcpy(sec.input, xi, kSeedBytes);
  sec.input[kSeedBytes] = static_cast<std::uint8_t>(K);
  sec.input[kSeedBytes + 1] = static_cast<std::uint8_t>(L);
  shake256(sec.input, sec.seeds);
  const std::uint8_t* rho = sec.seeds;
  const std::uint8_t* rho_prime = sec.seeds + kSeedBytes;
  const std::uint8_t* key = sec.seeds + kSeedBytes + kCrhBytes;
  declassify(rho, kSeedBytes);  // rho is part of the public key (ct.hpp, item 1)

  // A_hat = ExpandA(rho), (s1, s2) = ExpandS(rho')  (lines 3-4, Algorithms 32-33)
  Matrix<K> a;
  expand_a<K>(a, rho);
  for (std::size_t r = 0; r < L; ++r) {
    sample_eta(sec.s1.p[r], rho_prime, static_cast<std::uint16_t>(r), P::eta);
  }
  for (std::size_t r = 0; r < K; ++r) {
    sample_eta(sec.s2.p[r], rho_prime, static_cast<std::uint16_t>(r + L), P::eta);
  }

  // t = NTT^-1(A_hat o NTT(s1)) + s2  (line 5); (t1, t0) = Power2Round(t)  (line 6)
  sec.s1_hat = sec.s1;
  polyvec_ntt(sec.s1_hat);
  std::memcpy(pk, rho, kSeedBytes);
  for (std::size_t i = 0; i < K; ++i) {
    Poly t1;
    row_times<L>(sec.t.p[i], a.row[i], sec.s1_hat);
    poly_add(sec.t.p[i], sec.t.p[i], sec.s2.p[i]);
    poly_freeze(sec.t.p[i]);
    poly_power2round(t1, sec.t0.p[i], sec.t.p[i]);
    // pkEncode (Algorithm 22): rho || SimpleBitPack(t1[i], 2^10 - 1)
    poly_pack_simple(pk + kSeedBytes + kT1PolyBytes * i, t1, 10);
  }

  // skEncode (Algorithm 24): rho || K || tr || BitPack(s1, eta, eta) || BitPack(s2, eta, eta) ||
  // BitPack(t0, 2^12 - 1, 2^12), with tr = H(pk, 64)  (lines 8-10)
  std::uint8_t* out = sk;
  std::memcpy(out, rho, kSeedBytes);
  std::memcpy(out + kSeedBytes, key, kSeedBytes);
  public_key_hash(out + 2 * kSeedBytes, {pk, P::kPkBytes});
  out += 2 * kSeedBytes + kCrhBytes;
  for (const auto& p : sec.s1.p) {
    poly_pack(out, p, P::eta, P::eta_bits);
    out += P::kEtaPolyBytes;
  }
  for (const auto& p : sec.s2.p) {
    poly_pack(out, p, P::eta, P::eta_bits);
    out += P::kEtaPolyBytes;
  }
  for (const auto& p : sec.t0.p) {
    poly_pack(out, p, 1 << (kD - 1), kD);
    out += kT0PolyBytes;
  }
  wipe(sec);
}

template <int K>
void expand_secret_key(ExpandedSecretKey<K>& out, const std::uint8_t* sk) noexcept {
  using P = Params<K>;
  // (rho, K, tr, s1, s2, t0) = skDecode(sk)  (line 1, Algorithm 25), then NTT  (lines 2-4)
  std::uint8_t rho[kSeedBytes];
  std::memcpy(rho, sk, kSeedBytes);
  declassify(rho, kSeedBytes);  // rho is part of the public key (ct.hpp, item 1)
  std::memcpy(out.key, sk + kSeedBytes, kSeedBytes);
  std::memcpy(out.tr, sk + 2 * kSeedBytes, kCrhBytes);
  const std::uint8_t* in = sk + 2 * kSeedBytes + kCrhBytes;
  for (auto& p : out.s1_hat.p) {
    poly_unpack(p, in, P::eta, P::eta_bits);
    ntt(p);
    in += P::kEtaPolyBytes;
  }
  for (auto& p : out.s2_hat.p) {
    poly_unpack(p, in, P::eta, P::eta_bits);
    ntt(p);
    in += P::kEtaPolyBytes;
  }
  for (auto& p : out.t0_hat.p) {
    poly_unpack(p, in, 1 << (kD - 1), kD);
    ntt(p);
    in += kT0PolyBytes;
  }
  expand_a<K>(out.a, rho);  // line 5
}

template <int K>
bool sign_internal_mu(std::uint8_t* sig, const std::uint8_t* sk, const std::uint8_t mu[kCrhBytes],
                      const std::uint8_t rnd[kSeedBytes]) noexcept {
  ExpandedSecretKey<K> expanded;
  expand_secret_key<K>(expanded, sk);
  const bool done = sign_expanded_mu<K>(sig, expanded, mu, rnd);
  wipe(expanded);
  return done;
}

template <int K>
bool sign_expanded_mu(std::uint8_t* sig, const ExpandedSecretKey<K>& sk,
                      const std::uint8_t mu[kCrhBytes], const std::uint8_t rnd[kSeedBytes]) noexcept {
  using P = Params<K>;
  constexpr int L = P::l;
  struct Secrets {
    std::uint8_t rho2_input[kSeedBytes + kSeedBytes + kCrhBytes];
    std::uint8_t rho2[kCrhBytes];
    Vecl<K> y, y_hat, z;
    Veck<K> w, w1, r, r_plus, ct0, h;
    Poly c, c_hat;
  } sec;
  const Matrix<K>& a = sk.a;

  // rho'' = H(K || rnd || mu, 64)  (line 7)
  std::memcpy(sec.rho2_input, sk.key, kSeedBytes);
  std::memcpy(sec.rho2_input + kSeedBytes, rnd, kSeedBytes);
  std::memcpy(sec.rho2_input + 2 * kSeedBytes, mu, kCrhBytes);
  shake256(sec.rho2_input, sec.rho2);

  std::uint8_t c_tilde[P::kCTildeBytes];
  bool done = false;
  // kappa counts the mask polynomials drawn so far (line 8, line 31: kappa += l).
  for (std::uint32_t kappa = 0; !done; kappa += L) {
    if (kappa + L > 0x10000) break;
    // y = ExpandMask(rho'', kappa)  (line 11, Algorithm 34)
    // (l >= 4 for every parameter set: the first four through the four-way sampler)
    static_assert(L >= 4);
    Poly* const first[4] = {&sec.y.p[0], &sec.y.p[1], &sec.y.p[2], &sec.y.p[3]};
    const std::uint16_t nonces[4] = {
        static_cast<std::uint16_t>(kappa), static_cast<std::uint16_t>(kappa + 1),
        static_cast<std::uint16_t>(kappa + 2), static_cast<std::uint16_t>(kappa + 3)};
    sample_mask_x4(first, sec.rho2, nonces, P::gamma1, P::z_bits);
    for (std::size_t r = 4; r < L; ++r) {
      sample_mask(sec.y.p[r], sec.rho2, static_cast<std::uint16_t>(kappa + r), P::gamma1,
                  P::z_bits);
    }
    // w = NTT^-1(A_hat o NTT(y)), w1 = HighBits(w)  (lines 12-13)
    sec.y_hat = sec.y;
    polyvec_ntt(sec.y_hat);
    for (std::size_t i = 0; i < K; ++i) {
      row_times<L>(sec.w.p[i], a.row[i], sec.y_hat);
      poly_freeze(sec.w.p[i]);
      poly_highbits(sec.w1.p[i], sec.w.p[i], P::gamma2);
    }
    // c~ = H(mu || w1Encode(w1), lambda/4), c = SampleInBall(c~)  (lines 15-17)
    challenge_hash<K>(c_tilde, mu, sec.w1);
    // c~ is public in the signature; that of a rejected attempt is a random-oracle output of
    // (mu, w1) that involves no secret-key value (ct.hpp, item 3).
    declassify(c_tilde, sizeof(c_tilde));
    sample_in_ball(sec.c, c_tilde, sizeof(c_tilde), P::tau);
    sec.c_hat = sec.c;
    ntt(sec.c_hat);

    // z = y + <<c s1>>, r0 = LowBits(w - <<c s2>>)  (lines 18-21); first rejection test (line 23)
    bool reject = false;
    for (std::size_t j = 0; j < L; ++j) {
      times_challenge(sec.z.p[j], sec.c_hat, sk.s1_hat.p[j]);
      poly_add(sec.z.p[j], sec.z.p[j], sec.y.p[j]);
      poly_reduce(sec.z.p[j]);
      reject |= poly_exceeds(sec.z.p[j], P::gamma1 - P::beta);
    }
    for (std::size_t i = 0; i < K; ++i) {
      Poly r1, r0;
      times_challenge(r0, sec.c_hat, sk.s2_hat.p[i]);  // <<c s2>>, reused for r0 below
      poly_sub(sec.r.p[i], sec.w.p[i], r0);
      poly_freeze(sec.r.p[i]);  // w - c s2 in [0, q)
      poly_decompose(r1, r0, sec.r.p[i], P::gamma2);
      reject |= poly_exceeds(r0, P::gamma2 - P::beta);
      wipe(r1);
      wipe(r0);
    }
    declassify(&reject, sizeof(reject));  // only the verdict of line 23 (ct.hpp, item 4)
    if (reject) continue;

    // <<c t0>>, h = MakeHint(-<<c t0>>, w - c s2 + <<c t0>>)  (lines 25-26); second test (line 28)
    int ones = 0;
    for (std::size_t i = 0; i < K; ++i) {
      times_challenge(sec.ct0.p[i], sec.c_hat, sk.t0_hat.p[i]);
      reject |= poly_exceeds(sec.ct0.p[i], P::gamma2);
      poly_add(sec.r_plus.p[i], sec.r.p[i], sec.ct0.p[i]);
      poly_freeze(sec.r_plus.p[i]);
      ones += poly_make_hint(sec.h.p[i], sec.r_plus.p[i], sec.r.p[i], P::gamma2);
    }
    reject |= ones > P::omega;
    declassify(&reject, sizeof(reject));  // only the verdict of line 28 (ct.hpp, item 4)
    if (reject) continue;
    done = true;
  }

  if (done) {
    // sigEncode(c~, z mod+- q, h)  (line 33, Algorithm 26); z and h are public (ct.hpp, item 5)
    declassify(&sec.z, sizeof(sec.z));
    declassify(&sec.h, sizeof(sec.h));
    std::memcpy(sig, c_tilde, P::kCTildeBytes);
    std::uint8_t* out = sig + P::kCTildeBytes;
    for (const auto& p : sec.z.p) {
      poly_pack(out, p, P::gamma1, P::z_bits);
      out += P::kZPolyBytes;
    }
    hint_pack<K>(out, sec.h);
  }
  wipe(sec);
  return done;
}

// sigDecode (Algorithm 27) with every check that needs no arithmetic: h well formed (line 3) and
// ||z||_inf < gamma1 - beta (line 13, tested first). False for a malformed signature.
template <int K>
bool decode_signature(Vecl<K>& z, Veck<K>& h, const std::uint8_t* sig) noexcept {
  using P = Params<K>;
  const std::uint8_t* in = sig + P::kCTildeBytes;
  for (auto& p : z.p) {
    poly_unpack(p, in, P::gamma1, P::z_bits);
    in += P::kZPolyBytes;
  }
  if (!hint_unpack<K>(h, in)) return false;
  for (const auto& p : z.p) {
    if (poly_exceeds(p, P::gamma1 - P::beta)) return false;
  }
  return true;
}

template <int K>
void expand_public_key(ExpandedPublicKey<K>& out, const std::uint8_t* pk) noexcept {
  // A_hat = ExpandA(rho)  (line 5); t1 from pkDecode (Algorithm 23), as NTT(t1 2^d) (line 9)
  expand_a<K>(out.a, pk);
  for (std::size_t i = 0; i < K; ++i) {
    Poly& t1 = out.t1_hat.p[i];
    poly_unpack_simple(t1, pk + kSeedBytes + kT1PolyBytes * i, 10);
    poly_shiftl(t1);
    ntt(t1);
  }
  public_key_hash(out.tr, {pk, Params<K>::kPkBytes});  // line 6
}

template <int K>
bool verify_internal_mu(const std::uint8_t* pk, const std::uint8_t mu[kCrhBytes],
                        const std::uint8_t* sig) noexcept {
  {
    // A malformed signature is refused before the matrix is expanded (the cheap checks first).
    Vecl<K> z;
    Veck<K> h;
    if (!decode_signature<K>(z, h, sig)) return false;
  }
  ExpandedPublicKey<K> expanded;
  expand_public_key<K>(expanded, pk);
  return verify_expanded_mu<K>(expanded, mu, sig);
}

template <int K>
bool verify_expanded_mu(const ExpandedPublicKey<K>& pk, const std::uint8_t mu[kCrhBytes],
                        const std::uint8_t* sig) noexcept {
  using P = Params<K>;
  constexpr int L = P::l;
  // (c~, z, h) = sigDecode(sigma)  (line 2); h = bottom -> false  (line 3); line 13's bound on z
  const std::uint8_t* c_tilde = sig;
  Vecl<K> z;
  Veck<K> h;
  if (!decode_signature<K>(z, h, sig)) return false;

  // c = SampleInBall(c~)  (line 8)
  Poly c_hat;
  sample_in_ball(c_hat, c_tilde, P::kCTildeBytes, P::tau);
  ntt(c_hat);
  polyvec_ntt(z);

  // w'_Approx = NTT^-1(A_hat o NTT(z) - NTT(c) o NTT(t1 2^d)), w1' = UseHint(h, w'_Approx)
  // (lines 9-10)
  Veck<K> w1;
  for (std::size_t i = 0; i < K; ++i) {
    Poly w, ct1;
    poly_pointwise(ct1, c_hat, pk.t1_hat.p[i]);
    poly_dot(w, pk.a.row[i].p.data(), z.p.data(), L);
    poly_sub(w, w, ct1);
    poly_reduce(w);
    invntt_tomont(w);
    poly_freeze(w);
    poly_use_hint(w1.p[i], w, h.p[i], P::gamma2);
  }

  // c~' = H(mu || w1Encode(w1'), lambda/4); accept iff c~ = c~'  (lines 12-13)
  std::uint8_t c_tilde2[P::kCTildeBytes];
  challenge_hash<K>(c_tilde2, mu, w1);
  return ct_equal({c_tilde, P::kCTildeBytes}, c_tilde2);
}

#define PQOT_INSTANTIATE_MLDSA(K)                                                               \
  template void keygen_internal<K>(std::uint8_t*, std::uint8_t*, const std::uint8_t*) noexcept; \
  template bool sign_internal_mu<K>(std::uint8_t*, const std::uint8_t*, const std::uint8_t*,    \
                                    const std::uint8_t*) noexcept;                              \
  template bool verify_internal_mu<K>(const std::uint8_t*, const std::uint8_t*,                 \
                                      const std::uint8_t*) noexcept;                            \
  template void expand_secret_key<K>(ExpandedSecretKey<K>&, const std::uint8_t*) noexcept;      \
  template bool sign_expanded_mu<K>(std::uint8_t*, const ExpandedSecretKey<K>&,                 \
                                    const std::uint8_t*, const std::uint8_t*) noexcept;         \
  template void expand_public_key<K>(ExpandedPublicKey<K>&, const std::uint8_t*) noexcept;      \
  template bool verify_expanded_mu<K>(const ExpandedPublicKey<K>&, const std::uint8_t*,         \
                                      const std::uint8_t*) noexcept;
PQOT_INSTANTIATE_MLDSA(4)
PQOT_INSTANTIATE_MLDSA(6)
PQOT_INSTANTIATE_MLDSA(8)
#undef PQOT_INSTANTIATE_MLDSA

}  // namespace pqot::crypto::mldsa
