// srup-c2, the SRUP-PQ command-and-control daemon (docs/srup-c2.md): one io_context thread owns
// every piece of state (the registry, the SRUP state store and endpoint, the telemetry reader, the
// outbox timers, the control socket); the MQTT client's network thread only posts what arrives.
#pragma once

#include <array>
#include <asio.hpp>
#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config.hpp"
#include "control_server.hpp"
#include "pqot/common/log_limiter.hpp"
#include "pqot/common/share_budget.hpp"
#include "pqot/metrics/histogram.hpp"
#include "pqot/mqtt/client.hpp"
#include "pqot/mqtt/dynsec.hpp"
#include "pqot/mqtt/dynsec_commands.hpp"
#include "pqot/srup/endpoint.hpp"
#include "pqot/srup/identity.hpp"
#include "pqot/srup/state.hpp"
#include "pqot/srup/telemetry.hpp"
#include "pqot/srup/telemetry_key_store.hpp"
#include "registry.hpp"

namespace pqot::metrics {
class MetricsHttpServer;
}

namespace pqot::srup_c2 {

/// Counters for the metrics page (docs/srup-c2.md, "Metrics"); touched on the io thread only,
/// read by the scrape handler on the same thread.
struct C2Counters {
  std::map<std::string, std::uint64_t> received_by_type;   ///< authenticated messages
  std::map<std::string, std::uint64_t> sent_by_type;       ///< first transmissions
  std::map<std::string, std::uint64_t> refusals;           ///< by reason
  std::uint64_t retransmissions = 0;
  std::uint64_t answers_unmatched = 0;
  std::uint64_t commands_expired = 0;
  std::uint64_t telemetry_readings = 0;
  std::uint64_t telemetry_confirmed = 0;
  std::uint64_t telemetry_mismatch = 0;
  std::uint64_t telemetry_dropped = 0;  ///< without a Checkpoint
  /// Provisional readings not held or given up for a bound, by reason (provisional_reason()).
  std::map<std::string, std::uint64_t> provisional_drops;
  std::uint64_t broker_refusals = 0;
  metrics::LatencyHistogram round_trip;  ///< command sent (first time) -> answer received
};

class Daemon {
 public:
  /// Loads the identity, opens the state and the registry, prepares the broker connection and the
  /// control socket; nothing is started. Throws std::runtime_error with a message for the operator.
  explicit Daemon(C2Config config);
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  /// Runs until stop(): connects, restores subscriptions and the outbox, serves. Returns when
  /// stopped (the MQTT session stays on the broker; the outbox stays in the registry).
  void run();
  /// From any thread or a signal-handling thread.
  void stop();

 private:
  struct Waiter;
  struct JoinInProgress;
  struct ProvisionalReading;

  // --- MQTT: arrives on the client's thread, handled on ours (daemon.cpp) ---
  void on_message(const mqtt::Message& m);
  void on_connection(const mqtt::ConnectionEvent& e);
  void dispatch(const mqtt::Message& m);
  bool sender_matches_topic(const crypto::Bytes& payload, std::uint64_t device);
  void handle_from_device(std::uint64_t device, const std::string& topic, const crypto::Bytes& payload);
  void refuse(std::string_view reason, std::uint64_t device, std::string_view what);
  void seen(std::uint64_t device);
  void housekeeping();

  // --- telemetry (daemon_telemetry.cpp) ---
  void handle_telemetry(std::uint64_t device, const std::string& topic, const crypto::Bytes& payload);
  void handle_telemetry_key(std::uint64_t device, const std::string& topic, const crypto::Bytes& payload);
  void restore_telemetry_keys();
  void on_checkpoint(const srup::CheckpointReport& report);
  void drop_provisional(std::uint64_t device, std::uint64_t sequence);
  void hold_provisional(std::uint64_t device, ProvisionalReading reading);
  void expire_provisional(std::uint64_t now);
  void forget_provisional(std::uint64_t device);

  // --- joins (daemon_join.cpp) ---
  void on_join_request(const Device& d, const srup::Inbound& in);
  void on_observation_answer(std::uint64_t joining, const OutboxEntry& answer);
  void join_code_entered(const JoinCode& request, const ControlServer::Reply& reply);
  void finish_join(std::uint64_t device, std::uint8_t status, const std::string& why);
  void send_reader_set(std::uint64_t device);

