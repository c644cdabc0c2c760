// A TRIP relay (docs/trip.md §9, docs/tripd.md "[[relay]]"): TCP and UDP on `listen` forwarded to
// `forward`, byte for byte and datagram for datagram. It parses nothing and holds no keys: TLS and
// the sealed datagrams are end to end between the daemons.
#pragma once

#include <asio/io_context.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "tripd/config.hpp"

namespace pqot::tripd {

/// What a relay did since start(); "to_forward" is client → `forward`, "to_client" the way back.
struct RelayStats {
  std::uint64_t tcp_accepted = 0;          ///< connections taken (and forwarded)
  std::uint64_t tcp_open = 0;              ///< connections open now (connecting or forwarding)
  std::uint64_t tcp_refused = 0;           ///< closed at once: `max_connections` were open
  std::uint64_t tcp_connect_failures = 0;  ///< `forward` refused or did not answer
  std::uint64_t tcp_idle_closed = 0;       ///< closed after `idle` without a byte either way
  std::uint64_t tcp_bytes_to_forward = 0;
  std::uint64_t tcp_bytes_to_client = 0;
  std::uint64_t tcp_buffered = 0;     ///< bytes held now, all connections and directions
  std::uint64_t tcp_buffer_peak = 0;  ///< the most one direction of one connection ever held
  std::uint64_t udp_datagrams_to_forward = 0;
  std::uint64_t udp_bytes_to_forward = 0;
  std::uint64_t udp_datagrams_to_client = 0;
  std::uint64_t udp_bytes_to_client = 0;
  std::uint64_t udp_associations_open = 0;
  std::uint64_t udp_associations_evicted = 0;  ///< the idlest, dropped for a new client address
  std::uint64_t udp_associations_expired = 0;  ///< dropped after `idle` without traffic
  std::uint64_t udp_send_drops = 0;            ///< datagrams dropped: a send would block or failed
};

/// One relay on a caller's io_context. Single-threaded: construct, start(), stop() and read
/// stats() on the thread that runs `io` (or while it does not run).
class Relay {
 public:
  /// A `listen` port of 0 (refused by the configuration parser) binds a free port: see port().
  /// Throws std::invalid_argument if max_buffer, max_associations or idle is not positive.
  Relay(asio::io_context& io, RelayConfig config);
  ~Relay();
  Relay(const Relay&) = delete;
  Relay& operator=(const Relay&) = delete;

  /// Resolves `forward` (once: a name that later resolves elsewhere needs a restart), binds TCP
  /// and UDP on `listen` (one port) and starts forwarding. Throws std::runtime_error naming the
  /// address when resolving or binding fails; nothing stays open then.
  void start();
  /// Closes the listeners, every connection and every association. Idempotent.
  void stop();

  /// The bound port, TCP and UDP alike (0 before start()).
  std::uint16_t port() const;
  RelayStats stats() const;

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;  // shared with pending handlers, which outlive stop()
};

}  // namespace pqot::tripd
