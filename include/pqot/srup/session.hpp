// SRUP-PQ session mode (docs/srup-pq.md section 4): a signed Session Offer and Session Accept set
// up per-direction AES-256-GCM keys, then envelopes travel in mode 2 without a signature each.
// Rekeyed per epoch; the receive side follows section 6 (steps 1-8; replay, step 10, stays the
// caller's).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "pqot/channel/epochs.hpp"
#include "pqot/channel/key_schedule.hpp"
#include "pqot/channel/nonce.hpp"
#include "pqot/srup/body.hpp"
#include "pqot/srup/protect.hpp"

namespace pqot::srup {

/// Section 4.2: the limits a sender may use at most, and the session's end.
inline constexpr std::uint32_t kMaxEpochMessages = kMaxSessionMessages;  // 2^20
inline constexpr std::uint32_t kMaxEpochSeconds = kMaxSessionSeconds;    // 1 hour
inline constexpr std::uint32_t kSessionEpochs = 1u << 16;  ///< epochs 0 .. 2^16 - 1
inline constexpr std::uint64_t kSessionLifetimeMs = 30ull * 24 * 3600 * 1000;
/// How long the receiver keeps the previous epoch after the first message of the next one.
inline constexpr std::uint64_t kEpochGraceMs = 60'000;
/// The nonce tag of session envelopes (section 2.2): 's'.
inline constexpr std::uint8_t kSessionNonceTag = 0x73;

/// How often a sender moves to the next epoch: after max_messages envelopes or max_epoch_seconds,
/// whichever comes first. Each in 1 .. kMaxEpochMessages / kMaxEpochSeconds.
struct SessionLimits {
  std::uint32_t max_messages = kMaxEpochMessages;
  std::uint32_t max_epoch_seconds = kMaxEpochSeconds;
};

/// Randomness for tests and known-answer vectors; empty fields are drawn from the OS CSPRNG.
struct SessionDeterminism {
  ByteView ephemeral_seed;  ///< initiator: the KEM's keygen seed (X-Wing 32, ML-KEM 64 bytes)
  ByteView session_id;      ///< initiator: 8 bytes
  ByteView kem_seed;        ///< responder: the KEM's encapsulation seed
  ByteView signature_rnd;   ///< ML-DSA's rnd for the offer / accept signature
};

/// Which end of the exchange this peer was: it fixes the sending key and nonce direction byte.
/// The initiator sends under k_I2R with direction 0x00, the responder under k_R2I with 0x01.
enum class SessionRole : std::uint8_t { initiator = 0, responder = 1 };

/// Thrown by Session::seal once the session has ended (2^16 epochs or 30 days): run a new offer.
class SessionEnded : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// An established session: both directions' keys, the sender's epoch, the receiver's window.
/// Move-only; every key is wiped when it is replaced or the session is destroyed.
class Session {
 public:
  Session(Session&&) = default;
  Session& operator=(Session&&) = default;
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  /// A mode-2 envelope with header `h` (the caller fills sequence from its durable counter for
  /// (peer, direction), timestamp, lifetime, topic, token; type must allow session mode).
  /// h.mode, h.suite, h.sender and h.recipient are set here. Moves to the next epoch first if
  /// this epoch's message count or time is used up (by one epoch per call). Throws
  /// std::invalid_argument for a sequence not above the last sealed one (a counter nonce must
  /// never repeat under a key) or a header no receiver would accept; SessionEnded after the end.
  Bytes seal(Header h, ByteView body, std::uint64_t now_ms);

  /// Steps 1-8 of section 6 for a mode-2 envelope from the peer on `topic`, and the epoch rules
  /// of section 4.2: the next epoch is adopted only once an envelope under it passed every step.
  /// Throws Refused; a refusal changes nothing. Does not read or write replay state (step 10 is
  /// the caller's, with the returned header's sequence).
  Opened open(ByteView wire, std::string_view topic, std::uint64_t now_ms);

  /// True from 30 days after the session was established, or once the sender used up 2^16 epochs.
  bool ended(std::uint64_t now_ms) const noexcept;

  SessionRole role() const noexcept { return role_; }
  std::uint64_t self_id() const noexcept { return self_; }
  std::uint64_t peer_id() const noexcept { return peer_; }
  Suite suite() const noexcept { return suite_; }
  const SessionId& id() const noexcept { return id_; }
  /// This side's sending limits (the responder's are the offer's, lowered to its own).
  const SessionLimits& limits() const noexcept { return limits_; }
  std::uint32_t send_epoch() const noexcept { return send_epoch_; }
  std::uint32_t receive_epoch() const noexcept { return receive_.current(); }
  std::uint64_t established_ms() const noexcept { return established_ms_; }

