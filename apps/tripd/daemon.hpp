// tripd's daemon (docs/tripd.md): the paths (a control connection and a UDP socket each, client
// or server side), the flows it reflects (a UDP socket each, where the legacy sender sends) and
// filters (a FlowFilter and a socket to deliver from), all on one io_context thread. Relays are
// apart (relay.hpp, relay_set.hpp). A reload (daemon_reload.cpp) adds, stops and restarts paths
// and moves flows without a restart. Tests drive a Daemon in process; `tripd` runs one.
#pragma once

#include <asio.hpp>
#include <asio/ssl.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "control_connection.hpp"
#include "reload_outcome.hpp"
#include "pqot/common/admission.hpp"
#include "pqot/trip/filter.hpp"
#include "pqot/trip/session.hpp"
#include "tripd/config.hpp"

namespace pqot::tripd {

/// Counters of one path (docs/tripd.md, "Metrics").
struct PathCounters {
  std::uint64_t sent = 0;                ///< data datagrams sent
  std::uint64_t send_errors = 0;         ///< copies not sent (socket buffer full, no route)
  std::uint64_t received = 0;            ///< data datagrams that authenticated
  std::uint64_t won = 0;                 ///< of those, first arrivals delivered
  std::uint64_t duplicates = 0;          ///< of those, labels another path brought first
  std::uint64_t keepalives_sent = 0;
  std::uint64_t keepalives_received = 0;
  std::uint64_t malformed = 0;
  std::uint64_t unknown_session = 0;
  std::uint64_t unknown_flow = 0;
  std::uint64_t auth_failures = 0;
  std::uint64_t sessions = 0;            ///< sessions established
  std::uint64_t handshake_failures = 0;
  std::uint64_t busy = 0;                ///< connections refused by the handshake bounds
  std::uint64_t sessions_dead = 0;       ///< sessions ended for lack of keepalives
};

struct FlowCounters {
  std::uint64_t taken = 0;           ///< reflect: legacy datagrams taken in
  std::uint64_t oversized = 0;       ///< reflect: over max_datagram, dropped
  std::uint64_t refused_source = 0;  ///< reflect: from an address not in allow_from
  std::uint64_t no_path = 0;         ///< reflect: no path was up to send on
  std::uint64_t delivered = 0;       ///< filter
  std::uint64_t late = 0;            ///< filter: delivered out of order
  std::uint64_t duplicates = 0;      ///< filter
  std::uint64_t too_old = 0;         ///< filter
  std::uint64_t stale_boot = 0;      ///< filter
  std::uint64_t deliver_errors = 0;  ///< filter: the local send failed
};

struct PathStatus {
  std::string name;
  bool client = false;
  bool up = false;
  std::uint8_t session = 0;
  std::optional<std::chrono::microseconds> rtt;
  std::optional<std::chrono::microseconds> srtt;
  unsigned keepalives_missing = 0;
  /// Of the datagrams its filtered flows delivered over the current session's last
  /// kLossIntervals keepalive intervals, the share this path did not bring (docs/trip.md §7);
  /// none without a session, before the first interval, or with fewer than kLossMinDatagrams.
  std::optional<double> data_loss;
  PathCounters counters;
};

/// The data loss estimate's window, in keepalive intervals, and the fewest datagrams it needs.
inline constexpr std::size_t kLossIntervals = 16;
inline constexpr std::uint64_t kLossMinDatagrams = 32;

struct FlowStatus {
  std::uint16_t id = 0;
  std::string name;
  bool reflects = false;
  std::uint64_t next_label = 0;
  FlowCounters counters;
};

/// A reload refused because it needs a restart (docs/tripd.md, "Reloading").
class ReloadRefused : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Daemon {
  struct Path;
  struct ReflectFlow;
  struct FilterFlow;

 public:
  Daemon(asio::io_context& io, TripdConfig config);
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  /// Binds every socket and starts every path; throws std::runtime_error naming what failed.
  void start();
  /// Closes every session (CLOSE `shutdown`) and socket, and cancels every wait. Idempotent. The
  /// daemon's coroutines then end on the io_context: destroy the Daemon only once idle() (or
  /// after the io_context stopped running for good).
  void stop();
  /// True when none of the daemon's coroutines is running.
  bool idle() const noexcept { return tasks_ == 0; }

  std::uint64_t boot() const noexcept { return boot_; }
  std::vector<PathStatus> paths() const;
  std::vector<FlowStatus> flows() const;
  /// The port a listening path got (its `listen` may name port 0), 0 for a client path.
  std::uint16_t listen_port(const std::string& path) const;
  /// The port a reflected flow takes legacy datagrams on.
  std::uint16_t reflect_port(std::uint16_t flow) const;

