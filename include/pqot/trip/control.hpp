// TRIP's control frames (docs/trip.md §3, §4): what travels inside a path's TLS connection. Codecs
// only; no I/O. Every decoder reads with bounds checks and refuses a trailing byte, a count over
// its limit or a field out of its range with ControlError (docs/trip.md: CLOSE `protocol`).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "pqot/crypto/bytes.hpp"

namespace pqot::trip {

inline constexpr std::uint8_t kVersion = 1;
inline constexpr std::size_t kControlHeaderSize = 3;
inline constexpr std::size_t kMaxControlBody = 4096;
inline constexpr std::size_t kMaxFlowsPerSession = 1024;
inline constexpr std::size_t kMaxCloseReason = 200;

enum class FrameType : std::uint8_t { client_hello = 1, server_hello = 2, ready = 3, ping = 4, pong = 5, close = 6 };

/// docs/trip.md §3.1.
enum class CloseCode : std::uint16_t {
  protocol = 1,
  version = 2,
  kem = 3,
  flows = 4,
  not_allowed = 5,
  busy = 6,
  timeout = 7,
  shutdown = 8,
  replaced = 9,
};
const char* close_code_name(CloseCode c) noexcept;

/// A frame or body that breaks docs/trip.md §3 or §4 (the receiver closes with `protocol`).
class ControlError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// KEM ids (SRMCP's): 1 ML-KEM-768, 2 ML-KEM-1024, 3 X-Wing.
enum class KemId : std::uint16_t { ml_kem_768 = 1, ml_kem_1024 = 2, x_wing = 3 };

/// Who reflects a flow on a path: 0 the client (the server filters), 1 the server.
enum class FlowDirection : std::uint8_t { client_reflects = 0, server_reflects = 1 };

struct SessionFlow {
  std::uint16_t flow = 0;
  FlowDirection dir = FlowDirection::client_reflects;
  friend auto operator<=>(const SessionFlow&, const SessionFlow&) = default;
};

struct ClientHello {
  std::uint8_t version = kVersion;
  std::uint16_t kem = static_cast<std::uint16_t>(KemId::ml_kem_768);
  crypto::Bytes ek;
  std::array<std::uint8_t, 32> random{};
  std::uint64_t boot = 0;
  std::uint8_t path = 0;
  std::vector<SessionFlow> flows;  ///< strictly increasing, flow ids 1..65535
};

struct ServerHello {
  std::uint8_t version = kVersion;
  std::uint16_t kem = static_cast<std::uint16_t>(KemId::ml_kem_768);
  crypto::Bytes ct;
  std::array<std::uint8_t, 32> random{};
  std::uint64_t boot = 0;
  std::uint8_t session = 0;
  std::uint32_t key_update_datagrams = 1u << 24;
  std::uint32_t key_update_seconds = 3600;
  std::uint32_t keepalive_ms = 1000;
  std::uint32_t dead_after_ms = 5000;
};

struct Close {
  CloseCode code = CloseCode::protocol;
  std::string reason;  ///< at most kMaxCloseReason bytes; printed escaped
};

/// type || length (u16 BE) || body. Throws std::invalid_argument for a body over kMaxControlBody.
crypto::Bytes control_frame(FrameType type, crypto::ByteView body);

crypto::Bytes encode(const ClientHello& h);
crypto::Bytes encode(const ServerHello& h);
crypto::Bytes encode(const Close& c);
/// The decoders check structure and ranges: a CLIENT_HELLO's boot non-zero and flows in order;
/// a SERVER_HELLO's boot non-zero and each parameter in its range (docs/trip.md §4.2). The
/// version is returned, not checked: a CLIENT_HELLO of another version is CLOSE `version`.
ClientHello decode_client_hello(crypto::ByteView body);
ServerHello decode_server_hello(crypto::ByteView body);
Close decode_close(crypto::ByteView body);

/// Splits a byte stream into frames. feed() the bytes read; next() returns the next whole frame
/// or nothing yet. Throws ControlError for an unknown type or a length over kMaxControlBody, as
/// soon as the three header bytes are there. Holds at most one frame's bytes plus what was fed.
class FrameReader {
 public:
  struct Frame {
    FrameType type;
    crypto::Bytes body;
  };
  void feed(crypto::ByteView bytes) { buffer_.insert(buffer_.end(), bytes.begin(), bytes.end()); }
  std::optional<Frame> next();
  std::size_t buffered() const noexcept { return buffer_.size() - start_; }

 private:
  crypto::Bytes buffer_;
  std::size_t start_ = 0;
};

/// The body sizes of the fixed-size frames.
inline constexpr std::size_t kReadyBodySize = 32;
inline constexpr std::size_t kPingBodySize = 8;

}  // namespace pqot::trip