 private:
  friend class SessionInitiator;
  friend struct SessionResponder;
  Session(SessionRole role, std::uint64_t self, std::uint64_t peer, Suite suite, SessionId id,
          SessionLimits limits, const channel::Key& prk, std::uint64_t now_ms);

  SessionRole role_;
  std::uint64_t self_;
  std::uint64_t peer_;
  Suite suite_;
  SessionId id_;
  SessionLimits limits_;
  std::uint64_t established_ms_;
  // Sending side.
  channel::Key send_key_;
  std::uint32_t send_epoch_ = 0;
  std::uint32_t sent_in_epoch_ = 0;
  std::uint64_t epoch_start_ms_;
  std::optional<std::uint64_t> last_sequence_;
  bool exhausted_ = false;
  // Receiving side: current + previous epoch, the previous kept kEpochGraceMs.
  channel::EpochWindow<channel::Key> receive_;
};

/// The initiator's half of section 4.1: holds the ephemeral KEM secret until the accept arrives.
class SessionInitiator {
 public:
  /// Makes the Session Offer (mode 0, signed by `self`): a fresh ephemeral key pair of the
  /// suite's KEM, a random session ID, `limits`. `h` carries recipient (the peer), sequence,
  /// timestamp, lifetime, topic and token; type, mode, suite and sender are set here. `peer` is
  /// the responder's enrolled keys (its accept is verified under them). Throws
  /// std::invalid_argument for limits out of range, the legacy suite, or a bad header.
  SessionInitiator(Header h, const Identity& self, const PeerKeys& peer, SessionLimits limits = {},
                   const SessionDeterminism& det = {});

  /// The offer envelope to send (and to resend unchanged until the accept arrives).
  const Bytes& offer() const noexcept { return offer_; }
  const SessionId& id() const noexcept { return id_; }

  /// Steps 1-9 for the accept (sender = the peer, signed, addressed to us, on `topic`, within
  /// its lifetime), then: type Session Accept, body of the right size (BAD_REQUEST), answering
  /// exactly our offer (session ID and SHA-256 of the offer envelope, BAD_REQUEST otherwise).
  /// Then derives both directions' keys and wipes the ephemeral secret key: a second call
  /// throws std::logic_error. A refused accept changes nothing (the real one may still come).
  Session complete(ByteView accept_wire, std::string_view topic, std::uint64_t now_ms);

  /// Whether the ephemeral KEM secret is still held (true until complete() succeeds).
  bool holds_ephemeral_secret() const noexcept { return !ephemeral_secret_.empty(); }

 private:
  std::uint64_t self_;
  std::uint64_t peer_id_;
  PeerKeys peer_;
  Suite suite_;
  SessionLimits limits_;
  SessionId id_{};
  Bytes offer_;
  crypto::SecretBytes ephemeral_secret_;
};

/// An offer that passed steps 1-9 and decodes: made only by SessionResponder::verify.
class VerifiedOffer {
 public:
  const Header& header() const noexcept { return header_; }
  const SessionId& id() const noexcept { return id_; }
  const SessionLimits& limits() const noexcept { return limits_; }

 private:
  friend struct SessionResponder;
  VerifiedOffer() = default;
  Header header_;
  Bytes wire_;
  Bytes ephemeral_public_;
  SessionId id_{};
  SessionLimits limits_;
};

/// The responder's half of section 4.1, in two steps so that the caller can run its replay check
/// (step 10) on the offer's header between them.
struct SessionResponder {
  /// Steps 1-9 for a Session Offer from an enrolled peer, then its body (BAD_REQUEST for the
  /// wrong type or size, a zero limit, or an ephemeral key the KEM refuses). No state.
  static VerifiedOffer verify(ByteView offer_wire, std::string_view topic, std::uint64_t now_ms,
                              const Identity& self, const PeerLookup& peers);

  struct Accepted {
    Bytes accept;  ///< the Session Accept envelope to send
    Session session;
  };
  /// Encapsulates to the offer's ephemeral key, builds the Session Accept (mode 0, signed by
  /// `self`; `h` as for the offer: sequence, timestamp, lifetime, topic, token) and derives. The
  /// responder sends under the offer's limits lowered to `own`. The shared secret is wiped here.
  static Accepted accept(const VerifiedOffer& offer, Header h, const Identity& self,
                         std::uint64_t now_ms, SessionLimits own = {},
                         const SessionDeterminism& det = {});
};

}  // namespace pqot::srup
