// The version-5 wire format (docs/srup-legacy.md, "Layout"): decode, encode and the signed bytes.
// Byte orders as the original writes them (reference section 1): IDs u64 little-endian (its
// getByteVal(x, 0) comes first), lengths u16 big-endian, status and action one byte.
#include <cstdio>
#include <limits>
#include <string>

#include "pqot/common/byte_io.hpp"
#include "pqot/srup/legacy.hpp"

namespace pqot::srup::legacy {

namespace {

// version, type, sequence, sender: the fixed part before the token.
constexpr std::size_t kFixedPrefix = 1 + 1 + 8 + 8;

[[noreturn]] void malformed(const std::string& what) {
  throw LegacyError(Reason::malformed, what);
}

// Reads through common::ByteReader, naming the field in every refusal.
class WireReader {
 public:
  explicit WireReader(ByteView wire) : r_(wire) {}

  std::uint8_t u8(const char* field) {
    need(1, field);
    return r_.u8();
  }
  std::uint16_t u16(const char* field) {
    need(2, field);
    return r_.u16();
  }
  std::uint64_t u64_le(const char* field) {
    need(8, field);
    const ByteView b = r_.bytes(8);
    std::uint64_t v = 0;
    for (std::size_t i = 8; i-- > 0;) v = (v << 8) | b[i];
    return v;
  }
  ByteView bytes(std::size_t n, const char* field) {
    need(n, field);
    return r_.bytes(n);
  }
  /// A u16 big-endian length and that many bytes; the length is checked before anything is copied.
  ByteView field(const char* field) { return bytes(u16(field), field); }
  Bytes field_bytes(const char* name) {
    const ByteView b = field(name);
    return Bytes(b.begin(), b.end());
  }
  std::string field_text(const char* name) {
    const ByteView b = field(name);
    return std::string(b.begin(), b.end());
  }
  std::size_t remaining() const noexcept { return r_.remaining(); }

