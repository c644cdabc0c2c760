#include "sampling.hpp"

#include "pack.hpp"
#include "pqot/crypto/secure.hpp"
#include "pqot/crypto/sha3.hpp"

namespace pqot::crypto::saber {

void sample_cbd(Poly& s, const std::uint8_t* buf, int mu) noexcept {
  Poly raw{};  // the mu-bit fields, read as one bit stream
  unpack_poly(raw, buf, mu);
  const int half = mu / 2;
  for (std::size_t j = 0; j < kN; ++j) {
    const unsigned x = raw.c[j];
    unsigned a = 0;
    unsigned b = 0;
    for (int k = 0; k < half; ++k) {
      a += (x >> k) & 1u;
      b += (x >> (k + half)) & 1u;
    }
    s.c[j] = static_cast<std::uint16_t>(a - b);
  }
  secure_wipe(&raw, sizeof(raw));
}

template <int L>
void gen_matrix(PolyMatrix<L>& a, const std::uint8_t seed_a[kSeedBytes]) noexcept {
  std::uint8_t buf[L * Params<L>::kPolyVecBytes];
  shake128({seed_a, kSeedBytes}, buf);
  for (std::size_t i = 0; i < L; ++i) {
    unpack_polyvec<L>(a[i], buf + i * Params<L>::kPolyVecBytes, kEq);
  }
}

template <int L>
void gen_secret(PolyVec<L>& s, const std::uint8_t seed[kNoiseSeedBytes]) noexcept {
  using P = Params<L>;
  std::uint8_t buf[L * P::kPolyCoinBytes];
  shake128({seed, kNoiseSeedBytes}, buf);
  for (std::size_t i = 0; i < L; ++i) sample_cbd(s.p[i], buf + i * P::kPolyCoinBytes, P::mu);
  secure_wipe(buf, sizeof(buf));
}

template void gen_matrix<2>(PolyMatrix<2>&, const std::uint8_t*) noexcept;
template void gen_matrix<3>(PolyMatrix<3>&, const std::uint8_t*) noexcept;
template void gen_matrix<4>(PolyMatrix<4>&, const std::uint8_t*) noexcept;
template void gen_secret<2>(PolyVec<2>&, const std::uint8_t*) noexcept;
template void gen_secret<3>(PolyVec<3>&, const std::uint8_t*) noexcept;
template void gen_secret<4>(PolyVec<4>&, const std::uint8_t*) noexcept;

}  // namespace pqot::crypto::saber