  // --- commands and the outbox (daemon_commands.cpp) ---
  /// Seals `body` to `device`, stores it in the outbox, publishes it; its token. `reply` (if set)
  /// hears the command's state at once (wait_ms 0) or when answered / after wait_ms; `then` runs
  /// when it is answered (in memory: joins only). `token`: empty for a fresh one. `follow_up`:
  /// the step its answer triggers, kept in its outbox row (docs/srup-c2.md, "Follow-up steps").
  crypto::Bytes send_command(std::uint64_t device, srup::MessageType type, const srup::Body& body,
                             std::uint32_t wait_ms, ControlServer::Reply reply,
                             std::function<void(const OutboxEntry&)> then, crypto::Bytes token,
                             std::optional<FollowUp> follow_up = std::nullopt, std::uint64_t follow_up_arg = 0);
  /// The sealed envelope and its outbox row, not yet stored.
  NewCommand make_command(std::uint64_t device, srup::MessageType type, const srup::Body& body,
                          const crypto::Bytes& token);
  void on_answer(const Device& d, const srup::Inbound& in);
  /// Takes a due follow-up (idempotent: the registry takes each once); `publish`: send an Update
  /// Activate at once (at start the reconnect sweep sends it).
  void take_follow_up(const OutboxEntry& e, bool publish);
  /// At start: every follow-up whose answer was stored before a restart and not yet taken.
  void take_due_follow_ups();
  /// Test-only fault hook (docs/srup-c2.md, "Follow-up steps"): with SRUP_C2_TEST_CRASH_AT set to
  /// "POINT:TYPE", the process ends at once (as if killed) at POINT for an answer to a command of TYPE.
  void test_crash_point(const char* point, std::uint64_t device, const crypto::Bytes& token);
  void sweep_outbox(bool after_reconnect = false);
  void publish_to_device(std::uint64_t device, const crypto::Bytes& envelope);
  void reply_to_device(std::uint64_t device, const srup::Header& request, std::uint8_t status,
                       const std::string& detail);
  void reply_with_token(std::uint64_t device, const crypto::Bytes& token, std::uint8_t status,
                        const std::string& detail);
  void on_device_leaves(const Device& d, const srup::Inbound& in);
  nlohmann::json command_json(const OutboxEntry& e);

  // --- control (daemon_control.cpp) ---
  void on_control(ControlRequest request, ControlServer::Reply reply);
  void control_command(const SendCommand& r, const ControlServer::Reply& reply);
  void authorize(const Authorize& r, const ControlServer::Reply& reply);
  void enrol(const Enrol& request, const ControlServer::Reply& reply);
  /// Drops the device at the broker and in the registry; a joined device hears a Deregister
  /// Command first (unless it asked itself: actor "device").
  void deregister(std::uint64_t device, const std::string& actor, ControlServer::Reply reply);
  nlohmann::json status_json();
  nlohmann::json device_json(const Device& d);
  std::vector<mqtt::dynsec::Acl> device_acls(std::uint64_t device) const;
  std::vector<mqtt::dynsec::Acl> monitor_acls_for(std::uint64_t monitor, std::uint64_t device) const;
  /// The commands one after the other; `done` on our thread with "" or the first error.
  void run_dynsec(std::vector<nlohmann::json> commands, std::function<void(std::string)> done);

  // --- metrics (daemon_metrics.cpp) ---
  std::string metrics_page();

  std::uint64_t now_ms() const;
  void enrol_peer(const Device& d);

  C2Config config_;
  asio::io_context io_;
  srup::LoadedIdentity identity_;
  std::string username_;
  std::unique_ptr<Registry> registry_;
  std::unique_ptr<srup::StateStore> state_;
  std::unique_ptr<srup::Endpoint> endpoint_;
  std::unique_ptr<srup::TelemetryReader> telemetry_;
  std::map<std::uint64_t, srup::PeerKeys> telemetry_peers_;  ///< joined devices, for the reader
  std::unique_ptr<srup::TelemetryKeyStore> telemetry_keys_;   ///< STATE_DIR/telemetry-keys (mqtt 4.6)
  std::unique_ptr<mqtt::Client> mqtt_;
  std::unique_ptr<mqtt::DynsecAdmin> dynsec_;
  std::unique_ptr<ControlServer> control_;
  std::unique_ptr<metrics::MetricsHttpServer> metrics_server_;
  asio::steady_timer outbox_timer_;
  asio::steady_timer housekeeping_timer_;
  asio::signal_set signals_;

  std::multimap<std::string, std::shared_ptr<Waiter>> waiters_;  ///< by waiter_key(device, token)
  std::map<std::uint64_t, JoinInProgress> joins_;                  ///< by device
  std::map<std::uint64_t, std::deque<ProvisionalReading>> provisional_;  ///< oldest first
  common::ShareBudget provisional_budget_;  ///< readings and their JSON bytes, per device and in all
  std::map<std::uint64_t, std::uint64_t> last_seen_;        ///< in memory; the registry every minute
  std::map<std::uint64_t, std::uint64_t> last_seen_saved_;
  C2Counters counters_;
  common::LogLimiter log_limiter_;
  std::atomic<bool> connected_{false};
  /// Messages posted from the MQTT thread and not yet handled, per device (the topic's ID, 0 for
  /// a topic outside the binding) and in all; bytes are payload and topic.
  common::ShareBudget queue_;
  /// Dropped on the MQTT thread because queue_ refused them, by ShareBudget::Verdict.
  std::array<std::atomic<std::uint64_t>, 5> overloaded_{};
  common::LogLimiter queue_log_limiter_;  ///< the drops' own log budget (MQTT thread)
  bool stopping_ = false;
  std::string test_crash_at_;  ///< SRUP_C2_TEST_CRASH_AT (tests only), empty: off
};

}  // namespace pqot::srup_c2
