// libFuzzer target: KEM key and ciphertext parsing (ML-KEM-512/768/1024, X-Wing, and the comparison
// contenders NTRU and Saber) and hex decoding. Input: byte 0 picks the KEM (kem_names(), then
// contender_kem_names()), byte 1 the operation, the rest is the untrusted value.
// Any outcome but a crypto::Error or a result is a bug; sanitizers catch memory errors.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <vector>

#include "pqot/crypto/contender_kem.hpp"
#include "pqot/crypto/error.hpp"
#include "pqot/crypto/kem.hpp"

using namespace pqot::crypto;

namespace {

struct Fixture {
  KemKeyPair kp;
  KemEncapsulation enc;
};

const std::vector<const Kem*>& all_kems() {
  static const std::vector<const Kem*> kems = [] {
    std::vector<const Kem*> v;
    for (auto n : kem_names()) v.push_back(&kem_by_name(n));
    for (auto n : contender_kem_names()) v.push_back(&contender_kem_by_name(n));
    return v;
  }();
  return kems;
}

const Fixture& fixture(std::size_t index) {
  static std::vector<Fixture> f(all_kems().size());
  static std::vector<bool> made(all_kems().size());
  if (!made[index]) {
    // Seeds of varied bytes: a constant byte that is 0 mod 3 would sample NTRU's f as zero.
    const Kem& kem = *all_kems()[index];
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
  const std::size_t index = data[0] % all_kems().size();
  const Kem& kem = *all_kems()[index];
  const ByteView value(data + 2, size - 2);
  const Fixture& f = fixture(index);
  try {
    switch (data[1] % 4) {
      case 0: {  // encapsulation key from the wire (NTRU also refuses padding bits and h = 0)
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
