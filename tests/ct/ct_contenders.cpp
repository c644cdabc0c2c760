// The comparison contenders (NTRU, Saber) under the constant-time check: decapsulation with the
// whole secret key marked secret, of a valid and of a rejected ciphertext, and key generation and
// encapsulation with their randomness marked secret. NTRU declassifies only whether a keygen seed
// gave f = 0 or g = 0; Saber only seed_A, the matrix seed that is part of its public key.
#include <cstdio>
#include <string>

#include "harness.hpp"
#include "pqot/crypto/contender_kem.hpp"
#include "pqot/crypto/random.hpp"
#include "pqot/crypto/secure.hpp"

namespace pqot::ct_check {

namespace {

using namespace pqot::crypto;

int check(const Kem& kem, int rounds) {
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

    mark_secret(kp.secret_key);
    auto ss = kem.decapsulate(kp.secret_key, enc.ciphertext);

    Bytes bad = enc.ciphertext;
    bad[(i * 97) % bad.size()] ^= 0x01;
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

int check_contenders(int rounds) {
  int failures = 0;
  for (auto name : contender_kem_names()) {
    failures += check(contender_kem_by_name(name), rounds);
    std::printf("%s: keygen, encaps, decaps (valid and rejected) checked\n",
                std::string(name).c_str());
  }
  return failures;
}

}  // namespace pqot::ct_check
