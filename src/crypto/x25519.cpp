// X25519 (RFC 7748) over OpenSSL's EVP_PKEY interface.
#include "pqot/crypto/x25519.hpp"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/proverr.h>

#include <memory>
#include <string>

#include "openssl_util.hpp"
#include "pqot/crypto/error.hpp"

namespace pqot::crypto {

namespace {

using Pkey = ossl::Ptr<EVP_PKEY, EVP_PKEY_free>;
using PkeyCtx = ossl::Ptr<EVP_PKEY_CTX, EVP_PKEY_CTX_free>;
using ossl::throw_error;


void check_size(ByteView v, const char* what) {
  if (v.size() != kX25519Size) {
    throw Error(
        ErrorCode::invalid_length,
        std::string("X25519 ") + what + " must be 32 bytes, got " + std::to_string(v.size()));
  }
}

// OpenSSL copies the scalar into its own key object and cleanses it in EVP_PKEY_free.
Pkey private_key(ByteView key) {
  Pkey p(EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, nullptr, key.data(), key.size()));
  if (!p) throw_error("EVP_PKEY_new_raw_private_key");
  return p;
}

}  // namespace

struct X25519PrivateKey::Impl {
  Pkey key;
};

X25519PrivateKey::X25519PrivateKey(ByteView private_key_bytes) {
  check_size(private_key_bytes, "private key");
  impl_ = std::make_unique<Impl>(Impl{private_key(private_key_bytes)});
  std::size_t len = public_.size();
  if (EVP_PKEY_get_raw_public_key(impl_->key.get(), public_.data(), &len) != 1 || len != public_.size()) {
    throw_error("EVP_PKEY_get_raw_public_key");
  }
}

X25519PrivateKey::~X25519PrivateKey() = default;

std::optional<Secret<kX25519Size>> X25519PrivateKey::shared_secret(ByteView peer_public) const {
  check_size(peer_public, "public key");
  const Pkey peer(EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, nullptr, peer_public.data(),
                                              peer_public.size()));
  if (!peer) throw_error("EVP_PKEY_new_raw_public_key");
  const PkeyCtx ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, impl_->key.get(), nullptr));
  if (!ctx) throw_error("EVP_PKEY_CTX_new_from_pkey");
  if (EVP_PKEY_derive_init(ctx.get()) != 1) throw_error("EVP_PKEY_derive_init");
  if (EVP_PKEY_derive_set_peer(ctx.get(), peer.get()) != 1) {
    throw_error("EVP_PKEY_derive_set_peer");
  }

  std::optional<Secret<kX25519Size>> shared(std::in_place);  // wiped by Secret's destructor
  std::size_t len = kX25519Size;
  if (EVP_PKEY_derive(ctx.get(), shared->data(), &len) != 1) {
    // With well-formed 32-byte keys the one refusal left is an all-zero result (a low-order peer
    // point, RFC 7748 section 6.1); OpenSSL reports it as "failed during derivation".
    const unsigned long e = ERR_peek_last_error();
    const bool all_zero =
        ERR_GET_LIB(e) == ERR_LIB_PROV && ERR_GET_REASON(e) == PROV_R_FAILED_DURING_DERIVATION;
    if (!all_zero) throw_error("EVP_PKEY_derive");
    ERR_clear_error();
    return std::nullopt;
  }
  if (len != kX25519Size) throw Error(ErrorCode::internal, "X25519 secret has the wrong size");
  return shared;
}

X25519Public x25519_public_key(ByteView private_key_bytes) {
  return X25519PrivateKey(private_key_bytes).public_key();
}

std::optional<Secret<kX25519Size>> x25519(ByteView private_key_bytes, ByteView peer_public) {
  check_size(peer_public, "public key");  // before the private key, as callers expect either error
  return X25519PrivateKey(private_key_bytes).shared_secret(peer_public);
}

}  // namespace pqot::crypto
