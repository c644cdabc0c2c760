// Constant-time check (docs/crypto.md, "Constant time"), run under valgrind memcheck by CTest.
//
// The secret inputs are marked undefined with valgrind's client requests (ct_kem.cpp, for ML-KEM
// and the contenders NTRU and Saber: keygen seeds, encapsulation randomness, secret keys;
// ct_mldsa.cpp: xi, rnd, sk).
// memcheck then reports every conditional jump and every memory address computed from them. The
// library marks the few values that are public although derived from secrets as defined again
// (src/crypto/mlkem/ct.hpp, src/crypto/mldsa/ct.hpp list them; Saber declassifies its seed_A);
// anything else reported is a timing leak and fails the test. Outside valgrind the client requests
// do nothing and this program only checks correctness.
#include <cstdio>
#include <cstring>

#include "harness.hpp"
#include "pqot/crypto/random.hpp"
#include "pqot/crypto/secure.hpp"

using namespace pqot::crypto;
using namespace pqot::ct_check;

namespace {

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
  int failures = check_mlkem(3);
  failures += check_mldsa(3);
  failures += check_contenders(2);
  const unsigned errors = VALGRIND_COUNT_ERRORS;
  std::printf("%s; memcheck errors: %u%s\n", failures ? "FAILED" : "results correct", errors,
              RUNNING_ON_VALGRIND ? "" : " (not running under valgrind)");
  return failures != 0 || errors != 0 ? 1 : 0;
}
