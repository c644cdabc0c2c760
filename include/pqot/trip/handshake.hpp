// TRIP's handshake without I/O (docs/trip.md §4, §5): the client's CLIENT_HELLO and what it makes
// of SERVER_HELLO, the server's answer to a CLIENT_HELLO, and READY's check. The daemon moves the
// bytes over TLS and supplies the TLS exporter; everything decided is decided here, so both sides
// are tested against each other without sockets.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "pqot/crypto/bytes.hpp"
#include "pqot/crypto/secure.hpp"
#include "pqot/trip/control.hpp"
#include "pqot/trip/session_keys.hpp"

namespace pqot::trip {

/// A handshake that must end with CLOSE `code`; what() is the reason sent and logged.
class HandshakeError : public std::runtime_error {
 public:
  HandshakeError(CloseCode code, const std::string& reason) : std::runtime_error(reason), code_(code) {}
  CloseCode code() const noexcept { return code_; }

 private:
  CloseCode code_;
};

/// The registry name of a KEM id ("ML-KEM-768", ...), or nothing for an unknown id.
std::optional<std::string> kem_name(std::uint16_t kem);

/// What a session agreed (both sides hold the same): the keys and the server's parameters.
struct SessionAgreement {
  SessionKeys keys;
  std::uint64_t client_boot = 0;
  std::uint64_t server_boot = 0;
  std::uint8_t session = 0;
  std::uint8_t client_path = 0;
  std::vector<SessionFlow> flows;
  ServerHello params;  ///< the SERVER_HELLO as sent (ct, random and all)
};

class ClientHandshake {
 public:
  /// Makes a fresh key pair of `kem` and the CLIENT_HELLO. Throws std::invalid_argument for boot
  /// 0, flows out of order or an unknown KEM.
  ClientHandshake(KemId kem, std::uint64_t boot, std::uint8_t path, std::vector<SessionFlow> flows);

  const crypto::Bytes& hello_body() const noexcept { return hello_body_; }

  /// SERVER_HELLO's body and this connection's TLS exporter (label kExporterLabel) give the
  /// session's keys. HandshakeError `protocol` for a malformed body, another version or KEM; the
  /// secret key is wiped either way.
  SessionAgreement finish(crypto::ByteView server_hello_body, crypto::ByteView exporter);

 private:
  ClientHello hello_;
  crypto::Bytes hello_body_;
  crypto::SecretBytes secret_key_;
};

/// What the listening side offers (docs/trip.md §4.2) and accepts.
struct ServerOffer {
  std::vector<KemId> accept_kems{KemId::ml_kem_768, KemId::ml_kem_1024, KemId::x_wing};
  std::uint32_t key_update_datagrams = 1u << 24;
  std::uint32_t key_update_seconds = 3600;
  std::uint32_t keepalive_ms = 1000;
  std::uint32_t dead_after_ms = 5000;
};

struct ServerAnswer {
  crypto::Bytes body;  ///< SERVER_HELLO to send
  SessionAgreement agreement;
};

/// The server's answer to a CLIENT_HELLO body (docs/trip.md §4.3): HandshakeError `protocol`
/// (malformed), `version`, `kem` (not accepted, or a key that fails its check) or `flows` (the
/// reason names the first flow that differs and how). `expected` is this server's list for the
/// path, in the handshake's order.
ServerAnswer answer_client_hello(crypto::ByteView client_hello_body, crypto::ByteView exporter, const ServerOffer& offer,
                                 const std::vector<SessionFlow>& expected, std::uint64_t boot, std::uint8_t session);

/// READY's body for these keys, and whether a received one is right (constant time).
channel::Digest ready_body(const SessionKeys& keys);
bool ready_matches(const SessionKeys& keys, crypto::ByteView body);

/// "flow 7: the client reflects it, this side does not filter it": the first difference between
/// what the server expects and what the client sent, from the server's side; empty if equal.
std::string flow_mismatch(const std::vector<SessionFlow>& expected, const std::vector<SessionFlow>& got);

}  // namespace pqot::trip
