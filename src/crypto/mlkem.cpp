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

  // A decapsulation key decoded once (the prepared key of MlKem::prepare_secret_key, and what
  // decaps() builds from the bytes each time): s_hat, the re-encryption key expanded, H(ek), z.
  struct Dk {
    mlkem::PolyVec<K> s_hat;
    mlkem::ExpandedEk<K> ek;
    std::uint8_t h[kSymBytes];
    std::uint8_t z[kSymBytes];
  };
  static void decode_dk(Dk& out, const std::uint8_t* dk) noexcept {
    const std::uint8_t* ek_pke = dk + P::kDkPkeBytes;
    for (std::size_t i = 0; i < K; ++i) mlkem::poly_from_bytes(out.s_hat.p[i], dk + mlkem::kPolyBytes * i);
    mlkem::expand_ek<K>(out.ek, ek_pke);
    std::memcpy(out.h, ek_pke + P::kEkBytes, kSymBytes);
    std::memcpy(out.z, ek_pke + P::kEkBytes + kSymBytes, kSymBytes);
  }

  // An encapsulation key decoded once (the prepared key of MlKem::prepare_public_key, and what
  // encaps() builds from the bytes each time): the expanded key and H(ek).
  struct Ek {
    mlkem::ExpandedEk<K> key;
    std::uint8_t h[kSymBytes];
  };
  static void decode_ek(Ek& out, const std::uint8_t* ek) noexcept {
    mlkem::expand_ek<K>(out.key, ek);
    const auto h = sha3_256({ek, P::kEkBytes});
    std::memcpy(out.h, h.data(), kSymBytes);
  }

  // Algorithm 17: (K, r) = G(m || H(ek)); c = K-PKE.Encrypt(ek, m, r).
  static void encaps(std::uint8_t* ct, std::uint8_t* ss, const std::uint8_t* ek,
                     const std::uint8_t* m) noexcept {
    Ek decoded;
    decode_ek(decoded, ek);
    encaps_expanded(ct, ss, decoded.key, decoded.h, m);
  }
  static void encaps_expanded(std::uint8_t* ct, std::uint8_t* ss, const mlkem::ExpandedEk<K>& ek,
                              const std::uint8_t* h_ek, const std::uint8_t* m) noexcept {
    std::uint8_t g_in[2 * kSymBytes];
    std::memcpy(g_in, m, kSymBytes);
    std::memcpy(g_in + kSymBytes, h_ek, kSymBytes);
    auto kr = sha3_512(g_in);
    mlkem::kpke_encrypt_expanded<K>(ct, ek, m, kr.data() + kSymBytes);
    std::memcpy(ss, kr.data(), kSymBytes);
    secure_wipe(g_in, sizeof(g_in));
    secure_wipe(kr.data(), kr.size());
  }
  // Algorithm 18, with the re-encryption comparison and the key selection in constant time.
  static void decaps(std::uint8_t* ss, const std::uint8_t* dk, const std::uint8_t* ct) noexcept {
    Dk decoded;
    decode_dk(decoded, dk);
    decaps_decoded(ss, decoded, ct);
    secure_wipe(&decoded, sizeof(decoded));
  }
  static void decaps_decoded(std::uint8_t* ss, const Dk& dk, const std::uint8_t* ct) noexcept {
    std::uint8_t g_in[2 * kSymBytes];
    mlkem::kpke_decrypt_decoded<K>(g_in, dk.s_hat, ct);  // m'
    std::memcpy(g_in + kSymBytes, dk.h, kSymBytes);
    auto kr = sha3_512(g_in);  // (K', r')
    // K_bar = J(z || c) = SHAKE256(z || c, 32)
    std::uint8_t k_bar[kSymBytes];
    Shake256 j;
    j.absorb({dk.z, kSymBytes});
    j.absorb({ct, P::kCtBytes});
    j.squeeze(k_bar);
    std::uint8_t ct_prime[P::kCtBytes];
    mlkem::kpke_encrypt_expanded<K>(ct_prime, dk.ek, g_in, kr.data() + kSymBytes);
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

// Prepared keys (mlkem.hpp), one class per rank so that another parameter set's key fails the
// dynamic_cast.
template <int K>
class PreparedEk final : public PreparedKemKey {
 public:
  explicit PreparedEk(const std::uint8_t* ek) { Scheme<K>::decode_ek(key, ek); }
  typename Scheme<K>::Ek key;
};

template <int K>
class PreparedDk final : public PreparedKemKey {
 public:
  explicit PreparedDk(const std::uint8_t* dk) { Scheme<K>::decode_dk(key, dk); }
  ~PreparedDk() override { secure_wipe(&key, sizeof(key)); }
  PreparedDk(const PreparedDk&) = delete;
  PreparedDk& operator=(const PreparedDk&) = delete;
  typename Scheme<K>::Dk key;
};

template <class T>
const T& prepared_kem_as(const PreparedKemKey& key, std::string_view kem, const char* kind) {
  const auto* p = dynamic_cast<const T*>(&key);
  if (p == nullptr) {
    throw Error(ErrorCode::invalid_argument,
                std::string(kem) + ": not " + kind + " key this parameter set prepared");
  }
  return *p;
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

void MlKem::check_secret_key(ByteView secret_key) const {
  require_size(secret_key, secret_key_size(), "decapsulation key", name());
  const bool ok =
      dispatch(set_, [&]<int K>() { return Scheme<K>::dk_hash_matches(secret_key.data()); });
  if (!ok) {
    throw Error(ErrorCode::invalid_key, std::string(name()) +
                                            ": decapsulation key fails the hash check "
                                            "(H(ek) does not match)");
  }
}

KemEncapsulation MlKem::encapsulate(ByteView public_key, ByteView seed) const {
  check_public_key(public_key);
  require_size(seed, kSymBytes, "m", name());
  return encaps_internal(public_key, seed);
}

SecretBytes MlKem::decapsulate(ByteView secret_key, ByteView ciphertext) const {
  require_size(ciphertext, ciphertext_size(), "ciphertext", name());
  check_secret_key(secret_key);
  return decaps_internal(secret_key, ciphertext);
}

PreparedKemKeyPtr MlKem::prepare_public_key(ByteView public_key) const {
  check_public_key(public_key);
  return dispatch(set_, [&]<int K>() -> PreparedKemKeyPtr {
    return std::make_shared<const PreparedEk<K>>(public_key.data());
  });
}

PreparedKemKeyPtr MlKem::prepare_secret_key(ByteView secret_key) const {
  check_secret_key(secret_key);
  return dispatch(set_, [&]<int K>() -> PreparedKemKeyPtr {
    return std::make_shared<const PreparedDk<K>>(secret_key.data());
  });
}

KemEncapsulation MlKem::encapsulate_prepared(const PreparedKemKey& public_key, ByteView seed) const {
  require_size(seed, kSymBytes, "m", name());
  KemEncapsulation out;
  out.ciphertext.resize(ciphertext_size());
  out.shared_secret.resize(kSymBytes);
  dispatch(set_, [&]<int K>() {
    const auto& ek = prepared_kem_as<PreparedEk<K>>(public_key, name(), "an encapsulation");
    Scheme<K>::encaps_expanded(out.ciphertext.data(), out.shared_secret.data(), ek.key.key, ek.key.h,
                               seed.data());
  });
  return out;
}

SecretBytes MlKem::decapsulate_prepared(const PreparedKemKey& secret_key, ByteView ciphertext) const {
  require_size(ciphertext, ciphertext_size(), "ciphertext", name());
  SecretBytes ss(kSymBytes);
  dispatch(set_, [&]<int K>() {
    const auto& dk = prepared_kem_as<PreparedDk<K>>(secret_key, name(), "a decapsulation");
    Scheme<K>::decaps_decoded(ss.data(), dk.key, ciphertext.data());
  });
  return ss;
}

}  // namespace pqot::crypto
