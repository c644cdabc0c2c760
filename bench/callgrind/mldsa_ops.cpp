// Callgrind driver for ML-DSA-65 (docs/crypto.md, "Performance"): for i in 0..n-1, xi = 32 bytes
// of value i (xi[1] = i >> 8) and msg = 64 bytes of value i * 7; KeyGen_internal, deterministic
// Sign and Verify of each. bench/callgrind/mldsa_ops.sh runs it under callgrind and prints the
// instructions per round and per operation. Exits non-zero if a signature does not verify.
#include <cstdio>
#include <cstdlib>

#include "pqot/crypto/mldsa.hpp"

using namespace pqot::crypto;

namespace {

// One function per operation, never inlined, so that callgrind_annotate --inclusive=yes can split
// the total by operation.
[[gnu::noinline]] MlDsaKeyPair bench_op_keygen(const MlDsa& dsa, const Bytes& xi) {
  return dsa.keygen_internal(xi);
}
[[gnu::noinline]] Bytes bench_op_sign(const MlDsa& dsa, const MlDsaKeyPair& kp, const Bytes& msg) {
  return dsa.sign_deterministic(kp.secret_key, msg);
}
[[gnu::noinline]] bool bench_op_verify(const MlDsa& dsa, const MlDsaKeyPair& kp, const Bytes& msg,
                                       const Bytes& sig) {
  return dsa.verify(kp.public_key, msg, {}, sig);
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 100;
  const MlDsa dsa(MlDsaParameterSet::ml_dsa_65);
  int ok = 0;
  for (int i = 0; i < n; ++i) {
    Bytes xi(32, static_cast<std::uint8_t>(i));
    xi[1] = static_cast<std::uint8_t>(i >> 8);
    const Bytes msg(64, static_cast<std::uint8_t>(i * 7));
    const auto kp = bench_op_keygen(dsa, xi);
    const auto sig = bench_op_sign(dsa, kp, msg);
    ok += bench_op_verify(dsa, kp, msg, sig) ? 1 : 0;
  }
  std::printf("%d of %d signatures verified\n", ok, n);
  return ok == n ? 0 : 1;
}
