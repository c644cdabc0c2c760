// Key arguments of `pqot sig`: hex, @file of hex, or @file of a PEM key file; and the PEM files
// `pqot sig keygen --out-dir` writes.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "pqot/crypto/signature.hpp"

namespace pqot::app {

/// Thrown by `pqot sig verify` after it printed "invalid": exit status 1, nothing on stderr.
class VerifyFailed : public std::exception {
 public:
  const char* what() const noexcept override { return "invalid signature"; }
};

/// A public key for `alg`: hex, @file holding hex, or @file holding a PEM public key (SPKI),
/// whose algorithm must be `alg`.
crypto::Bytes read_public_key_arg(const crypto::Signature& alg, std::string_view value,
                                  std::string_view what);
/// A secret key for `alg`: hex (alg's own encoding), @file holding it in hex, or @file holding a
/// PEM private key (PKCS#8), whose algorithm must be `alg`.
crypto::SecretBytes read_secret_key_arg(const crypto::Signature& alg, std::string_view value,
                                        std::string_view what);

struct KeyFiles {
  std::string public_key, private_key;
};
/// Writes DIR/public.pem and DIR/private.pem (mode 0600, created exclusively: an existing file is
/// never replaced). `seed` is the private-key material for seeded schemes; RSA stores its PKCS#8
/// secret key itself.
KeyFiles write_key_files(const std::string& dir, const crypto::Signature& alg,
                         const crypto::SignatureKeyPair& keys, crypto::ByteView seed);

}  // namespace pqot::app
