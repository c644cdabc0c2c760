// ML-KEM under the constant-time check (ct_kem.cpp): keygen (d‖z secret), encaps (m secret) and
// decaps (the whole dk secret) of valid and rejected ciphertexts, for ML-KEM-512/768/1024.
#include "harness.hpp"
#include "pqot/crypto/mlkem.hpp"

namespace pqot::ct_check {

int check_mlkem(int rounds) {
  int failures = 0;
  for (auto set : {crypto::MlKemParameterSet::ml_kem_512, crypto::MlKemParameterSet::ml_kem_768,
                   crypto::MlKemParameterSet::ml_kem_1024}) {
    failures += check_kem(crypto::MlKem(set), rounds);
  }
  return failures;
}

}  // namespace pqot::ct_check
