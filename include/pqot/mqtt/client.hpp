// An MQTT 5 client over libmosquitto for the SRUP-PQ programs (docs/mqtt.md, "The client"): TLS 1.3
// with a client certificate, a persistent session, QoS 1, reconnection with exponential backoff
// on a network thread of its own, subscriptions that are restored when the broker lost the
// session, and bounds on everything it queues.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace pqot::mqtt {

/// PEM files of the TLS connection. The CA is required; certificate and key come together.
struct TlsFiles {
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
};

struct ClientOptions {
  static constexpr std::size_t kMaxClientIdLength = 128;

  std::string host = "127.0.0.1";
  std::uint16_t port = 8883;
  /// Fixed and required: the broker keeps the session under it (the design uses the username,
  /// i.e. the certificate's CN). 1..kMaxClientIdLength of [A-Za-z0-9._-].
  std::string client_id;
  TlsFiles tls;                             ///< TLS 1.3 only, server certificate verified
  std::chrono::seconds keepalive{30};       ///< 5..65535 s
  bool clean_session = false;               ///< false: persistent session (clean start = 0)
  std::uint32_t session_expiry_s = 0xFFFFFFFFu;  ///< MQTT 5 session expiry if !clean_session
  /// Backoff between connection attempts: starts at min, doubles per failed attempt up to max,
  /// back to min after a successful CONNACK. 10 ms..1 h, min <= max.
  std::chrono::milliseconds reconnect_min{500};
  std::chrono::milliseconds reconnect_max{30000};
  unsigned max_inflight = 20;        ///< QoS 1 messages sent and not acknowledged, each way; 1..65535
  std::size_t max_queued = 1000;     ///< messages accepted by publish() and not yet acknowledged
                                     ///< (in flight or waiting, online or offline); 1..1000000
  bool queue_while_offline = true;   ///< false: publish() while disconnected is not_connected
  std::size_t max_payload = 256 * 1024;  ///< bytes per message, both ways; 1..256 MiB
  std::size_t max_subscriptions = 1024;  ///< remembered filters; 1..65535
};

/// One message from the broker. The DUP flag is not reported: libmosquitto 2.0 does not pass it.
struct Message {
  std::string topic;
  std::vector<std::uint8_t> payload;
  int qos = 0;
  bool retain = false;
};

/// A change of the connection.
struct ConnectionEvent {
  enum class Kind {
    connected,       ///< CONNACK accepted; `session_present` as the broker said
    disconnected,    ///< an established connection ended (or stop())
    connect_failed,  ///< an attempt failed: TCP, TLS (e.g. "certificate required"), CONNACK refused
  };
  Kind kind = Kind::disconnected;
  bool session_present = false;
  int code = 0;         ///< libmosquitto error code, or the CONNACK reason code when refused
  std::string reason;   ///< readable: the library's text and the last TLS error it logged
};

/// The broker's answer to one SUBSCRIBE.
struct SubackEvent {
  std::string filter;
  int result = 0;  ///< the granted QoS (0..2), or a reason code >= 0x80 (0x87: not authorized)
  bool granted() const noexcept { return result >= 0 && result < 0x80; }
};

/// The broker's answer to one QoS 1 PUBLISH.
struct PubackEvent {
  int mid = 0;
  int reason_code = 0;  ///< 0 success, 0x10 no matching subscribers, >= 0x80 refused (0x87)
  bool accepted() const noexcept { return reason_code < 0x80; }
};

enum class PublishError {
  none,
  not_connected,      ///< disconnected and (qos 0 or !queue_while_offline), or not started
  payload_too_large,  ///< over ClientOptions::max_payload
  queue_full,         ///< max_queued messages not yet acknowledged
  invalid_topic,      ///< empty, wildcards, over 1024 bytes or not UTF-8
  invalid_qos,        ///< not 0 or 1 (QoS 2 is not used by the design)
  library,            ///< libmosquitto refused (out of memory, ...)
};
const char* to_string(PublishError error) noexcept;

