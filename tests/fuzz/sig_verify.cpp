// libFuzzer target: signature and public-key decoding in verification (ML-DSA-44/65/87 with
// HintBitUnpack and the z bound, Ed25519, ML-DSA-65+Ed25519). RSA has its own target (rsa_keys).
// Input: byte 0 picks the scheme, byte 1 the mode, the rest is the untrusted value.
// Modes: 0: XOR the value into a valid signature at an offset (bytes 2-3), which reaches the
// hint and z checks far more often than random bytes; 1: the value is the signature;
// 2: the value is the public key. Only crypto::Error may escape (for a public key of the wrong
// size), and a signature that differs from the valid one must never verify: encodings are unique
// (FIPS 204 Algorithm 21 refuses unsorted or padded hints; Ed25519 refuses S >= L).
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "pqot/crypto/error.hpp"
#include "pqot/crypto/signature.hpp"

using namespace pqot::crypto;

namespace {

struct Fixture {
  SignatureKeyPair kp;
  Bytes msg;
  Bytes sig;
};

std::vector<std::string_view> schemes() {
  std::vector<std::string_view> names;
  for (auto n : signature_names()) {
    if (!signature_by_name(n).legacy()) names.push_back(n);
  }
  return names;
}

const Fixture& fixture(std::size_t i, const Signature& alg) {
  static std::vector<Fixture> f(schemes().size());
  if (f[i].sig.empty()) {
    f[i].kp = alg.keygen(Bytes(alg.seed_size(), 0x42));
    f[i].msg = {'f', 'u', 'z', 'z'};
    f[i].sig = alg.sign_deterministic(f[i].kp.secret_key, f[i].msg);
  }
  return f[i];
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::vector<std::string_view> names = schemes();
  if (size < 4) return 0;
  const std::size_t index = data[0] % names.size();
  const Signature& alg = signature_by_name(names[index]);
  const Fixture& f = fixture(index, alg);
  const ByteView value(data + 4, size - 4);
  // Modes 0 and 1 use the fixture's valid public key: verify must answer, never throw, whatever
  // the signature. Only mode 2 (an arbitrary public key) may see a crypto::Error.
  switch (data[1] % 3) {
    case 0: {
      Bytes sig = f.sig;
      const std::size_t offset = (std::size_t{data[2]} << 8 | data[3]) % sig.size();
      bool changed = false;
      for (std::size_t i = 0; i < value.size() && offset + i < sig.size(); ++i) {
        sig[offset + i] ^= value[i];
        changed |= value[i] != 0;
      }
      const bool ok = alg.verify(f.kp.public_key, f.msg, {}, sig);
      if (ok && changed) std::abort();    // a second encoding of a signature verified
      if (!ok && !changed) std::abort();  // the valid signature stopped verifying
      break;
    }
    case 1: {
      const bool same = std::equal(value.begin(), value.end(), f.sig.begin(), f.sig.end());
      if (alg.verify(f.kp.public_key, f.msg, {}, value) != same) std::abort();
      break;
    }
    case 2:
      try {
        (void)alg.verify(value, f.msg, {}, f.sig);
      } catch (const Error& e) {
        if (e.code() != ErrorCode::invalid_length && e.code() != ErrorCode::invalid_key) {
          std::abort();
        }
      }
      break;
  }
  return 0;
}
