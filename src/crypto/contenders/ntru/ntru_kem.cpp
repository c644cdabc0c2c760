// NTRU as a Kem (ntru_kem.hpp): the CCA2 KEM of the round-3 specification (Encapsulate /
// Decapsulate with implicit rejection through a PRF key), on the DPKE of owcpa.cpp.
#include "ntru_kem.hpp"

#include <algorithm>
#include <string>

#include "../../declassify.hpp"
#include "../../mlkem/ct.hpp"
#include "../../size_check.hpp"
#include "owcpa.hpp"
#include "pack.hpp"
#include "params.hpp"
#include "pqot/crypto/error.hpp"
#include "pqot/crypto/sha3.hpp"
#include "sample.hpp"

namespace pqot::crypto::ntru {

namespace {

const Params& params_of(ParameterSet set) noexcept {
  switch (set) {
    case ParameterSet::hps2048509: return kHps2048509;
    case ParameterSet::hps2048677: return kHps2048677;
    case ParameterSet::hps4096821: return kHps4096821;
    case ParameterSet::hrss701: break;
  }
  return kHrss701;
}

}  // namespace

NtruKem::NtruKem(ParameterSet set) noexcept : p_(params_of(set)) {}

std::string_view NtruKem::name() const noexcept { return p_.name; }
std::size_t NtruKem::public_key_size() const noexcept { return p_.public_key_bytes(); }
std::size_t NtruKem::secret_key_size() const noexcept { return p_.secret_key_bytes(); }
std::size_t NtruKem::ciphertext_size() const noexcept { return p_.ciphertext_bytes(); }
std::size_t NtruKem::keygen_seed_size() const noexcept { return p_.sample_bytes() + kPrfKeyBytes; }
std::size_t NtruKem::encaps_seed_size() const noexcept { return p_.sample_bytes(); }
std::vector<std::size_t> NtruKem::keygen_randombytes_calls() const {
  return {p_.sample_bytes(), kPrfKeyBytes};
}

KemKeyPair NtruKem::generate_keypair(ByteView seed) const {
  require_size(seed, keygen_seed_size(), "keygen seed", p_.name);
  KemKeyPair kp;
  kp.public_key.resize(p_.public_key_bytes());
  kp.secret_key.resize(p_.secret_key_bytes());
  unsigned degenerate =
      owcpa_keypair(kp.public_key.data(), kp.secret_key.data(), seed.data(), p_);
  declassify(&degenerate, sizeof(degenerate));  // says only that the key would not work
  if (degenerate != 0) {
    throw Error(ErrorCode::invalid_argument,
                std::string(p_.name) + ": the keygen seed gives f = 0 or g = 0, a key that cannot "
                                       "work; use another seed");
  }
  // The PRF key of implicit rejection: the reference's second randombytes call.
  std::copy_n(seed.begin() + static_cast<std::ptrdiff_t>(p_.sample_bytes()), kPrfKeyBytes,
              kp.secret_key.begin() + static_cast<std::ptrdiff_t>(p_.owcpa_secret_key_bytes()));
  return kp;
}

void NtruKem::check_public_key(ByteView public_key) const {
  require_size(public_key, p_.public_key_bytes(), "public key", p_.name);
  const unsigned used = (p_.logq * p_.pack_deg()) & 7;
  if (used != 0 && (public_key.back() >> used) != 0) {
    throw Error(ErrorCode::invalid_key,
                std::string(p_.name) + ": public key has non-zero padding bits in its last byte");
  }
  // h = 0 would make c = Lift(m): the message, and so the secret, in the clear.
  if (std::all_of(public_key.begin(), public_key.end(), [](std::uint8_t b) { return b == 0; })) {
    throw Error(ErrorCode::invalid_key, std::string(p_.name) + ": public key is zero");
  }
}

KemEncapsulation NtruKem::encapsulate(ByteView public_key, ByteView seed) const {
  check_public_key(public_key);
  require_size(seed, encaps_seed_size(), "encapsulation seed", p_.name);
  Poly r, m;
  sample_rm(r, m, seed.data(), p_);
  SecretBytes rm(p_.owcpa_msg_bytes());
  s3_to_bytes(rm.data(), r, p_);
  s3_to_bytes(rm.data() + p_.trinary_bytes(), m, p_);
  KemEncapsulation out;
  auto k = sha3_256(rm);
  out.shared_secret.assign(k.begin(), k.end());
  secure_wipe(k);
  z3_to_zq(r, p_);
  out.ciphertext.resize(p_.ciphertext_bytes());
  owcpa_encrypt(out.ciphertext.data(), r, m, public_key.data(), p_);
  return out;
}

SecretBytes NtruKem::decapsulate(ByteView secret_key, ByteView ciphertext) const {
  require_size(secret_key, p_.secret_key_bytes(), "secret key", p_.name);
  require_size(ciphertext, p_.ciphertext_bytes(), "ciphertext", p_.name);
  SecretBytes rm(p_.owcpa_msg_bytes());
  const unsigned fail = owcpa_decrypt(rm.data(), ciphertext.data(), secret_key.data(), p_);
  auto k = sha3_256(rm);
  SecretBytes out(k.begin(), k.end());
  secure_wipe(k);
  // Implicit rejection: SHA3-256(prf key || c) replaces the key when the checks failed.
  SecretBytes prf_input(kPrfKeyBytes + ciphertext.size());
  std::copy_n(secret_key.begin() + static_cast<std::ptrdiff_t>(p_.owcpa_secret_key_bytes()),
              kPrfKeyBytes, prf_input.begin());
  std::copy(ciphertext.begin(), ciphertext.end(), prf_input.begin() + kPrfKeyBytes);
  auto reject = sha3_256(prf_input);
  mlkem::ct_select(out.data(), reject.data(), out.size(),
                   static_cast<std::uint8_t>(0 - static_cast<std::uint8_t>(fail)));
  secure_wipe(reject);
  return out;
}

}  // namespace pqot::crypto::ntru
