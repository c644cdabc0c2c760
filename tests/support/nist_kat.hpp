// The single-entry NIST KAT response of a KEM, as PQCgenKAT_kem writes it, and its SHA-256: the
// known answer PQClean records as `nistkat-sha256` (../shared/testvectors/README.md, "Round-3 KEM
// known answers"; docs/crypto.md, "Comparison contenders", records the values).
//
// init(0, 1, ..., 47); seed = randombytes(48); init(seed); keygen and encaps draw from the DRBG as
// the scheme's reference does; the text "count = 0\nseed = S\npk = P\nsk = K\nct = C\nss = X\n"
// (upper-case hex) is hashed. Decapsulation must give the same ss, or the entry is not written.
#pragma once

#include <ostream>
#include <stdexcept>
#include <string>

#include "pqot/crypto/bytes.hpp"
#include "pqot/crypto/hash.hpp"
#include "pqot/crypto/kem.hpp"
#include "pqot/crypto/nist_kat_drbg.hpp"
#include "pqot/crypto/secure.hpp"

namespace pqot::test {

/// A scheme's round-3 known answer: its sizes and the SHA-256 of its single-entry response, as
/// PQClean recorded them (../shared/testvectors/README.md: PQClean commit 6cd3167b, META.yml
/// `nistkat-sha256`; NTRU from jschanck/ntru 6d96ed37, Saber from KULeuven-COSIC/SABER 509cc5ec).
struct KnownAnswer {
  const char* name;
  std::size_t pk, sk, ct;
  const char* sha256;
};

/// GoogleTest prints a parameter by its name.
inline void PrintTo(const KnownAnswer& a, std::ostream* os) { *os << a.name; }

inline constexpr KnownAnswer kRound3KnownAnswers[] = {
    {"NTRU-HPS-2048-509", 699, 935, 699,
     "fc314366fbe795e2db6d29abb9f5b2ff43f0f608d0bd66161f9450364f0d271b"},
    {"NTRU-HPS-2048-677", 930, 1234, 930,
     "33e2cad6c2a2f17991517050d7a1b745908c84b8283a4e0f07dbe6f62d166507"},
    {"NTRU-HPS-4096-821", 1230, 1590, 1230,
     "1a8382ae0c801a43cf461c98d22743f5b2d8a1ffed1b1df0dd767de2c2874597"},
    {"NTRU-HRSS-701", 1138, 1450, 1138,
     "501e000c3eb374ffbfb81b0f16673a6282116465936608d7d164b05635e769e8"},
    {"LightSaber", 672, 1568, 736,
     "dc2233ae221cfabbb1db5ab1a76c93967d37de9f87a8092561f95ab28eff6061"},
    {"Saber", 992, 2304, 1088, "c9e2c16f41f162c607a1d5704107159e5e12713b9bb8c356b1d68b216e79096e"},
    {"FireSaber", 1312, 3040, 1472,
     "937d9b2e139112e13d4093a6afe715deff476e4d578208b9e8e1809de43835cd"},
};

/// PQClean's value for ML-KEM-768 by the same construction: the check of the harness itself.
inline constexpr const char* kMlKem768KnownAnswer =
    "5352539586b6c3df58be6158a6250aeff402bd73060b0a3de68850ac074c17c3";

/// The 48-byte seed of count = 0 (the first seed of every NIST KEM response file).
inline crypto::SecretBytes kat_entry_seed() {
  crypto::Bytes entropy(48);
  for (std::size_t i = 0; i < entropy.size(); ++i) entropy[i] = static_cast<std::uint8_t>(i);
  crypto::kat::NistDrbg outer(entropy);
  return outer.draw(48);
}

inline std::string kat_upper_hex(crypto::ByteView b) {
  std::string s = crypto::to_hex(b);
  for (char& c : s) {
    if (c >= 'a' && c <= 'f') c = static_cast<char>(c - 'a' + 'A');
  }
  return s;
}

/// The response text from its values.
inline std::string kat_response_text(crypto::ByteView seed, crypto::ByteView pk,
                                     crypto::ByteView sk, crypto::ByteView ct,
                                     crypto::ByteView ss) {
  return "count = 0\nseed = " + kat_upper_hex(seed) + "\npk = " + kat_upper_hex(pk) +
         "\nsk = " + kat_upper_hex(sk) + "\nct = " + kat_upper_hex(ct) + "\nss = " +
         kat_upper_hex(ss) + "\n";
}

/// The response text of count = 0 for `kem`.
inline std::string single_entry_kat_response(const crypto::Kem& kem) {
  const crypto::SecretBytes seed = kat_entry_seed();
  crypto::kat::NistDrbg drbg(seed);
  const auto kp = kem.generate_keypair(crypto::kat::keygen_draws(kem, drbg));
  const auto enc = kem.encapsulate(kp.public_key, drbg.draw(kem.encaps_seed_size()));
  const auto ss = kem.decapsulate(kp.secret_key, enc.ciphertext);
  if (!crypto::ct_equal(ss, enc.shared_secret)) {
    throw std::runtime_error(std::string(kem.name()) + ": decapsulation gave another secret");
  }
  return kat_response_text(seed, kp.public_key, kp.secret_key, enc.ciphertext, enc.shared_secret);
}

inline std::string single_entry_kat_sha256(const crypto::Kem& kem) {
  return crypto::to_hex(crypto::sha256(crypto::as_bytes(single_entry_kat_response(kem))));
}

}  // namespace pqot::test
