// docs/srup-pq.md section 2.7: the bodies with key fields, whose lengths the suite fixes (joins,
// sessions, telemetry keys, reader sets, key rotation).
#include <string>

#include "body_io.hpp"
#include "pqot/crypto/kem.hpp"
#include "pqot/crypto/signature.hpp"
#include "pqot/srup/body.hpp"
#include "pqot/srup/envelope.hpp"

namespace pqot::srup {

KeySizes key_sizes(Suite suite) {
  const SuiteInfo info = suite_info(suite);
  const WireSizes wire = wire_sizes(suite);
  if (info.legacy) return {0, 0, wire.signature, wire.kem_ciphertext};  // DER SPKI: variable
  return {crypto::signature_by_name(info.signature).public_key_size(),
          crypto::kem_by_name(info.kem).public_key_size(), wire.signature, wire.kem_ciphertext};
}

namespace body_io {

namespace {

PublicKeys read_public_keys(BodyReader& r, Suite suite) {
  const KeySizes sizes = key_sizes(suite);
  PublicKeys k;
  k.signature_public = r.key_bytes(sizes.signature_public, "signature public key");
  k.kem_public = r.key_bytes(sizes.kem_public, "KEM public key");
  return k;
}

void write_public_keys(BodyWriter& w, Suite suite, const PublicKeys& k) {
  const KeySizes sizes = key_sizes(suite);
  w.key(k.signature_public, sizes.signature_public, "signature public key");
  w.key(k.kem_public, sizes.kem_public, "KEM public key");
}

// A suite byte inside a body (Join Command, Reader Set): one this version defines.
Suite read_suite(BodyReader& r, const char* what) {
  const auto info = suite_info(r.u8(what));
  if (!info) refuse(std::string(what) + " is not a defined suite");
  return info->suite;
}

void write_suite(BodyWriter& w, Suite suite, const char* what) {
  if (!suite_info(static_cast<std::uint8_t>(suite))) {
    sender_bug(std::string(what) + " is not a defined suite");
  }
  w.u8(static_cast<std::uint8_t>(suite));
}

bool session_limits_valid(std::uint32_t messages, std::uint32_t seconds) {
  return messages >= 1 && messages <= kMaxSessionMessages && seconds >= 1 &&
         seconds <= kMaxSessionSeconds;
}

bool checkpoint_interval_valid(std::uint16_t messages, std::uint16_t seconds) {
  return messages >= 1 && messages <= kMaxCheckpointMessages && seconds >= 1 &&
         seconds <= kMaxCheckpointSeconds;
}

bool readers_valid(const std::vector<Reader>& readers) {
  if (readers.empty() || readers.size() > kMaxReaders) return false;
  for (std::size_t i = 0; i < readers.size(); ++i) {
    if (!valid_peer_id(readers[i].id)) return false;
    if (i > 0 && readers[i].id <= readers[i - 1].id) return false;  // ascending: one spelling
  }
  return true;
}

TelemetryKey read_telemetry_key(BodyReader& r) {
  TelemetryKey b;
  b.epoch = r.u32("key epoch");
  // Straight from the (wiping) plaintext into wiping storage: no other copy is made.
  const ByteView key = r.take(kTelemetryKeySize, "telemetry key");
  b.key.assign(key.begin(), key.end());
  b.checkpoint_messages = r.u16("checkpoint messages");
  b.checkpoint_seconds = r.u16("checkpoint seconds");
  if (!checkpoint_interval_valid(b.checkpoint_messages, b.checkpoint_seconds)) {
    refuse("checkpoint interval out of range");
  }
  return b;
}

ReaderSet read_reader_set(BodyReader& r) {
  ReaderSet b;
  const std::size_t count = r.u8("reader count");
  if (count == 0 || count > kMaxReaders) refuse("reader set needs 1..16 readers");
  b.readers.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    Reader reader;
    reader.id = r.peer_id("reader ID");
    reader.suite = read_suite(r, "reader suite");
    reader.kem_public = r.key_bytes(key_sizes(reader.suite).kem_public, "reader KEM public key");
    b.readers.push_back(std::move(reader));
  }
  if (!readers_valid(b.readers)) refuse("reader IDs not in strictly ascending order");
  return b;
}

}  // namespace

Body decode_key_body(MessageType type, Suite suite, BodyReader& r) {
  const KeySizes sizes = key_sizes(suite);
  switch (type) {
    case MessageType::join_request:
    case MessageType::human_join_request:
      return JoinRequest{read_public_keys(r, suite)};
    case MessageType::observed_join_request: {
      ObservedJoinRequest b;
      b.keys = read_public_keys(r, suite);
      b.observer = r.peer_id("observer ID");
      return b;
    }
    case MessageType::join_command: {
      JoinCommand b;
      b.c2_id = r.peer_id("C2 ID");
      b.suite = read_suite(r, "C2 suite");
      b.keys = read_public_keys(r, b.suite);  // the new C2's suite, not the envelope's
      return b;
    }
    case MessageType::session_offer: {
      SessionOffer b;
      b.ephemeral_public = r.key_bytes(sizes.kem_public, "ephemeral KEM public key");
      b.session_id = r.array<8>("session ID");
      b.max_messages = r.u32("maximum messages");
      b.max_epoch_seconds = r.u32("maximum epoch seconds");
      if (!session_limits_valid(b.max_messages, b.max_epoch_seconds)) {
        refuse("session limits out of range");
      }
      return b;
    }
    case MessageType::session_accept: {
      SessionAccept b;
      b.session_id = r.array<8>("session ID");
      b.kem_ciphertext = r.key_bytes(sizes.kem_ciphertext, "KEM ciphertext");
      b.offer_hash = r.array<32>("offer hash");
      return b;
    }
    case MessageType::telemetry_key:
      return read_telemetry_key(r);
    case MessageType::reader_set:
      return read_reader_set(r);
    case MessageType::key_rotation: {
      KeyRotation b;
      b.keys = read_public_keys(r, suite);
      b.new_key_signature = r.key_bytes(sizes.signature, "new key signature");
      return b;
    }
    default:
      break;
  }
  sender_bug("not a body with key fields");  // unreachable from decode_body
}

void encode_key_body(MessageType type, Suite suite, const Body& body, BodyWriter& w) {
  const KeySizes sizes = key_sizes(suite);
  switch (type) {
    case MessageType::join_request:
    case MessageType::human_join_request:
      write_public_keys(w, suite, expect<JoinRequest>(body, type).keys);
      return;
    case MessageType::observed_join_request: {
      const auto& b = expect<ObservedJoinRequest>(body, type);
      write_public_keys(w, suite, b.keys);
      w.peer_id(b.observer, "observer ID");
      return;
    }
    case MessageType::join_command: {
      const auto& b = expect<JoinCommand>(body, type);
      w.peer_id(b.c2_id, "C2 ID");
      write_suite(w, b.suite, "C2 suite");
      write_public_keys(w, b.suite, b.keys);
      return;
    }
    case MessageType::session_offer: {
      const auto& b = expect<SessionOffer>(body, type);
      if (!session_limits_valid(b.max_messages, b.max_epoch_seconds)) {
        sender_bug("session limits out of range");
      }
      w.key(b.ephemeral_public, sizes.kem_public, "ephemeral KEM public key");
      w.bytes(b.session_id);
      w.u32(b.max_messages);
      w.u32(b.max_epoch_seconds);
      return;
    }
    case MessageType::session_accept: {
      const auto& b = expect<SessionAccept>(body, type);
      w.bytes(b.session_id);
      w.key(b.kem_ciphertext, sizes.kem_ciphertext, "KEM ciphertext");
      w.bytes(b.offer_hash);
      return;
    }
    case MessageType::telemetry_key: {
      const auto& b = expect<TelemetryKey>(body, type);
      if (b.key.size() != kTelemetryKeySize) sender_bug("telemetry key is not 32 bytes");
      if (!checkpoint_interval_valid(b.checkpoint_messages, b.checkpoint_seconds)) {
        sender_bug("checkpoint interval out of range");
      }
      w.u32(b.epoch);
      w.bytes(b.key);
      w.u16(b.checkpoint_messages);
      w.u16(b.checkpoint_seconds);
      return;
    }
    case MessageType::reader_set: {
      const auto& b = expect<ReaderSet>(body, type);
      if (!readers_valid(b.readers)) {
        sender_bug("reader set needs 1..16 readers with valid IDs in strictly ascending order");
      }
      w.u8(static_cast<std::uint8_t>(b.readers.size()));
      for (const Reader& reader : b.readers) {
        w.u64(reader.id);
        write_suite(w, reader.suite, "reader suite");
        w.key(reader.kem_public, key_sizes(reader.suite).kem_public, "reader KEM public key");
      }
      return;
    }
    case MessageType::key_rotation: {
      const auto& b = expect<KeyRotation>(body, type);
      write_public_keys(w, suite, b.keys);
      w.key(b.new_key_signature, sizes.signature, "new key signature");
      return;
    }
    default:
      break;
  }
  sender_bug("not a body with key fields");
}

}  // namespace body_io

}  // namespace pqot::srup
