// Signing and verifying version-5 envelopes: RSASSA-PKCS1-v1_5 with SHA-256 over signed_bytes()
// (reference section 2: the original hashes with SHA-256 and calls RSA_sign(NID_sha256)). The
// RSA-2048-PKCS1 suite of pqot::crypto hashes the message itself, so it gets the signed bytes.
#include "pqot/crypto/signature.hpp"
#include "pqot/srup/legacy.hpp"

namespace pqot::srup::legacy {

namespace {

const crypto::Signature& suite() {
  return crypto::signature_by_name(kSuiteName);
}

}  // namespace

bool verify(const LegacyEnvelope& envelope, ByteView rsa_public_key_spki_der) {
  // A key that is not RSA-2048 throws here rather than reading as "bad signature".
  suite().check_public_key(rsa_public_key_spki_der);
  if (envelope.signature.size() != kSignatureSize) return false;
  return suite().verify(rsa_public_key_spki_der, signed_bytes(envelope), {}, envelope.signature);
}

LegacyEnvelope sign(LegacyEnvelope envelope, ByteView rsa_secret_key_pkcs8_der) {
  envelope.signature = suite().sign_deterministic(rsa_secret_key_pkcs8_der, signed_bytes(envelope));
  return envelope;
}

}  // namespace pqot::srup::legacy
