// libFuzzer target: KEM key and ciphertext parsing (ML-KEM-512/768/1024, X-Wing) and hex decoding.
// Input: byte 0 picks the KEM, byte 1 the operation, the rest is the untrusted value.
// Any outcome but a crypto::Error or a result is a bug; sanitizers catch memory errors.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "pqot/crypto/error.hpp"
#include "pqot/crypto/kem.hpp"

using namespace pqot::crypto;

namespace {

struct Fixture {
  KemKeyPair kp;
  KemEncapsulation enc;
};

const Fixture& fixture(const Kem& kem) {
  static Fixture f[4];
  static bool made[4] = {};
  std::size_t i = 0;
  while (kem_names()[i] != kem.name()) ++i;
  if (!made[i]) {
    f[i].kp = kem.generate_keypair(Bytes(kem.keygen_seed_size(), 0x42));
    f[i].enc = kem.encapsulate(f[i].kp.public_key, Bytes(kem.encaps_seed_size(), 0x24));
    made[i] = true;
  }
  return f[i];
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const Kem& kem = kem_by_name(kem_names()[data[0] % kem_names().size()]);
  const ByteView value(data + 2, size - 2);
  const Fixture& f = fixture(kem);
  try {
    switch (data[1] % 4) {
      case 0: {  // encapsulation key from the wire
        bool acceptable = true;
        try {
          kem.check_public_key(value);
        } catch (const Error&) {
          acceptable = false;
        }
        const auto enc = kem.encapsulate(value, Bytes(kem.encaps_seed_size(), 1));
        if (!acceptable) std::abort();  // encapsulate must run the same checks
        if (enc.ciphertext.size() != kem.ciphertext_size()) std::abort();
        break;
      }
      case 1: {  // decapsulation key from storage
        const auto ss = kem.decapsulate(SecretBytes(value.begin(), value.end()), f.enc.ciphertext);
        if (ss.size() != 32) std::abort();
        break;
      }
      case 2: {  // ciphertext from the wire: always a 32-byte secret when the length is right
        const auto ss = kem.decapsulate(f.kp.secret_key, value);
        if (ss.size() != 32) std::abort();
        if (value.size() == f.enc.ciphertext.size() &&
            std::equal(value.begin(), value.end(), f.enc.ciphertext.begin()) &&
            !ct_equal(ss, f.enc.shared_secret)) {
          std::abort();
        }
        break;
      }
      default: {  // hex text
        const std::string_view text(reinterpret_cast<const char*>(value.data()), value.size());
        const Bytes b = from_hex(text);
        if (b.size() * 2 != text.size()) std::abort();
        break;
      }
    }
  } catch (const Error&) {
    // Refusing bad input is the expected outcome.
  }
  return 0;
}
