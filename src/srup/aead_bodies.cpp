// docs/srup-pq.md section 2.4: the session and telemetry-group bodies, fixed layouts, big-endian.
#include "aead_bodies.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "pqot/crypto/kem.hpp"

namespace pqot::srup::detail {

namespace {

constexpr std::size_t kSessionIdSize = 8;
constexpr std::size_t kDigestSize = 32;
constexpr std::size_t kTelemetryKeySize = 32;

// Writes into a buffer sized once by the caller (no insert after a fixed-size construction).
class BodyWriter {
 public:
  explicit BodyWriter(std::uint8_t* out) : out_(out) {}
  void be(std::uint64_t v, std::size_t n) {
    for (std::size_t i = n; i-- > 0;) out_[pos_++] = static_cast<std::uint8_t>(v >> (8 * i));
  }
  void bytes(ByteView b) {
    if (!b.empty()) std::memcpy(out_ + pos_, b.data(), b.size());
    pos_ += b.size();
  }

 private:
  std::uint8_t* out_;
  std::size_t pos_ = 0;
};

// Reads a body whose total length the caller checked against the layout first.
class BodyReader {
 public:
  explicit BodyReader(ByteView in) : in_(in) {}
  std::uint64_t be(std::size_t n) {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i) v = v << 8 | in_[pos_++];
    return v;
  }
  ByteView bytes(std::size_t n) {
    const ByteView b = in_.subspan(pos_, n);
    pos_ += n;
    return b;
  }

 private:
  ByteView in_;
  std::size_t pos_ = 0;
};

void expect_size(ByteView body, std::size_t size, const char* what) {
  if (body.size() != size) {
    throw Refused(Refusal::bad_request, std::string(what) + " body of " +
                                            std::to_string(body.size()) + " bytes, expected " +
                                            std::to_string(size));
  }
}

const crypto::Kem& session_kem(Suite suite) {
  const SuiteInfo info = suite_info(suite);
  if (info.legacy) throw Refused(Refusal::bad_request, "no sessions in the legacy suite");
  return crypto::kem_by_name(info.kem);
}

}  // namespace

std::size_t session_kem_public_size(Suite suite) { return session_kem(suite).public_key_size(); }
std::size_t session_kem_ciphertext_size(Suite suite) {
  return session_kem(suite).ciphertext_size();
}

Bytes encode_offer(const OfferBody& b) {
  Bytes out(b.ephemeral_public.size() + kSessionIdSize + 8);
  BodyWriter w(out.data());
  w.bytes(b.ephemeral_public);
  w.bytes(b.session_id);
  w.be(b.max_messages, 4);
  w.be(b.max_epoch_seconds, 4);
  return out;
}

OfferBody decode_offer(Suite suite, ByteView body) {
  const std::size_t pk = session_kem_public_size(suite);
  expect_size(body, pk + kSessionIdSize + 8, "Session Offer");
  BodyReader r(body);
  OfferBody b;
  const ByteView ek = r.bytes(pk);
  b.ephemeral_public.assign(ek.begin(), ek.end());
  const ByteView id = r.bytes(kSessionIdSize);
  std::copy(id.begin(), id.end(), b.session_id.begin());
  b.max_messages = static_cast<std::uint32_t>(r.be(4));
  b.max_epoch_seconds = static_cast<std::uint32_t>(r.be(4));
  return b;
}

Bytes encode_accept(const AcceptBody& b) {
  Bytes out(kSessionIdSize + b.kem_ciphertext.size() + kDigestSize);
  BodyWriter w(out.data());
  w.bytes(b.session_id);
  w.bytes(b.kem_ciphertext);
  w.bytes(b.offer_hash);
  return out;
}

AcceptBody decode_accept(Suite suite, ByteView body) {
  const std::size_t ct = session_kem_ciphertext_size(suite);
  expect_size(body, kSessionIdSize + ct + kDigestSize, "Session Accept");
  BodyReader r(body);
  AcceptBody b;
  const ByteView id = r.bytes(kSessionIdSize);
  std::copy(id.begin(), id.end(), b.session_id.begin());
  const ByteView c = r.bytes(ct);
  b.kem_ciphertext.assign(c.begin(), c.end());
  const ByteView h = r.bytes(kDigestSize);
  std::copy(h.begin(), h.end(), b.offer_hash.begin());
  return b;
}

crypto::SecretBytes encode_telemetry_key(const TelemetryKeyBody& b) {
  if (b.key.size() != kTelemetryKeySize) {
    throw std::invalid_argument("SRUP-PQ: a telemetry key is 32 bytes");
  }
  crypto::SecretBytes out(4 + kTelemetryKeySize + 4);
  BodyWriter w(out.data());
  w.be(b.epoch, 4);
  w.bytes(b.key);
  w.be(b.checkpoint_messages, 2);
  w.be(b.checkpoint_seconds, 2);
  return out;
}

TelemetryKeyBody decode_telemetry_key(ByteView body) {
  expect_size(body, 4 + kTelemetryKeySize + 4, "Telemetry Key");
  BodyReader r(body);
  TelemetryKeyBody b;
  b.epoch = static_cast<std::uint32_t>(r.be(4));
  const ByteView k = r.bytes(kTelemetryKeySize);
  b.key.assign(k.begin(), k.end());
  b.checkpoint_messages = static_cast<std::uint16_t>(r.be(2));
  b.checkpoint_seconds = static_cast<std::uint16_t>(r.be(2));
  if (b.checkpoint_messages == 0 || b.checkpoint_seconds == 0) {
    throw Refused(Refusal::bad_request, "Telemetry Key with a zero checkpoint interval");
  }
  return b;
}

Bytes encode_checkpoint(const CheckpointBody& b) {
  Bytes out(4 + 8 + 2 + kDigestSize);
  BodyWriter w(out.data());
  w.be(b.epoch, 4);
  w.be(b.first_sequence, 8);
  w.be(b.count, 2);
  w.bytes(b.digest);
  return out;
}

CheckpointBody decode_checkpoint(ByteView body) {
  expect_size(body, 4 + 8 + 2 + kDigestSize, "Checkpoint");
  BodyReader r(body);
  CheckpointBody b;
  b.epoch = static_cast<std::uint32_t>(r.be(4));
  b.first_sequence = r.be(8);
  b.count = static_cast<std::uint16_t>(r.be(2));
  const ByteView d = r.bytes(kDigestSize);
  std::copy(d.begin(), d.end(), b.digest.begin());
  if (b.count == 0) throw Refused(Refusal::bad_request, "Checkpoint covering nothing");
  return b;
}

}  // namespace pqot::srup::detail
