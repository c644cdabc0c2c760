// ML-DSA under the constant-time check: KeyGen_internal (Algorithm 6) with the seed xi secret, and
// Sign (Algorithm 2 over Algorithm 7) with the whole sk secret, hedged (rnd secret) and
// deterministic, for ML-DSA-44/65/87. The message representative mu is computed inside sign()
// from tr read out of the secret sk, so it is undefined too. The signature is public by
// definition and is verified (public data, not constant time) to check the result. On a CPU with
// AVX2 it runs twice: through the AVX2 NTT (the default there) and through the portable one.
// The four-way ExpandMask (src/crypto/mldsa/sampling_x4.cpp, not yet called by signing) is checked
// on its own with the secret rho'' undefined, over both Keccak paths.
#include <cstdio>
#include <string>

#include "crypto/mldsa/poly.hpp"
#include "crypto/simd.hpp"
#include "harness.hpp"
#include "pqot/crypto/mldsa.hpp"
#include "pqot/crypto/random.hpp"
#include "pqot/crypto/secure.hpp"

namespace pqot::ct_check {

namespace {

using namespace pqot::crypto;

int check(const MlDsa& dsa, int rounds) {
  int failures = 0;
  const std::string name(dsa.name());
  for (int i = 0; i < rounds; ++i) {
    SecretBytes xi(MlDsa::kSeedSize), rnd(MlDsa::kRndSize);
    random_secret_bytes(xi);
    random_secret_bytes(rnd);
    Bytes msg(33 + i, static_cast<std::uint8_t>(i));
    const Bytes ctx(static_cast<std::size_t>(i % 3), 0x5a);

    mark_secret(xi);
    auto kp = dsa.keygen_internal(xi);
    mark_public(kp.public_key);  // pkEncode output is public by definition

    // The whole sk is secret, including its public parts rho and tr.
    mark_secret(kp.secret_key);
    mark_secret(rnd);
    const Bytes hedged = dsa.sign(kp.secret_key, msg, ctx, rnd);
    const Bytes deterministic = dsa.sign_deterministic(kp.secret_key, msg, ctx);

    // Declassify only to check the results here.
    mark_public(hedged);
    mark_public(deterministic);
    if (!dsa.verify(kp.public_key, msg, ctx, hedged) ||
        !dsa.verify(kp.public_key, msg, ctx, deterministic)) {
      std::fprintf(stderr, "%s: signature does not verify in round %d\n", name.c_str(), i);
      ++failures;
    }
  }
  return failures;
}

// sample_mask_x4 with rho'' secret: the masks y are secret too, so only their correctness is
// looked at (after marking them public), against four sample_mask calls.
int check_mask_x4() {
  SecretBytes rho2(64);
  random_secret_bytes(rho2);
  mark_secret(rho2);
  const std::uint16_t nonces[4] = {0, 1, 2, 3};
  mldsa::Poly y[4], expected[4];
  mldsa::Poly* const out[4] = {&y[0], &y[1], &y[2], &y[3]};
  mldsa::sample_mask_x4(out, rho2.data(), nonces, 1 << 19, 20);
  int failures = 0;
  for (std::size_t k = 0; k < 4; ++k) {
    mldsa::sample_mask(expected[k], rho2.data(), nonces[k], 1 << 19, 20);
    VALGRIND_MAKE_MEM_DEFINED(&y[k], sizeof(y[k]));
    VALGRIND_MAKE_MEM_DEFINED(&expected[k], sizeof(expected[k]));
    if (y[k].c != expected[k].c) {
      std::fprintf(stderr, "sample_mask_x4: entry %zu differs from sample_mask\n", k);
      ++failures;
    }
  }
  secure_wipe(y, sizeof(y));
  secure_wipe(expected, sizeof(expected));
  return failures;
}

}  // namespace

// Both arithmetic paths where the CPU has AVX2 (src/crypto/simd.hpp): the AVX2 NTT the library
// runs by default, then the portable one forced.
int check_mldsa(int rounds) {
  int failures = 0;
  for (const bool portable : {false, true}) {
    if (portable && !simd::avx2_available()) break;  // the first pass already was the portable one
    const bool previous = simd::force_portable(portable);
    const char* path = simd::use_avx2() ? "AVX2" : "portable";
    for (auto set : {MlDsaParameterSet::ml_dsa_44, MlDsaParameterSet::ml_dsa_65,
                     MlDsaParameterSet::ml_dsa_87}) {
      const MlDsa dsa(set);
      failures += check(dsa, rounds);
      std::printf("%s (%s NTT): keygen_internal, sign (hedged and deterministic) checked\n",
                  std::string(dsa.name()).c_str(), path);
    }
    failures += check_mask_x4();
    std::printf("ML-DSA four-way ExpandMask (%s Keccak) checked\n", path);
    simd::force_portable(previous);
  }
  return failures;
}

}  // namespace pqot::ct_check
