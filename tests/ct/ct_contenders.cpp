// The comparison contenders (NTRU, Saber) under the constant-time check (ct_kem.cpp). NTRU
// declassifies only whether a keygen seed gave f = 0 or g = 0; Saber only seed_A, the matrix seed
// that is part of its public key.
#include "harness.hpp"
#include "pqot/crypto/contender_kem.hpp"

namespace pqot::ct_check {

int check_contenders(int rounds) {
  int failures = 0;
  for (auto name : crypto::contender_kem_names()) {
    failures += check_kem(crypto::contender_kem_by_name(name), rounds);
  }
  return failures;
}

}  // namespace pqot::ct_check
