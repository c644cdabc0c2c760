// Saber.KEM (round-3 specification, Saber.KEM.KeyGen, Saber.KEM.Encaps, Saber.KEM.Decaps): the
// Fujisaki-Okamoto transform of Saber.PKE with implicit rejection, byte for byte as the reference
// implementation computes it, so that the NIST known answers match. Every secret intermediate is
// wiped before returning.
#include "saber_kem.hpp"

#include <cstring>

#include "../../mlkem/ct.hpp"
#include "../../size_check.hpp"
#include "indcpa.hpp"
#include "params.hpp"
#include "pqot/crypto/secure.hpp"
#include "pqot/crypto/sha3.hpp"

namespace pqot::crypto::saber {

namespace {

// keygen_seed_size() (saber_kem.hpp) is the reference's three draws: seed_A, seed_s, z.
static_assert(kSeedBytes + kNoiseSeedBytes + kKeyBytes == 96);

template <int L>
struct Scheme {
  using P = Params<L>;
  // Offsets in the KEM secret key s ‖ pk ‖ SHA3-256(pk) ‖ z.
  static constexpr std::size_t kSkPk = P::kPkeSkBytes;
  static constexpr std::size_t kSkHash = kSkPk + P::kPkePkBytes;
  static constexpr std::size_t kSkZ = kSkHash + kHashBytes;

  // Saber.KEM.KeyGen: (pk, s) = Saber.PKE.KeyGen(); sk = s ‖ pk ‖ SHA3-256(pk) ‖ z.
  static void keygen(std::uint8_t* pk, std::uint8_t* sk, const std::uint8_t* seed_a,
                     const std::uint8_t* seed_s, const std::uint8_t* z) noexcept {
    pke_keygen<L>(pk, sk, seed_a, seed_s);
    std::memcpy(sk + kSkPk, pk, P::kPkePkBytes);
    const auto h = sha3_256({pk, P::kPkePkBytes});
    std::memcpy(sk + kSkHash, h.data(), kHashBytes);
    std::memcpy(sk + kSkZ, z, kKeyBytes);
  }

  // Saber.KEM.Encaps: m = SHA3-256(seed); (K^, r) = SHA3-512(m ‖ SHA3-256(pk));
  // c = Saber.PKE.Enc(pk, m; r); K = SHA3-256(K^ ‖ SHA3-256(c)).
  static void encaps(std::uint8_t* ct, std::uint8_t* ss, const std::uint8_t* pk,
                     const std::uint8_t* seed) noexcept {
    std::uint8_t buf[kKeyBytes + kHashBytes];  // m ‖ SHA3-256(pk)
    auto m = sha3_256({seed, kKeyBytes});
    std::memcpy(buf, m.data(), kKeyBytes);
    const auto hpk = sha3_256({pk, P::kPkePkBytes});
    std::memcpy(buf + kKeyBytes, hpk.data(), kHashBytes);
    auto kr = sha3_512(buf);
    pke_encrypt<L>(ct, buf, kr.data() + kKeyBytes, pk);
    finish(ss, kr.data(), ct);
    secure_wipe(buf, sizeof(buf));
    secure_wipe(m.data(), m.size());
    secure_wipe(kr.data(), kr.size());
  }

  // Saber.KEM.Decaps: m' = Saber.PKE.Dec(s, c); (K^', r') = SHA3-512(m' ‖ SHA3-256(pk));
  // c' = Saber.PKE.Enc(pk, m'; r'); K = SHA3-256(K^' ‖ SHA3-256(c)) if c = c', else
  // SHA3-256(z ‖ SHA3-256(c)). The comparison and the choice run in constant time.
  static void decaps(std::uint8_t* ss, const std::uint8_t* sk, const std::uint8_t* ct) noexcept {
    std::uint8_t buf[kKeyBytes + kHashBytes];
    pke_decrypt<L>(buf, sk, ct);
    std::memcpy(buf + kKeyBytes, sk + kSkHash, kHashBytes);
    auto kr = sha3_512(buf);
    std::uint8_t ct_prime[P::kCtBytes];
    pke_encrypt<L>(ct_prime, buf, kr.data() + kKeyBytes, sk + kSkPk);
    const std::uint8_t reject = mlkem::ct_differ_mask(ct, ct_prime, P::kCtBytes);
    mlkem::ct_select(kr.data(), sk + kSkZ, kKeyBytes, reject);
    finish(ss, kr.data(), ct);
    secure_wipe(buf, sizeof(buf));
    secure_wipe(kr.data(), kr.size());
    secure_wipe(ct_prime, sizeof(ct_prime));
  }

