// The KEM registry and the randomised entry points shared by every Kem.
#include "pqot/crypto/kem.hpp"

#include <array>
#include <string>

#include "pqot/crypto/error.hpp"
#include "pqot/crypto/mlkem.hpp"
#include "pqot/crypto/random.hpp"
#include "pqot/crypto/xwing.hpp"

namespace pqot::crypto {

KemKeyPair Kem::generate_keypair() const {
  SecretBytes seed(keygen_seed_size());
  random_secret_bytes(seed);
  return generate_keypair(seed);
}

KemEncapsulation Kem::encapsulate(ByteView public_key) const {
  SecretBytes seed(encaps_seed_size());
  random_secret_bytes(seed);
  return encapsulate(public_key, seed);
}

namespace {
constexpr std::array<std::string_view, 4> kNames = {"ML-KEM-512", "ML-KEM-768", "ML-KEM-1024",
                                                    "X-Wing"};
}  // namespace

std::span<const std::string_view> kem_names() noexcept { return kNames; }

const Kem& kem_by_name(std::string_view name) {
  static const MlKem ml_kem_512(MlKemParameterSet::ml_kem_512);
  static const MlKem ml_kem_768(MlKemParameterSet::ml_kem_768);
  static const MlKem ml_kem_1024(MlKemParameterSet::ml_kem_1024);
  static const XWing x_wing;
  if (name == "ML-KEM-512") return ml_kem_512;
  if (name == "ML-KEM-768") return ml_kem_768;
  if (name == "ML-KEM-1024") return ml_kem_1024;
  if (name == "X-Wing") return x_wing;
  std::string known;
  for (auto n : kNames) known += (known.empty() ? "" : ", ") + std::string(n);
  throw Error(ErrorCode::unknown_algorithm,
              "unknown KEM '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace pqot::crypto
