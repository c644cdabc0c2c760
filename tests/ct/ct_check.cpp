// Constant-time check (docs/crypto.md, "Constant time"), run under valgrind memcheck by CTest.
//
// The secret inputs (d, z, m, dk) are marked undefined with valgrind's client requests. memcheck
// then reports every conditional jump and every memory address computed from them. The library
// marks the few values that are public although derived from secrets (rho, the dk hash-check
// verdict) as defined again; anything else reported is a timing leak and fails the test.
// Outside valgrind the client requests do nothing and this program only checks correctness.
#include <valgrind/memcheck.h>

#include <cstdio>
#include <cstring>

#include "pqot/crypto/mlkem.hpp"
#include "pqot/crypto/random.hpp"
#include "pqot/crypto/secure.hpp"

using namespace pqot::crypto;

namespace {

template <class Buffer>
void mark_secret(Buffer& b) {
  VALGRIND_MAKE_MEM_UNDEFINED(b.data(), b.size());
}
template <class Buffer>
void mark_public(const Buffer& b) {
  VALGRIND_MAKE_MEM_DEFINED(b.data(), b.size());
}

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

// Negative control: code that does leak (a branch and a table index on a secret byte). Run with
// --leaky-control, memcheck must report it, which shows the harness can fail.
[[gnu::noinline]] int leaky(const SecretBytes& secret) {
  static const int table[256] = {1};
  int r = 0;
  if (secret[0] & 1) r += 1;
  r += table[secret[1]];
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--leaky-control") == 0) {
    SecretBytes s(2);
    random_secret_bytes(s);
    mark_secret(s);
    const int r = leaky(s);
    VALGRIND_MAKE_MEM_DEFINED(&r, sizeof(r));
    std::printf("leaky control ran (%d); memcheck errors: %u\n", r & 0, VALGRIND_COUNT_ERRORS);
    return 0;
  }
  int failures = 0;
  for (auto set : {MlKemParameterSet::ml_kem_512, MlKemParameterSet::ml_kem_768,
                   MlKemParameterSet::ml_kem_1024}) {
    const MlKem kem(set);
    failures += check(kem, 3);
    std::printf("%s: keygen, encaps, decaps (valid and rejected) checked\n",
                std::string(kem.name()).c_str());
  }
  const unsigned errors = VALGRIND_COUNT_ERRORS;
  std::printf("%s; memcheck errors: %u%s\n", failures ? "FAILED" : "results correct", errors,
              RUNNING_ON_VALGRIND ? "" : " (not running under valgrind)");
  return failures != 0 || errors != 0 ? 1 : 0;
}
