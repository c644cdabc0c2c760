// EncapsulationKey and DecapsulationKey: a Kem and one key it prepared.
#include "pqot/crypto/kem_keys.hpp"

#include <stdexcept>

#include "pqot/crypto/random.hpp"

namespace pqot::crypto {

EncapsulationKey::EncapsulationKey(const Kem& kem, ByteView public_key)
    : kem_(&kem), key_(kem.prepare_public_key(public_key)) {}

const Kem& EncapsulationKey::kem() const {
  if (kem_ == nullptr) throw std::logic_error("EncapsulationKey: empty");
  return *kem_;
}

KemEncapsulation EncapsulationKey::encapsulate() const {
  const Kem& k = kem();
  SecretBytes seed(k.encaps_seed_size());
  random_secret_bytes(seed);
  return k.encapsulate_prepared(*key_, seed);
}

KemEncapsulation EncapsulationKey::encapsulate(ByteView seed) const {
  return kem().encapsulate_prepared(*key_, seed);
}

DecapsulationKey::DecapsulationKey(const Kem& kem, ByteView secret_key)
    : kem_(&kem), key_(kem.prepare_secret_key(secret_key)) {}

const Kem& DecapsulationKey::kem() const {
  if (kem_ == nullptr) throw std::logic_error("DecapsulationKey: empty");
  return *kem_;
}

SecretBytes DecapsulationKey::decapsulate(ByteView ciphertext) const {
  return kem().decapsulate_prepared(*key_, ciphertext);
}

}  // namespace pqot::crypto
