// docs/srup-pq.md section 2: the envelope layout, parsed with every length bounded first.
#include "pqot/srup/envelope.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>

#include "pqot/common/byte_io.hpp"
#include "pqot/crypto/hash.hpp"
#include "pqot/crypto/kem.hpp"
#include "pqot/crypto/signature.hpp"

namespace pqot::srup {

namespace {

constexpr std::uint64_t kAllOnes = ~std::uint64_t{0};
constexpr std::size_t kRsa2048Bytes = 256;

// The shared bounds-checked reader (common/byte_io.hpp), with each refusal naming its field. Not
// "Reader": the unity build joins this file with body.hpp, whose Reader is a telemetry reader.
class EnvelopeReader {
 public:
  explicit EnvelopeReader(ByteView data) : r_(data), size_(data.size()) {}
  std::size_t remaining() const noexcept { return r_.remaining(); }
  std::size_t position() const noexcept { return size_ - r_.remaining(); }
  ByteView take(std::size_t n, const char* what) {
    if (n > r_.remaining()) {
      throw Refused(Refusal::malformed, std::string(what) + " runs past the end");
    }
    return r_.bytes(n);
  }
  std::uint8_t u8(const char* what) { return take(1, what)[0]; }
  std::uint64_t be(std::size_t n, const char* what) {
    std::uint64_t v = 0;
    for (std::uint8_t b : take(n, what)) v = v << 8 | b;
    return v;
  }

