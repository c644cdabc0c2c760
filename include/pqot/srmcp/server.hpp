// The SRMCP v2 server (docs/srmcp.md): accepts control connections, runs the handshake, opens data
// links on request, and answers requests from a NodeStore. Runs on the caller's io_context; call
// io_context::run() from as many threads as wanted (each session is confined to its own strand).
// Alternatively, give it several io_contexts each run by one thread (what srmcpd does): sessions
// are then spread over them and a session's work never moves between threads, which saves the
// cross-thread wake-ups that otherwise dominate the latency of small requests.
#pragma once

#include <asio.hpp>
#include <array>
#include <atomic>
#include <memory>
#include <vector>

#include "pqot/metrics/histogram.hpp"
#include "pqot/srmcp/node.hpp"
#include "pqot/srmcp/server_config.hpp"

namespace pqot::srmcp {

/// Requests of one message type: how many, and how long from arrival to the response being queued
/// (a request waiting for a device counts until the device has answered).
struct RequestTypeStats {
  std::string type;  ///< "read", "write", "browse", ... (lower case §9 names), "other"
  std::uint64_t count = 0;
  metrics::LatencyHistogram::Snapshot latency;
};

/// Status codes (§11) that have a counter of their own; higher codes are counted as kStatusSlots-1.
inline constexpr std::size_t kStatusSlots = 32;

/// What the server refused, or closed, because a peer asked for more than a limit allows or did
/// not follow the protocol (docs/srmcpd.md, "Limits and denial of service"). Each has a counter.
enum class Refusal : std::uint8_t {
  handshakes_total,       ///< max_handshakes in progress: the new connection was closed
  handshakes_per_source,  ///< its source already had max_handshakes_per_source in progress
  handshake_evicted,      ///< a handshake in progress gave way to one from a less busy source
  handshake_deadline,     ///< TLS plus hello not done within handshake_deadline
  tls_failed,             ///< TLS handshake failed (no or bad certificate, not TLS at all)
  hello_failed,           ///< CLIENT_HELLO malformed or nothing in common
  not_allowed,            ///< identity not on the allow-list
  sessions_total,         ///< max_sessions reached
  sessions_per_identity,  ///< max_sessions_per_identity reached
  accept_error,           ///< accept() failed (out of descriptors, ...); the listener backs off
  send_backlog,           ///< session closed: its client did not read its responses
  subscriptions,          ///< SUBSCRIBE over max_subscriptions or max_subscribed_ids
  offers_per_identity,    ///< LINK_REQUEST over max_pending_links_per_identity
  link_bind_failed,       ///< a connection to an offer's port failed TLS, identity or LINK_BIND
  segments_dropped,       ///< segments dropped (§8.2 checks, reassembly limits and budget)
  partial_expired,        ///< partial messages expired unfinished (§8.2)
  protocol_violation,     ///< a link closed for a protocol violation
  internal_error,         ///< a session closed on an unexpected error
};
inline constexpr std::size_t kRefusalKinds = static_cast<std::size_t>(Refusal::internal_error) + 1;
/// "handshakes_total", "handshakes_per_source", ... (the enumerator's name)
std::string_view refusal_name(Refusal r);

struct ServerStats {
  std::uint64_t sessions_total = 0;
  std::uint64_t sessions_compact = 0;  ///< of sessions_total, those with compact bodies (§4, §9.2)
  std::uint64_t sessions_json = 0;     ///< ... and those with JSON bodies
  std::uint64_t sessions_active = 0;        ///< established (client certificate verified)
  std::uint64_t handshakes_in_progress = 0; ///< connections accepted whose session is not open yet
  std::uint64_t partial_bytes = 0;          ///< bytes held in partial segmented messages, all sessions
  std::array<std::uint64_t, kRefusalKinds> refusals{};
  std::uint64_t links_active = 0;
  /// §7: TLS handshakes of data links presenting the session's identity, resumed or full; and the
  /// full ones in which the client had offered a ticket the session did not hold.
  std::uint64_t link_handshakes_resumed = 0;
  std::uint64_t link_handshakes_full = 0;
  std::uint64_t link_tickets_refused = 0;
  std::uint64_t requests = 0;
  std::uint64_t errors = 0;          ///< requests answered with a non-OK status
  std::uint64_t closed_on_error = 0; ///< links closed for protocol violations
  std::array<std::uint64_t, kStatusSlots> responses_by_status{};  ///< by the header's status code
  std::vector<RequestTypeStats> by_type;
};

class Server {
 public:
  /// `io` runs the listener; sessions run on `session_contexts` (round robin), or on `io` if empty.
  Server(asio::io_context& io, ServerConfig config, std::shared_ptr<NodeStore> nodes,
         std::vector<asio::io_context*> session_contexts = {});
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  /// Loads the TLS files, binds the listening socket and starts accepting. Throws
  /// std::runtime_error naming what failed.
  void start();
  /// Stops accepting and closes every session and pending link listener.
  void stop();
  /// Replaces the node tree (a configuration reload): requests that arrive afterwards use the new
  /// store; requests in progress finish on the old one, which lives as long as they do.
  /// Subscriptions carry on with the same ids (ids that no longer exist are left out).
  void set_nodes(std::shared_ptr<NodeStore> nodes);
  /// The bound port (useful when the configuration asked for port 0).
  std::uint16_t port() const;
  ServerStats stats() const;

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace pqot::srmcp
