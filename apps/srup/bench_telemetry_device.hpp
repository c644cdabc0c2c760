// The load of `srup bench-telemetry` (docs/srup-tool.md, "bench-telemetry"): devices in the bench's
// own process, each enrolled at the C2 through its control socket as an operator does, with its own
// broker certificate and MQTT connection, joining (simple join) and taking the C2's Reader Set as
// srup-device does, then sealing 3-phase meter readings with the library's TelemetrySender (the
// Telemetry Keys, the Checkpoints every `checkpoint_messages`) as fast as the flow window lets them.
//
// In process rather than srup-device processes: srup-device reads its meter at most every 100 ms
// (10 readings/s per device), so saturating a C2 would take hundreds of agents, each with its own
// process, threads and TLS connection, whose CPU would crowd the C2 on a small machine.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "bench_broker.hpp"
#include "bench_telemetry_c2.hpp"
#include "pqot/mqtt/client.hpp"
#include "pqot/srup/endpoint.hpp"
#include "pqot/srup/telemetry.hpp"

namespace pqot::srup_tool {

/// Flow control shared by all generators: at most `window` readings published and not yet opened
/// by the C2 (its srup_c2_telemetry_readings_total, polled), so that neither the broker's queue
/// for the C2 (1,000) nor the C2's own (10,000) overflows and every reading is one the C2 handles.
class BenchFlow {
 public:
  explicit BenchFlow(std::uint64_t window) : window_(window) {}
  /// Takes one reading's credit, waiting while the window is full. False once stopped.
  bool acquire();
  /// The C2's count of readings opened (from its metrics page).
  void set_opened(std::uint64_t opened);
  void stop();
  std::uint64_t published() const noexcept { return published_.load(); }
  /// Seconds generators spent waiting for the window, summed over generators.
  double waited_seconds() const noexcept { return static_cast<double>(waited_us_.load()) / 1e6; }

 private:
  const std::uint64_t window_;
  std::mutex m_;
  std::condition_variable cv_;
  std::atomic<std::uint64_t> published_{0};
  std::uint64_t opened_ = 0;
  bool stopped_ = false;
  std::atomic<std::uint64_t> waited_us_{0};
};

struct BenchDeviceOptions {
  std::uint64_t id = 0;
  srup::Suite suite = srup::kDefaultSuite;
  std::filesystem::path dir;  ///< created; broker key and certificate, the device's state.db
  std::uint16_t checkpoint_messages = 64;
};

class BenchDevice {
 public:
  /// Makes the identity and broker key, enrols at `c2` (simple join), connects to `broker` with
  /// the issued certificate and subscribes to srup/<dev>/c2. Throws std::runtime_error.
  BenchDevice(const BenchDeviceOptions& options, const BenchC2& c2, const BenchBroker& broker);
  ~BenchDevice();
  BenchDevice(const BenchDevice&) = delete;
  BenchDevice& operator=(const BenchDevice&) = delete;

  /// Sends the Join Request (again, a new envelope with the same token) when it is due: after
  /// the SUBACK, then every 3 s until the C2 answers. Call until ready().
  void join_step();
  /// Joined and the C2's Reader Set taken: the telemetry key went to the C2.
  bool ready() const noexcept { return ready_.load(); }
  /// The first failure (a refused join, a message that did not open, a publish refused).
  std::string error() const;

  /// Seals one reading and publishes it, with the Telemetry Keys and Checkpoints that fall due.
  /// From one thread at a time (a generator's).
  void send_reading();

  std::uint64_t id() const noexcept { return id_; }
  mqtt::ClientStats mqtt_stats() const { return client_->stats(); }

 private:
  void on_message(const mqtt::Message& m);
  void publish(const std::string& topic, const srup::Bytes& payload);
  void publish_outgoing(const std::vector<srup::Outgoing>& out);
  void fail(const std::string& what);

  std::uint64_t id_;
  std::uint16_t checkpoint_messages_;
  std::string to_device_, from_device_, telemetry_topic_;
  std::unique_ptr<srup::StateStore> state_;
  std::unique_ptr<srup::Endpoint> endpoint_;
  std::unique_ptr<srup::TelemetrySender> telemetry_;
  std::unique_ptr<mqtt::Client> client_;
  srup::PublicKeys public_keys_;  // what the Join Request carries
  srup::Bytes join_token_;
  std::optional<std::chrono::steady_clock::time_point> join_sent_;
  std::atomic<bool> joined_{false}, ready_{false};
  std::uint64_t readings_ = 0;
  mutable std::mutex mu_;  // endpoint_, telemetry_, state_, error_: the network thread and a generator
  std::string error_;
};

}  // namespace pqot::srup_tool
