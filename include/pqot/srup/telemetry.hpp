// SRUP-PQ telemetry groups (docs/srup-pq.md section 5): a device seals its readings once (mode 3)
// under a telemetry key TK that it sends, sealed, to each authorized reader; a new reader set or a
// limit starts a new key epoch; signed Checkpoints let readers confirm that what they received is
// what the device sent, since every reader holding TK could forge a reading.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

#include "pqot/channel/key_schedule.hpp"
#include "pqot/crypto/hash.hpp"
#include "pqot/srup/body.hpp"
#include "pqot/srup/protect.hpp"

namespace pqot::srup {

/// The nonce tag of telemetry envelopes (section 2.2): 't'; the direction byte is always 0x00.
inline constexpr std::uint8_t kTelemetryNonceTag = 0x74;
/// Section 5.1: a key epoch ends after this many telemetry envelopes or this time.
inline constexpr std::uint32_t kTelemetryKeyMessages = 1u << 20;
inline constexpr std::uint64_t kTelemetryKeyMs = 24ull * 3600 * 1000;
/// The device's choices; each at least 1 and at most: checkpoints kMaxCheckpointMessages (1,024)
/// and kMaxCheckpointSeconds (3,600), keys the section 5.1 limits.
struct TelemetryPolicy {
  std::uint16_t checkpoint_messages = 64;
  std::uint16_t checkpoint_seconds = 60;
  std::uint32_t key_messages = kTelemetryKeyMessages;
  std::uint64_t key_ms = kTelemetryKeyMs;
};

/// Randomness for tests and known-answer vectors (copied); empty fields come from the CSPRNG.
struct TelemetryDeterminism {
  Bytes first_key;      ///< TK of the first key epoch only (32 bytes); later epochs are random
  Bytes kem_seed;       ///< the encapsulation seed of every Telemetry Key envelope
  Bytes signature_rnd;  ///< ML-DSA's rnd for Telemetry Key and Checkpoint signatures
};

/// The caller's header for an envelope the sender makes: sequence (the caller's durable counter for
/// (device, recipient)), timestamp, lifetime, topic and token. Type, mode, suite, sender and
/// recipient are overwritten by the sender.
using HeaderFor = std::function<Header(MessageType type, std::uint64_t recipient)>;

/// An envelope to publish: Telemetry Key (to `recipient`), Telemetry or Checkpoint (recipient 0).
struct Outgoing {
  MessageType type;
  std::uint64_t recipient;
  Bytes wire;
};

/// The mode-3 envelope of `reading` under TK of key epoch `epoch` (h.mode, recipient 0 set here):
/// header ‖ epoch ‖ AES-256-GCM(HKDF-Expand(TK, "sruppq1 telemetry", 32), nonce 74 00 00 00 ‖
/// sequence, aad = header). Low level: TelemetrySender uses it; so can a test playing a reader
/// that forges. Throws std::invalid_argument as encode_header, or for a key not 32 bytes.
Bytes seal_telemetry(Header h, std::uint32_t epoch, ByteView telemetry_key, ByteView reading);

/// The device side of section 5. Not thread-safe. `self` must outlive the sender.
class TelemetrySender {
 public:
  /// `first_epoch`: the key epoch to start at; the caller persists the last epoch used and starts
  /// above it after a restart (TK lives in memory only, and readers refuse older epochs).
  TelemetrySender(const Identity& self, std::uint32_t first_epoch, HeaderFor header_for,
                  TelemetryPolicy policy = {}, TelemetryDeterminism det = {});

  /// The C2's Reader Set (decoded, so 1..16 readers in ascending ID order). The first set, and
  /// any change (a reader removed, added or re-keyed), starts a new key epoch: the old epoch's
  /// pending Checkpoint, then one sealed Telemetry Key per reader of the new set. An unchanged set
  /// returns nothing. Throws std::invalid_argument for more than kMaxReaders, a duplicate or
  /// reserved ID, or a reader of another suite than the device's (protect() seals in one suite).
  std::vector<Outgoing> set_readers(const ReaderSet& readers, std::uint64_t now_ms);

