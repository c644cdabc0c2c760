// ML-KEM under the constant-time check: keygen (d, z secret), encaps (m secret) and decaps (the
// whole dk secret) of valid and rejected ciphertexts, for ML-KEM-512/768/1024.
#include <cstdio>
#include <string>

#include "harness.hpp"
#include "pqot/crypto/mlkem.hpp"
#include "pqot/crypto/random.hpp"
#include "pqot/crypto/secure.hpp"

namespace pqot::ct_check {

namespace {

using namespace pqot::crypto;

int check(const MlKem& kem, int rounds) {
  int failures = 0;
  for (int i = 0; i < rounds; ++i) {
    SecretBytes d(32), z(32), m(32);
    random_secret_bytes(d);
    random_secret_bytes(z);
    random_secret_bytes(m);

    mark_secret(d);
    mark_secret(z);
    auto kp = kem.keygen_internal(d, z);
    mark_public(kp.public_key);  // the output ek is public by definition

    mark_secret(m);
    auto enc = kem.encapsulate(kp.public_key, m);
    mark_public(enc.ciphertext);

    // The whole dk is marked secret, including its public parts (ek, H(ek)).
    mark_secret(kp.secret_key);
    auto ss = kem.decapsulate(kp.secret_key, enc.ciphertext);

    // A rejected ciphertext takes the implicit-rejection path, also without leaking.
    Bytes bad = enc.ciphertext;
    bad[i % bad.size()] ^= 0x01;
    auto ss_bad = kem.decapsulate(kp.secret_key, bad);

    // Declassify only to check the results here.
    mark_public(ss);
    mark_public(ss_bad);
    mark_public(enc.shared_secret);
    if (!ct_equal(ss, enc.shared_secret) || ct_equal(ss_bad, enc.shared_secret)) {
      std::fprintf(stderr, "%s: wrong result in round %d\n", std::string(kem.name()).c_str(), i);
      ++failures;
    }
  }
  return failures;
}

}  // namespace

int check_mlkem(int rounds) {
  int failures = 0;
  for (auto set : {MlKemParameterSet::ml_kem_512, MlKemParameterSet::ml_kem_768,
                   MlKemParameterSet::ml_kem_1024}) {
    const MlKem kem(set);
    failures += check(kem, rounds);
    std::printf("%s: keygen, encaps, decaps (valid and rejected) checked\n",
                std::string(kem.name()).c_str());
  }
  return failures;
}

}  // namespace pqot::ct_check
