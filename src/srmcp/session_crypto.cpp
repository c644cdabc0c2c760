#include "pqot/srmcp/session_crypto.hpp"

#include <cstring>
#include <string>

#include "pqot/common/byte_io.hpp"
#include "pqot/crypto/error.hpp"
#include "pqot/crypto/hash.hpp"
#include "pqot/crypto/hkdf.hpp"

namespace pqot::srmcp {

namespace {

constexpr std::chrono::seconds kPreviousEpochGrace{10};  // §6
constexpr std::size_t kKeptEpochs = 3;  // §6: previous epochs kept for links that lag

Key expand(ByteView prk, std::string_view label, ByteView th) {
  Bytes info(label.begin(), label.end());
  info.insert(info.end(), th.begin(), th.end());
  const auto okm = crypto::hkdf_sha256_expand(prk, info, 32);
  Key k;
  std::memcpy(k.data(), okm.data(), k.size());
  return k;
}

Key update_key(const Key& k) {
  const auto okm = crypto::hkdf_sha256_expand(k.span(), crypto::as_bytes("srmcp2 key update"), 32);
  Key next;
  std::memcpy(next.data(), okm.data(), next.size());
  return next;
}

std::uint32_t unix_seconds() {
  return static_cast<std::uint32_t>(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
}

}  // namespace

std::array<std::uint8_t, 32> transcript_hash(ByteView client_hello, ByteView server_hello) {
  return crypto::sha256({client_hello, server_hello});
}

SessionKeys derive_session_keys(ByteView tls_exporter, ByteView kem_secret, ByteView th) {
  const auto prk = crypto::hkdf_sha256_extract(kem_secret, tls_exporter);
  SessionKeys k;
  k.c2s.frame = expand(prk, "srmcp2 c2s frame", th);
  k.c2s.message = expand(prk, "srmcp2 c2s msg", th);
  k.s2c.frame = expand(prk, "srmcp2 s2c frame", th);
  k.s2c.message = expand(prk, "srmcp2 s2c msg", th);
  k.link = expand(prk, "srmcp2 link", th);
  return k;
}

KeySet next_epoch(const KeySet& keys) { return KeySet{update_key(keys.frame), update_key(keys.message)}; }

std::array<std::uint8_t, 32> link_bind_proof(const Key& link_key, ByteView token, std::uint32_t link_id,
                                             ByteView link_exporter) {
  std::uint8_t id[4];
  common::store_u32(id, link_id);
  return crypto::hmac_sha256(link_key.span(),
                             {crypto::as_bytes("srmcp2 bind"), token, ByteView(id, 4), link_exporter});
}

crypto::NoncePrefix frame_prefix(Direction dir, std::uint32_t link_id) noexcept {
  crypto::NoncePrefix p;
  common::store_u32(p.data(), (dir == Direction::server_to_client ? 0x80000000u : 0u) | (link_id & 0x7fffffffu));
  return p;
}

crypto::NoncePrefix message_prefix(Direction dir) noexcept {
  return {0x4d, 0x00, 0x00, static_cast<std::uint8_t>(dir)};
}

Bytes plain_frame(FrameType type, ByteView body) {
  Bytes out(kPreHeaderSize + kFrameHeaderSize + body.size());
  encode_pre_header({kFrameHeaderSize, static_cast<std::uint32_t>(body.size())},
                    std::span<std::uint8_t, kPreHeaderSize>(out.data(), kPreHeaderSize));
  encode_frame_header({type, 0, 0, 0},
                      std::span<std::uint8_t, kFrameHeaderSize>(out.data() + kPreHeaderSize, kFrameHeaderSize));
  std::copy(body.begin(), body.end(), out.begin() + kPreHeaderSize + kFrameHeaderSize);
  return out;
}

Bytes seal_frame(crypto::Aes256Gcm& key, Direction dir, const FrameHeader& header, ByteView plaintext) {
  constexpr std::size_t kAad = kPreHeaderSize + kFrameHeaderSize;
  const std::size_t body = plaintext.size() + kTagSize;
  Bytes out(kAad + body);
  encode_pre_header({kFrameHeaderSize, static_cast<std::uint32_t>(body)},
                    std::span<std::uint8_t, kPreHeaderSize>(out.data(), kPreHeaderSize));
  encode_frame_header(header, std::span<std::uint8_t, kFrameHeaderSize>(out.data() + kPreHeaderSize,
                                                                        kFrameHeaderSize));
  key.seal_into(crypto::make_nonce(frame_prefix(dir, header.link_id), header.seq),
                ByteView(out.data(), kAad), plaintext, crypto::MutableByteView(out.data() + kAad, body));
  return out;
}

Bytes open_frame(crypto::Aes256Gcm& key, Direction dir, const FrameHeader& header, ByteView aad,
                 ByteView body) {
  if (body.size() < kTagSize) throw ProtocolError(Action::close, Status::bad_request, "frame body shorter than a tag");
  Bytes plain(body.size() - kTagSize);
  try {
    key.open_into(crypto::make_nonce(frame_prefix(dir, header.link_id), header.seq), aad, body, plain);
  } catch (const crypto::Error&) {
    throw ProtocolError(Action::close, Status::bad_request, "frame authentication failed");
  }
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
  keys_ = next_epoch(keys_);
  frame_aead_ = crypto::Aes256Gcm(keys_.frame.span());
  message_aead_ = crypto::Aes256Gcm(keys_.message.span());
  ++epoch_;
  messages_this_epoch_ = 0;
  epoch_started_ = std::chrono::steady_clock::now();
}

Bytes SendState::seal_message(MessageHeader& header, ByteView body) {
  maybe_update();
  header.msg_seq = next_msg_seq_++;
  header.epoch = epoch_;
  header.timestamp_s = unix_seconds();
  ++messages_this_epoch_;
  Bytes out(kMessageHeaderSize + body.size() + kTagSize);
  encode_message_header(header, std::span<std::uint8_t, kMessageHeaderSize>(out.data(), kMessageHeaderSize));
  message_aead_.seal_into(crypto::make_nonce(message_prefix(dir_), header.msg_seq),
                          ByteView(out.data(), kMessageHeaderSize), body,
                          crypto::MutableByteView(out.data() + kMessageHeaderSize, body.size() + kTagSize));
  return out;
}

Bytes SendState::seal_frame(FrameType type, std::uint32_t link_id, std::uint64_t seq, ByteView plaintext) {
  return srmcp::seal_frame(frame_aead_, dir_, FrameHeader{type, link_id, seq, epoch_}, plaintext);
}

// ---- ReceiveState ------------------------------------------------------------------------------

ReceiveState::Epoch ReceiveState::make_epoch(std::uint32_t number, const KeySet& keys) {
  return Epoch{number, keys, crypto::Aes256Gcm(keys.frame.span()), crypto::Aes256Gcm(keys.message.span()), {}};
}

ReceiveState::ReceiveState(const KeySet& keys, Direction dir) : dir_(dir), current_(make_epoch(0, keys)) {}

ReceiveState::Epoch* ReceiveState::keys_for(std::uint32_t number, std::optional<Epoch>& candidate) {
  const auto now = std::chrono::steady_clock::now();
  while (!previous_.empty() && now - previous_.back().retired > kPreviousEpochGrace) previous_.pop_back();
  if (number == current_.number) return &current_;
  if (number == current_.number + 1) {
    // The peer updated its keys (§6). Nothing changes until a frame or message of the new epoch
    // authenticates, so a forgery cannot move the receiver on.
    candidate.emplace(make_epoch(number, next_epoch(current_.keys)));
    return &*candidate;
  }
  for (Epoch& e : previous_) {
    if (e.number == number) return &e;  // a lagging link (§6)
  }
  return nullptr;
}

void ReceiveState::commit(std::optional<Epoch>& candidate) {
  if (!candidate) return;
  current_.retired = std::chrono::steady_clock::now();
  previous_.push_front(std::move(current_));
  if (previous_.size() > kKeptEpochs) previous_.pop_back();
  current_ = std::move(*candidate);
  candidate.reset();
}

Bytes ReceiveState::open_frame(const FrameHeader& header, ByteView aad, ByteView body) {
  std::optional<Epoch> candidate;
  Epoch* epoch = keys_for(header.epoch, candidate);
  if (epoch == nullptr) {
    throw ProtocolError(Action::close, Status::bad_request, "key epoch " + std::to_string(header.epoch) + " out of range");
  }
  Bytes plain = srmcp::open_frame(epoch->frame_aead, dir_, header, aad, body);
  commit(candidate);
  return plain;
}

std::pair<MessageHeader, Bytes> ReceiveState::open_message(ByteView sealed) {
  const MessageHeader header = parse_message_header(sealed);
  if (sealed.size() < kMessageHeaderSize + kTagSize) {
    throw ProtocolError(Action::drop, Status::bad_request, "message shorter than header and tag");
  }
  std::optional<Epoch> candidate;
  Epoch* epoch = keys_for(header.epoch, candidate);
  if (epoch == nullptr) throw ProtocolError(Action::drop, Status::bad_request, "message key epoch out of range");
  Bytes body(sealed.size() - kMessageHeaderSize - kTagSize);
  try {
    epoch->message_aead.open_into(crypto::make_nonce(message_prefix(dir_), header.msg_seq),
                                  sealed.first(kMessageHeaderSize), sealed.subspan(kMessageHeaderSize), body);
  } catch (const crypto::Error&) {
    throw ProtocolError(Action::drop, Status::bad_request, "message authentication failed");
  }
  commit(candidate);
  // Only authenticated sequence numbers enter the window, so forgeries cannot poison it.
  if (!window_.accept(header.msg_seq)) {
    throw ProtocolError(Action::reply, Status::replay,
                        "message sequence " + std::to_string(header.msg_seq) + " already seen",
                        header.tid);
  }
  return {header, std::move(body)};
}

}  // namespace pqot::srmcp
