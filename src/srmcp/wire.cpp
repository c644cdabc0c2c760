#include "pqot/srmcp/wire.hpp"

#include <algorithm>

#include "pqot/common/byte_io.hpp"

namespace pqot::srmcp {

using common::ByteReader;
using common::ByteWriter;

namespace {

[[noreturn]] void fail(Action action, const std::string& what, Status status = Status::bad_request) {
  throw ProtocolError(action, status, what);
}

// Runs a parser over `body`, turning truncation into a ProtocolError of `action`, and refusing
// trailing bytes.
template <class F>
auto parse_whole(ByteView body, Action action, const char* what, F&& f) {
  ByteReader r(body);
  try {
    auto result = f(r);
    if (!r.empty()) fail(action, std::string(what) + ": " + std::to_string(r.remaining()) + " trailing bytes");
    return result;
  } catch (const common::Underflow&) {
    fail(action, std::string(what) + ": truncated");
  }
}

}  // namespace

std::string status_name(Status s) {
  switch (s) {
    case Status::ok: return "OK";
    case Status::bad_request: return "BAD_REQUEST";
    case Status::unknown_node: return "UNKNOWN_NODE";
    case Status::type_mismatch: return "TYPE_MISMATCH";
    case Status::not_writable: return "NOT_WRITABLE";
    case Status::not_readable: return "NOT_READABLE";
    case Status::access_denied: return "ACCESS_DENIED";
    case Status::too_large: return "TOO_LARGE";
    case Status::timeout: return "TIMEOUT";
    case Status::wrong_phase: return "WRONG_PHASE";
    case Status::replay: return "REPLAY";
    case Status::stale_timestamp: return "STALE_TIMESTAMP";
    case Status::too_many_links: return "TOO_MANY_LINKS";
    case Status::busy: return "BUSY";
    case Status::unknown_subscription: return "UNKNOWN_SUBSCRIPTION";
    case Status::backend_error: return "BACKEND_ERROR";
    case Status::internal: return "INTERNAL";
    case Status::shutting_down: return "SHUTTING_DOWN";
    case Status::device_exception: return "DEVICE_EXCEPTION";
  }
  return "STATUS_" + std::to_string(static_cast<unsigned>(s));
}

std::string_view message_type_name(MessageType t) {
  switch (t) {
    case MessageType::session_ready: return "SESSION_READY";
    case MessageType::browse: return "BROWSE";
    case MessageType::read: return "READ";
    case MessageType::write: return "WRITE";
    case MessageType::subscribe: return "SUBSCRIBE";
    case MessageType::unsubscribe: return "UNSUBSCRIBE";
    case MessageType::ping: return "PING";
    case MessageType::close: return "CLOSE";
    case MessageType::link_request: return "LINK_REQUEST";
    case MessageType::link_close: return "LINK_CLOSE";
    case MessageType::notification: return "NOTIFICATION";
    case MessageType::error: return "ERROR";
  }
  return "UNKNOWN";
}

std::optional<std::string_view> kem_name(KemId id) {
  switch (id) {
    case KemId::ml_kem_768: return "ML-KEM-768";
    case KemId::ml_kem_1024: return "ML-KEM-1024";
    case KemId::x_wing: return "X-Wing";
  }
  return std::nullopt;
}

std::optional<KemId> kem_id(std::string_view name) {
  for (KemId id : {KemId::ml_kem_768, KemId::ml_kem_1024, KemId::x_wing}) {
    if (kem_name(id) == name) return id;
  }
  return std::nullopt;
}

// ---- §3 ----------------------------------------------------------------------------------------

PreHeader parse_pre_header(std::span<const std::uint8_t, kPreHeaderSize> bytes, const Limits& limits) {
  PreHeader p;
  p.header_len = common::load_u32(bytes.data());
  p.body_len = common::load_u32(bytes.data() + 4);
  if (p.header_len != kFrameHeaderSize) {
    fail(Action::close, "frame header length " + std::to_string(p.header_len) + " is not 32");
  }
  if (p.body_len > limits.max_frame_body) {
    fail(Action::close, "frame body length " + std::to_string(p.body_len) + " exceeds the limit of " +
                            std::to_string(limits.max_frame_body),
         Status::too_large);
  }
  return p;
}

void encode_pre_header(const PreHeader& p, std::span<std::uint8_t, kPreHeaderSize> out) noexcept {
  common::store_u32(out.data(), p.header_len);
  common::store_u32(out.data() + 4, p.body_len);
}

FrameHeader parse_frame_header(std::span<const std::uint8_t, kFrameHeaderSize> bytes) {
  ByteReader r(bytes);
  FrameHeader h;
  const std::uint8_t version = r.u8();
  if (version != kVersion) fail(Action::close, "frame version " + std::to_string(version));
  const std::uint8_t type = r.u8();
  switch (static_cast<FrameType>(type)) {
    case FrameType::client_hello:
    case FrameType::server_hello:
    case FrameType::hello_retry:
    case FrameType::hello_refused:
    case FrameType::sealed:
    case FrameType::link_bind:
    case FrameType::link_ready:
      h.type = static_cast<FrameType>(type);
      break;
    default:
      fail(Action::close, "unknown frame type " + std::to_string(type));
  }
  if (r.u16() != 0) fail(Action::close, "frame flags must be 0");
  h.link_id = r.u32();
  h.seq = r.u64();
  h.epoch = r.u32();
  const auto reserved = r.bytes(12);
  if (std::any_of(reserved.begin(), reserved.end(), [](std::uint8_t b) { return b != 0; })) {
    fail(Action::close, "frame reserved bytes must be 0");
  }
  return h;
}

void encode_frame_header(const FrameHeader& h, std::span<std::uint8_t, kFrameHeaderSize> out) noexcept {
  std::fill(out.begin(), out.end(), 0);
  out[0] = kVersion;
  out[1] = static_cast<std::uint8_t>(h.type);
  common::store_u32(out.data() + 4, h.link_id);
  common::store_u32(out.data() + 8, static_cast<std::uint32_t>(h.seq >> 32));
  common::store_u32(out.data() + 12, static_cast<std::uint32_t>(h.seq));
  common::store_u32(out.data() + 16, h.epoch);
}

// ---- §8.2 --------------------------------------------------------------------------------------

std::pair<std::uint32_t, std::uint32_t> segment_span(std::uint32_t total, std::uint16_t count,
                                                     std::uint16_t index) noexcept {
  const std::uint32_t base = total / count;
  const std::uint32_t offset = base * index;
  const std::uint32_t size = index + 1 == count ? total - offset : base;
  return {offset, size};
}

Segment parse_segment(ByteView plaintext, const Limits& limits) {
  ByteReader r(plaintext);
  Segment s;
  try {
    s.header.tid = r.u32();
    s.header.msg_seq = r.u64();
    s.header.index = r.u16();
    s.header.count = r.u16();
    s.header.total = r.u32();
    s.header.offset = r.u32();
  } catch (const common::Underflow&) {
    fail(Action::drop, "segment shorter than its header");
  }
  s.data = r.rest();
  const auto& h = s.header;
  if (h.count == 0 || h.count > limits.max_segments) {
    fail(Action::drop, "segment count " + std::to_string(h.count) + " out of range");
  }
  if (h.index >= h.count) fail(Action::drop, "segment index past count");
  if (h.total > limits.max_message) {
    fail(Action::drop, "message size " + std::to_string(h.total) + " over the limit", Status::too_large);
  }
  if (h.total < h.count) fail(Action::drop, "more segments than bytes");
  const auto [offset, size] = segment_span(h.total, h.count, h.index);
  if (h.offset != offset || s.data.size() != size) {
    fail(Action::drop, "segment offset or size inconsistent with total and count");
  }
  return s;
}

void encode_segment_header(const SegmentHeader& h, Bytes& out) {
  ByteWriter(out).u32(h.tid).u64(h.msg_seq).u16(h.index).u16(h.count).u32(h.total).u32(h.offset);
}

// ---- §9 ----------------------------------------------------------------------------------------

MessageHeader parse_message_header(ByteView bytes) {
  if (bytes.size() < kMessageHeaderSize) fail(Action::drop, "message shorter than its header");
  ByteReader r(bytes.first(kMessageHeaderSize));
  MessageHeader h;
  h.type = static_cast<MessageType>(r.u8());
  const std::uint8_t flags = r.u8();
  if ((flags & ~1u) != 0) fail(Action::drop, "reserved message flags set");
  h.response = (flags & 1u) != 0;
  h.status = static_cast<Status>(r.u16());
  h.tid = r.u32();
  h.msg_seq = r.u64();
  h.epoch = r.u32();
  h.timestamp_s = r.u32();
  return h;
}

void encode_message_header(const MessageHeader& h,
                           std::span<std::uint8_t, kMessageHeaderSize> out) noexcept {
  out[0] = static_cast<std::uint8_t>(h.type);
  out[1] = h.response ? 1 : 0;
  out[2] = static_cast<std::uint8_t>(static_cast<std::uint16_t>(h.status) >> 8);
  out[3] = static_cast<std::uint8_t>(static_cast<std::uint16_t>(h.status));
  common::store_u32(out.data() + 4, h.tid);
  common::store_u32(out.data() + 8, static_cast<std::uint32_t>(h.msg_seq >> 32));
  common::store_u32(out.data() + 12, static_cast<std::uint32_t>(h.msg_seq));
  common::store_u32(out.data() + 16, h.epoch);
  common::store_u32(out.data() + 20, h.timestamp_s);
}

// ---- §4 ----------------------------------------------------------------------------------------

namespace {
KemId checked_kem(std::uint16_t raw) {
  const auto id = static_cast<KemId>(raw);
  if (!kem_name(id)) fail(Action::close, "unknown KEM id " + std::to_string(raw));
  return id;
}
}  // namespace

Bytes encode(const ClientHello& h) {
  Bytes out;
  ByteWriter w(out);
  w.u8(static_cast<std::uint8_t>(h.versions.size()));
  for (auto v : h.versions) w.u8(v);
  w.u8(static_cast<std::uint8_t>(h.kems.size()));
  for (auto k : h.kems) w.u16(static_cast<std::uint16_t>(k));
  w.u16(static_cast<std::uint16_t>(h.kem)).u16(static_cast<std::uint16_t>(h.ek.size()));
  w.bytes(h.ek).bytes(h.client_random);
  return out;
}

ClientHello parse_client_hello(ByteView body) {
  return parse_whole(body, Action::close, "CLIENT_HELLO", [](ByteReader& r) {
    ClientHello h;
    const std::uint8_t n_versions = r.u8();
    if (n_versions == 0 || n_versions > 8) fail(Action::close, "CLIENT_HELLO: version count");
    h.versions.clear();
    for (int i = 0; i < n_versions; ++i) h.versions.push_back(r.u8());
    const std::uint8_t n_kems = r.u8();
    if (n_kems == 0 || n_kems > 8) fail(Action::close, "CLIENT_HELLO: KEM count");
    h.kems.clear();
    for (int i = 0; i < n_kems; ++i) h.kems.push_back(checked_kem(r.u16()));
    h.kem = checked_kem(r.u16());
    if (std::find(h.kems.begin(), h.kems.end(), h.kem) == h.kems.end()) {
      fail(Action::close, "CLIENT_HELLO: key share for a KEM not offered");
    }
    const std::uint16_t ek_len = r.u16();
    const auto ek = r.bytes(ek_len);
    h.ek.assign(ek.begin(), ek.end());
    const auto random = r.bytes(kRandomSize);
    std::copy(random.begin(), random.end(), h.client_random.begin());
    return h;
  });
}

Bytes encode(const ServerHello& h) {
  Bytes out;
  ByteWriter w(out);
  w.u8(h.version).u16(static_cast<std::uint16_t>(h.kem)).u16(static_cast<std::uint16_t>(h.ct.size()));
  w.bytes(h.ct).bytes(h.server_random).u64(h.session_id).u32(h.max_frame_body).u16(h.max_links);
  w.u32(h.key_update_messages).u32(h.key_update_seconds).u32(h.timestamp_window_ms);
  return out;
}

ServerHello parse_server_hello(ByteView body) {
  return parse_whole(body, Action::close, "SERVER_HELLO", [](ByteReader& r) {
    ServerHello h;
    h.version = r.u8();
    if (h.version != kVersion && h.version != kVersionCompact) {
      fail(Action::close, "SERVER_HELLO: version " + std::to_string(h.version));
    }
    h.kem = checked_kem(r.u16());
    const std::uint16_t ct_len = r.u16();
    const auto ct = r.bytes(ct_len);
    h.ct.assign(ct.begin(), ct.end());
    const auto random = r.bytes(kRandomSize);
    std::copy(random.begin(), random.end(), h.server_random.begin());
    h.session_id = r.u64();
    if (h.session_id == 0) fail(Action::close, "SERVER_HELLO: session id 0");
    h.max_frame_body = r.u32();
    if (h.max_frame_body < 1024 || h.max_frame_body > kMaxFrameBodyCeiling) {
      fail(Action::close, "SERVER_HELLO: max_frame_body out of range");
    }
    h.max_links = r.u16();
    h.key_update_messages = r.u32();
    h.key_update_seconds = r.u32();
    if (h.key_update_messages == 0 || h.key_update_seconds == 0) {
      fail(Action::close, "SERVER_HELLO: key update bounds must be non-zero");
    }
    h.timestamp_window_ms = r.u32();
    return h;
  });
}

std::string_view encoding_name(BodyEncoding e) { return e == BodyEncoding::compact ? "compact" : "json"; }

std::optional<BodyEncoding> parse_encoding_name(std::string_view name) {
  if (name == "json") return BodyEncoding::json;
  if (name == "compact") return BodyEncoding::compact;
  return std::nullopt;
}

std::optional<BodyEncoding> encoding_of_version(std::uint8_t version) {
  if (version == static_cast<std::uint8_t>(BodyEncoding::json)) return BodyEncoding::json;
  if (version == static_cast<std::uint8_t>(BodyEncoding::compact)) return BodyEncoding::compact;
  return std::nullopt;
}

bool has_compact_body(BodyEncoding e, MessageType type) {
  return e == BodyEncoding::compact &&
         (type == MessageType::read || type == MessageType::write || type == MessageType::notification);
}

Bytes encode_hello_retry(KemId kem) {
  Bytes out;
  ByteWriter(out).u16(static_cast<std::uint16_t>(kem));
  return out;
}

KemId parse_hello_retry(ByteView body) {
  return parse_whole(body, Action::close, "HELLO_RETRY",
                     [](ByteReader& r) { return checked_kem(r.u16()); });
}

Bytes encode(const HelloRefused& h) {
  Bytes out;
  ByteWriter w(out);
  w.u8(static_cast<std::uint8_t>(h.reason));
  w.u8(static_cast<std::uint8_t>(h.versions.size()));
  for (auto v : h.versions) w.u8(v);
  w.u8(static_cast<std::uint8_t>(h.kems.size()));
  for (auto k : h.kems) w.u16(static_cast<std::uint16_t>(k));
  return out;
}

HelloRefused parse_hello_refused(ByteView body) {
  return parse_whole(body, Action::close, "HELLO_REFUSED", [](ByteReader& r) {
    HelloRefused h;
    const std::uint8_t reason = r.u8();
    if (reason != 1 && reason != 2) fail(Action::close, "HELLO_REFUSED: reason " + std::to_string(reason));
    h.reason = static_cast<HelloRefused::Reason>(reason);
    const std::uint8_t n_versions = r.u8();
    if (n_versions == 0 || n_versions > 8) fail(Action::close, "HELLO_REFUSED: version count");
    for (int i = 0; i < n_versions; ++i) h.versions.push_back(r.u8());
    const std::uint8_t n_kems = r.u8();
    if (n_kems == 0 || n_kems > 8) fail(Action::close, "HELLO_REFUSED: KEM count");
    for (int i = 0; i < n_kems; ++i) h.kems.push_back(static_cast<KemId>(r.u16()));
    return h;
  });
}

std::string hello_list_text(const std::vector<std::uint8_t>& versions) {
  std::string out;
  for (auto v : versions) {
    if (!out.empty()) out += ", ";
    const auto e = encoding_of_version(v);
    out += e ? std::string(encoding_name(*e)) : "version " + std::to_string(v);
  }
  return out;
}

std::string hello_list_text(const std::vector<KemId>& kems) {
  std::string out;
  for (auto k : kems) {
    if (!out.empty()) out += ", ";
    const auto n = kem_name(k);
    out += n ? std::string(*n) : "KEM " + std::to_string(static_cast<int>(k));
  }
  return out;
}

Bytes encode(const LinkBind& b) {
  Bytes out;
  ByteWriter(out).u64(b.session_id).bytes(b.proof);
  return out;
}

LinkBind parse_link_bind(ByteView plaintext) {
  return parse_whole(plaintext, Action::close, "LINK_BIND", [](ByteReader& r) {
    LinkBind b;
    b.session_id = r.u64();
    const auto proof = r.bytes(b.proof.size());
    std::copy(proof.begin(), proof.end(), b.proof.begin());
    return b;
  });
}

}  // namespace pqot::srmcp
