// ML-KEM (FIPS 203 sections 6-7): the KEM on top of K-PKE, with implicit rejection and the
// input checks. Every secret intermediate is wiped before returning.
#include "pqot/crypto/mlkem.hpp"

#include <cstring>
#include <string>

#include "mlkem/ct.hpp"
#include "mlkem/kpke.hpp"
#include "mlkem/params.hpp"
#include "mlkem/poly.hpp"
#include "pqot/crypto/error.hpp"
#include "size_check.hpp"
#include "pqot/crypto/sha3.hpp"

namespace pqot::crypto {

namespace {

using mlkem::kSymBytes;

template <int K>
struct Scheme {
  using P = mlkem::Params<K>;

  // Algorithm 16: ek = ek_PKE; dk = dk_PKE || ek || H(ek) || z.
  static void keygen(std::uint8_t* ek, std::uint8_t* dk, const std::uint8_t* d,
                     const std::uint8_t* z) noexcept {
    mlkem::kpke_keygen<K>(ek, dk, d);
    std::uint8_t* p = dk + P::kDkPkeBytes;
    std::memcpy(p, ek, P::kEkBytes);
    const auto h = sha3_256({ek, P::kEkBytes});
    std::memcpy(p + P::kEkBytes, h.data(), kSymBytes);
    std::memcpy(p + P::kEkBytes + kSymBytes, z, kSymBytes);
  }

  // Algorithm 17: (K, r) = G(m || H(ek)); c = K-PKE.Encrypt(ek, m, r).
  static void encaps(std::uint8_t* ct, std::uint8_t* ss, const std::uint8_t* ek,
                     const std::uint8_t* m) noexcept {
    std::uint8_t g_in[2 * kSymBytes];
    std::memcpy(g_in, m, kSymBytes);
    const auto h = sha3_256({ek, P::kEkBytes});
    std::memcpy(g_in + kSymBytes, h.data(), kSymBytes);
    auto kr = sha3_512(g_in);
    mlkem::kpke_encrypt<K>(ct, ek, m, kr.data() + kSymBytes);
    std::memcpy(ss, kr.data(), kSymBytes);
    secure_wipe(g_in, sizeof(g_in));
    secure_wipe(kr.data(), kr.size());
  }

  // Algorithm 18, with the re-encryption comparison and the key selection in constant time.
  static void decaps(std::uint8_t* ss, const std::uint8_t* dk, const std::uint8_t* ct) noexcept {
    const std::uint8_t* dk_pke = dk;
    const std::uint8_t* ek_pke = dk + P::kDkPkeBytes;
    const std::uint8_t* h = ek_pke + P::kEkBytes;
    const std::uint8_t* z = h + kSymBytes;

    std::uint8_t g_in[2 * kSymBytes];
    mlkem::kpke_decrypt<K>(g_in, dk_pke, ct);  // m'
    std::memcpy(g_in + kSymBytes, h, kSymBytes);
    auto kr = sha3_512(g_in);  // (K', r')

    // K_bar = J(z || c) = SHAKE256(z || c, 32)
    std::uint8_t k_bar[kSymBytes];
    Shake256 j;
    j.absorb({z, kSymBytes});
    j.absorb({ct, P::kCtBytes});
    j.squeeze(k_bar);

    std::uint8_t ct_prime[P::kCtBytes];
    mlkem::kpke_encrypt<K>(ct_prime, ek_pke, g_in, kr.data() + kSymBytes);
    const std::uint8_t reject = mlkem::ct_differ_mask(ct, ct_prime, P::kCtBytes);
    std::memcpy(ss, kr.data(), kSymBytes);
    mlkem::ct_select(ss, k_bar, kSymBytes, reject);

    secure_wipe(g_in, sizeof(g_in));
    secure_wipe(kr.data(), kr.size());
    secure_wipe(k_bar, sizeof(k_bar));
    secure_wipe(ct_prime, sizeof(ct_prime));
  }

  // Section 7.2, modulus check: ByteEncode_12(ByteDecode_12(ek)) == ek.
  static bool ek_is_reduced(const std::uint8_t* ek) noexcept {
    for (std::size_t i = 0; i < K; ++i) {
      if (!mlkem::poly_bytes_are_reduced(ek + mlkem::kPolyBytes * i)) return false;
    }
    return true;
  }

