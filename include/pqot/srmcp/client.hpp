// The SRMCP v2 client (docs/srmcp.md): connects with TLS 1.3 and the KEM handshake, opens data
// links, and runs transactions with deadlines. Two ways to use it:
//  - blocking: `Client c(options); c.connect(); auto v = c.read({"a", "b"});` (the client runs its
//    own I/O thread);
//  - coroutines: `Client c(io, options); co_await c.async_connect(); co_await c.async_request(...)`
//    on the caller's io_context.
#pragma once

#include <asio.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "pqot/channel/tls.hpp"
#include "pqot/srmcp/compact.hpp"
#include "pqot/srmcp/node.hpp"
#include "pqot/srmcp/wire.hpp"

namespace pqot::srmcp {

struct ClientOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 4843;
  channel::TlsFiles tls;
  /// A TLS context made once with make_client_tls(), shared by many clients (saves loading the
  /// files on every connect); when null, one is made from `tls`.
  std::shared_ptr<asio::ssl::context> tls_context;
  /// KEMs offered, in preference order; the first gets the key share (§4).
  std::vector<KemId> kems{KemId::ml_kem_768, KemId::ml_kem_1024, KemId::x_wing};
  /// Body encodings offered, in preference order (§4): compact bodies (§9.2) with a JSON fallback
  /// for servers that predate them. The server chooses; SessionInfo says what it chose.
  std::vector<BodyEncoding> encodings{BodyEncoding::compact, BodyEncoding::json};
  unsigned links = 3;                              ///< data links to keep (§7)
  std::chrono::milliseconds deadline{1000};        ///< per transaction (§8.1)
  std::chrono::milliseconds connect_timeout{5000}; ///< TCP + TLS + handshake
  std::chrono::milliseconds rotate_interval{60000};  ///< link rotation period, 0 = never (§7)
  Limits limits;
};

/// The outcome of one transaction: the status from the response header (or TIMEOUT) and the body
/// (for errors: {"message": "..."}).
struct Response {
  Status status = Status::ok;
  Json body;
};

/// The outcome of a READ through the typed API: the transaction's status (OK, the ERROR's status,
/// TIMEOUT, ...), its message when not OK, and when OK one entry per id, in request order.
struct ReadReply {
  Status status = Status::ok;
  std::string message;
  std::vector<NodeReading> values;
};
/// The same for a WRITE.
struct WriteReply {
  Status status = Status::ok;
  std::string message;
  std::vector<WriteOutcome> values;
};

/// A failed call of the blocking API; status() is the server's status code (or TIMEOUT,
/// INTERNAL for connection problems).
class ClientError : public std::runtime_error {
 public:
  ClientError(Status status, const std::string& what) : std::runtime_error(what), status_(status) {}
  Status status() const noexcept { return status_; }

 private:
  Status status_;
};

struct SessionInfo {
  std::uint64_t session_id = 0;
  KemId kem = KemId::ml_kem_768;
  BodyEncoding encoding = BodyEncoding::json;  ///< what the server chose (§4)
  std::string identity;
  std::size_t data_links = 0;   ///< attached when connect() returned (a link that failed is left out)
  std::uint64_t rotations = 0;  ///< data links replaced by rotation so far
  std::uint64_t link_failures = 0;  ///< data links that could not be opened (connect or rotation)
  std::uint64_t links_resumed = 0;         ///< data links whose TLS handshake resumed the session's ticket (§7)
  std::uint64_t links_full_handshake = 0;  ///< data links with a full TLS handshake (no ticket, or refused)
};

class Client {
 public:
  /// Blocking use: the client owns an io_context and a thread.
  explicit Client(ClientOptions options);
  /// Coroutine use on the caller's io_context.
  Client(asio::io_context& io, ClientOptions options);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // ---- coroutine API (awaitables run on the client's strand) ----
  asio::awaitable<void> async_connect();
  /// Any request with a JSON body. In a session with compact bodies, READ and WRITE bodies are
  /// converted to them and their responses back to the JSON of §9.1 (a body that does not follow
  /// §9.1's schema is answered BAD_REQUEST here, without sending it).
  asio::awaitable<Response> async_request(MessageType type, Json body);
  /// Typed READ and WRITE: no JSON in between when the session uses compact bodies.
  asio::awaitable<ReadReply> async_read(std::vector<std::string> ids);
  asio::awaitable<WriteReply> async_write(std::vector<std::pair<std::string, Value>> values);
  asio::awaitable<void> async_close();

  // ---- blocking API (throws ClientError) ----
  void connect();
  Response request(MessageType type, const Json& body);
  Json browse(const std::string& root = "", int depth = -1);
  Json read(const std::vector<std::string>& ids);
  Json write(const std::vector<std::pair<std::string, Json>>& values);
  /// Typed READ and WRITE (throw ClientError unless the transaction is OK; per-node failures are
  /// in the entries).
  std::vector<NodeReading> read_values(const std::vector<std::string>& ids);
  std::vector<WriteOutcome> write_values(const std::vector<std::pair<std::string, Value>>& values);
  std::uint64_t subscribe(const std::vector<std::string>& ids, std::chrono::milliseconds interval);
  void unsubscribe(std::uint64_t subscription);
  Json ping();
  void close();

  /// Called (on the client's strand) for every NOTIFICATION (§9).
  void on_notification(std::function<void(const Json&)> handler);
  /// The same, typed (either handler or both may be set).
  void on_notification_values(std::function<void(const Notification&)> handler);
  SessionInfo info() const;

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace pqot::srmcp