  /// Seals one reading, with in order what falls due: a rotation (Checkpoint of the old epoch,
  /// the new Telemetry Keys) if the key's message count or age is used up; the pending Checkpoint
  /// if its time is up or this sequence does not follow the last; the Telemetry envelope; the
  /// Checkpoint if the count is reached. Throws std::logic_error before the first Reader Set,
  /// std::invalid_argument for a sequence not above the last.
  std::vector<Outgoing> seal(ByteView reading, std::uint64_t now_ms);

  /// For the caller's timer: a rotation or the pending Checkpoint if its time is up.
  std::vector<Outgoing> tick(std::uint64_t now_ms);

  /// The current epoch's key again, to every reader of the current set (docs/srup-mqtt.md 4.6:
  /// every key_resend_s, so that a reader that started late or lost its keys reads again): one
  /// NEW Telemetry Key envelope per reader, with a fresh header from `header_for` (its own
  /// sequence, so the reader's replay window lets it through) around the same body (epoch, TK,
  /// checkpoint interval), which a reader holding the key takes as "the same key again" (5.1).
  /// Nothing before the first Reader Set. Changes no epoch, range or count.
  std::vector<Outgoing> resend_keys();

  bool has_key() const noexcept { return has_key_; }
  std::uint32_t epoch() const noexcept { return epoch_; }
  /// Telemetry envelopes sealed since the last Checkpoint.
  std::size_t pending() const noexcept { return digests_.size(); }
  const std::vector<Reader>& readers() const noexcept { return readers_; }

 private:
  void start_epoch(std::vector<Reader> readers, std::uint64_t now_ms,
                   std::vector<Outgoing>& out);
  void flush_checkpoint(std::vector<Outgoing>& out);
  std::vector<Outgoing> seal_keys(const std::vector<Reader>& readers, std::uint32_t epoch,
                                  const crypto::SecretBytes& tk);
  Header header(MessageType type, std::uint64_t recipient) const;

  const Identity& self_;
  HeaderFor header_for_;
  TelemetryPolicy policy_;
  TelemetryDeterminism det_;
  std::vector<Reader> readers_;
  bool has_key_ = false;
  std::uint32_t epoch_;
  crypto::SecretBytes key_;  // TK of the current epoch
  std::uint64_t key_started_ms_ = 0;
  std::uint32_t sealed_in_epoch_ = 0;
  std::optional<std::uint64_t> last_sequence_;
  // The pending Checkpoint: consecutive sequences first_sequence_ .. + digests_.size() - 1.
  std::uint64_t first_sequence_ = 0;
  std::uint64_t range_started_ms_ = 0;
  std::vector<crypto::Sha256Digest> digests_;
};

/// A reader's bounds (section 5.2), so that no sender, honest or not, grows its memory unbounded.
inline constexpr std::size_t kMaxTelemetrySenders = 1024;
/// Key epochs kept per sender: the current one and the previous one.
inline constexpr std::size_t kKeyEpochsPerSender = 2;
/// How long the previous key epoch stays usable after a newer key arrived.
inline constexpr std::uint64_t kTelemetryGraceMs = 60'000;
/// Envelopes awaiting a Checkpoint per key epoch: this many times its checkpoint interval (the
/// range whose Checkpoint is on its way and the next one).
inline constexpr std::size_t kPendingIntervals = 2;
/// Dropped-unconfirmed envelopes reported until take_unconfirmed() collects them.
inline constexpr std::size_t kMaxUnconfirmedReported = 4096;

/// An envelope a reader names in a report: the sender, the key epoch and the sequence.
struct EnvelopeRef {
  std::uint64_t sender = 0;
  std::uint32_t epoch = 0;
  std::uint64_t sequence = 0;
  bool operator==(const EnvelopeRef&) const = default;
};

/// A mode-3 envelope that passed steps 1-8: provisional until a Checkpoint confirms it.
struct TelemetryReading {
  Opened opened;
  std::uint32_t epoch = 0;
  /// False if a Checkpoint already covered this sequence: it can never be confirmed.
  bool awaiting_checkpoint = true;
};

/// What a verified Checkpoint says about the envelopes it covers.
struct CheckpointReport {
  enum class Verdict : std::uint8_t {
    confirmed,   ///< every covered envelope received and the digest matches: act on them
    mismatch,    ///< every covered envelope received but the digest differs: ALARM, all suspect
    incomplete,  ///< some covered envelopes never arrived: nothing confirmed; call again later
  };
  Verdict verdict = Verdict::incomplete;
  std::uint64_t sender = 0;
  std::uint32_t epoch = 0;
  std::uint64_t first_sequence = 0;
  std::uint16_t count = 0;
  std::vector<std::uint64_t> received;  ///< covered sequences this reader holds
  std::vector<std::uint64_t> missing;   ///< covered sequences it does not hold
};

/// The reader side of section 5. Not thread-safe.
class TelemetryReader {
 public:
  /// `self_id`: this reader's ID; `peers`: the enrolled keys of devices (step 3-5).
  TelemetryReader(std::uint64_t self_id, PeerLookup peers);

