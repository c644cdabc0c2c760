// What the daemon's source files share and nothing else needs: bounds, and the records behind the
// Daemon's private members (daemon.hpp).
#pragma once

#include <asio.hpp>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "daemon.hpp"
#include "pqot/srup/body.hpp"
#include "pqot/srup/telemetry.hpp"

namespace pqot::srup_c2 {

/// Devices read from the registry per page (start-up, listings).
inline constexpr std::size_t kRegistryPage = 500;
/// A device heard from within this is shown online.
inline constexpr std::uint64_t kOnlineWindowMs = 120'000;
/// last_seen is written to the registry at most this often per device.
inline constexpr std::uint64_t kLastSeenSaveMs = 60'000;

/// How long a deregistration waits for the device's answer to its Deregister Command before the
/// broker drops it anyway.
inline constexpr std::chrono::milliseconds kDeregisterGrace{3000};

/// A control request waiting for a command's answer.
struct Daemon::Waiter {
  explicit Waiter(asio::io_context& io) : timer(io) {}
  std::int64_t row = 0;
  ControlServer::Reply reply;
  asio::steady_timer timer;
  std::function<void(const OutboxEntry&)> then;  ///< runs when answered (before the reply)
};

/// A join the C2 is running for a pending device (docs/srup-mqtt.md 4.2), in memory: after a
/// restart the device's retried request starts it again.
struct Daemon::JoinInProgress {
  srup::MessageType mode = srup::MessageType::join_request;
  crypto::Bytes token;  ///< the join request's: the final Response carries it
  std::uint64_t observer = 0;
  /// The Observation Request's token: only the observer's answer carrying it ends the join.
  crypto::Bytes observation_token;
  std::uint64_t started_ms = 0;
};

/// A telemetry reading opened but not yet confirmed by a Checkpoint.
/// How long a provisional reading waits for its Checkpoint: twice the longest checkpoint interval
/// a device may choose (docs/srup-pq.md 5.2), plus the key grace.
inline constexpr std::uint64_t kProvisionalMaxAgeMs =
    2 * std::uint64_t{srup::kMaxCheckpointSeconds} * 1000 + srup::kTelemetryGraceMs;

struct Daemon::ProvisionalReading {
  std::uint32_t epoch = 0;
  std::uint64_t sequence = 0;
  std::uint64_t received_ms = 0;
  std::string json;
};

/// The key of waiters_: answers are matched by (device, token).
std::string waiter_key(std::uint64_t device, const crypto::Bytes& token);

/// Whether `t` is a command the C2 sends to a device that is still pending (a join's code).
bool is_join_step(srup::MessageType t);

/// A typed value as JSON {"type": "float32", "text": "21.5"} (the control protocol's form).
nlohmann::json value_json(const srup::Value& v);

}  // namespace pqot::srup_c2
