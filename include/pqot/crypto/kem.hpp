// The KEM interface every key-encapsulation mechanism in pqot implements.
//
// Implementations here are ML-KEM-512/768/1024 (FIPS 203) and X-Wing (X25519 + ML-KEM-768), which
// kem_by_name() offers to protocols, and the NIST round-3 contenders NTRU and Saber, which only
// contender_kem.hpp offers, for comparisons. A platform provider (OpenSSL >= 3.5 "ML-KEM-768"
// through EVP_PKEY) can implement the same interface; protocol code only ever holds a `const Kem&`.
#pragma once

#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "pqot/crypto/bytes.hpp"
#include "pqot/crypto/secure.hpp"

namespace pqot::crypto {

struct KemKeyPair {
  Bytes public_key;         ///< encapsulation key (ek)
  SecretBytes secret_key;   ///< decapsulation key (dk)
};

struct KemEncapsulation {
  Bytes ciphertext;
  SecretBytes shared_secret;
};

/// A KEM key decoded once for many operations (ML-KEM: t_hat and the matrix A^T; a decapsulation
/// key also s_hat), made by Kem::prepare_public_key / prepare_secret_key and usable only with the
/// KEM that made it. Immutable: threads may share one; a secret one wipes what it holds. Protocol
/// code uses EncapsulationKey / DecapsulationKey (kem_keys.hpp).
class PreparedKemKey {
 public:
  virtual ~PreparedKemKey() = default;
};
using PreparedKemKeyPtr = std::shared_ptr<const PreparedKemKey>;

class Kem {
 public:
  virtual ~Kem() = default;

  virtual std::string_view name() const noexcept = 0;
  virtual std::size_t public_key_size() const noexcept = 0;
  virtual std::size_t secret_key_size() const noexcept = 0;
  virtual std::size_t ciphertext_size() const noexcept = 0;
  virtual std::size_t shared_secret_size() const noexcept { return 32; }
  /// Bytes of randomness keygen consumes (64 = d||z for ML-KEM, 32 for X-Wing).
  virtual std::size_t keygen_seed_size() const noexcept = 0;
  /// Bytes of randomness encapsulation consumes (32 = m for ML-KEM, 64 for X-Wing).
  virtual std::size_t encaps_seed_size() const noexcept = 0;
  /// How the scheme's reference implementation draws the keygen seed: the sizes of its successive
  /// `randombytes` calls, summing to keygen_seed_size() (one call by default; NTRU makes two,
  /// Saber three). A deterministic generator (the NIST KAT DRBG) gives different bytes for one
  /// call of 64 than for two of 32, so reproducing a reference's keys needs the split.
  virtual std::vector<std::size_t> keygen_randombytes_calls() const {
    return {keygen_seed_size()};
  }
  /// True for NTRU and Saber: NIST round-3 candidates that were not standardized, kept only to
  /// compare against (docs/crypto.md, "Comparison contenders"). No protocol offers them.
  virtual bool contender() const noexcept { return false; }

  /// Deterministic key generation from a seed of keygen_seed_size() bytes.
  virtual KemKeyPair generate_keypair(ByteView seed) const = 0;
  /// Deterministic encapsulation. Throws Error{invalid_length} / Error{invalid_key} if the public
  /// key fails the input checks.
  virtual KemEncapsulation encapsulate(ByteView public_key, ByteView seed) const = 0;
  /// Decapsulation. Throws Error{invalid_length} for wrong sizes and Error{invalid_key} if the
  /// secret key fails its check; a well-formed but wrong ciphertext yields the implicit-rejection
  /// secret, never an error.
  virtual SecretBytes decapsulate(ByteView secret_key, ByteView ciphertext) const = 0;
  /// Throws as encapsulate() would for this public key; returns normally if it is acceptable.
  virtual void check_public_key(ByteView public_key) const = 0;

  /// The key decoded once, checked as encapsulate() / decapsulate() check it (same errors). The
  /// defaults keep a copy of the bytes.
  virtual PreparedKemKeyPtr prepare_public_key(ByteView public_key) const;
  virtual PreparedKemKeyPtr prepare_secret_key(ByteView secret_key) const;
  /// encapsulate() / decapsulate() with a prepared key: the same ciphertexts and secrets as with
  /// its bytes. A key another KEM (or the other kind) prepared throws Error{invalid_argument}.
  virtual KemEncapsulation encapsulate_prepared(const PreparedKemKey& public_key,
                                                ByteView seed) const;
  virtual SecretBytes decapsulate_prepared(const PreparedKemKey& secret_key,
                                           ByteView ciphertext) const;

  /// Key generation drawing the seed from the OS CSPRNG.
  KemKeyPair generate_keypair() const;
  /// Encapsulation drawing the seed from the OS CSPRNG.
  KemEncapsulation encapsulate(ByteView public_key) const;
};

/// The KEM named `name` ("ML-KEM-512", "ML-KEM-768", "ML-KEM-1024", "X-Wing"); names match
/// exactly. Throws Error{unknown_algorithm}. The returned objects are stateless singletons. The
/// contenders (NTRU, Saber) are deliberately not here: every protocol resolves its KEM through
/// this function, so none of them can be configured or negotiated to use one.
const Kem& kem_by_name(std::string_view name);
/// Every name kem_by_name accepts, in a stable order.
std::span<const std::string_view> kem_names() noexcept;

}  // namespace pqot::crypto
