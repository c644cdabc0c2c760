// srup-device, the SRUP-PQ device agent (docs/srup-device.md, docs/srup-mqtt.md): joins its C2,
// obeys only it (actions, data, ID requests, updates, reader sets, terminate, deregister), runs
// every command at most once through the journal, and publishes energy-meter telemetry to the
// readers the C2 names. One io_context thread owns the state; the MQTT client, the action runner,
// the update fetcher and the Modbus meter post their results to it.
#pragma once

#include <asio.hpp>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "action_runner.hpp"
#include "config.hpp"
#include "meter_model.hpp"
#include "modbus_meter.hpp"
#include "pqot/common/log_limiter.hpp"
#include "pqot/mqtt/client.hpp"
#include "pqot/srup/endpoint.hpp"
#include "pqot/srup/identity.hpp"
#include "pqot/srup/state.hpp"
#include "pqot/srup/telemetry.hpp"
#include "update_fetch.hpp"

namespace pqot::metrics {
class MetricsHttpServer;
}

namespace pqot::srup_device {

/// Messages handed from the MQTT thread to the agent's and not yet handled; past it they are
/// dropped and counted (srup_device_overload_drops_total): the C2's outbox sends its commands
/// again, so only a flood (of forgeries, say) loses anything.
inline constexpr std::size_t kMaxQueuedMessages = 1'000;

/// What the metrics page shows (docs/srup-device.md, "Metrics"); touched on the agent's thread only.
struct DeviceCounters {
  std::map<std::string, std::uint64_t> refusals;  ///< by reason (docs/srup-pq.md section 6)
  std::uint64_t answers_resent = 0;   ///< commands answered by the journal: repeats, 0x90, 0x92
  std::uint64_t broker_refusals = 0;  ///< publishes and subscriptions the broker refused
};

class Agent {
 public:
  /// Loads the identity, the C2's public identity and the state; prepares everything; starts
  /// nothing. Throws std::runtime_error with a message for the operator.
  explicit Agent(DeviceConfig config);
  ~Agent();
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  /// Runs until stop() (SIGTERM/SIGINT).
  void run();
  /// Instead of run(), once (srup-device --resign / --deregister, docs/srup-device.md): sends
  /// `request` (Resign Request or Deregister Request) to the C2, again with backoff until the C2
  /// answers or `wait` passes; on the C2's 0x70 / 0x80 the membership becomes "left". Runs no
  /// command and no telemetry. Returns 0 when the C2 confirmed, 1 when it refused or did not
  /// answer in time, 2 when this device has not joined its C2 (nothing to leave).
  int leave(srup::MessageType request, std::chrono::milliseconds wait);
  /// From any thread.
  void stop();

 private:
  enum class Membership { unjoined, joining, joined, refused, left };

  void start_mqtt();
  void on_connection(const mqtt::ConnectionEvent& e);
  void on_message(const std::string& topic, const crypto::Bytes& payload);
  void execute(const srup::Inbound& in);
  void answer(const srup::Header& command, srup::Status status, const std::string& detail);
  void answer_data(const srup::Header& command, const srup::Data& data);
  void publish(const std::string& topic, const crypto::Bytes& wire);
  void refuse(std::string_view reason, std::string_view what);

  // joining (agent_join.cpp)
  void send_join_request();
  void on_join_answer(const srup::Inbound& in);
  void show_code(const srup::OneTimeCodeBytes& code);
  void observe(const srup::Header& h, const srup::ObservationRequest& r);
  std::optional<srup::Status> observed(const srup::ObservationRequest& r) const;
  void poll_observations();
  void on_join_command(const srup::Header& h, const srup::JoinCommand& j);
  static std::filesystem::path current_c2_file(const DeviceConfig& c);
  static srup::PublicIdentity load_c2(const DeviceConfig& c);
  void set_membership(Membership m);
  std::filesystem::path membership_file() const;
  Membership load_membership() const;
  const char* membership_name() const;

  // leaving: resign and deregister requests (agent_leave.cpp)
  void send_leave_request();
  void on_leave_answer(const srup::Inbound& in);

  // telemetry (agent_telemetry.cpp)
  void on_reader_set(const srup::Inbound& in);
  void telemetry_tick();
  void send_reading(const srup::Reading& reading);
  void publish_outgoing(const std::vector<srup::Outgoing>& out);
  std::uint32_t next_key_epoch();
  void telemetry_start();
  void make_telemetry_sender();
  void restore_readers();
  void save_readers(const srup::ReaderSet& set);
  std::filesystem::path readers_file() const;
  std::filesystem::path key_epoch_file() const;
  void key_resend_tick();

  // data (agent.cpp)
  std::optional<srup::Value> data_value(const std::string& id) const;

  // metrics (agent_metrics.cpp)
  std::string metrics_page() const;

  std::uint64_t now_ms() const;

  DeviceConfig config_;
  asio::io_context io_;
  srup::LoadedIdentity identity_;
  srup::PublicIdentity c2_;
  std::unique_ptr<srup::StateStore> state_;
  std::unique_ptr<srup::Endpoint> endpoint_;
  std::unique_ptr<mqtt::Client> mqtt_;
  std::unique_ptr<ActionRunner> runner_;
  std::unique_ptr<UpdateFetcher> fetcher_;
  std::unique_ptr<MeterModel> model_;
  std::unique_ptr<ModbusMeter> modbus_;
  std::unique_ptr<srup::TelemetrySender> telemetry_;
  std::unique_ptr<metrics::MetricsHttpServer> metrics_server_;
  asio::steady_timer join_timer_;
  asio::steady_timer telemetry_timer_;
  asio::steady_timer observe_timer_;
  asio::steady_timer leave_deadline_;
  asio::steady_timer key_timer_;  ///< every telemetry.key_resend_s: the current key again
  asio::signal_set signals_;
  Membership membership_ = Membership::unjoined;
  crypto::Bytes join_token_;
  std::chrono::milliseconds join_backoff_{5000};
  /// An Observation Request waiting for its observation (docs/srup-mqtt.md 4.2).
  struct PendingObservation {
    srup::Header header;
    srup::ObservationRequest request;
    std::chrono::steady_clock::time_point deadline;
  };
  std::vector<PendingObservation> observations_;
  std::optional<srup::MessageType> leaving_;  ///< set by leave(): the request it sends
  crypto::Bytes leave_token_;
  int leave_result_ = 1;
  std::uint32_t interval_ms_;
  std::uint32_t persisted_epoch_ = 0;  ///< the key epoch last written to STATE_DIR/telemetry-epoch
  std::uint64_t started_ms_;
  common::LogLimiter log_limiter_;
  DeviceCounters counters_;
  std::atomic<bool> connected_{false};
  std::atomic<std::size_t> queued_{0};        ///< posted from the MQTT thread, not yet handled
  std::atomic<std::uint64_t> overloaded_{0};  ///< dropped because queued_ was at its bound
  bool subscribed_ = false;  ///< the first SUBACK of our topic came
  bool stopping_ = false;
};

}  // namespace pqot::srup_device
