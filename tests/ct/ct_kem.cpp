// One KEM under the constant-time check (ct_mlkem.cpp and ct_contenders.cpp run it for theirs):
// key generation with the whole seed secret, encapsulation with its randomness secret, and
// decapsulation with the whole secret key secret, of a valid and of a rejected ciphertext.
#include <cstdio>
#include <string>

#include "harness.hpp"
#include "pqot/crypto/random.hpp"
#include "pqot/crypto/secure.hpp"

namespace pqot::ct_check {

using namespace pqot::crypto;

int check_kem(const Kem& kem, int rounds) {
  int failures = 0;
  for (int i = 0; i < rounds; ++i) {
    SecretBytes seed(kem.keygen_seed_size()), m(kem.encaps_seed_size());
    random_secret_bytes(seed);
    random_secret_bytes(m);

    mark_secret(seed);
    auto kp = kem.generate_keypair(seed);
    mark_public(kp.public_key);  // the output public key is public by definition

    mark_secret(m);
    auto enc = kem.encapsulate(kp.public_key, m);
    mark_public(enc.ciphertext);

    // The whole secret key is marked secret, including the public parts some schemes keep in it.
    mark_secret(kp.secret_key);
    auto ss = kem.decapsulate(kp.secret_key, enc.ciphertext);

    // A rejected ciphertext takes the implicit-rejection path, also without leaking.
    Bytes bad = enc.ciphertext;
    bad[(i * 97) % bad.size()] ^= 0x01;
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
  std::printf("%s: keygen, encaps, decaps (valid and rejected) checked\n",
              std::string(kem.name()).c_str());
  return failures;
}

}  // namespace pqot::ct_check