struct PublishResult {
  int mid = 0;  ///< the message id (QoS 1), matches PubackEvent::mid
  PublishError error = PublishError::none;
  explicit operator bool() const noexcept { return error == PublishError::none; }
};

struct ClientStats {
  std::uint64_t connects = 0;           ///< accepted CONNACKs
  std::uint64_t disconnects = 0;        ///< established connections that ended
  std::uint64_t connect_failures = 0;   ///< attempts that did not reach an accepted CONNACK
  std::uint64_t sessions_present = 0;   ///< CONNACKs with session present
  std::uint64_t sessions_new = 0;       ///< CONNACKs without (the broker had no session)
  std::uint64_t resubscribes = 0;       ///< SUBSCRIBEs sent again after a CONNACK
  std::uint64_t published = 0;          ///< publish() calls accepted
  std::uint64_t acked = 0;              ///< PUBACKs with a success code
  std::uint64_t refused_publishes = 0;  ///< PUBACKs with a code >= 0x80
  std::uint64_t rejected_publishes = 0; ///< publish() calls that returned an error
  std::uint64_t granted_subscriptions = 0;
  std::uint64_t refused_subscriptions = 0;  ///< SUBACK codes >= 0x80
  std::uint64_t received = 0;           ///< messages passed to the message handler
  std::uint64_t dropped_oversized = 0;  ///< incoming messages over max_payload, not passed on
  std::size_t pending = 0;              ///< accepted by publish(), not yet acknowledged
};

/// Handlers run on the client's network thread, one at a time, in the order events arrive.
/// They must return quickly: post the work to the caller's own loop. They may call publish(),
/// subscribe() and stats(), but not stop() and never wait for the client.
using MessageHandler = std::function<void(const Message&)>;
using ConnectionHandler = std::function<void(const ConnectionEvent&)>;
using SubackHandler = std::function<void(const SubackEvent&)>;
using PubackHandler = std::function<void(const PubackEvent&)>;

/// Thrown for invalid options, unusable TLS files (before any connection is attempted), and
/// misuse (start() twice).
class ClientError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Client {
 public:
  /// Checks the options (ClientError naming the option and what would be valid).
  explicit Client(ClientOptions options);
  ~Client();  ///< stop()
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Handlers: set before start().
  void on_message(MessageHandler handler);
  void on_connection(ConnectionHandler handler);
  void on_suback(SubackHandler handler);
  void on_puback(PubackHandler handler);

  /// Loads the TLS files (ClientError naming the file and OpenSSL's reason if one is unusable)
  /// and starts the network thread, which connects and reconnects. Does not wait for the broker.
  void start();
  /// Sends DISCONNECT if connected (the session stays on the broker), ends the network thread and
  /// joins it. A backoff wait is interrupted at once. Idempotent; the destructor calls it. Must
  /// not be called from a handler.
  void stop();

  bool connected() const noexcept;

  /// Remembers `filter` (QoS 0 or 1) and sends SUBSCRIBE now if connected. After every CONNACK
  /// the client sends again each remembered filter the current session does not hold: all of
  /// them when the broker had no session (session_present false), else those not granted yet.
  /// Throws ClientError for an invalid filter or more than max_subscriptions.
  void subscribe(const std::string& filter, int qos = 1);
  /// The last SUBACK result for `filter` in the current session, nullopt while none.
  std::optional<int> subscription_result(const std::string& filter) const;

  /// Queues a message; callable from any thread. QoS 1 while disconnected is kept (up to
  /// max_queued) and sent after the next CONNACK, unless queue_while_offline is false.
  PublishResult publish(const std::string& topic, std::span<const std::uint8_t> payload, int qos = 1,
                        bool retain = false);
  PublishResult publish(const std::string& topic, std::string_view payload, int qos = 1,
                        bool retain = false);

  ClientStats stats() const;
  const ClientOptions& options() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pqot::mqtt