  // K = SHA3-256(k ‖ SHA3-256(c)) for the 32-byte k.
  static void finish(std::uint8_t* ss, const std::uint8_t* k, const std::uint8_t* ct) noexcept {
    std::uint8_t in[kKeyBytes + kHashBytes];
    std::memcpy(in, k, kKeyBytes);
    const auto hc = sha3_256({ct, P::kCtBytes});
    std::memcpy(in + kKeyBytes, hc.data(), kHashBytes);
    auto out = sha3_256(in);
    std::memcpy(ss, out.data(), kKeyBytes);
    secure_wipe(in, sizeof(in));
    secure_wipe(out.data(), out.size());
  }
};

struct Sizes {
  std::size_t pk, sk, ct;
};

template <int L>
constexpr Sizes sizes_of() {
  return {Params<L>::kPkePkBytes, Params<L>::kSkBytes, Params<L>::kCtBytes};
}

constexpr Sizes sizes(Level level) {
  switch (level) {
    case Level::light_saber:
      return sizes_of<2>();
    case Level::saber:
      return sizes_of<3>();
    case Level::fire_saber:
      return sizes_of<4>();
  }
  return sizes_of<3>();
}

// Calls f.template operator()<L>() for the rank of `level`.
template <class F>
decltype(auto) dispatch(Level level, F&& f) {
  switch (level) {
    case Level::light_saber:
      return f.template operator()<2>();
    case Level::fire_saber:
      return f.template operator()<4>();
    case Level::saber:
      break;
  }
  return f.template operator()<3>();
}

}  // namespace

std::string_view SaberKem::name() const noexcept {
  switch (level_) {
    case Level::light_saber:
      return "LightSaber";
    case Level::saber:
      return "Saber";
    case Level::fire_saber:
      return "FireSaber";
  }
  return "Saber";
}

std::size_t SaberKem::public_key_size() const noexcept {
  return sizes(level_).pk;
}
std::size_t SaberKem::secret_key_size() const noexcept {
  return sizes(level_).sk;
}
std::size_t SaberKem::ciphertext_size() const noexcept {
  return sizes(level_).ct;
}

KemKeyPair SaberKem::generate_keypair(ByteView seed) const {
  require_size(seed, keygen_seed_size(), "seed (seed_A || seed_s || z)", name());
  KemKeyPair kp;
  kp.public_key.resize(public_key_size());
  kp.secret_key.resize(secret_key_size());
  dispatch(level_, [&]<int L>() {
    const std::uint8_t* seed_a = seed.data();
    const std::uint8_t* seed_s = seed_a + kSeedBytes;
    const std::uint8_t* z = seed_s + kNoiseSeedBytes;
    Scheme<L>::keygen(kp.public_key.data(), kp.secret_key.data(), seed_a, seed_s, z);
  });
  return kp;
}

void SaberKem::check_public_key(ByteView public_key) const {
  // Every 10-bit value is a coefficient mod p and every seed is valid: the length is the check.
  require_size(public_key, public_key_size(), "public key", name());
}

KemEncapsulation SaberKem::encapsulate(ByteView public_key, ByteView seed) const {
  check_public_key(public_key);
  require_size(seed, encaps_seed_size(), "seed", name());
  KemEncapsulation out;
  out.ciphertext.resize(ciphertext_size());
  out.shared_secret.resize(kKeyBytes);
  dispatch(level_, [&]<int L>() {
    Scheme<L>::encaps(out.ciphertext.data(), out.shared_secret.data(), public_key.data(),
                      seed.data());
  });
  return out;
}

SecretBytes SaberKem::decapsulate(ByteView secret_key, ByteView ciphertext) const {
  require_size(secret_key, secret_key_size(), "secret key", name());
  require_size(ciphertext, ciphertext_size(), "ciphertext", name());
  SecretBytes ss(kKeyBytes);
  dispatch(level_,
           [&]<int L>() { Scheme<L>::decaps(ss.data(), secret_key.data(), ciphertext.data()); });
  return ss;
}

}  // namespace pqot::crypto::saber
