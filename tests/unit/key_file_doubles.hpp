// Signatures the key file tests need that this branch's registry may not have yet: Ed25519 over
// OpenSSL's EVP (keys only), the ML-DSA-65+Ed25519 composite built from it and our ML-DSA-65, and
// RSA suites that only carry a name and a modulus size. Passed to the decoders as `expected`,
// they let the Ed25519, composite and RSA file formats be checked against OpenSSL here.
#pragma once

#include <openssl/evp.h>

#include <memory>
#include <string>

#include "pqot/crypto/error.hpp"
#include "pqot/crypto/mldsa.hpp"
#include "pqot/crypto/signature.hpp"

namespace pqot::crypto::test {

/// Key material only: signing is not what the key file tests exercise.
class KeysOnly : public Signature {
 public:
  using Signature::keygen;
  using Signature::sign;
  std::size_t rnd_size() const noexcept override { return 0; }
  std::size_t max_context_size() const noexcept override { return 0; }
  Bytes sign(ByteView, ByteView, ByteView, ByteView) const override {
    throw Error(ErrorCode::internal, "test double: no signing");
  }
  bool verify(ByteView, ByteView, ByteView, ByteView) const override { return false; }
  void check_public_key(ByteView pk) const override {
    if (public_key_size() != 0 && pk.size() != public_key_size()) {
      throw Error(ErrorCode::invalid_length, "test double: public key size");
    }
  }
};

/// RFC 8032 keys: sk = the 32-byte seed, pk = its public key as OpenSSL derives it.
class OpensslEd25519 final : public KeysOnly {
 public:
  std::string_view name() const noexcept override { return "Ed25519"; }
  std::size_t public_key_size() const noexcept override { return 32; }
  std::size_t secret_key_size() const noexcept override { return 32; }
  std::size_t signature_size() const noexcept override { return 64; }
  std::size_t seed_size() const noexcept override { return 32; }
  SignatureKeyPair keygen(ByteView seed) const override {
    if (seed.size() != 32) throw Error(ErrorCode::invalid_length, "Ed25519 seed");
    std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(
        EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, seed.data(), seed.size()),
        EVP_PKEY_free);
    Bytes pk(32);
    std::size_t len = pk.size();
    if (!key || EVP_PKEY_get_raw_public_key(key.get(), pk.data(), &len) != 1 || len != 32) {
      throw Error(ErrorCode::internal, "OpenSSL Ed25519");
    }
    return {pk, SecretBytes(seed.begin(), seed.end())};
  }
};

/// The composite's key-file view (docs/crypto.md): seed = xi || Ed25519 seed, pk = ML-DSA-65 pk ||
/// Ed25519 pk, built here from OpenSSL's Ed25519 rather than ours. Its secret key is simply the
/// seed (files never hold the real suite's in-memory expanded form).
class CompositeKeys final : public KeysOnly {
 public:
  std::string_view name() const noexcept override { return "ML-DSA-65+Ed25519"; }
  std::size_t public_key_size() const noexcept override { return 1952 + 32; }
  std::size_t secret_key_size() const noexcept override { return 64; }
  std::size_t signature_size() const noexcept override { return 3309 + 64; }
  std::size_t seed_size() const noexcept override { return 64; }
  SignatureKeyPair keygen(ByteView seed) const override {
    if (seed.size() != 64) throw Error(ErrorCode::invalid_length, "composite seed");
    SignatureKeyPair kp;
    kp.public_key = ml_dsa_.keygen(seed.first(32)).public_key;
    const Bytes ed = ed25519_.keygen(seed.subspan(32)).public_key;
    kp.public_key.insert(kp.public_key.end(), ed.begin(), ed.end());
    kp.secret_key.assign(seed.begin(), seed.end());
    return kp;
  }

 private:
  MlDsa ml_dsa_{MlDsaParameterSet::ml_dsa_65};
  OpensslEd25519 ed25519_;
};

/// An RSA suite as the key files see it: a name and a modulus size (signature_size()).
class RsaName final : public KeysOnly {
 public:
  RsaName(std::string name, std::size_t bits) : name_(std::move(name)), bits_(bits) {}
  std::string_view name() const noexcept override { return name_; }
  std::size_t public_key_size() const noexcept override { return 0; }
  std::size_t secret_key_size() const noexcept override { return 0; }
  std::size_t signature_size() const noexcept override { return bits_ / 8; }
  std::size_t seed_size() const noexcept override { return 0; }
  bool legacy() const noexcept override { return true; }
  SignatureKeyPair keygen(ByteView) const override {
    throw Error(ErrorCode::internal, "test double: no RSA keygen");
  }

 private:
  std::string name_;
  std::size_t bits_;
};

}  // namespace pqot::crypto::test
