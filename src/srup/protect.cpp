// docs/srup-pq.md sections 2.2 and 6: the signature over the envelope, sealing to the recipient's
// KEM key, and the authenticated receive steps in their fixed order.
#include "pqot/srup/protect.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

#include "pqot/channel/key_schedule.hpp"
#include "pqot/crypto/aead.hpp"
#include "pqot/crypto/error.hpp"
#include "pqot/crypto/hash.hpp"
#include "pqot/crypto/kem.hpp"
#include "pqot/crypto/random.hpp"
#include "pqot/crypto/rsa.hpp"
#include "pqot/crypto/signature.hpp"

namespace pqot::srup {

namespace {

constexpr std::uint64_t kMaxFutureMs = 5 * 60 * 1000;
constexpr std::size_t kSharedSecret = 32;

const channel::KeySchedule& schedule() {
  static const channel::KeySchedule s("sruppq1");
  return s;
}

const crypto::Signature& signature_of(Suite suite) {
  return crypto::signature_by_name(suite_info(suite).signature);
}

// ML-DSA and the hybrid take the context; Ed25519 and RSA take none (the label alone separates).
ByteView context_of(const crypto::Signature& alg) {
  return alg.max_context_size() > 0 ? crypto::as_bytes(kSignatureContext) : ByteView{};
}

// label || signed part, sized once (GCC 12 at -O3 misreads an insert after a constant-sized
// construction as an out-of-bounds copy).
Bytes signed_message(ByteView signed_part) {
  Bytes m(kSignatureLabel.size() + signed_part.size());
  std::memcpy(m.data(), kSignatureLabel.data(), kSignatureLabel.size());
  if (!signed_part.empty()) {
    std::memcpy(m.data() + kSignatureLabel.size(), signed_part.data(), signed_part.size());
  }
  return m;
}

struct Encapsulation {
  Bytes ciphertext;
  crypto::SecretBytes secret;
};

// The suite's KEM (with the recipient's prepared key when it has one), or for the legacy suite
// RSA-OAEP carrying a random 32-byte secret.
Encapsulation encapsulate(Suite suite, const PeerKeys& recipient, ByteView seed) {
  const ByteView recipient_kem_public = recipient.kem_public;
  const SuiteInfo info = suite_info(suite);
  if (info.legacy) {
    crypto::SecretBytes secret(kSharedSecret);
    if (seed.empty()) {
      crypto::random_secret_bytes(secret);
    } else {
      secret.assign(seed.begin(), seed.end());
    }
    return {crypto::rsa_oaep_by_name(info.kem).encrypt(recipient_kem_public, secret), secret};
  }
  const crypto::Kem& kem = crypto::kem_by_name(info.kem);
  if (recipient.encapsulator && &recipient.encapsulator.kem() == &kem) {
    auto enc = seed.empty() ? recipient.encapsulator.encapsulate() : recipient.encapsulator.encapsulate(seed);
    return {std::move(enc.ciphertext), std::move(enc.shared_secret)};
  }
  auto enc = seed.empty() ? kem.encapsulate(recipient_kem_public)
                          : kem.encapsulate(recipient_kem_public, seed);
  return {std::move(enc.ciphertext), std::move(enc.shared_secret)};
}

std::optional<crypto::SecretBytes> decapsulate(Suite suite, const Identity& self, ByteView ct) {
  const SuiteInfo info = suite_info(suite);
  if (info.legacy) return crypto::rsa_oaep_by_name(info.kem).decrypt(self.kem_secret, ct);
  // ML-KEM's implicit rejection returns a wrong secret for a wrong ciphertext: the AEAD then fails.
  const crypto::Kem& kem = crypto::kem_by_name(info.kem);
  if (self.decapsulator && &self.decapsulator.kem() == &kem) return self.decapsulator.decapsulate(ct);
  return kem.decapsulate(self.kem_secret, ct);
}

// key = HKDF-Expand(HKDF-Extract(SHA-256(ek_R), ss), "sruppq1 seal" || header, 32)
channel::Key seal_key(ByteView recipient_kem_public, ByteView shared_secret, ByteView header) {
  const auto salt = crypto::sha256(recipient_kem_public);
  const channel::Key prk = channel::KeySchedule::extract(salt, shared_secret);
  return schedule().expand(prk, "seal", header);
}

// A fresh key per message: the all-zero nonce never repeats under one key.
constexpr crypto::Nonce kSealNonce{};

}  // namespace

void prepare_keys(Identity& self) {
  self.signer = crypto::SigningKey(signature_of(self.suite), self.signature_secret);
  const SuiteInfo info = suite_info(self.suite);
  if (!info.legacy) self.decapsulator = crypto::DecapsulationKey(crypto::kem_by_name(info.kem), self.kem_secret);
}

void prepare_keys(PeerKeys& keys) {
  keys.verifier = crypto::VerifyingKey(signature_of(keys.suite), keys.signature_public);
  const SuiteInfo info = suite_info(keys.suite);
  if (!info.legacy) keys.encapsulator = crypto::EncapsulationKey(crypto::kem_by_name(info.kem), keys.kem_public);
}

bool within_lifetime(const Header& h, std::uint64_t now_ms) noexcept {
  if (h.timestamp_ms > now_ms && h.timestamp_ms - now_ms > kMaxFutureMs) return false;
  return now_ms <= h.timestamp_ms || now_ms - h.timestamp_ms <= h.lifetime_ms;
}

Bytes protect(const Header& h, ByteView body, const Identity& self, const PeerKeys* recipient,
              const Determinism& det) {
  if (h.mode != Mode::signed_clear && h.mode != Mode::sealed) {
    throw std::invalid_argument("SRUP-PQ: protect() makes signed and sealed envelopes only");
  }
  if (h.sender != self.id || h.suite != self.suite) {
    throw std::invalid_argument("SRUP-PQ: the header's sender and suite must be this identity's");
  }
  Bytes wire;
  if (h.mode == Mode::signed_clear) {
    wire = encode_header(h, body.size());
    wire.insert(wire.end(), body.begin(), body.end());
  } else {
    if (recipient == nullptr || recipient->suite != h.suite) {
      throw std::invalid_argument("SRUP-PQ: sealing needs the recipient's keys of the same suite");
    }
    wire = encode_header(h, body.size() + kAeadTag);
    const Encapsulation enc = encapsulate(h.suite, *recipient, det.kem_seed);
    crypto::Aes256Gcm aead(seal_key(recipient->kem_public, enc.secret, wire).span());
    const Bytes sealed = aead.seal(kSealNonce, wire, body);
    wire.insert(wire.end(), enc.ciphertext.begin(), enc.ciphertext.end());
    wire.insert(wire.end(), sealed.begin(), sealed.end());
  }
  const crypto::Signature& alg = signature_of(h.suite);
  const Bytes message = signed_message(wire);
  const bool hedged = det.signature_rnd.empty() || alg.rnd_size() == 0;
  Bytes sig;
  if (self.signer && &self.signer.algorithm() == &alg) {
    sig = hedged ? self.signer.sign(message, context_of(alg))
                 : self.signer.sign(message, context_of(alg), det.signature_rnd);
  } else {
    sig = hedged ? alg.sign(self.signature_secret, message, context_of(alg))
                 : alg.sign(self.signature_secret, message, context_of(alg), det.signature_rnd);
  }
  wire.insert(wire.end(), sig.begin(), sig.end());
  if (wire.size() > kMaxEnvelope) {
    throw std::invalid_argument("SRUP-PQ: the envelope would exceed 65,535 bytes");
  }
  return wire;
}

Opened open_protected(ByteView wire, std::string_view topic, std::uint64_t now_ms,
                      const Identity& self, const PeerLookup& peers) {
  const EnvelopeView v = parse_envelope(wire);  // steps 1-2
  const Header& h = v.header;
  if (h.mode != Mode::signed_clear && h.mode != Mode::sealed) {
    throw Refused(Refusal::malformed, "not a signed or sealed envelope");
  }
  const PeerKeys* sender = peers(h.sender);  // step 3
  if (sender == nullptr) throw Refused(Refusal::unknown_sender, "sender is not enrolled");
  if (sender->suite != h.suite) {  // step 4: no downgrade, no legacy from a modern peer
    throw Refused(Refusal::unsupported_suite, "suite differs from the sender's enrolled suite");
  }
  const crypto::Signature& alg = signature_of(h.suite);  // step 5
  bool valid = false;
  try {
    const Bytes message = signed_message(v.signed_part);
    valid = sender->verifier && &sender->verifier.algorithm() == &alg
                ? sender->verifier.verify(message, context_of(alg), v.signature)
                : alg.verify(sender->signature_public, message, context_of(alg), v.signature);
  } catch (const crypto::Error&) {
    valid = false;  // a malformed enrolled key verifies nothing
  }
  if (!valid) throw Refused(Refusal::bad_signature, "signature does not verify");
  // Step 6. A Checkpoint goes to recipient 0 (parse_envelope allows 0 for no other signed type);
  // whether this peer reads the sender's telemetry is the TelemetryReader's check (section 5.2).
  if (h.recipient != self.id && h.type != MessageType::checkpoint) {
    throw Refused(Refusal::wrong_recipient, "not addressed to us");
  }
  if (h.topic != topic_tag(topic)) throw Refused(Refusal::wrong_topic, "topic tag differs");  // 7
  if (!within_lifetime(h, now_ms)) throw Refused(Refusal::expired, "outside its lifetime");  // 8
  Opened out;
  out.header = h;
  if (h.mode == Mode::signed_clear) {
    out.body.assign(v.body.begin(), v.body.end());
    return out;
  }
  // step 9. The ciphertext is the sender's: whatever the KEM throws for it (X-Wing's X25519 part
  // refuses a low-order point, for one) is a refusal, not an internal error.
  std::optional<crypto::SecretBytes> secret;
  try {
    secret = decapsulate(h.suite, self, v.kem_ciphertext);
  } catch (const crypto::Error&) {
    secret.reset();
  }
  if (!secret) throw Refused(Refusal::decrypt_failed, "KEM ciphertext does not decrypt");
  try {
    crypto::Aes256Gcm aead(seal_key(self.kem_public, *secret, v.header_bytes).span());
    out.body.resize(v.body.size() - kAeadTag);
    aead.open_into(kSealNonce, v.header_bytes, v.body, out.body);
  } catch (const crypto::Error&) {
    throw Refused(Refusal::decrypt_failed, "body does not decrypt");
  }
  return out;
}

}  // namespace pqot::srup
