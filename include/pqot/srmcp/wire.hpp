// SRMCP v2 wire format (docs/srmcp.md): pre-header, frame header, segment, message header and the
// handshake bodies, with their limits. Pure encoding and decoding: no I/O, no keys.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "pqot/crypto/bytes.hpp"

namespace pqot::srmcp {

// The project's one byte-container type (pqot/crypto/bytes.hpp).
using crypto::Bytes;
using crypto::ByteView;

/// The frame format version (§3), in every frame header. The hello's protocol versions (§4) are 2
/// (JSON bodies) and 3 (compact bodies, §9.2); both use this frame format.
inline constexpr std::uint8_t kVersion = 2;
inline constexpr std::uint8_t kVersionCompact = 3;
inline constexpr std::size_t kPreHeaderSize = 8;       // §3
inline constexpr std::size_t kFrameHeaderSize = 32;    // §3
inline constexpr std::size_t kSegmentHeaderSize = 24;  // §8.2
inline constexpr std::size_t kMessageHeaderSize = 24;  // §9
inline constexpr std::size_t kTagSize = 16;
inline constexpr std::size_t kRandomSize = 32;

/// Status codes carried in message headers and per-node results (§11).
enum class Status : std::uint16_t {
  ok = 0,
  bad_request = 1,
  unknown_node = 2,
  type_mismatch = 3,
  not_writable = 4,
  not_readable = 5,
  access_denied = 6,
  too_large = 7,
  timeout = 8,
  wrong_phase = 9,
  replay = 10,
  stale_timestamp = 11,
  too_many_links = 12,
  busy = 13,
  unknown_subscription = 14,
  backend_error = 15,
  internal = 16,
  shutting_down = 17,
  device_exception = 18,
};
/// Upper-case name as in §11 ("UNKNOWN_NODE"), or "STATUS_<n>" for codes this version lacks.
std::string status_name(Status s);

/// Frame types (§3).
enum class FrameType : std::uint8_t {
  client_hello = 1,
  server_hello = 2,
  hello_retry = 3,
  hello_refused = 4,
  sealed = 16,
  link_bind = 17,
  link_ready = 18,
};

/// Message types (§9).
enum class MessageType : std::uint8_t {
  session_ready = 0x01,
  browse = 0x10,
  read = 0x11,
  write = 0x12,
  subscribe = 0x13,
  unsubscribe = 0x14,
  ping = 0x15,
  close = 0x16,
  link_request = 0x20,
  link_close = 0x23,
  notification = 0x30,
  error = 0x7f,
};
std::string_view message_type_name(MessageType t);

/// The body encodings a session may use (§4, §9.2). The value is the protocol version octet that
/// names it in CLIENT_HELLO and SERVER_HELLO.
enum class BodyEncoding : std::uint8_t { json = kVersion, compact = kVersionCompact };
/// "json", "compact"
std::string_view encoding_name(BodyEncoding e);
std::optional<BodyEncoding> parse_encoding_name(std::string_view name);
/// The encoding a hello version octet names; nullopt for one this implementation does not know.
std::optional<BodyEncoding> encoding_of_version(std::uint8_t version);
/// Whether a message of `type` has a compact body (§9.2) in a session using `e`: READ and WRITE
/// (requests and responses) and NOTIFICATION, with `e` compact. ERROR and the others stay JSON.
bool has_compact_body(BodyEncoding e, MessageType type);

/// KEM identifiers of CLIENT_HELLO / SERVER_HELLO (§4).
enum class KemId : std::uint16_t { ml_kem_768 = 1, ml_kem_1024 = 2, x_wing = 3 };
/// "ML-KEM-768", ... (the names of pqot::crypto::kem_by_name); nullopt for an unknown id.
std::optional<std::string_view> kem_name(KemId id);
std::optional<KemId> kem_id(std::string_view name);

/// Configurable limits (§12). Both sides use the same structure.
struct Limits {
  std::uint32_t max_frame_body = 65536;
  std::uint32_t max_message = 1u << 20;
  std::uint16_t max_segments = 16;
  std::uint16_t max_reassemblies = 64;
  std::uint32_t max_nodes_per_request = 256;
  std::uint32_t max_json_depth = 32;
  std::uint16_t max_links = 8;
};
inline constexpr std::uint32_t kMaxFrameBodyCeiling = 16u << 20;

/// What a receiver must do about bad input (§3, §8.2, §9).
enum class Action {
  close,  ///< silent close of the link (or the session, on the control connection)
  drop,   ///< ignore this segment or message; the link stays up
  reply,  ///< answer the transaction with an ERROR of `status`
};

class ProtocolError : public std::runtime_error {
 public:
  ProtocolError(Action action, Status status, const std::string& what, std::uint32_t tid = 0)
      : std::runtime_error(what), action_(action), status_(status), tid_(tid) {}
  Action action() const noexcept { return action_; }
  Status status() const noexcept { return status_; }
  /// The transaction to answer, for Action::reply (0 if unknown).
  std::uint32_t tid() const noexcept { return tid_; }

