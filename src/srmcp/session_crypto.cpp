#include "pqot/srmcp/session_crypto.hpp"

#include <string>

#include "pqot/common/byte_io.hpp"
#include "pqot/common/clock.hpp"
#include "pqot/crypto/error.hpp"

namespace pqot::srmcp {

namespace {

constexpr std::chrono::seconds kPreviousEpochGrace{10};  // §6
constexpr std::size_t kKeptEpochs = 3;  // §6: previous epochs kept for links that lag

}  // namespace

const channel::KeySchedule& key_schedule() {
  static const channel::KeySchedule schedule("srmcp2");
  return schedule;
}

std::array<std::uint8_t, 32> transcript_hash(ByteView client_hello, ByteView server_hello) {
  return channel::transcript_hash({client_hello, server_hello});
}

SessionKeys derive_session_keys(ByteView tls_exporter, ByteView kem_secret, ByteView th) {
  const channel::KeySchedule& ks = key_schedule();
  const Key prk = channel::KeySchedule::extract(tls_exporter, kem_secret);
  SessionKeys k;
  k.c2s.frame = ks.expand(prk, "c2s frame", th);
  k.c2s.message = ks.expand(prk, "c2s msg", th);
  k.s2c.frame = ks.expand(prk, "s2c frame", th);
  k.s2c.message = ks.expand(prk, "s2c msg", th);
  k.link = ks.expand(prk, "link", th);
  return k;
}

KeySet next_epoch(const KeySet& keys) {
  return KeySet{key_schedule().next_epoch(keys.frame), key_schedule().next_epoch(keys.message)};
}

std::array<std::uint8_t, 32> link_bind_proof(const Key& link_key, ByteView token,
                                             std::uint32_t link_id, ByteView link_exporter) {
  std::uint8_t id[4];
  common::store_u32(id, link_id);
  return key_schedule().mac(link_key, "bind", {token, ByteView(id, 4), link_exporter});
}

Bytes plain_frame(FrameType type, ByteView body) {
  Bytes out(kPreHeaderSize + kFrameHeaderSize + body.size());
  encode_pre_header({kFrameHeaderSize, static_cast<std::uint32_t>(body.size())},
                    std::span<std::uint8_t, kPreHeaderSize>(out.data(), kPreHeaderSize));
  encode_frame_header({type, 0, 0, 0}, std::span<std::uint8_t, kFrameHeaderSize>(
                                           out.data() + kPreHeaderSize, kFrameHeaderSize));
  std::copy(body.begin(), body.end(), out.begin() + kPreHeaderSize + kFrameHeaderSize);
  return out;
}

Bytes seal_frame(crypto::Aes256Gcm& key, Direction dir, const FrameHeader& header,
                 ByteView plaintext) {
  Bytes out;
  seal_frame_into(key, dir, header, plaintext, out);
  return out;
}

void seal_frame_into(crypto::Aes256Gcm& key, Direction dir, const FrameHeader& header,
                     ByteView plaintext, Bytes& out) {
  constexpr std::size_t kAad = kPreHeaderSize + kFrameHeaderSize;
  const std::size_t body = plaintext.size() + kTagSize;
  out.resize(kAad + body);
  encode_pre_header({kFrameHeaderSize, static_cast<std::uint32_t>(body)},
                    std::span<std::uint8_t, kPreHeaderSize>(out.data(), kPreHeaderSize));
  encode_frame_header(header, std::span<std::uint8_t, kFrameHeaderSize>(out.data() + kPreHeaderSize,
                                                                        kFrameHeaderSize));
  key.seal_into(crypto::make_nonce(frame_prefix(dir, header.link_id), header.seq),
                ByteView(out.data(), kAad), plaintext,
                crypto::MutableByteView(out.data() + kAad, body));
}

void open_frame_into(crypto::Aes256Gcm& key, Direction dir, const FrameHeader& header, ByteView aad,
                     ByteView body, Bytes& plain) {
  if (body.size() < kTagSize)
    throw ProtocolError(Action::close, Status::bad_request, "frame body shorter than a tag");
  plain.resize(body.size() - kTagSize);
  try {
    key.open_into(crypto::make_nonce(frame_prefix(dir, header.link_id), header.seq), aad, body,
                  plain);
  } catch (const crypto::Error&) {
    plain.clear();
    throw ProtocolError(Action::close, Status::bad_request, "frame authentication failed");
  }
}

Bytes open_frame(crypto::Aes256Gcm& key, Direction dir, const FrameHeader& header, ByteView aad,
                 ByteView body) {
  Bytes plain;
  open_frame_into(key, dir, header, aad, body, plain);
  return plain;
}

// ---- SendState ---------------------------------------------------------------------------------

SendState::SendState(const KeySet& keys, Direction dir, std::uint32_t update_after_messages,
                     std::chrono::seconds update_after)
    : keys_(keys),
      frame_aead_(keys.frame.span()),
      message_aead_(keys.message.span()),
      dir_(dir),
      update_after_messages_(update_after_messages),
      update_after_(update_after),
      epoch_started_(std::chrono::steady_clock::now()) {}

void SendState::maybe_update() {
  if (messages_this_epoch_ < update_after_messages_ &&
      std::chrono::steady_clock::now() - epoch_started_ < update_after_) {
    return;
  }
  if (epoch_ == UINT32_MAX) return;  // the last epoch has no successor (docs/channel.md, "Epochs")
  keys_ = next_epoch(keys_);
  frame_aead_ = crypto::Aes256Gcm(keys_.frame.span());
  message_aead_ = crypto::Aes256Gcm(keys_.message.span());
  ++epoch_;
  messages_this_epoch_ = 0;
  epoch_started_ = std::chrono::steady_clock::now();
}

Bytes SendState::seal_message(MessageHeader& header, ByteView body) {
  Bytes out;
  seal_message_into(header, body, out);
  return out;
}

void SendState::seal_message_into(MessageHeader& header, ByteView body, Bytes& out) {
  maybe_update();
  header.msg_seq = next_msg_seq_++;
  header.epoch = epoch_;
  header.timestamp_s = common::unix_time_s();
  ++messages_this_epoch_;
  out.resize(kMessageHeaderSize + body.size() + kTagSize);
  encode_message_header(
      header, std::span<std::uint8_t, kMessageHeaderSize>(out.data(), kMessageHeaderSize));
  message_aead_.seal_into(
      crypto::make_nonce(message_prefix(dir_), header.msg_seq),
      ByteView(out.data(), kMessageHeaderSize), body,
      crypto::MutableByteView(out.data() + kMessageHeaderSize, body.size() + kTagSize));
}

Bytes SendState::seal_frame(FrameType type, std::uint32_t link_id, std::uint64_t seq,
                            ByteView plaintext) {
  return srmcp::seal_frame(frame_aead_, dir_, FrameHeader{type, link_id, seq, epoch_}, plaintext);
}

void SendState::seal_frame_into(FrameType type, std::uint32_t link_id, std::uint64_t seq,
                                ByteView plaintext, Bytes& out) {
  srmcp::seal_frame_into(frame_aead_, dir_, FrameHeader{type, link_id, seq, epoch_}, plaintext, out);
}

// ---- ReceiveState ------------------------------------------------------------------------------

ReceiveState::EpochState ReceiveState::make_state(const KeySet& keys) {
  return EpochState{keys, crypto::Aes256Gcm(keys.frame.span()),
                    crypto::Aes256Gcm(keys.message.span())};
}

ReceiveState::ReceiveState(const KeySet& keys, Direction dir)
    : dir_(dir), epochs_(make_state(keys), kKeptEpochs, kPreviousEpochGrace) {}

// Nothing changes until a frame or message of a new epoch authenticates (commit), so a forgery
// cannot move the receiver on; a lagging link uses a kept previous epoch.
ReceiveState::Epochs::Epoch* ReceiveState::keys_for(std::uint32_t number,
                                                    std::optional<Epochs::Epoch>& candidate) {
  return epochs_.find(number, candidate,
                      [](const EpochState& cur) { return make_state(next_epoch(cur.keys)); });
}

Bytes ReceiveState::open_frame(const FrameHeader& header, ByteView aad, ByteView body) {
  Bytes plain;
  open_frame_into(header, aad, body, plain);
  return plain;
}

void ReceiveState::open_frame_into(const FrameHeader& header, ByteView aad, ByteView body,
                                   Bytes& plain) {
  std::optional<Epochs::Epoch> candidate;
  Epochs::Epoch* epoch = keys_for(header.epoch, candidate);
  if (epoch == nullptr) {
    throw ProtocolError(Action::close, Status::bad_request,
                        "key epoch " + std::to_string(header.epoch) + " out of range");
  }
  srmcp::open_frame_into(epoch->state.frame_aead, dir_, header, aad, body, plain);
  epochs_.commit(candidate);
}

std::pair<MessageHeader, Bytes> ReceiveState::open_message(ByteView sealed) {
  Bytes body;
  const MessageHeader header = open_message_into(sealed, body);
  return {header, std::move(body)};
}

MessageHeader ReceiveState::open_message_into(ByteView sealed, Bytes& body) {
  body.clear();
  const MessageHeader header = parse_message_header(sealed);
  if (sealed.size() < kMessageHeaderSize + kTagSize) {
    throw ProtocolError(Action::drop, Status::bad_request, "message shorter than header and tag");
  }
  std::optional<Epochs::Epoch> candidate;
  Epochs::Epoch* epoch = keys_for(header.epoch, candidate);
  if (epoch == nullptr)
    throw ProtocolError(Action::drop, Status::bad_request, "message key epoch out of range");
  body.resize(sealed.size() - kMessageHeaderSize - kTagSize);
  try {
    epoch->state.message_aead.open_into(crypto::make_nonce(message_prefix(dir_), header.msg_seq),
                                        sealed.first(kMessageHeaderSize),
                                        sealed.subspan(kMessageHeaderSize), body);
  } catch (const crypto::Error&) {
    body.clear();
    throw ProtocolError(Action::drop, Status::bad_request, "message authentication failed");
  }
  epochs_.commit(candidate);
  // Only authenticated sequence numbers enter the window, so forgeries cannot poison it.
  if (!window_.accept(header.msg_seq)) {
    body.clear();
    throw ProtocolError(Action::reply, Status::replay,
                        "message sequence " + std::to_string(header.msg_seq) + " already seen",
                        header.tid);
  }
  return header;
}

}  // namespace pqot::srmcp
