// Protection of SRUP-PQ envelopes in the signed and sealed modes (docs/srup-pq.md, sections 2.2
// and 6): building them, and the authenticated steps 3-9 of the receive order. Sessions and
// telemetry groups (modes 2 and 3) are in session.hpp.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

#include "pqot/crypto/secure.hpp"
#include "pqot/crypto/kem_keys.hpp"
#include "pqot/crypto/signing_key.hpp"
#include "pqot/srup/envelope.hpp"

namespace pqot::srup {

/// What a peer has enrolled for another: its suite and public keys.
struct PeerKeys {
  Suite suite = kDefaultSuite;
  Bytes signature_public;
  Bytes kem_public;  ///< the KEM's encapsulation key (RSA-OAEP: SPKI DER)
  /// Optional: the keys prepared (docs/crypto.md, "Prepared keys"): signature_public for
  /// open_protected's verification, kem_public for protect()'s sealing (empty for the legacy
  /// suite, whose RSA-OAEP has nothing to prepare). Same results, faster. Holders that talk to a
  /// peer often fill them (prepare_keys); Endpoint keeps a bounded number (endpoint.hpp).
  crypto::VerifyingKey verifier{};
  crypto::EncapsulationKey encapsulator{};
};

/// This peer's own identity: ID, suite, secret keys and its KEM public key (the sealing salt).
struct Identity {
  std::uint64_t id = 0;
  Suite suite = kDefaultSuite;
  crypto::SecretBytes signature_secret;
  crypto::SecretBytes kem_secret;
  Bytes kem_public;
  /// Optional: the secret keys prepared once (make_identity fills them with prepare_keys);
  /// protect() and open_protected() use them when set, the bytes otherwise (the same results).
  crypto::SigningKey signer{};
  crypto::DecapsulationKey decapsulator{};  ///< empty for the legacy suite
};

/// Fills self.signer and self.decapsulator from the secret keys (crypto::Error for keys the
/// suite refuses).
void prepare_keys(Identity& self);
/// Fills keys.verifier and keys.encapsulator from the public keys (crypto::Error for keys the
/// suite refuses).
void prepare_keys(PeerKeys& keys);

/// Randomness for tests and known-answer vectors; empty fields are drawn from the OS CSPRNG.
struct Determinism {
  ByteView kem_seed;       ///< the KEM's encapsulation seed (ML-KEM: m, 32 bytes)
  ByteView signature_rnd;  ///< ML-DSA's rnd (32 bytes; all zero: deterministic signing)
};

/// The signature's domain-separation label and context (section 2.2).
inline constexpr std::string_view kSignatureLabel = "SRUP-PQ v1 envelope";
inline constexpr std::string_view kSignatureContext = "srup-pq";

/// A signed (mode 0) or sealed (mode 1) envelope from `self` with header `h` (h.sender must be
/// self.id and h.suite self.suite; h.mode picks the protection). Mode 1 needs the recipient's
/// enrolled keys. Throws std::invalid_argument for a header no receiver would accept, and
/// crypto::Error from the primitives.
Bytes protect(const Header& h, ByteView body, const Identity& self,
              const PeerKeys* recipient = nullptr, const Determinism& det = {});

/// An envelope that passed steps 1-9: its header and its body in the clear.
struct Opened {
  Header header;
  crypto::SecretBytes body;
};

/// The receiver's view of its peers: the enrolled keys of `sender`, or nullptr.
using PeerLookup = std::function<const PeerKeys*(std::uint64_t sender)>;

/// Steps 1-9 of the receive order for modes 0 and 1 (section 6): parse, known sender, enrolled
/// suite, signature, recipient, topic, expiry, decryption. Throws Refused with the first failing
/// step's reason; reads no state and writes none (the replay window, step 10, is the caller's).
/// `now_ms`: the receiver's clock (milliseconds since the Unix epoch).
Opened open_protected(ByteView wire, std::string_view topic, std::uint64_t now_ms,
                      const Identity& self, const PeerLookup& peers);

/// Step 8 alone (shared with the AEAD modes): expired, or from more than 5 minutes in the future.
bool within_lifetime(const Header& h, std::uint64_t now_ms) noexcept;

}  // namespace pqot::srup
