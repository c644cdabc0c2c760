// srup-device, the SRUP-PQ device agent (docs/srup-device.md, docs/srup-mqtt.md): joins its C2,
// obeys only it (actions, data, ID requests, updates, reader sets, terminate, deregister), runs
// every command at most once through the journal, and publishes energy-meter telemetry to the
// readers the C2 names. One io_context thread owns the state; the MQTT client, the action runner,
// the update fetcher and the Modbus meter post their results to it.
#pragma once

#include <asio.hpp>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

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

namespace pqot::srup_device {

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
  /// From any thread.
  void stop();

 private:
  enum class Membership { unjoined, joining, joined, refused, left };

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
  srup::Status observe(const srup::ObservationRequest& r);
  void set_membership(Membership m);
  std::filesystem::path membership_file() const;
  Membership load_membership() const;
  const char* membership_name() const;

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
  asio::steady_timer join_timer_;
  asio::steady_timer telemetry_timer_;
  asio::steady_timer key_timer_;  ///< every telemetry.key_resend_s: the current key again
  asio::signal_set signals_;
  Membership membership_ = Membership::unjoined;
  crypto::Bytes join_token_;
  std::chrono::milliseconds join_backoff_{5000};
  std::uint32_t interval_ms_;
  std::uint32_t persisted_epoch_ = 0;  ///< the key epoch last written to STATE_DIR/telemetry-epoch
  std::uint64_t started_ms_;
  common::LogLimiter log_limiter_;
  bool subscribed_ = false;  ///< the first SUBACK of our topic came
  bool stopping_ = false;
};

}  // namespace pqot::srup_device
