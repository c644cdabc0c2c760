// One TRIP session's datagram side without I/O (docs/trip.md §2, §6, §7): sealing data and
// keepalives with the sending keys, opening with the receiving keys, the flows agreed in the
// handshake, keepalive echo and RTT, and the time of the last authenticated datagram. The daemon
// owns the sockets and the filter; this owns everything a session decides.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <set>

#include "pqot/trip/datagram.hpp"
#include "pqot/trip/handshake.hpp"
#include "pqot/trip/session_keys.hpp"

namespace pqot::trip {

enum class SessionRole { client, server };

/// Why an authenticated-looking datagram was dropped before the filter (docs/trip.md §2.1).
enum class DropReason { malformed, unknown_session, unknown_flow, auth };
const char* drop_reason_name(DropReason r) noexcept;

class Session {
 public:
  Session(SessionRole role, const SessionAgreement& agreement, Clock::time_point now);

  SessionRole role() const noexcept { return role_; }
  std::uint8_t number() const noexcept { return number_; }
  /// The boot of the daemon at the other end (the reflector's, for the flows it reflects).
  std::uint64_t peer_boot() const noexcept { return peer_boot_; }
  std::uint8_t client_path() const noexcept { return client_path_; }
  bool reflects(std::uint16_t flow) const noexcept { return reflects_.count(flow) != 0; }
  bool filters(std::uint16_t flow) const noexcept { return filters_.count(flow) != 0; }
  std::chrono::milliseconds keepalive_interval() const noexcept { return keepalive_; }
  std::chrono::milliseconds dead_after() const noexcept { return dead_after_; }

  /// Seals a legacy datagram of a flow this side reflects into `out` (payload + kOverhead bytes);
  /// returns the size written. Throws std::invalid_argument for a flow not reflected here.
  std::size_t seal_data(std::uint16_t flow, std::uint64_t label, crypto::ByteView payload, crypto::MutableByteView out,
                        Clock::time_point now);
  /// Seals the next keepalive (kKeepaliveSize bytes) into `out`.
  std::size_t seal_keepalive(crypto::MutableByteView out, Clock::time_point now);

  struct Opened {
    DatagramType type;
    std::uint16_t flow;
    std::uint64_t counter;
    std::size_t size;  ///< plaintext bytes written to `out`
  };
  /// Opens a datagram whose header `h` names this session (the caller matched h.session): a data
  /// datagram must be of a flow this side filters. Returns the reason on failure; `out` must hold
  /// datagram.size() - kOverhead bytes.
  std::optional<Opened> open(const Header& h, crypto::ByteView datagram, crypto::MutableByteView out, Clock::time_point now,
                             DropReason& why);

  /// An opened keepalive: records it and, if its echo names a keepalive sent on this session,
  /// the RTT. True if its counter is new (higher than any before): only then does it keep the
  /// session alive and move the server's send address.
  bool on_keepalive(std::uint64_t counter, const KeepaliveBody& body, Clock::time_point now);

  /// When a keepalive with a new counter last arrived (the session's start before any). Only
  /// keepalives keep a session alive: a replayed datagram authenticates again, a replayed
  /// keepalive is not new (docs/trip.md §4.4).
  Clock::time_point last_alive() const noexcept { return last_alive_; }
  bool dead(Clock::time_point now) const noexcept { return now - last_alive_ > dead_after_; }
  std::optional<std::chrono::microseconds> last_rtt() const noexcept { return last_rtt_; }
  std::optional<std::chrono::microseconds> smoothed_rtt() const noexcept { return srtt_; }
  /// Keepalives missing among the last 64 counters up to the highest received (0..64).
  unsigned keepalives_missing() const noexcept;
  std::uint64_t keepalives_received() const noexcept { return keepalives_received_; }

 private:
  SessionRole role_;
  std::uint8_t number_;
  std::uint64_t peer_boot_;
  std::uint8_t client_path_;
  std::set<std::uint16_t> reflects_;
  std::set<std::uint16_t> filters_;
  std::chrono::milliseconds keepalive_;
  std::chrono::milliseconds dead_after_;
  SendKeys tx_;
  ReceiveKeys rx_;
  // Keepalives sent: counter and time, for the last 64 (RTT from an echo).
  std::uint64_t next_keepalive_ = 1;
  std::array<Clock::time_point, 64> sent_at_{};
  // Keepalives received.
  std::uint64_t highest_keepalive_ = 0;
  Clock::time_point highest_keepalive_at_{};
  std::uint64_t keepalive_bits_ = 0;  // bit i: highest - i received
  std::uint64_t keepalives_received_ = 0;
  Clock::time_point last_alive_;
  std::optional<std::chrono::microseconds> last_rtt_;
  std::optional<std::chrono::microseconds> srtt_;
};

}  // namespace pqot::trip
