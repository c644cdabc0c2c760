// TRIP's control frames (docs/trip.md §3, §4).
#include "pqot/trip/control.hpp"

#include <algorithm>

#include "pqot/common/byte_io.hpp"

namespace pqot::trip {

namespace {

using common::ByteReader;
using common::ByteWriter;

void need(bool ok, const char* what) {
  if (!ok) throw ControlError(what);
}

// Runs a decoder, turning a read past the end into ControlError, and refuses trailing bytes.
template <class F>
auto decode_all(crypto::ByteView body, const char* what, F&& f) {
  ByteReader r(body);
  try {
    auto out = f(r);
    if (!r.empty()) throw ControlError(std::string(what) + ": trailing bytes");
    return out;
  } catch (const common::Underflow&) {
    throw ControlError(std::string(what) + ": truncated");
  }
}

// A field of at most 65,535 bytes after its u16 length.
void put_bytes16(common::ByteWriter& w, crypto::ByteView v) {
  if (v.size() > 0xffff) throw std::invalid_argument("TRIP control: a field over 65,535 bytes");
  w.u16(static_cast<std::uint16_t>(v.size())).bytes(v);
}

crypto::Bytes bytes16(ByteReader& r) {
  const auto s = r.bytes(r.u16());
  return {s.begin(), s.end()};
}

template <std::size_t N>
std::array<std::uint8_t, N> fixed(ByteReader& r) {
  std::array<std::uint8_t, N> a{};
  const auto s = r.bytes(N);
  std::copy(s.begin(), s.end(), a.begin());
  return a;
}

void check_flows(const std::vector<SessionFlow>& flows) {
  if (flows.size() > kMaxFlowsPerSession) throw ControlError("CLIENT_HELLO: more than 1,024 flows");
  for (std::size_t i = 0; i < flows.size(); ++i) {
    need(flows[i].flow != 0, "CLIENT_HELLO: flow 0");
    need(flows[i].dir == FlowDirection::client_reflects || flows[i].dir == FlowDirection::server_reflects,
         "CLIENT_HELLO: a flow direction other than 0 or 1");
    need(i == 0 || flows[i - 1] < flows[i], "CLIENT_HELLO: flows not strictly increasing");
  }
}

void check_server_params(const ServerHello& h) {
  need(h.boot != 0, "SERVER_HELLO: boot 0");
  need(h.key_update_datagrams >= 1, "SERVER_HELLO: key_update_datagrams 0");
  need(h.key_update_seconds >= 1 && h.key_update_seconds <= 86'400, "SERVER_HELLO: key_update_seconds outside 1..86400");
  need(h.keepalive_ms >= 50 && h.keepalive_ms <= 60'000, "SERVER_HELLO: keepalive_ms outside 50..60000");
  need(h.dead_after_ms > 2ull * h.keepalive_ms && h.dead_after_ms <= 600'000,
       "SERVER_HELLO: dead_after_ms not above twice keepalive_ms, or over 600000");
}

}  // namespace

const char* close_code_name(CloseCode c) noexcept {
  switch (c) {
    case CloseCode::protocol: return "protocol";
    case CloseCode::version: return "version";
    case CloseCode::kem: return "kem";
    case CloseCode::flows: return "flows";
    case CloseCode::not_allowed: return "not_allowed";
    case CloseCode::busy: return "busy";
    case CloseCode::timeout: return "timeout";
    case CloseCode::shutdown: return "shutdown";
    case CloseCode::replaced: return "replaced";
  }
  return "unknown";
}

crypto::Bytes control_frame(FrameType type, crypto::ByteView body) {
  if (body.size() > kMaxControlBody) throw std::invalid_argument("TRIP control frame body over 4,096 bytes");
  crypto::Bytes f;
  f.reserve(kControlHeaderSize + body.size());
  ByteWriter(f).u8(static_cast<std::uint8_t>(type)).u16(static_cast<std::uint16_t>(body.size())).bytes(body);
  return f;
}

crypto::Bytes encode(const ClientHello& h) {
  if (h.boot == 0) throw std::invalid_argument("CLIENT_HELLO: boot 0");
  check_flows(h.flows);
  crypto::Bytes b;
  ByteWriter w(b);
  w.u8(h.version).u16(h.kem);
  put_bytes16(w, h.ek);
  w.bytes(h.random).u64(h.boot).u8(h.path).u16(static_cast<std::uint16_t>(h.flows.size()));
  for (const SessionFlow& f : h.flows) w.u16(f.flow).u8(static_cast<std::uint8_t>(f.dir));
  return b;
}

ClientHello decode_client_hello(crypto::ByteView body) {
  return decode_all(body, "CLIENT_HELLO", [](ByteReader& r) {
    ClientHello h;
    h.version = r.u8();
    h.kem = r.u16();
    h.ek = bytes16(r);
    h.random = fixed<32>(r);
    h.boot = r.u64();
    need(h.boot != 0, "CLIENT_HELLO: boot 0");
    h.path = r.u8();
    const std::uint16_t n = r.u16();
    need(n <= kMaxFlowsPerSession, "CLIENT_HELLO: more than 1,024 flows");
    h.flows.reserve(n);
    for (std::uint16_t i = 0; i < n; ++i) {
      SessionFlow f;
      f.flow = r.u16();
      f.dir = static_cast<FlowDirection>(r.u8());
      h.flows.push_back(f);
    }
    check_flows(h.flows);
    return h;
  });
}

crypto::Bytes encode(const ServerHello& h) {
  check_server_params(h);
  crypto::Bytes b;
  ByteWriter w(b);
  w.u8(h.version).u16(h.kem);
  put_bytes16(w, h.ct);
  w.bytes(h.random).u64(h.boot).u8(h.session);
  w.u32(h.key_update_datagrams).u32(h.key_update_seconds).u32(h.keepalive_ms).u32(h.dead_after_ms);
  return b;
}

ServerHello decode_server_hello(crypto::ByteView body) {
  return decode_all(body, "SERVER_HELLO", [](ByteReader& r) {
    ServerHello h;
    h.version = r.u8();
    h.kem = r.u16();
    h.ct = bytes16(r);
    h.random = fixed<32>(r);
    h.boot = r.u64();
    h.session = r.u8();
    h.key_update_datagrams = r.u32();
    h.key_update_seconds = r.u32();
    h.keepalive_ms = r.u32();
    h.dead_after_ms = r.u32();
    check_server_params(h);
    return h;
  });
}

crypto::Bytes encode(const Close& c) {
  const std::size_t n = std::min(c.reason.size(), kMaxCloseReason);
  crypto::Bytes b;
  b.reserve(3 + n);  // also keeps GCC 12 at -O3 from a false -Wstringop-overflow in the copy below
  ByteWriter(b).u16(static_cast<std::uint16_t>(c.code)).u8(static_cast<std::uint8_t>(n)).bytes(std::string_view(c.reason).substr(0, n));
  return b;
}

Close decode_close(crypto::ByteView body) {
  return decode_all(body, "CLOSE", [](ByteReader& r) {
    Close c;
    c.code = static_cast<CloseCode>(r.u16());  // an unknown code is kept: it is logged as a number
    const std::uint8_t n = r.u8();
    need(n <= kMaxCloseReason, "CLOSE: reason over 200 bytes");
    const auto s = r.bytes(n);
    c.reason.assign(s.begin(), s.end());
    return c;
  });
}

std::optional<FrameReader::Frame> FrameReader::next() {
  if (buffered() < kControlHeaderSize) return std::nullopt;
  const std::uint8_t* p = buffer_.data() + start_;
  if (p[0] < static_cast<std::uint8_t>(FrameType::client_hello) || p[0] > static_cast<std::uint8_t>(FrameType::close)) {
    throw ControlError("control frame of unknown type " + std::to_string(p[0]));
  }
  const std::size_t length = static_cast<std::size_t>(p[1]) << 8 | p[2];
  if (length > kMaxControlBody) throw ControlError("control frame body over 4,096 bytes");
  if (buffered() < kControlHeaderSize + length) return std::nullopt;
  Frame f{static_cast<FrameType>(p[0]), crypto::Bytes(p + kControlHeaderSize, p + kControlHeaderSize + length)};
  start_ += kControlHeaderSize + length;
  if (start_ == buffer_.size()) {
    buffer_.clear();
    start_ = 0;
  } else if (start_ > kMaxControlBody) {
    buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(start_));
    start_ = 0;
  }
  return f;
}

}  // namespace pqot::trip
