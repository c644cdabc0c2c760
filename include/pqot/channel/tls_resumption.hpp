// TLS 1.3 session resumption kept inside one scope (docs/channel.md, "TLS"; SRMCP: docs/srmcp.md
// §2, §7). A server issues tickets on one connection of a scope (SRMCP: a session's control
// connection) and resumes them only on connections it has bound to the same scope (that session's
// data links); a client keeps the newest ticket its scope's connection brought and offers it on
// the connections it opens for the same scope.
//
// Stateful tickets (RFC 8446 §4.6.1): the ticket on the wire is a 32-byte random session id, the
// session (secret and peer certificate) stays in the server's memory, in the scope that issued it,
// so a resumption decodes no certificate. PSK with (EC)DHE only (OpenSSL's default), no early data.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>

#include "pqot/channel/tls.hpp"  // (asio/ssl.hpp: OpenSSL's SSL_SESSION)

namespace pqot::channel {

/// Server side: the resumable sessions one scope has issued, at most `capacity`, each for the
/// lifetime given to enable_scoped_resumption(). Dropping or clearing the scope frees them, and
/// OpenSSL wipes their secrets when it frees them. Thread-safe.
class ResumptionScope : public std::enable_shared_from_this<ResumptionScope> {
 public:
  static std::shared_ptr<ResumptionScope> create(std::size_t capacity = 2);
  ~ResumptionScope();
  ResumptionScope(const ResumptionScope&) = delete;
  ResumptionScope& operator=(const ResumptionScope&) = delete;

  /// Queues one NewSessionTicket on the connection, whose handshake is done: OpenSSL sends it ahead of
  /// the next application data written there. The session it names is held by this scope (the
  /// oldest beyond the capacity is dropped). False if OpenSSL refused.
  bool issue(SSL* ssl);
  /// Before the handshake of a connection that may resume a session of this scope, and of no other.
  void accept_on(SSL* ssl);
  /// Time since the newest ticket was issued; max() if none was.
  std::chrono::steady_clock::duration newest_age() const;
  /// Sessions held now.
  std::size_t held() const;
  /// Frees every held session: no ticket of this scope resumes any more.
  void clear();

  /// How the handshake of a connection went (after it completed).
  enum class Handshake { full, resumed, full_ticket_refused };
  /// `full_ticket_refused`: the client offered a ticket this scope did not hold (another scope's,
  /// an expired or a dropped one) and got a full handshake instead.
  static Handshake outcome(SSL* ssl);

 private:
  friend struct ResumptionCallbacks;
  explicit ResumptionScope(std::size_t capacity);
  void keep(SSL_SESSION* copy);                                       // takes the reference
  SSL_SESSION* find_copy(const unsigned char* id, unsigned id_len);  // a new reference, or null
  void drop_expired_locked();

  mutable std::mutex mutex_;
  std::size_t capacity_;
  std::deque<SSL_SESSION*> held_;  // oldest first
  std::optional<std::chrono::steady_clock::time_point> last_issue_;
  unsigned char sid_ctx_[32];  // SSL_MAX_SID_CTX_LENGTH, random: this scope's session id context
};

/// Lets a server context from make_server_tls() resume sessions within ResumptionScopes and
/// nowhere else: stateful tickets, none issued automatically (num_tickets 0), no early data, a
/// session lifetime of `lifetime` (the ticket_lifetime sent). Call once, before any connection.
void enable_scoped_resumption(asio::ssl::context& ctx, std::chrono::seconds lifetime);

/// Makes a client context pass the tickets of watched connections to their TicketSlot;
/// make_client_tls() calls it.
void enable_ticket_slots(asio::ssl::context& ctx);

/// Client side: the newest ticket that arrived on the connections it watches. Contexts from
/// make_client_tls() pass tickets here; other contexts never resume. Thread-safe.
class TicketSlot : public std::enable_shared_from_this<TicketSlot> {
 public:
  static std::shared_ptr<TicketSlot> create();
  ~TicketSlot();
  TicketSlot(const TicketSlot&) = delete;
  TicketSlot& operator=(const TicketSlot&) = delete;

  /// Tickets that arrive on the connection from now on are kept here (the newest replaces the one held).
  void watch(SSL* ssl);
  /// Before a handshake: offers a copy of the held ticket (so that a failed connection cannot spoil
  /// the original). False when none is held or it has expired.
  bool offer(SSL* ssl) const;
  bool empty() const;
  /// Tests only: the held session, as a new reference the caller frees (null if none).
  SSL_SESSION* copy() const;
  /// Tests only: holds `session` (takes the caller's reference) instead of the current one.
  void hold(SSL_SESSION* session);

 private:
  friend struct ResumptionCallbacks;
  TicketSlot() = default;
  mutable std::mutex mutex_;
  SSL_SESSION* session_ = nullptr;
};

/// Whether the handshake of the connection resumed a session.
bool resumed(const SSL* ssl);

}  // namespace pqot::channel