  /// A new configuration checked and made ready (docs/tripd.md, "Reloading"): the paths it adds
  /// bound, the identity loaded, nothing running. Dropping it changes nothing.
  struct PreparedReload {
    TripdConfig config;
    std::unique_ptr<asio::ssl::context> server_tls;
    std::unique_ptr<asio::ssl::context> client_tls;
    std::vector<std::shared_ptr<Path>> added;  ///< listening ones bound, none started
    std::vector<std::string> removed;
    std::vector<std::string> restarted;
    /// Restarted listening paths whose address changed: bound here, as added ones are, so that
    /// an address that cannot be taken refuses the whole reload.
    std::map<std::string, std::shared_ptr<Path>> rebound;
    std::map<std::uint16_t, std::vector<asio::ip::address>> allow;  ///< reflected flows' allow_from, resolved
    std::vector<std::string> changes;  ///< the rest of what changed, for the log line
  };
  /// Checks `next` against the running configuration and prepares it. Throws ReloadRefused
  /// naming what cannot change without a restart, or std::runtime_error naming what could not
  /// be loaded or bound; the daemon is untouched either way.
  std::unique_ptr<PreparedReload> prepare_reload(TripdConfig next);
  /// Applies a prepared reload: paths added, stopped, restarted; flows moved to their new paths.
  /// Says what changed (no key material), and which restarted path could not take its
  /// unchanged address back after its old socket closed (it stays down until a later reload).
  ReloadOutcome commit_reload(std::unique_ptr<PreparedReload> r);
  /// prepare_reload and commit_reload at once; the outcome's line.
  std::string reload(TripdConfig next);
  /// Paths a reload stopped whose coroutines have not all ended yet (their memory still held).
  std::size_t paths_retiring() const;

 private:
  /// co_spawn on the daemon's io_context, counted for idle(); an exception is logged. `keep`
  /// (the path the task works on) is held until the task has ended.
  void spawn(asio::awaitable<void> task, std::shared_ptr<void> keep = nullptr);
  /// Stopping: the daemon's, or this path's (a reload removed or restarted it).
  bool ending(const Path& p) const noexcept;
  /// Opens a listening path's acceptor and UDP socket (before start_path); throws naming it.
  void bind_path(Path& p);
  void start_path(Path& p);
  /// Ends a path for a reload: CLOSE `shutdown`, sockets closed, waits cancelled, keys wiped.
  void stop_path(Path& p, const std::string& why);
  std::shared_ptr<Path> make_path(const TripdConfig& c, const PathConfig& pc) const;
  void route_flows();
  asio::awaitable<void> client_loop(Path& p);
  asio::awaitable<void> client_connect(Path& p);
  asio::awaitable<void> accept_loop(Path& p);
  asio::awaitable<void> serve(Path& p, std::shared_ptr<ControlConnection> conn,
                              std::shared_ptr<common::HandshakeSlots::Ticket> slot);
  asio::awaitable<void> control_loop(Path& p, std::shared_ptr<ControlConnection> conn);
  /// Makes `s` the path's current session; false (and `conn` closed) if the daemon is stopping or
  /// the peer's boot was retired.
  bool install(Path& p, std::unique_ptr<trip::Session> s, std::shared_ptr<ControlConnection> conn);
  void retire(Path& p, const ControlConnection* conn);
  void keepalive_tick(Path& p);
  void track(Path& p, const std::shared_ptr<ControlConnection>& conn);
  void arm_grace(Path& p);
  void send_keepalive(Path& p);
  /// Records the path's copies and its filtered flows' deliveries for the data loss estimate.
  void sample_loss(Path& p);

  asio::awaitable<void> path_receive(Path& p);
  void on_datagram(Path& p, crypto::ByteView dg, const asio::ip::udp::endpoint& from);
  asio::awaitable<void> flow_receive(ReflectFlow& f);
  void reflect(ReflectFlow& f, crypto::ByteView payload);
  bool send_on(Path& p, crypto::ByteView datagram);

  asio::io_context& io_;
  TripdConfig config_;
  std::uint64_t boot_;
  // A reload replaces these: each connection's SSL object holds its own reference to the OpenSSL
  // context it was made from, so the connections of before keep working.
  std::unique_ptr<asio::ssl::context> server_tls_;
  std::unique_ptr<asio::ssl::context> client_tls_;
  std::vector<std::shared_ptr<Path>> paths_;
  std::vector<std::weak_ptr<Path>> retiring_;  ///< stopped by a reload, not yet freed
  std::vector<std::unique_ptr<ReflectFlow>> reflect_flows_;
  std::map<std::uint16_t, std::unique_ptr<FilterFlow>> filter_flows_;
  bool stopped_ = false;
  std::size_t tasks_ = 0;
  // One datagram at a time on the daemon's thread: sealed copies and opened plaintext.
  std::vector<std::uint8_t> seal_buffer_;
  std::vector<std::uint8_t> open_buffer_;
};

}  // namespace pqot::tripd