  // Section 7.3, hash check: H(dk[384k : 768k+32]) == dk[768k+32 : 768k+64]. The outcome depends on
  // dk, but it only says whether dk is malformed, which is not secret.
  static bool dk_hash_matches(const std::uint8_t* dk) noexcept {
    const std::uint8_t* ek = dk + P::kDkPkeBytes;
    const auto h = sha3_256({ek, P::kEkBytes});
    bool ok = ct_equal(h, {ek + P::kEkBytes, kSymBytes});
    mlkem::declassify(&ok, sizeof(ok));
    return ok;
  }
};

struct Sizes {
  std::size_t ek, dk, ct;
};

template <int K>
constexpr Sizes sizes_of() {
  using P = mlkem::Params<K>;
  return {P::kEkBytes, P::kDkBytes, P::kCtBytes};
}

constexpr Sizes sizes(MlKemParameterSet set) {
  switch (set) {
    case MlKemParameterSet::ml_kem_512: return sizes_of<2>();
    case MlKemParameterSet::ml_kem_768: return sizes_of<3>();
    case MlKemParameterSet::ml_kem_1024: return sizes_of<4>();
  }
  return sizes_of<3>();
}

// Calls f.template operator()<K>() for the rank of `set`.
template <class F>
decltype(auto) dispatch(MlKemParameterSet set, F&& f) {
  switch (set) {
    case MlKemParameterSet::ml_kem_512: return f.template operator()<2>();
    case MlKemParameterSet::ml_kem_1024: return f.template operator()<4>();
    case MlKemParameterSet::ml_kem_768: break;
  }
  return f.template operator()<3>();
}

}  // namespace

MlKem::MlKem(MlKemParameterSet set) noexcept : set_(set) {}

std::string_view MlKem::name() const noexcept {
  switch (set_) {
    case MlKemParameterSet::ml_kem_512: return "ML-KEM-512";
    case MlKemParameterSet::ml_kem_768: return "ML-KEM-768";
    case MlKemParameterSet::ml_kem_1024: return "ML-KEM-1024";
  }
  return "ML-KEM-768";
}

std::size_t MlKem::public_key_size() const noexcept { return sizes(set_).ek; }
std::size_t MlKem::secret_key_size() const noexcept { return sizes(set_).dk; }
std::size_t MlKem::ciphertext_size() const noexcept { return sizes(set_).ct; }

KemKeyPair MlKem::keygen_internal(ByteView d, ByteView z) const {
  require_size(d, kSymBytes, "d", name());
  require_size(z, kSymBytes, "z", name());
  KemKeyPair kp;
  kp.public_key.resize(public_key_size());
  kp.secret_key.resize(secret_key_size());
  dispatch(set_, [&]<int K>() {
    Scheme<K>::keygen(kp.public_key.data(), kp.secret_key.data(), d.data(), z.data());
  });
  return kp;
}

KemEncapsulation MlKem::encaps_internal(ByteView public_key, ByteView m) const {
  require_size(public_key, public_key_size(), "encapsulation key", name());
  require_size(m, kSymBytes, "m", name());
  KemEncapsulation out;
  out.ciphertext.resize(ciphertext_size());
  out.shared_secret.resize(kSymBytes);
  dispatch(set_, [&]<int K>() {
    Scheme<K>::encaps(out.ciphertext.data(), out.shared_secret.data(), public_key.data(), m.data());
  });
  return out;
}

SecretBytes MlKem::decaps_internal(ByteView secret_key, ByteView ciphertext) const {
  require_size(secret_key, secret_key_size(), "decapsulation key", name());
  require_size(ciphertext, ciphertext_size(), "ciphertext", name());
  SecretBytes ss(kSymBytes);
  dispatch(set_, [&]<int K>() { Scheme<K>::decaps(ss.data(), secret_key.data(), ciphertext.data()); });
  return ss;
}

KemKeyPair MlKem::generate_keypair(ByteView seed) const {
  require_size(seed, 2 * kSymBytes, "seed (d || z)", name());
  return keygen_internal(seed.first(kSymBytes), seed.subspan(kSymBytes));
}

void MlKem::check_public_key(ByteView public_key) const {
  require_size(public_key, public_key_size(), "encapsulation key", name());
  const bool reduced =
      dispatch(set_, [&]<int K>() { return Scheme<K>::ek_is_reduced(public_key.data()); });
  if (!reduced) {
    throw Error(ErrorCode::invalid_key, std::string(name()) +
                                            ": encapsulation key fails the modulus check "
                                            "(a coefficient is not reduced mod q)");
  }
}

KemEncapsulation MlKem::encapsulate(ByteView public_key, ByteView seed) const {
  check_public_key(public_key);
  require_size(seed, kSymBytes, "m", name());
  return encaps_internal(public_key, seed);
}

SecretBytes MlKem::decapsulate(ByteView secret_key, ByteView ciphertext) const {
  require_size(ciphertext, ciphertext_size(), "ciphertext", name());
  require_size(secret_key, secret_key_size(), "decapsulation key", name());
  const bool ok =
      dispatch(set_, [&]<int K>() { return Scheme<K>::dk_hash_matches(secret_key.data()); });
  if (!ok) {
    throw Error(ErrorCode::invalid_key, std::string(name()) +
                                            ": decapsulation key fails the hash check "
                                            "(H(ek) does not match)");
  }
  return decaps_internal(secret_key, ciphertext);
}

}  // namespace pqot::crypto
