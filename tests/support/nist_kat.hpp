// The single-entry NIST KAT response of a KEM, as PQCgenKAT_kem writes it, and its SHA-256: the
// known answer PQClean records as `nistkat-sha256` (../shared/testvectors/README.md, "Round-3 KEM
// known answers"; docs/crypto.md, "Comparison contenders", records the values).
//
// init(0, 1, ..., 47); seed = randombytes(48); init(seed); keygen and encaps draw from the DRBG as
// the scheme's reference does; the text "count = 0\nseed = S\npk = P\nsk = K\nct = C\nss = X\n"
// (upper-case hex) is hashed. Decapsulation must give the same ss, or the entry is not written.
#pragma once

#include <stdexcept>
#include <string>

#include "pqot/crypto/bytes.hpp"
#include "pqot/crypto/hash.hpp"
#include "pqot/crypto/kem.hpp"
#include "pqot/crypto/nist_kat_drbg.hpp"
#include "pqot/crypto/secure.hpp"

namespace pqot::test {

inline std::string kat_upper_hex(crypto::ByteView b) {
  std::string s = crypto::to_hex(b);
  for (char& c : s) {
    if (c >= 'a' && c <= 'f') c = static_cast<char>(c - 'a' + 'A');
  }
  return s;
}

/// The response text of count = 0 for `kem`.
inline std::string single_entry_kat_response(const crypto::Kem& kem) {
  crypto::Bytes entropy(48);
  for (std::size_t i = 0; i < entropy.size(); ++i) entropy[i] = static_cast<std::uint8_t>(i);
  crypto::NistKatDrbg outer(entropy);
  const crypto::SecretBytes seed = outer.randombytes(48);

  crypto::NistKatDrbg drbg(seed);
  const auto kp = kem.generate_keypair(crypto::draw_keygen_seed(kem, drbg));
  const auto enc = kem.encapsulate(kp.public_key, drbg.randombytes(kem.encaps_seed_size()));
  const auto ss = kem.decapsulate(kp.secret_key, enc.ciphertext);
  if (!crypto::ct_equal(ss, enc.shared_secret)) {
    throw std::runtime_error(std::string(kem.name()) + ": decapsulation gave another secret");
  }
  return "count = 0\nseed = " + kat_upper_hex(seed) + "\npk = " + kat_upper_hex(kp.public_key) +
         "\nsk = " + kat_upper_hex(kp.secret_key) + "\nct = " + kat_upper_hex(enc.ciphertext) +
         "\nss = " + kat_upper_hex(enc.shared_secret) + "\n";
}

inline std::string single_entry_kat_sha256(const crypto::Kem& kem) {
  return crypto::to_hex(crypto::sha256(crypto::as_bytes(single_entry_kat_response(kem))));
}

}  // namespace pqot::test
