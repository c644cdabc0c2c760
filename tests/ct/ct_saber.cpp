// Saber under the constant-time check: keygen (the whole seed secret: seed_A, seed_s, z), encaps
// (its seed secret) and decaps (the whole secret key) of valid and rejected ciphertexts, for
// LightSaber, Saber and FireSaber. The library declassifies only seed_A after it is hashed
// (src/crypto/contenders/saber/indcpa.cpp): it is part of the public key.
#include <cstdio>
#include <string>

#include "harness.hpp"
#include "pqot/crypto/contender_kem.hpp"
#include "pqot/crypto/random.hpp"
#include "pqot/crypto/secure.hpp"

namespace pqot::ct_check {

namespace {

using namespace pqot::crypto;

int check_level(const Kem& kem, int rounds) {
  int failures = 0;
  for (int i = 0; i < rounds; ++i) {
    SecretBytes seed(kem.keygen_seed_size()), m(kem.encaps_seed_size());
    random_secret_bytes(seed);
    random_secret_bytes(m);

    mark_secret(seed);
    auto kp = kem.generate_keypair(seed);
    mark_public(kp.public_key);  // the output pk is public by definition

    mark_secret(m);
    auto enc = kem.encapsulate(kp.public_key, m);
    mark_public(enc.ciphertext);

    // The whole secret key is marked secret, including its public parts (pk, SHA3-256(pk)).
    mark_secret(kp.secret_key);
    auto ss = kem.decapsulate(kp.secret_key, enc.ciphertext);

    // A rejected ciphertext takes the implicit-rejection path, also without leaking.
    Bytes bad = enc.ciphertext;
    bad[i % bad.size()] ^= 0x01;
    auto ss_bad = kem.decapsulate(kp.secret_key, bad);

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

int check_saber(int rounds) {
  int failures = 0;
  for (const char* name : {"LightSaber", "Saber", "FireSaber"}) {
    const Kem& kem = contender_kem_by_name(name);
    failures += check_level(kem, rounds);
    std::printf("%s: keygen, encaps, decaps (valid and rejected) checked\n", name);
  }
  return failures;
}

}  // namespace pqot::ct_check