 private:
  common::ByteReader r_;
  std::size_t size_;
};

bool mode_allowed(MessageType type, Mode mode) {
  return mode == required_mode(type) || (mode == Mode::session && allows_session(type));
}

// Recipient 0 means "every reader of the sender": telemetry (mode 3) and its signed Checkpoints
// (section 5.2); nothing else may use it.
bool addressed_to_readers(const Header& h) {
  return h.mode == Mode::telemetry_group || h.type == MessageType::checkpoint;
}

}  // namespace

TopicTag topic_tag(std::string_view topic) {
  const auto digest = crypto::sha256(crypto::as_bytes(topic));
  TopicTag tag{};
  std::copy_n(digest.begin(), tag.size(), tag.begin());
  return tag;
}

WireSizes wire_sizes(Suite suite) {
  const SuiteInfo info = suite_info(suite);
  if (info.legacy) return {kRsa2048Bytes, kRsa2048Bytes};
  return {crypto::signature_by_name(info.signature).signature_size(),
          crypto::kem_by_name(info.kem).ciphertext_size()};
}

EnvelopeView parse_envelope(ByteView wire) {
  if (wire.size() > kMaxEnvelope) {
    throw Refused(Refusal::malformed, "envelope of " + std::to_string(wire.size()) +
                                          " bytes exceeds " + std::to_string(kMaxEnvelope));
  }
  EnvelopeReader r(wire);
  EnvelopeView v;
  Header& h = v.header;
  const ByteView magic = r.take(kMagic.size(), "magic");
  if (!std::equal(magic.begin(), magic.end(), kMagic.begin())) {
    throw Refused(Refusal::malformed, "not an SRUP-PQ envelope (magic)");
  }
  if (r.u8("version") != kVersion) throw Refused(Refusal::malformed, "unsupported version");
  const auto type = message_type(r.u8("type"));
  if (!type) throw Refused(Refusal::malformed, "unknown or out-of-scope message type");
  h.type = *type;
  const auto suite = suite_info(r.u8("suite"));
  if (!suite) throw Refused(Refusal::unsupported_suite, "unknown suite");
  h.suite = suite->suite;
  const std::uint8_t mode = r.u8("mode");
  if (mode > static_cast<std::uint8_t>(Mode::telemetry_group) ||
      !mode_allowed(h.type, static_cast<Mode>(mode))) {
    throw Refused(Refusal::malformed, "mode not allowed for " + std::string(to_string(h.type)));
  }
  h.mode = static_cast<Mode>(mode);
  h.sender = r.be(8, "sender");
  h.recipient = r.be(8, "recipient");
  h.sequence = r.be(8, "sequence");
  h.timestamp_ms = r.be(8, "timestamp");
  h.lifetime_ms = static_cast<std::uint32_t>(r.be(4, "lifetime"));
  const ByteView tag = r.take(h.topic.size(), "topic tag");
  std::copy(tag.begin(), tag.end(), h.topic.begin());
  if (h.sender == 0 || h.sender == kAllOnes)
    throw Refused(Refusal::malformed, "reserved sender ID");
  if (h.recipient == kAllOnes || (h.recipient == 0) != addressed_to_readers(h)) {
    throw Refused(Refusal::malformed, "recipient ID not valid for the mode");
  }
  if (h.lifetime_ms == 0 || h.lifetime_ms > kMaxLifetimeMs) {
    throw Refused(Refusal::malformed, "lifetime out of range");
  }
  const std::size_t token_length = r.u8("token length");
  if (token_length > kMaxToken) throw Refused(Refusal::malformed, "token longer than 64 bytes");
  const ByteView token = r.take(token_length, "token");
  h.token.assign(token.begin(), token.end());
  const std::size_t body_length = r.be(2, "body length");
  v.header_bytes = wire.first(r.position());

  const WireSizes sizes = wire_sizes(h.suite);
  switch (h.mode) {
    case Mode::signed_clear:
      v.body = r.take(body_length, "body");
      break;
    case Mode::sealed:
      v.kem_ciphertext = r.take(sizes.kem_ciphertext, "KEM ciphertext");
      if (body_length < kAeadTag)
        throw Refused(Refusal::malformed, "sealed body shorter than its tag");
      v.body = r.take(body_length, "sealed body");
      break;
    case Mode::session:
    case Mode::telemetry_group:
      v.epoch = static_cast<std::uint32_t>(r.be(kEpochSize, "epoch"));
      if (body_length < kAeadTag)
        throw Refused(Refusal::malformed, "sealed body shorter than its tag");
      v.body = r.take(body_length, "sealed body");
      break;
  }
  if (h.mode == Mode::signed_clear || h.mode == Mode::sealed) {
    v.signed_part = wire.first(r.position());
    v.signature = r.take(sizes.signature, "signature");
  }
  if (r.remaining() != 0) throw Refused(Refusal::malformed, "bytes after the envelope");
  return v;
}

Bytes encode_header(const Header& h, std::size_t body_length) {
  if (h.token.size() > kMaxToken)
    throw std::invalid_argument("SRUP-PQ: token longer than 64 bytes");
  if (h.lifetime_ms == 0 || h.lifetime_ms > kMaxLifetimeMs) {
    throw std::invalid_argument("SRUP-PQ: lifetime must be 1 ms .. 7 days");
  }
  if (h.sender == 0 || h.sender == kAllOnes || h.recipient == kAllOnes ||
      (h.recipient == 0) != addressed_to_readers(h)) {
    throw std::invalid_argument("SRUP-PQ: reserved sender or recipient ID for this mode");
  }
  if (!mode_allowed(h.type, h.mode)) {
    throw std::invalid_argument("SRUP-PQ: mode not allowed for " + std::string(to_string(h.type)));
  }
  if (body_length > 0xffff) throw std::invalid_argument("SRUP-PQ: body longer than 65,535 bytes");
  // Written into a fixed buffer (the header is at most 55 + 64 bytes), then copied once.
  std::array<std::uint8_t, kFixedHeader + kMaxToken> buf{};
  std::size_t pos = 0;
  const auto put = [&](std::uint64_t v, std::size_t n) {
    for (std::size_t i = n; i-- > 0;) buf[pos++] = static_cast<std::uint8_t>(v >> (8 * i));
  };
  const auto put_bytes = [&](ByteView bytes) {
    for (std::uint8_t byte : bytes) buf[pos++] = byte;
  };
  put_bytes(kMagic);
  put(kVersion, 1);
  put(static_cast<std::uint8_t>(h.type), 1);
  put(static_cast<std::uint8_t>(h.suite), 1);
  put(static_cast<std::uint8_t>(h.mode), 1);
  put(h.sender, 8);
  put(h.recipient, 8);
  put(h.sequence, 8);
  put(h.timestamp_ms, 8);
  put(h.lifetime_ms, 4);
  put_bytes(h.topic);
  put(h.token.size(), 1);
  put_bytes(h.token);
  put(body_length, 2);
  return Bytes(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(pos));
}

}  // namespace pqot::srup
