// docs/srup-pq.md section 5: telemetry keys, mode-3 sealing and opening, key epochs and
// checkpoints, on the device and on the readers.
#include "pqot/srup/telemetry.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <stdexcept>
#include <string>

#include "pqot/channel/nonce.hpp"
#include "pqot/crypto/aead.hpp"
#include "pqot/crypto/error.hpp"
#include "pqot/crypto/random.hpp"

namespace pqot::srup {

namespace {

constexpr std::uint64_t kAllOnesId = ~std::uint64_t{0};

const channel::KeySchedule& telemetry_schedule() {
  static const channel::KeySchedule s("sruppq1");
  return s;
}

// HKDF-Expand(TK, "sruppq1 telemetry", 32): TK is already uniformly random, so it is the PRK.
channel::Key telemetry_aead_key(ByteView tk) {
  if (tk.size() != kTelemetryKeySize) {
    throw std::invalid_argument("SRUP-PQ: a telemetry key is 32 bytes");
  }
  channel::Key prk;
  std::memcpy(prk.data(), tk.data(), tk.size());
  return telemetry_schedule().expand(prk, "telemetry");
}

crypto::Nonce telemetry_nonce(std::uint64_t sequence) {
  return crypto::make_nonce(
      channel::tagged_prefix(kTelemetryNonceTag, channel::Direction::client_to_server), sequence);
}

// SHA-256 over the covered envelopes' SHA-256 digests, concatenated in sequence order (5.2).
crypto::Sha256Digest telemetry_range_digest(const std::vector<crypto::Sha256Digest>& digests) {
  Bytes all(digests.size() * 32);
  for (std::size_t i = 0; i < digests.size(); ++i) {
    std::memcpy(all.data() + 32 * i, digests[i].data(), 32);
  }
  return crypto::sha256(all);
}

std::optional<crypto::Sha256Digest> pending_digest(
    const std::map<std::uint64_t, crypto::Sha256Digest>& pending, std::uint64_t sequence) {
  const auto it = pending.find(sequence);
  if (it == pending.end()) return std::nullopt;
  return it->second;
}

bool same_readers(const std::vector<Reader>& a, const std::vector<Reader>& b) { return a == b; }

}  // namespace

Bytes seal_telemetry(Header h, std::uint32_t epoch, ByteView telemetry_key, ByteView reading) {
  h.mode = Mode::telemetry_group;
  h.recipient = 0;
  if (reading.size() + kAeadTag > 0xffff) {
    throw std::invalid_argument("SRUP-PQ: reading longer than an envelope holds");
  }
  const Bytes header = encode_header(h, reading.size() + kAeadTag);
  const std::size_t total = header.size() + kEpochSize + reading.size() + kAeadTag;
  if (total > kMaxEnvelope) throw std::invalid_argument("SRUP-PQ: envelope over 65,535 bytes");
  const channel::Key key = telemetry_aead_key(telemetry_key);
  Bytes wire(total);
  std::memcpy(wire.data(), header.data(), header.size());
  for (std::size_t i = 0; i < kEpochSize; ++i) {
    wire[header.size() + i] = static_cast<std::uint8_t>(epoch >> (8 * (kEpochSize - 1 - i)));
  }
  crypto::Aes256Gcm aead(key.span());
  aead.seal_into(telemetry_nonce(h.sequence), header, reading,
                 crypto::MutableByteView(wire).subspan(header.size() + kEpochSize));
  return wire;
}

// ---- TelemetrySender -------------------------------------------------------------------------

TelemetrySender::TelemetrySender(const Identity& self, std::uint32_t first_epoch,
                                 HeaderFor header_for, TelemetryPolicy policy,
                                 TelemetryDeterminism det)
    : self_(self),
      header_for_(std::move(header_for)),
      policy_(policy),
      det_(std::move(det)),
      epoch_(first_epoch) {
  if (policy.checkpoint_messages == 0 || policy.checkpoint_messages > kMaxCheckpointMessages ||
      policy.checkpoint_seconds == 0 || policy.checkpoint_seconds > kMaxCheckpointSeconds ||
      policy.key_messages == 0 || policy.key_messages > kTelemetryKeyMessages ||
      policy.key_ms == 0 || policy.key_ms > kTelemetryKeyMs) {
    throw std::invalid_argument("SRUP-PQ: telemetry limits out of range");
  }
  if (suite_info(self.suite).legacy) {
    throw std::invalid_argument("SRUP-PQ: no telemetry groups in the legacy suite");
  }
  if (!header_for_) throw std::invalid_argument("SRUP-PQ: a telemetry sender needs headers");
}

Header TelemetrySender::header(MessageType type, std::uint64_t recipient) const {
  Header h = header_for_(type, recipient);
  h.type = type;
  h.mode = required_mode(type);
  h.suite = self_.suite;
  h.sender = self_.id;
  h.recipient = recipient;
  return h;
}

void TelemetrySender::flush_checkpoint(std::vector<Outgoing>& out) {
  if (digests_.empty()) return;
  const Checkpoint body{epoch_, first_sequence_, static_cast<std::uint16_t>(digests_.size()),
                        telemetry_range_digest(digests_)};
  Bytes wire = protect(header(MessageType::checkpoint, 0),
                       encode_body(MessageType::checkpoint, self_.suite, body), self_, nullptr,
                       {{}, det_.signature_rnd});
  out.push_back({MessageType::checkpoint, 0, std::move(wire)});
  digests_.clear();
}

std::vector<Outgoing> TelemetrySender::seal_keys(const std::vector<Reader>& readers,
                                                 std::uint32_t epoch,
                                                 const crypto::SecretBytes& tk) {
  // The encoded body holds TK in the clear: it goes into wiping storage at once.
  const crypto::SecretBytes encoded = [&] {
    Bytes plain = encode_body(MessageType::telemetry_key, self_.suite,
                              TelemetryKey{epoch, tk, policy_.checkpoint_messages,
                                           policy_.checkpoint_seconds});
    crypto::SecretBytes secret(plain.begin(), plain.end());
    crypto::secure_wipe(plain);
    return secret;
  }();
  std::vector<Outgoing> made;
  made.reserve(readers.size());
  for (const Reader& r : readers) {
    const PeerKeys keys{r.suite, {}, r.kem_public};
    made.push_back({MessageType::telemetry_key, r.id,
                    protect(header(MessageType::telemetry_key, r.id), encoded, self_, &keys,
                            {det_.kem_seed, det_.signature_rnd})});
  }
  return made;
}

std::vector<Outgoing> TelemetrySender::resend_keys() {
  if (!has_key_) return {};
  return seal_keys(readers_, epoch_, key_);
}

void TelemetrySender::start_epoch(std::vector<Reader> readers, std::uint64_t now_ms,
                                  std::vector<Outgoing>& out) {
  // Everything is made before anything changes, so a throw leaves the sender as it was.
  const bool first = !has_key_;
  if (!first && epoch_ == UINT32_MAX) {
    throw std::logic_error("SRUP-PQ: telemetry key epochs used up");
  }
  const std::uint32_t epoch = first ? epoch_ : epoch_ + 1;
  crypto::SecretBytes tk(kTelemetryKeySize);
  if (first && !det_.first_key.empty()) {
    if (det_.first_key.size() != kTelemetryKeySize) {
      throw std::invalid_argument("SRUP-PQ: a telemetry key is 32 bytes");
    }
    std::copy(det_.first_key.begin(), det_.first_key.end(), tk.begin());
  } else {
    crypto::random_secret_bytes(tk);
  }
  std::vector<Outgoing> made = seal_keys(readers, epoch, tk);
  flush_checkpoint(out);  // the old epoch's envelopes are confirmed under the old epoch
  for (Outgoing& o : made) out.push_back(std::move(o));
  readers_ = std::move(readers);
  key_ = std::move(tk);
  epoch_ = epoch;
  has_key_ = true;
  key_started_ms_ = now_ms;
  sealed_in_epoch_ = 0;
}

std::vector<Outgoing> TelemetrySender::set_readers(const ReaderSet& readers, std::uint64_t now_ms) {
  if (readers.readers.size() > kMaxReaders) throw std::invalid_argument("SRUP-PQ: over 16 readers");
  std::vector<Reader> set = readers.readers;
  for (std::size_t i = 0; i < set.size(); ++i) {
    if (set[i].id == 0 || set[i].id == kAllOnesId || set[i].suite != self_.suite) {
      throw std::invalid_argument("SRUP-PQ: reader with a reserved ID or another suite");
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (set[j].id == set[i].id) throw std::invalid_argument("SRUP-PQ: reader listed twice");
    }
  }
  std::sort(set.begin(), set.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  std::vector<Outgoing> out;
  if (has_key_ && same_readers(set, readers_)) return out;
  start_epoch(std::move(set), now_ms, out);
  return out;
}

std::vector<Outgoing> TelemetrySender::tick(std::uint64_t now_ms) {
  std::vector<Outgoing> out;
  if (!has_key_) return out;
  if (now_ms >= key_started_ms_ && now_ms - key_started_ms_ >= policy_.key_ms) {
    start_epoch(readers_, now_ms, out);
  } else if (!digests_.empty() && now_ms >= range_started_ms_ &&
             now_ms - range_started_ms_ >= std::uint64_t{policy_.checkpoint_seconds} * 1000) {
    flush_checkpoint(out);
  }
  return out;
}

std::vector<Outgoing> TelemetrySender::seal(ByteView reading, std::uint64_t now_ms) {
  if (!has_key_) throw std::logic_error("SRUP-PQ: no Reader Set yet, so no telemetry key");
  std::vector<Outgoing> out;
  if (sealed_in_epoch_ >= policy_.key_messages) {
    start_epoch(readers_, now_ms, out);
  } else {
    out = tick(now_ms);
  }
  Header h = header(MessageType::telemetry, 0);
  if (last_sequence_ && h.sequence <= *last_sequence_) {
    throw std::invalid_argument("SRUP-PQ: telemetry sequence not above the last one sealed");
  }
  Bytes wire = seal_telemetry(h, epoch_, key_, reading);
  // A Checkpoint covers consecutive sequences only (section 5.2): a gap closes the range.
  if (!digests_.empty() && h.sequence != first_sequence_ + digests_.size()) flush_checkpoint(out);
  if (digests_.empty()) {
    first_sequence_ = h.sequence;
    range_started_ms_ = now_ms;
  }
  digests_.push_back(crypto::sha256(wire));
  last_sequence_ = h.sequence;
  ++sealed_in_epoch_;
  out.push_back({MessageType::telemetry, 0, std::move(wire)});
  if (digests_.size() >= policy_.checkpoint_messages) flush_checkpoint(out);
  return out;
}

// ---- TelemetryReader -------------------------------------------------------------------------

TelemetryReader::TelemetryReader(std::uint64_t self_id, PeerLookup peers)
    : self_(self_id), peers_(std::move(peers)) {}

void TelemetryReader::drop(std::uint64_t sender, KeyEpoch& e) {
  for (const auto& [sequence, digest] : e.pending) {
    if (unconfirmed_.size() >= kMaxUnconfirmedReported) unconfirmed_.erase(unconfirmed_.begin());
    unconfirmed_.push_back({sender, e.number, sequence});
  }
  e.pending.clear();
}

void TelemetryReader::expire(std::uint64_t sender, SenderState& s, std::uint64_t now_ms) {
  if (s.previous && now_ms > s.previous_until_ms) {
    drop(sender, *s.previous);
    s.previous.reset();  // its key (a Secret) is wiped by its destructor
  }
}

TelemetryReader::KeyEpoch* TelemetryReader::find_epoch(SenderState& s, std::uint32_t epoch) {
  if (s.current.number == epoch) return &s.current;
  if (s.previous && s.previous->number == epoch) return &*s.previous;
  return nullptr;
}

void TelemetryReader::add_key(const Opened& key_message, std::uint64_t now_ms) {
  if (key_message.header.type != MessageType::telemetry_key) {
    throw Refused(Refusal::bad_request, "not a Telemetry Key");
  }
  const std::uint64_t sender = key_message.header.sender;
  const auto body = std::get<TelemetryKey>(decode_body(
      MessageType::telemetry_key, key_message.header.suite, key_message.body));  // step 11
  KeyEpoch e;
  e.number = body.epoch;
  e.key = telemetry_aead_key(body.key);
  e.tk_hash = crypto::sha256(body.key);
  e.checkpoint_messages = body.checkpoint_messages;
  const auto it = senders_.find(sender);
  if (it == senders_.end()) {
    if (senders_.size() >= kMaxTelemetrySenders) {
      throw std::length_error("SRUP-PQ: telemetry senders at their bound");
    }
    senders_.emplace(sender, SenderState{std::move(e), std::nullopt, 0});
    return;
  }
  SenderState& s = it->second;
  expire(sender, s, now_ms);
  if (body.epoch == s.current.number) {
    if (!crypto::ct_equal(e.tk_hash, s.current.tk_hash)) {
      throw Refused(Refusal::bad_request, "another key for the current telemetry epoch");
    }
    return;  // the same key again (a retransmission)
  }
  if (body.epoch < s.current.number) {
    throw Refused(Refusal::bad_request, "telemetry key epoch below the current one");
  }
  if (s.previous) drop(sender, *s.previous);
  s.previous = std::move(s.current);
  s.previous_until_ms = now_ms + kTelemetryGraceMs;
  s.current = std::move(e);
}

TelemetryReading TelemetryReader::open(ByteView wire, std::string_view topic,
                                       std::uint64_t now_ms) {
  const EnvelopeView v = parse_envelope(wire);  // steps 1-2
  const Header& h = v.header;
  if (h.mode != Mode::telemetry_group) throw Refused(Refusal::malformed, "not telemetry");
  const PeerKeys* enrolled = peers_(h.sender);  // step 3
  if (enrolled == nullptr) throw Refused(Refusal::unknown_sender, "sender is not enrolled");
  if (enrolled->suite != h.suite) {  // step 4
    throw Refused(Refusal::unsupported_suite, "suite differs from the sender's enrolled suite");
  }
  // Step 5: a key of that epoch (this reader holds none if it is not the sender's reader).
  const auto it = senders_.find(h.sender);
  if (it == senders_.end()) throw Refused(Refusal::decrypt_failed, "no telemetry key");
  expire(h.sender, it->second, now_ms);
  KeyEpoch* e = find_epoch(it->second, v.epoch);
  if (e == nullptr) throw Refused(Refusal::decrypt_failed, "no telemetry key for that epoch");
  TelemetryReading out;
  out.epoch = v.epoch;
  out.opened.body.resize(v.body.size() - kAeadTag);
  try {
    crypto::Aes256Gcm aead(e->key.span());
    aead.open_into(telemetry_nonce(h.sequence), v.header_bytes, v.body, out.opened.body);
  } catch (const crypto::Error&) {
    throw Refused(Refusal::decrypt_failed, "telemetry envelope does not decrypt");
  }
  // Step 6: recipient 0 is checked by the parser; holding the key makes this peer a reader.
  if (h.topic != topic_tag(topic)) throw Refused(Refusal::wrong_topic, "topic tag differs");  // 7
  if (!within_lifetime(h, now_ms)) throw Refused(Refusal::expired, "outside its lifetime");  // 8
  const crypto::Sha256Digest digest = crypto::sha256(wire);
  const auto held = e->pending.find(h.sequence);
  if (held != e->pending.end() && !crypto::ct_equal(held->second, digest)) {
    // The device never seals two envelopes under one (epoch, sequence): a key holder forged one.
    throw Refused(Refusal::replay, "a different envelope under a sequence already received");
  }
  out.opened.header = h;
  if (h.sequence < e->checked_end) {
    out.awaiting_checkpoint = false;
    return out;
  }
  if (held == e->pending.end()) {
    const std::size_t bound = kPendingIntervals * e->checkpoint_messages;
    if (e->pending.size() >= bound) {
      // Full. Checkpoints cover the lowest sequences first, so keep the lowest: a sequence below
      // the highest pending one pushes the highest out (forged far-ahead numbers from a key holder
      // go first, and the device's own readings keep their place); a new highest one means the
      // stream moved on past a lost Checkpoint, and the oldest can no longer be confirmed.
      const auto highest = std::prev(e->pending.end());
      const auto victim = h.sequence < highest->first ? highest : e->pending.begin();
      if (unconfirmed_.size() >= kMaxUnconfirmedReported) unconfirmed_.erase(unconfirmed_.begin());
      unconfirmed_.push_back({h.sender, e->number, victim->first});
      e->pending.erase(victim);
    }
    e->pending.emplace(h.sequence, digest);
  }
  return out;
}

CheckpointReport TelemetryReader::checkpoint(ByteView wire, std::string_view topic,
                                             std::uint64_t now_ms) {
  const Identity me{self_, kDefaultSuite, {}, {}, {}};  // mode 0 needs only the ID
  const Opened opened = open_protected(wire, topic, now_ms, me, peers_);  // steps 1-9
  if (opened.header.type != MessageType::checkpoint) {
    throw Refused(Refusal::bad_request, "not a Checkpoint");
  }
  const std::uint64_t sender = opened.header.sender;
  const auto it = senders_.find(sender);
  if (it == senders_.end()) {
    throw Refused(Refusal::wrong_recipient, "not a reader of this sender");  // step 6, mode 3
  }
  const auto body = std::get<Checkpoint>(
      decode_body(MessageType::checkpoint, opened.header.suite, opened.body));  // step 11
  if (body.first_sequence > UINT64_MAX - body.count) {
    throw Refused(Refusal::bad_request, "Checkpoint range past 2^64");
  }
  expire(sender, it->second, now_ms);
  CheckpointReport report;
  report.sender = sender;
  report.epoch = body.epoch;
  report.first_sequence = body.first_sequence;
  report.count = body.count;
  KeyEpoch* e = find_epoch(it->second, body.epoch);
  std::vector<crypto::Sha256Digest> digests;
  for (std::uint64_t s = body.first_sequence; s < body.first_sequence + body.count; ++s) {
    const auto held = e == nullptr ? std::nullopt : pending_digest(e->pending, s);
    if (held) {
      report.received.push_back(s);
      digests.push_back(*held);
    } else {
      report.missing.push_back(s);  // never received, or its epoch is gone
    }
  }
  if (!report.missing.empty()) return report;  // incomplete: nothing forgotten
  report.verdict = crypto::ct_equal(telemetry_range_digest(digests), body.digest)
                       ? CheckpointReport::Verdict::confirmed
                       : CheckpointReport::Verdict::mismatch;
  for (std::uint64_t s : report.received) e->pending.erase(s);
  e->checked_end = std::max(e->checked_end, body.first_sequence + body.count);
  return report;
}

std::vector<EnvelopeRef> TelemetryReader::take_unconfirmed() {
  std::vector<EnvelopeRef> out;
  out.swap(unconfirmed_);
  return out;
}

std::vector<std::uint32_t> TelemetryReader::epochs(std::uint64_t sender) const {
  const auto it = senders_.find(sender);
  if (it == senders_.end()) return {};
  std::vector<std::uint32_t> out{it->second.current.number};
  if (it->second.previous) out.push_back(it->second.previous->number);
  return out;
}

}  // namespace pqot::srup
