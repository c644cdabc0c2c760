// docs/srup-pq.md section 4: the offer/accept exchange, the session's per-direction keys and
// epochs, and the receive steps of section 6 for mode 2.
#include "pqot/srup/session.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>

#include "pqot/crypto/aead.hpp"
#include "pqot/crypto/error.hpp"
#include "pqot/crypto/hash.hpp"
#include "pqot/crypto/kem.hpp"
#include "pqot/crypto/random.hpp"

namespace pqot::srup {

namespace {

const channel::KeySchedule& session_schedule() {
  static const channel::KeySchedule s("sruppq1");
  return s;
}

// EpochWindow keeps steady_clock time points; the session's clock is the caller's milliseconds.
channel::EpochWindow<channel::Key>::Clock::time_point session_time(std::uint64_t now_ms) {
  return channel::EpochWindow<channel::Key>::Clock::time_point(std::chrono::milliseconds(now_ms));
}

// The nonce direction byte of what `role` sends (section 2.2): 0x00 initiator, 0x01 responder.
channel::Direction direction_of(SessionRole role) {
  return role == SessionRole::initiator ? channel::Direction::client_to_server
                                        : channel::Direction::server_to_client;
}

const crypto::Kem& kem_of_session(Suite suite) {
  const SuiteInfo info = suite_info(suite);
  if (info.legacy) throw std::invalid_argument("SRUP-PQ: no sessions in the legacy suite");
  return crypto::kem_by_name(info.kem);
}

void check_limits(const SessionLimits& l) {
  if (l.max_messages == 0 || l.max_messages > kMaxEpochMessages || l.max_epoch_seconds == 0 ||
      l.max_epoch_seconds > kMaxEpochSeconds) {
    throw std::invalid_argument("SRUP-PQ: session limits must be 1 .. 2^20 messages, 1 .. 3600 s");
  }
}

// prk = HKDF-Extract(salt = SHA-256(offer ‖ accept), ikm = ss) (section 4.1, step 3).
channel::Key session_prk(ByteView offer, ByteView accept, ByteView shared_secret) {
  const channel::Digest t = channel::transcript_hash({offer, accept});
  return channel::KeySchedule::extract(t, shared_secret);
}

channel::Key direction_key(const channel::Key& prk, SessionRole sender) {
  return session_schedule().expand(prk, sender == SessionRole::initiator ? "session i2r"
                                                                         : "session r2i");
}

Determinism signing_only(const SessionDeterminism& det) { return {{}, det.signature_rnd}; }

}  // namespace

// ---- Session ---------------------------------------------------------------------------------

Session::Session(SessionRole role, std::uint64_t self, std::uint64_t peer, Suite suite, SessionId id,
                 SessionLimits limits, const channel::Key& prk, std::uint64_t now_ms)
    : role_(role),
      self_(self),
      peer_(peer),
      suite_(suite),
      id_(id),
      limits_(limits),
      established_ms_(now_ms),
      send_key_(direction_key(prk, role)),
      epoch_start_ms_(now_ms),
      receive_(direction_key(prk, role == SessionRole::initiator ? SessionRole::responder
                                                                 : SessionRole::initiator),
               1, std::chrono::milliseconds(kEpochGraceMs)) {}

bool Session::ended(std::uint64_t now_ms) const noexcept {
  return exhausted_ || (now_ms > established_ms_ && now_ms - established_ms_ >= kSessionLifetimeMs);
}

Bytes Session::seal(Header h, ByteView body, std::uint64_t now_ms) {
  h.mode = Mode::session;
  h.suite = suite_;
  h.sender = self_;
  h.recipient = peer_;
  if (last_sequence_ && h.sequence <= *last_sequence_) {
    throw std::invalid_argument("SRUP-PQ: session sequence not above the last one sealed");
  }
  if (body.size() + kAeadTag > 0xffff) {
    throw std::invalid_argument("SRUP-PQ: body longer than an envelope holds");
  }
  const Bytes header = encode_header(h, body.size() + kAeadTag);  // validates h before any change
  const std::size_t total = header.size() + kEpochSize + body.size() + kAeadTag;
  if (total > kMaxEnvelope) throw std::invalid_argument("SRUP-PQ: envelope over 65,535 bytes");
  if (ended(now_ms)) throw SessionEnded("SRUP-PQ: the session has ended; run a new offer");
  // Section 4.2: one epoch forward at the first seal after a limit, so that every epoch carries at
  // least one envelope and a receiver, which follows only one epoch ahead, can keep up.
  const bool by_count = sent_in_epoch_ >= limits_.max_messages;
  const bool by_time = now_ms >= epoch_start_ms_ &&
                       now_ms - epoch_start_ms_ >= std::uint64_t{limits_.max_epoch_seconds} * 1000;
  if (by_count || by_time) {
    if (send_epoch_ + 1 >= kSessionEpochs) {
      exhausted_ = true;
      throw SessionEnded("SRUP-PQ: the session used up its 2^16 epochs; run a new offer");
    }
    send_key_ = session_schedule().next_epoch(send_key_);
    ++send_epoch_;
    sent_in_epoch_ = 0;
    epoch_start_ms_ = now_ms;
  }
  Bytes wire(total);
  std::memcpy(wire.data(), header.data(), header.size());
  for (std::size_t i = 0; i < kEpochSize; ++i) {
    wire[header.size() + i] = static_cast<std::uint8_t>(send_epoch_ >> (8 * (kEpochSize - 1 - i)));
  }
  crypto::Aes256Gcm aead(send_key_.span());
  const auto nonce = crypto::make_nonce(
      channel::tagged_prefix(kSessionNonceTag, direction_of(role_)), h.sequence);
  aead.seal_into(nonce, header, body,
                 crypto::MutableByteView(wire).subspan(header.size() + kEpochSize));
  last_sequence_ = h.sequence;
  ++sent_in_epoch_;
  return wire;
}

Opened Session::open(ByteView wire, std::string_view topic, std::uint64_t now_ms) {
  const EnvelopeView v = parse_envelope(wire);  // steps 1-2
  const Header& h = v.header;
  if (h.mode != Mode::session) throw Refused(Refusal::malformed, "not a session envelope");
  if (h.sender != peer_) throw Refused(Refusal::unknown_sender, "not this session's peer");  // 3
  if (h.suite != suite_) throw Refused(Refusal::unsupported_suite, "not the session's suite");  // 4
  // Step 5: the key of that epoch must exist (section 4.2), then the AEAD must open.
  if (ended(now_ms)) throw Refused(Refusal::decrypt_failed, "the session has ended");
  if (v.epoch >= kSessionEpochs) throw Refused(Refusal::decrypt_failed, "epoch past the session");
  using Window = channel::EpochWindow<channel::Key>;
  std::optional<Window::Epoch> candidate;
  const Window::Epoch* epoch = receive_.find(
      v.epoch, candidate, [](const channel::Key& k) { return session_schedule().next_epoch(k); },
      session_time(now_ms));
  if (epoch == nullptr) throw Refused(Refusal::decrypt_failed, "no key for that epoch");
  Opened out;
  out.body.resize(v.body.size() - kAeadTag);
  try {
    crypto::Aes256Gcm aead(epoch->state.span());
    const auto nonce = crypto::make_nonce(
        channel::tagged_prefix(kSessionNonceTag, channel::reverse(direction_of(role_))),
        h.sequence);
    aead.open_into(nonce, v.header_bytes, v.body, out.body);
  } catch (const crypto::Error&) {
    throw Refused(Refusal::decrypt_failed, "session envelope does not decrypt");
  }
  if (h.recipient != self_) throw Refused(Refusal::wrong_recipient, "not addressed to us");  // 6
  if (h.topic != topic_tag(topic)) throw Refused(Refusal::wrong_topic, "topic tag differs");  // 7
  if (!within_lifetime(h, now_ms)) throw Refused(Refusal::expired, "outside its lifetime");  // 8
  receive_.commit(candidate, session_time(now_ms));  // only now may the next epoch start
  out.header = h;
  return out;
}

// ---- Initiator -------------------------------------------------------------------------------

SessionInitiator::SessionInitiator(Header h, const Identity& self, const PeerKeys& peer,
                                   SessionLimits limits, const SessionDeterminism& det)
    : self_(self.id), peer_id_(h.recipient), peer_(peer), suite_(self.suite), limits_(limits) {
  check_limits(limits);
  if (peer.suite != self.suite) {
    throw std::invalid_argument("SRUP-PQ: a session needs both peers in one suite");
  }
  const crypto::Kem& kem = kem_of_session(suite_);
  h.type = MessageType::session_offer;
  h.mode = Mode::signed_clear;
  h.suite = suite_;
  h.sender = self_;
  auto pair = det.ephemeral_seed.empty() ? kem.generate_keypair()
                                         : kem.generate_keypair(det.ephemeral_seed);
  if (det.session_id.empty()) {
    crypto::random_bytes(id_);
  } else if (det.session_id.size() == id_.size()) {
    std::copy(det.session_id.begin(), det.session_id.end(), id_.begin());
  } else {
    throw std::invalid_argument("SRUP-PQ: a session ID is 8 bytes");
  }
  Body offer_body{SessionOffer{}};
  auto& fields = std::get<SessionOffer>(offer_body);
  fields.ephemeral_public = pair.public_key;
  fields.session_id = id_;
  fields.max_messages = limits.max_messages;
  fields.max_epoch_seconds = limits.max_epoch_seconds;
  const Bytes body = encode_body(MessageType::session_offer, suite_, offer_body);
  offer_ = protect(h, body, self, nullptr, signing_only(det));
  ephemeral_secret_ = std::move(pair.secret_key);
}

Session SessionInitiator::complete(ByteView accept_wire, std::string_view topic,
                                   std::uint64_t now_ms) {
  if (!holds_ephemeral_secret()) {
    throw std::logic_error("SRUP-PQ: this offer was already answered");
  }
  const Identity me{self_, suite_, {}, {}, {}};  // mode 0 needs only our ID
  const Opened opened = open_protected(accept_wire, topic, now_ms, me, [this](std::uint64_t id) {
    return id == peer_id_ ? &peer_ : nullptr;
  });
  if (opened.header.type != MessageType::session_accept) {
    throw Refused(Refusal::bad_request, "not a Session Accept");
  }
  const auto body = std::get<SessionAccept>(
      decode_body(MessageType::session_accept, suite_, opened.body));  // step 11
  const auto offer_hash = crypto::sha256(offer_);
  if (body.session_id != id_ || !crypto::ct_equal(body.offer_hash, offer_hash)) {
    throw Refused(Refusal::bad_request, "the accept answers another offer");
  }
  crypto::SecretBytes shared;
  try {
    shared = kem_of_session(suite_).decapsulate(ephemeral_secret_, body.kem_ciphertext);
  } catch (const crypto::Error&) {
    throw Refused(Refusal::bad_request, "the accept's KEM ciphertext is unusable");
  }
  Session session(SessionRole::initiator, self_, peer_id_, suite_, id_, limits_,
                  session_prk(offer_, accept_wire, shared), now_ms);
  // Section 4.1: forward secrecy rests on this key being gone once the accept is processed.
  crypto::secure_wipe(ephemeral_secret_);
  ephemeral_secret_.clear();
  ephemeral_secret_.shrink_to_fit();
  return session;
}

// ---- Responder -------------------------------------------------------------------------------

VerifiedOffer SessionResponder::verify(ByteView offer_wire, std::string_view topic,
                                       std::uint64_t now_ms, const Identity& self,
                                       const PeerLookup& peers) {
  const Opened opened = open_protected(offer_wire, topic, now_ms, self, peers);  // steps 1-9
  if (opened.header.type != MessageType::session_offer) {
    throw Refused(Refusal::bad_request, "not a Session Offer");
  }
  if (opened.header.suite != self.suite || suite_info(self.suite).legacy) {
    throw Refused(Refusal::bad_request, "a session needs both peers in one modern suite");
  }
  // Step 11; the decoder refuses limits outside 1 .. 2^20 messages and 1 .. 3,600 s.
  auto body = std::get<SessionOffer>(
      decode_body(MessageType::session_offer, self.suite, opened.body));
  try {
    kem_of_session(self.suite).check_public_key(body.ephemeral_public);
  } catch (const crypto::Error&) {
    throw Refused(Refusal::bad_request, "the offer's ephemeral key is unusable");
  }
  VerifiedOffer v;
  v.header_ = opened.header;
  v.wire_.assign(offer_wire.begin(), offer_wire.end());
  v.ephemeral_public_ = std::move(body.ephemeral_public);
  v.id_ = body.session_id;
  v.limits_ = {body.max_messages, body.max_epoch_seconds};
  return v;
}

SessionResponder::Accepted SessionResponder::accept(const VerifiedOffer& offer, Header h,
                                                    const Identity& self, std::uint64_t now_ms,
                                                    SessionLimits own,
                                                    const SessionDeterminism& det) {
  check_limits(own);
  const crypto::Kem& kem = kem_of_session(self.suite);
  auto enc = det.kem_seed.empty() ? kem.encapsulate(offer.ephemeral_public_)
                                  : kem.encapsulate(offer.ephemeral_public_, det.kem_seed);
  h.type = MessageType::session_accept;
  h.mode = Mode::signed_clear;
  h.suite = self.suite;
  h.sender = self.id;
  h.recipient = offer.header_.sender;
  Body accept_body{SessionAccept{}};
  auto& fields = std::get<SessionAccept>(accept_body);
  fields.session_id = offer.id_;
  fields.kem_ciphertext = std::move(enc.ciphertext);
  fields.offer_hash = crypto::sha256(offer.wire_);
  const Bytes body = encode_body(MessageType::session_accept, self.suite, accept_body);
  Bytes accept_wire = protect(h, body, self, nullptr, signing_only(det));
  const SessionLimits limits{std::min(offer.limits_.max_messages, own.max_messages),
                             std::min(offer.limits_.max_epoch_seconds, own.max_epoch_seconds)};
  Session session(SessionRole::responder, self.id, offer.header_.sender, self.suite, offer.id_,
                  limits, session_prk(offer.wire_, accept_wire, enc.shared_secret), now_ms);
  // enc.shared_secret is SecretBytes: wiped when it goes out of scope here.
  return {std::move(accept_wire), std::move(session)};
}

}  // namespace pqot::srup
