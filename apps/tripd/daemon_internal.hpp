// tripd's daemon: the state of one path and one flow (daemon.hpp), shared by daemon.cpp (sockets,
// reflecting, filtering), daemon_paths.cpp (control connections) and daemon_reload.cpp (reload).
// Internal.
#pragma once

#include <spdlog/spdlog.h>

#include <deque>

#include "daemon.hpp"
#include "pqot/common/admission.hpp"
#include "pqot/common/log_limiter.hpp"

namespace pqot::tripd {

using asio::ip::tcp;
using asio::ip::udp;
using Clock = trip::Clock;

/// A session with what the daemon keeps beside it.
struct LiveSession {
  std::unique_ptr<trip::Session> session;
  std::shared_ptr<ControlConnection> control;
  std::optional<udp::endpoint> peer;  ///< where its datagrams go (server: learned, docs/trip.md §2.1 step 6)
  Clock::time_point retired{};        ///< when it stopped being current
};

// A path owns its configuration and the flows its handshakes state, fixed for its life: a reload
// that changes either starts a new Path (docs/tripd.md, "Reloading"). It is shared: the daemon's
// list, and each coroutine and timer handler of the path, hold it, so a path a reload stopped is
// freed once the last of them has ended.
struct Daemon::Path : std::enable_shared_from_this<Daemon::Path> {
  Path(asio::io_context& io, PathConfig c, std::vector<trip::SessionFlow> f, const LimitsConfig& limits)
      : config(std::move(c)),
        flows(std::move(f)),
        data(io),
        keepalive_timer(io),
        retry_timer(io),
        grace_timer(io),
        handshakes(std::make_shared<common::HandshakeSlots>(static_cast<std::uint32_t>(limits.max_handshakes),
                                                            static_cast<std::uint32_t>(limits.max_handshakes_per_source))) {}
  const PathConfig config;
  const std::vector<trip::SessionFlow> flows;  ///< as CLIENT_HELLO / the server's check state them (docs/trip.md §4.1)
  bool stopping = false;                       ///< stopped by a reload (or the daemon's stop)
  udp::socket data;  ///< the path's datagrams
  std::optional<tcp::acceptor> acceptor;
  std::optional<LiveSession> current;
  std::optional<LiveSession> previous;  ///< receives only, for session_grace
  asio::steady_timer keepalive_timer;
  asio::steady_timer retry_timer;  ///< client: the backoff before the next connection
  asio::steady_timer grace_timer;  ///< drops the previous session (and wipes its keys) after session_grace
  /// Server: this path's handshakes in progress, per source prefix and in all (docs/trip.md §10):
  /// one path's flood cannot hold another path's slots, and a newcomer takes the place of the
  /// oldest handshake of the busiest source.
  std::shared_ptr<common::HandshakeSlots> handshakes;
  /// Every control connection of this path not yet ended (weak): stopping the path aborts them all.
  std::vector<std::weak_ptr<ControlConnection>> connections;
  Clock::time_point last_ping{};  ///< when a PING last went out on the current control connection
  std::uint8_t next_session = 0;        ///< server: the number of the next session
  std::shared_ptr<ControlConnection> connecting;  ///< client: the connection in handshake
  PathCounters counters;
  /// The data loss estimate's samples (docs/trip.md §7), one per keepalive interval of the
  /// current session (at most kLossIntervals + 1): copies this path brought (won + duplicates)
  /// and datagrams delivered by the flows this side filters on the session.
  struct LossSample {
    std::uint64_t brought = 0;
    std::uint64_t delivered = 0;
  };
  std::deque<LossSample> loss_samples;
  common::LogLimiter log_limit;
  std::uint16_t bound_port = 0;
};

struct Daemon::ReflectFlow {
  ReflectFlow(asio::io_context& io, FlowConfig c) : config(std::move(c)), socket(io) {}
  FlowConfig config;  ///< a reload may change its name and paths (docs/tripd.md, "Reloading")
  udp::socket socket;
  std::vector<asio::ip::address> allow;
  std::vector<Path*> paths;  ///< the running paths that carry it, set again by each reload
  std::uint64_t next_label = 0;
  FlowCounters counters;
  common::LogLimiter log_limit;
};

struct Daemon::FilterFlow {
  FilterFlow(asio::io_context& io, FlowConfig c, Clock::duration grace)
      : config(std::move(c)), filter(grace, config.max_age), socket(io) {}
  FlowConfig config;
  trip::FlowFilter filter;
  udp::socket socket;
  udp::endpoint destination;
  FlowCounters counters;
  common::LogLimiter log_limit;
};

/// Opens `s` bound to `ep`, non-blocking; throws std::runtime_error naming `what`.
void open_udp(udp::socket& s, const udp::endpoint& ep, const std::string& what);

/// The first address `hp` resolves to (numeric or by name); throws std::runtime_error naming `what`.
asio::ip::address resolve_address(asio::io_context& io, const common::HostPort& hp, const std::string& what);

}  // namespace pqot::tripd
