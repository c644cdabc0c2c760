// libFuzzer target: RSA keys, signatures and ciphertexts from untrusted bytes (RsaSignature,
// RsaOaep). Input: byte 0 picks the suite, byte 1 the operation, the rest is the untrusted value.
// Only a crypto::Error may escape the wrappers, and what they return must be consistent (the
// std::abort()s); sanitizers catch memory errors. The fixture key is generated once per run
// (RSA keys cannot come from a seed); no check below depends on its value.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "pqot/crypto/error.hpp"
#include "pqot/crypto/rsa.hpp"

using namespace pqot::crypto;

namespace {

constexpr std::array<std::string_view, 6> kSignatures = {"RSA-2048-PKCS1", "RSA-3072-PKCS1",
                                                         "RSA-7680-PKCS1", "RSA-2048-PSS",
                                                         "RSA-3072-PSS",   "RSA-7680-PSS"};
constexpr std::uint8_t kMessage[] = {'f', 'u', 'z', 'z'};

// A 2048-bit key with a PKCS#1 v1.5 signature and an OAEP ciphertext of kMessage.
struct Fixture {
  RsaKeyPair kp;
  Bytes sig;
  Bytes ct;
};

const Fixture& fixture() {
  static const Fixture f = [] {
    Fixture x;
    x.kp = RsaOaep(RsaModulus::rsa_2048).keygen();
    x.sig = signature_by_name("RSA-2048-PKCS1").sign(x.kp.secret_key, kMessage);
    x.ct = RsaOaep(RsaModulus::rsa_2048).encrypt(x.kp.public_key, kMessage);
    return x;
  }();
  return f;
}

bool same(ByteView a, ByteView b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

// check_public_key and verify must agree on which keys they refuse.
void public_key_from_wire(const Signature& rsa, ByteView value) {
  bool acceptable = true;
  try {
    rsa.check_public_key(value);
  } catch (const Error&) {
    acceptable = false;
  }
  try {
    (void)rsa.verify(value, kMessage, {}, fixture().sig);
  } catch (const Error&) {
    if (acceptable) std::abort();
    return;
  }
  if (!acceptable) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const Signature& rsa = signature_by_name(kSignatures[data[0] % kSignatures.size()]);
  const RsaOaep oaep(rsa.signature_size() == 256   ? RsaModulus::rsa_2048
                     : rsa.signature_size() == 384 ? RsaModulus::rsa_3072
                                                   : RsaModulus::rsa_7680);
  const RsaOaep oaep2048(RsaModulus::rsa_2048);
  const Signature& pkcs1 = signature_by_name("RSA-2048-PKCS1");
  const ByteView value(data + 2, size - 2);
  const Fixture& f = fixture();
  try {
    switch (data[1] % 6) {
      case 0:  // a public key from the wire
        public_key_from_wire(rsa, value);
        break;
      case 1: {  // a signature from the wire: never an exception with a good key
        bool ok = false;
        try {
          ok = pkcs1.verify(f.kp.public_key, kMessage, {}, value);
        } catch (const Error&) {
          std::abort();
        }
        if (ok != same(value, f.sig)) std::abort();  // PKCS#1 v1.5: one signature per message
        break;
      }
      case 2: {  // a secret key from storage
        const Bytes sig = rsa.sign(SecretBytes(value.begin(), value.end()), kMessage);
        if (sig.size() != rsa.signature_size()) std::abort();
        break;
      }
      case 3: {  // an OAEP secret key from storage
        (void)oaep.decrypt(SecretBytes(value.begin(), value.end()), f.ct);
        break;
      }
      case 4: {  // a ciphertext from the wire: nullopt or a message, never an exception
        std::optional<SecretBytes> m;
        try {
          m = oaep2048.decrypt(f.kp.secret_key, value);
        } catch (const Error&) {
          std::abort();
        }
        if (same(value, f.ct) && !(m && same(*m, kMessage))) std::abort();
        if (m && m->size() > oaep2048.max_plaintext_size()) std::abort();
        break;
      }
      default: {  // an OAEP public key from the wire
        const Bytes ct = oaep.encrypt(value, kMessage);
        if (ct.size() != oaep.ciphertext_size()) std::abort();
        break;
      }
    }
  } catch (const Error&) {
    // Refusing bad input is the expected outcome.
  }
  return 0;
}
