// libFuzzer target: the comparison contenders' (NTRU, Saber) decoding of public keys, secret keys
// and ciphertexts. Input: byte 0 picks the KEM (contender_kem_names() order), byte 1 the
// operation, the rest is the untrusted value. Any outcome but a crypto::Error or a well-formed
// result is a bug; sanitizers catch memory errors.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>

#include "pqot/crypto/contender_kem.hpp"
#include "pqot/crypto/error.hpp"

using namespace pqot::crypto;

namespace {

struct Fixture {
  KemKeyPair kp;
  KemEncapsulation enc;
};

const Fixture& fixture(std::size_t index) {
  static std::array<Fixture, 7> f;
  static std::array<bool, 7> made{};
  if (!made[index]) {
    // Seeds of varied bytes: a constant byte that is 0 mod 3 would sample NTRU's f as zero.
    const Kem& kem = contender_kem_by_name(contender_kem_names()[index]);
    Bytes seed(kem.keygen_seed_size()), m(kem.encaps_seed_size());
    for (std::size_t i = 0; i < seed.size(); ++i) seed[i] = static_cast<std::uint8_t>(7 * i + 1);
    for (std::size_t i = 0; i < m.size(); ++i) m[i] = static_cast<std::uint8_t>(5 * i + 3);
    f[index].kp = kem.generate_keypair(seed);
    f[index].enc = kem.encapsulate(f[index].kp.public_key, m);
    // The fixture must be a working key, or the checks below prove nothing.
    if (!ct_equal(kem.decapsulate(f[index].kp.secret_key, f[index].enc.ciphertext),
                  f[index].enc.shared_secret)) {
      std::abort();
    }
    made[index] = true;
  }
  return f[index];
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::size_t index = data[0] % contender_kem_names().size();
  const Kem& kem = contender_kem_by_name(contender_kem_names()[index]);
  const ByteView value(data + 2, size - 2);
  const Fixture& f = fixture(index);
  try {
    switch (data[1] % 3) {
      case 0: {  // public key from the wire: accepted by the check iff encapsulation accepts it
        // (NTRU also refuses padding bits and h = 0)
        bool acceptable = true;
        try {
          kem.check_public_key(value);
        } catch (const Error&) {
          acceptable = false;
        }
        const auto enc = kem.encapsulate(value, Bytes(kem.encaps_seed_size(), 1));
        if (!acceptable) std::abort();
        if (enc.ciphertext.size() != kem.ciphertext_size()) std::abort();
        if (enc.shared_secret.size() != 32) std::abort();
        break;
      }
      case 1: {  // secret key from storage: any bytes of the right length decapsulate
        const auto ss = kem.decapsulate(SecretBytes(value.begin(), value.end()), f.enc.ciphertext);
        if (ss.size() != 32) std::abort();
        break;
      }
      default: {  // ciphertext from the wire: always a 32-byte secret when the length is right
        const auto ss = kem.decapsulate(f.kp.secret_key, value);
        if (ss.size() != 32) std::abort();
        if (value.size() == f.enc.ciphertext.size() &&
            std::equal(value.begin(), value.end(), f.enc.ciphertext.begin()) &&
            !ct_equal(ss, f.enc.shared_secret)) {
          std::abort();
        }
        break;
      }
    }
  } catch (const Error&) {
    // Refusing bad input is the expected outcome.
  }
  return 0;
}
