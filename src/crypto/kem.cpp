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

// The default prepared key: the bytes, checked as the byte-key calls check them.
class PreparedKemBytes final : public PreparedKemKey {
 public:
  PreparedKemBytes(const Kem& owner, bool secret, ByteView bytes)
      : owner_(&owner), secret_(secret), bytes_(bytes.begin(), bytes.end()) {}
  ByteView bytes_for(const Kem& kem, bool secret) const {
    if (&kem != owner_ || secret != secret_) {
      throw Error(ErrorCode::invalid_argument, std::string(kem.name()) + ": a " +
                                                   (secret ? "decapsulation" : "encapsulation") +
                                                   " key it did not prepare");
    }
    return bytes_;
  }

 private:
  const Kem* owner_;
  bool secret_;
  SecretBytes bytes_;
};

ByteView prepared_kem_bytes(const Kem& kem, const PreparedKemKey& key, bool secret) {
  const auto* p = dynamic_cast<const PreparedKemBytes*>(&key);
  if (p == nullptr) {
    throw Error(ErrorCode::invalid_argument, std::string(kem.name()) + ": a key it did not prepare");
  }
  return p->bytes_for(kem, secret);
}

}  // namespace

PreparedKemKeyPtr Kem::prepare_public_key(ByteView public_key) const {
  check_public_key(public_key);
  return std::make_shared<const PreparedKemBytes>(*this, false, public_key);
}

PreparedKemKeyPtr Kem::prepare_secret_key(ByteView secret_key) const {
  if (secret_key.size() != secret_key_size()) {
    throw Error(ErrorCode::invalid_length,
                std::string(name()) + ": decapsulation key must be " +
                    std::to_string(secret_key_size()) + " bytes, got " +
                    std::to_string(secret_key.size()));
  }
  return std::make_shared<const PreparedKemBytes>(*this, true, secret_key);
}

KemEncapsulation Kem::encapsulate_prepared(const PreparedKemKey& public_key, ByteView seed) const {
  return encapsulate(prepared_kem_bytes(*this, public_key, false), seed);
}

SecretBytes Kem::decapsulate_prepared(const PreparedKemKey& secret_key, ByteView ciphertext) const {
  return decapsulate(prepared_kem_bytes(*this, secret_key, true), ciphertext);
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