 private:
  Action action_;
  Status status_;
  std::uint32_t tid_;
};

// ---- §3 frames ----------------------------------------------------------------------------------

struct PreHeader {
  std::uint32_t header_len = kFrameHeaderSize;
  std::uint32_t body_len = 0;
};
/// Checks the lengths against the limits before anything is allocated; throws
/// ProtocolError{close} for a header length other than 32 or a body over max_frame_body.
PreHeader parse_pre_header(std::span<const std::uint8_t, kPreHeaderSize> bytes, const Limits& limits);
void encode_pre_header(const PreHeader& p, std::span<std::uint8_t, kPreHeaderSize> out) noexcept;

struct FrameHeader {
  FrameType type = FrameType::sealed;
  std::uint32_t link_id = 0;
  std::uint64_t seq = 0;
  std::uint32_t epoch = 0;
};
/// Throws ProtocolError{close} for a wrong version, unknown type, non-zero flags or reserved bytes.
FrameHeader parse_frame_header(std::span<const std::uint8_t, kFrameHeaderSize> bytes);
void encode_frame_header(const FrameHeader& h, std::span<std::uint8_t, kFrameHeaderSize> out) noexcept;

// ---- §8.2 segments -----------------------------------------------------------------------------

struct SegmentHeader {
  std::uint32_t tid = 0;
  std::uint64_t msg_seq = 0;
  std::uint16_t index = 0;
  std::uint16_t count = 1;
  std::uint32_t total = 0;
  std::uint32_t offset = 0;
};
struct Segment {
  SegmentHeader header;
  ByteView data;  ///< view into the frame plaintext
};
/// Parses a segment and checks it on its own (count, total, offset, sizes; §8.2). Throws
/// ProtocolError{drop}.
Segment parse_segment(ByteView plaintext, const Limits& limits);
void encode_segment_header(const SegmentHeader& h, Bytes& out);
/// Segment i's [offset, offset+size) when `total` bytes are split in `count` parts (§8.2).
std::pair<std::uint32_t, std::uint32_t> segment_span(std::uint32_t total, std::uint16_t count,
                                                     std::uint16_t index) noexcept;

// ---- §9 messages -------------------------------------------------------------------------------

struct MessageHeader {
  MessageType type = MessageType::ping;
  bool response = false;
  Status status = Status::ok;
  std::uint32_t tid = 0;
  std::uint64_t msg_seq = 0;
  std::uint32_t epoch = 0;
  std::uint32_t timestamp_s = 0;
};
/// Throws ProtocolError{drop} for reserved flag bits or a header that is too short. The type is
/// not checked here (an unknown type is answered with WRONG_PHASE by the session).
MessageHeader parse_message_header(ByteView bytes);
void encode_message_header(const MessageHeader& h, std::span<std::uint8_t, kMessageHeaderSize> out) noexcept;

// ---- §4 handshake bodies -----------------------------------------------------------------------

struct ClientHello {
  std::vector<std::uint8_t> versions{kVersion};
  std::vector<KemId> kems{KemId::ml_kem_768};
  KemId kem = KemId::ml_kem_768;
  Bytes ek;
  std::array<std::uint8_t, kRandomSize> client_random{};
};
Bytes encode(const ClientHello& h);
/// Throws ProtocolError{close} for anything malformed: counts out of range, a length past the end,
/// trailing bytes, `kem` not among `kems`, an unknown KEM id. The ek's own check is the caller's.
ClientHello parse_client_hello(ByteView body);

struct ServerHello {
  std::uint8_t version = kVersion;  ///< the protocol version chosen: 2 or 3 (§4)
  KemId kem = KemId::ml_kem_768;
  Bytes ct;
  std::array<std::uint8_t, kRandomSize> server_random{};
  std::uint64_t session_id = 0;
  std::uint32_t max_frame_body = 65536;
  std::uint16_t max_links = 8;
  std::uint32_t key_update_messages = 1u << 20;
  std::uint32_t key_update_seconds = 3600;
  std::uint32_t timestamp_window_ms = 30000;
};
Bytes encode(const ServerHello& h);
ServerHello parse_server_hello(ByteView body);

Bytes encode_hello_retry(KemId kem);
KemId parse_hello_retry(ByteView body);

/// HELLO_REFUSED (§4): why the server shares nothing with the client's hello, and what it accepts.
struct HelloRefused {
  enum class Reason : std::uint8_t { no_common_version = 1, no_common_kem = 2 };
  Reason reason = Reason::no_common_version;
  std::vector<std::uint8_t> versions;  ///< the server's protocol versions, in its order (1..8)
  std::vector<KemId> kems;             ///< the server's KEMs, in its order (1..8)
};
Bytes encode(const HelloRefused& r);
/// Throws ProtocolError{close} for anything malformed (an unknown reason, counts outside 1..8,
/// trailing bytes); unknown version octets and KEM ids are kept (a newer server may list them).
HelloRefused parse_hello_refused(ByteView body);
/// For messages about a hello: "compact, json" for version octets (unknown ones as "version N"),
/// "ML-KEM-768, X-Wing" for KEM ids (unknown ones as "KEM N").
std::string hello_list_text(const std::vector<std::uint8_t>& versions);
std::string hello_list_text(const std::vector<KemId>& kems);

/// LINK_BIND plaintext (§7): session id and proof.
struct LinkBind {
  std::uint64_t session_id = 0;
  std::array<std::uint8_t, 32> proof{};
};
Bytes encode(const LinkBind& b);
LinkBind parse_link_bind(ByteView plaintext);

}  // namespace pqot::srmcp