  /// A Telemetry Key the caller opened (open_protected, steps 1-9) and let through its replay
  /// window (step 10). A newer epoch becomes current, the current one previous (kept
  /// kTelemetryGraceMs); the same key again changes nothing. Throws Refused{bad_request} for
  /// another type, a bad body, an epoch below the current one, or another key for the current
  /// epoch; std::length_error when kMaxTelemetrySenders are known and this is a new one.
  void add_key(const Opened& key_message, std::uint64_t now_ms);

  /// Steps 1-8 for a mode-3 envelope; then remembers its SHA-256 for the Checkpoint. Throws
  /// Refused (the replay reason for a different envelope under a sequence already received: only
  /// a forger sends that). Replay (step 10) stays the caller's.
  TelemetryReading open(ByteView wire, std::string_view topic, std::uint64_t now_ms);

  /// Steps 1-9 for a Checkpoint (signed by the device; WRONG_RECIPIENT if this reader holds no key
  /// of that device), then the verdict over the covered envelopes. Confirmed or mismatched ones are
  /// forgotten; an incomplete range stays pending. Throws Refused as open_protected, and
  /// Refused{bad_request} for another type or a bad body.
  CheckpointReport checkpoint(ByteView wire, std::string_view topic, std::uint64_t now_ms);

  /// Envelopes dropped without a Checkpoint (their epoch retired, or the pending bound reached),
  /// since the last call. Bounded by kMaxUnconfirmedReported (the oldest reports go first).
  std::vector<EnvelopeRef> take_unconfirmed();

  /// The key epochs held for `sender` (current first), for monitoring.
  std::vector<std::uint32_t> epochs(std::uint64_t sender) const;
  std::size_t senders() const noexcept { return senders_.size(); }

 private:
  struct KeyEpoch {
    std::uint32_t number = 0;
    channel::Key key;  // HKDF-Expand(TK, "sruppq1 telemetry", 32)
    crypto::Sha256Digest tk_hash{};  // to recognise the same key sent again
    std::uint16_t checkpoint_messages = 64;
    std::map<std::uint64_t, crypto::Sha256Digest> pending;
    std::uint64_t checked_end = 0;  // sequences below were covered by a processed Checkpoint
  };
  struct SenderState {
    KeyEpoch current;
    std::optional<KeyEpoch> previous;
    std::uint64_t previous_until_ms = 0;
  };
  void expire(std::uint64_t sender, SenderState& s, std::uint64_t now_ms);
  void drop(std::uint64_t sender, KeyEpoch& e);
  KeyEpoch* find_epoch(SenderState& s, std::uint32_t epoch);

  std::uint64_t self_;
  PeerLookup peers_;
  std::map<std::uint64_t, SenderState> senders_;
  std::vector<EnvelopeRef> unconfirmed_;
};

}  // namespace pqot::srup