 private:
  void need(std::size_t n, const char* field) const {
    if (n > r_.remaining()) {
      malformed(std::string(field) + ": needs " + std::to_string(n) + " bytes, " +
                std::to_string(r_.remaining()) + " remain");
    }
  }
  common::ByteReader r_;
};

class WireWriter {
 public:
  explicit WireWriter(Bytes& out) : w_(out) {}
  void u8(std::uint8_t v) { w_.u8(v); }
  void u64_le(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) w_.u8(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  void field(ByteView b, const char* name) {
    if (b.size() > std::numeric_limits<std::uint16_t>::max()) {
      throw LegacyError(Reason::invalid_argument,
                        std::string(name) + " is " + std::to_string(b.size()) +
                            " bytes; its u16 length allows at most 65535");
    }
    w_.u16(static_cast<std::uint16_t>(b.size()));
    w_.bytes(b);
  }
  void field(const std::string& s, const char* name) { field(crypto::as_bytes(s), name); }

 private:
  common::ByteWriter w_;
};

// The type byte: in scope, refused by name, or unknown (legacy.hpp, the header comment).
void check_type(std::uint8_t type) {
  if ((type >= 0x01 && type <= 0x06) || (type >= 0x09 && type <= 0x13)) return;
  const std::string_view name = type_name(type);
  char code[5];
  std::snprintf(code, sizeof code, "0x%02X", static_cast<unsigned>(type));
  if (!name.empty()) {
    throw LegacyError(Reason::unsupported_type,
                      std::string(code) + " " + std::string(name) + " is outside the legacy suite");
  }
  throw LegacyError(Reason::unknown_type, std::string(code) + " is no SRUP message type");
}

Body decode_body(std::uint8_t type, WireReader& r) {
  switch (static_cast<Type>(type)) {
    case Type::initiate: {
      Initiate b;
      b.url = r.field_text("url");
      b.digest = r.field_text("digest");
      return b;
    }
    case Type::response:
      return Response{r.u8("status")};
    case Type::activate:
      return Activate{};
    case Type::action:
      return Action{r.u8("action_id")};
    case Type::data: {
      Data b;
      b.data_id = r.field_bytes("data_id");
      b.data = r.field_bytes("data");
      return b;
    }
    case Type::id_request:
      return IdRequest{};
    case Type::join_request:
      return JoinRequest{};
    case Type::join_command:
      return JoinCommand{r.u64_le("device_id")};
    case Type::human_join_request:
      return HumanJoinRequest{};
    case Type::human_join_response:
      return HumanJoinResponse{r.field_bytes("blob")};
    case Type::observed_join_request:
      return ObservedJoinRequest{r.u64_le("observer_id")};
    case Type::observed_join_response:
      return ObservedJoinResponse{r.field_bytes("blob")};
    case Type::observation_request: {
      ObservationRequest b;
      b.joining_device_id = r.u64_le("joining_device_id");
      b.blob = r.field_bytes("blob");
      return b;
    }
    case Type::resign_request:
      return ResignRequest{};
    case Type::terminate_command:
      return TerminateCommand{};
    case Type::deregister_request:
      return DeregisterRequest{};
    case Type::deregister_command:
      return DeregisterCommand{};
  }
  check_type(type);  // not reached: decode() checked the type; this throws for any other code
  malformed("type");
}

struct BodyWriter {
  WireWriter& w;
  void operator()(const Initiate& b) {
    w.field(b.url, "url");
    w.field(b.digest, "digest");
  }
  void operator()(const Response& b) { w.u8(b.status); }
  void operator()(const Action& b) { w.u8(b.action_id); }
  void operator()(const Data& b) {
    w.field(b.data_id, "data_id");
    w.field(b.data, "data");
  }
  void operator()(const JoinCommand& b) { w.u64_le(b.device_id); }
  void operator()(const HumanJoinResponse& b) { w.field(b.blob, "blob"); }
  void operator()(const ObservedJoinRequest& b) { w.u64_le(b.observer_id); }
  void operator()(const ObservedJoinResponse& b) { w.field(b.blob, "blob"); }
  void operator()(const ObservationRequest& b) {
    w.u64_le(b.joining_device_id);
    w.field(b.blob, "blob");
  }
  // The types without a body.
  template <typename Empty>
  void operator()(const Empty&) {}
};

// Serializes the envelope, with the signature field only when `with_signature`.
Bytes serialize(const LegacyEnvelope& e, bool with_signature) {
  if (e.body.valueless_by_exception()) throw LegacyError(Reason::invalid_argument, "no body");
  if (e.type != type_of(e.body)) {
    throw LegacyError(Reason::invalid_argument, "type byte does not match the body");
  }
  if (with_signature && e.signature.size() != kSignatureSize) {
    throw LegacyError(Reason::unsupported_signature,
                      "signature is " + std::to_string(e.signature.size()) + " bytes, not " +
                          std::to_string(kSignatureSize) + " (RSA-2048)");
  }
  Bytes out;
  WireWriter w(out);
  w.u8(kVersion);
  w.u8(e.type);
  w.u64_le(e.sequence);
  w.u64_le(e.sender);
  w.field(e.token, "token");
  if (with_signature) w.field(e.signature, "signature");
  std::visit(BodyWriter{w}, e.body);
  return out;
}

}  // namespace

LegacyEnvelope decode(ByteView wire) {
  WireReader r(wire);
  LegacyEnvelope e;
  // The original checks the version only in its Generic parser; we check it first, always.
  const std::uint8_t version = r.u8("version");
  if (version != kVersion) {
    throw LegacyError(Reason::unsupported_version,
                      "version " + std::to_string(version) + ", expected 5");
  }
  e.type = r.u8("type");
  check_type(e.type);
  e.sequence = r.u64_le("sequence");
  e.sender = r.u64_le("sender");
  e.token = r.field_bytes("token");
  const std::uint16_t sig_len = r.u16("signature length");
  if (sig_len != kSignatureSize) {
    throw LegacyError(Reason::unsupported_signature,
                      "signature length " + std::to_string(sig_len) + ", expected " +
                          std::to_string(kSignatureSize) + " (RSA-2048)");
  }
  const ByteView sig = r.bytes(kSignatureSize, "signature");
  e.signature.assign(sig.begin(), sig.end());
  e.body = decode_body(e.type, r);
  if (r.remaining() != 0) {
    malformed(std::to_string(r.remaining()) + " trailing bytes after the body");
  }
  return e;
}

Bytes encode(const LegacyEnvelope& envelope) {
  return serialize(envelope, true);
}

Bytes signed_bytes(const LegacyEnvelope& envelope) {
  return serialize(envelope, false);
}

Bytes signed_bytes(ByteView wire) {
  const LegacyEnvelope e = decode(wire);  // refuses what is not a complete envelope
  const std::size_t sig_field = kFixedPrefix + 2 + e.token.size();
  Bytes out(wire.begin(), wire.begin() + static_cast<std::ptrdiff_t>(sig_field));
  out.insert(out.end(), wire.begin() + static_cast<std::ptrdiff_t>(sig_field + 2 + kSignatureSize),
             wire.end());
  return out;
}

}  // namespace pqot::srup::legacy
