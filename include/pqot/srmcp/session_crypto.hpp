// SRMCP v2 session cryptography: the key schedule (docs/srmcp.md §5), nonces and key update (§6),
// the link-binding proof (§7), and sealing/opening of frames (§3) and messages (§9).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>

#include "pqot/channel/epochs.hpp"
#include "pqot/channel/key_schedule.hpp"
#include "pqot/channel/nonce.hpp"
#include "pqot/channel/replay_window.hpp"
#include "pqot/crypto/aead.hpp"
#include "pqot/srmcp/wire.hpp"

namespace pqot::srmcp {

using channel::Direction;
using channel::Key;

/// SRMCP v2's labels: "srmcp2 " + label (§5, §6, §7).
const channel::KeySchedule& key_schedule();

/// The two keys of one direction at one epoch.
struct KeySet {
  Key frame;
  Key message;
};

struct SessionKeys {
  KeySet c2s;
  KeySet s2c;
  Key link;
};

/// TH = SHA-256(CLIENT_HELLO body || SERVER_HELLO body) (§5).
std::array<std::uint8_t, 32> transcript_hash(ByteView client_hello, ByteView server_hello);
/// §5: PRK = HKDF-Extract(exporter, kem_secret); each key = HKDF-Expand(PRK, "srmcp2 "+label+TH).
SessionKeys derive_session_keys(ByteView tls_exporter, ByteView kem_secret,
                                ByteView transcript_hash);
/// §6: the next epoch's keys.
KeySet next_epoch(const KeySet& keys);
/// §7: HMAC-SHA-256(link key, "srmcp2 bind" || token || link_id || link exporter).
std::array<std::uint8_t, 32> link_bind_proof(const Key& link_key, ByteView token,
                                             std::uint32_t link_id, ByteView link_exporter);

/// Frame nonce prefix (§6): direction bit and link id.
constexpr crypto::NoncePrefix frame_prefix(Direction dir, std::uint32_t link_id) noexcept {
  return channel::path_prefix(dir, link_id);
}
/// Message nonce prefix (§6): 'M', 0, 0, direction.
constexpr crypto::NoncePrefix message_prefix(Direction dir) noexcept {
  return channel::tagged_prefix(0x4d, dir);
}

/// Seals a frame: returns pre-header || header || AES-256-GCM(plaintext) || tag (§3).
Bytes seal_frame(crypto::Aes256Gcm& key, Direction dir, const FrameHeader& header,
                 ByteView plaintext);
/// The same, into `out` (resized, its capacity reused); `plaintext` must not overlap `out`.
void seal_frame_into(crypto::Aes256Gcm& key, Direction dir, const FrameHeader& header,
                     ByteView plaintext, Bytes& out);
/// Opens the body of a frame whose pre-header and header (40 bytes, `aad`) were already parsed.
/// Throws ProtocolError{close} on a tag failure.
Bytes open_frame(crypto::Aes256Gcm& key, Direction dir, const FrameHeader& header, ByteView aad,
                 ByteView body);
/// The same, into `plain` (resized, its capacity reused).
void open_frame_into(crypto::Aes256Gcm& key, Direction dir, const FrameHeader& header, ByteView aad,
                     ByteView body, Bytes& plain);
/// A plaintext frame (hello phase, §4).
Bytes plain_frame(FrameType type, ByteView body);

/// The sending half of a session direction: current-epoch AEAD keys, the message counter and the
/// key-update policy (§6). Frame sequence numbers belong to links, not to this object.
class SendState {
 public:
  SendState(const KeySet& keys, Direction dir, std::uint32_t update_after_messages,
            std::chrono::seconds update_after);

  /// Seals a message: fills msg_seq, epoch and timestamp into `header`, returns header || ct ||
  /// tag.
  Bytes seal_message(MessageHeader& header, ByteView body);
  /// The same, into `out` (resized, its capacity reused).
  void seal_message_into(MessageHeader& header, ByteView body, Bytes& out);
  /// Seals a frame on `link_id` with frame sequence `seq` at the current epoch.
  Bytes seal_frame(FrameType type, std::uint32_t link_id, std::uint64_t seq, ByteView plaintext);
  void seal_frame_into(FrameType type, std::uint32_t link_id, std::uint64_t seq, ByteView plaintext,
                       Bytes& out);
  std::uint32_t epoch() const noexcept { return epoch_; }
  Direction direction() const noexcept { return dir_; }

 private:
  void maybe_update();

  KeySet keys_;
  crypto::Aes256Gcm frame_aead_;
  crypto::Aes256Gcm message_aead_;
  Direction dir_;
  std::uint32_t epoch_ = 0;
  std::uint64_t next_msg_seq_ = 0;
  std::uint64_t messages_this_epoch_ = 0;
  std::uint32_t update_after_messages_;
  std::chrono::seconds update_after_;
  std::chrono::steady_clock::time_point epoch_started_;
};

/// The receiving half: current and previous epoch keys (§6), the message replay window (§10).
class ReceiveState {
 public:
  ReceiveState(const KeySet& keys, Direction dir);

  /// Opens a frame body (ProtocolError{close} for a bad tag or an epoch out of range).
  Bytes open_frame(const FrameHeader& header, ByteView aad, ByteView body);
  /// The same, into `plain` (resized; its capacity is reused, so a steady stream of frames
  /// allocates nothing here).
  void open_frame_into(const FrameHeader& header, ByteView aad, ByteView body, Bytes& plain);
  /// Opens a reassembled message: checks the header's epoch, authenticates, then the replay window.
  /// Throws ProtocolError{drop} for a bad tag, {reply, REPLAY} for a replayed msg_seq.
  /// Returns the header and the plaintext body.
  std::pair<MessageHeader, Bytes> open_message(ByteView sealed);
  /// The same, the body into `body` (resized, its capacity reused; cleared on a throw).
  MessageHeader open_message_into(ByteView sealed, Bytes& body);

 private:
  struct EpochState {
    KeySet keys;
    crypto::Aes256Gcm frame_aead;
    crypto::Aes256Gcm message_aead;
  };
  using Epochs = channel::EpochWindow<EpochState>;
  static EpochState make_state(const KeySet& keys);
  /// The epoch `number` (§6): current, kept previous, or the next one derived into `candidate`.
  Epochs::Epoch* keys_for(std::uint32_t number, std::optional<Epochs::Epoch>& candidate);

  Direction dir_;
  Epochs epochs_;
  channel::ReplayWindow window_;
};

}  // namespace pqot::srmcp
