// srup bench-mqtt (docs/srup-tool.md, "bench-mqtt"): SRUP-PQ through a real mosquitto beside plain
// MQTT and the original SRUP, measured in the same run. Shared by the files of the command:
//   bench_mqtt_contenders.cpp  what each contender does at each end;
//   bench_mqtt_wire.cpp        the two ends' MQTT connections (TLS, or plain TCP) and one exchange;
//   bench_mqtt_cmd.cpp         the command, the rounds, the figures and the report.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "pqot/crypto/bytes.hpp"

namespace pqot::srup_tool::mqtt_bench {

using Bytes = crypto::Bytes;
using BenchClock = std::chrono::steady_clock;

inline constexpr std::uint64_t kBenchC2 = 0xc2;
/// The device of the TLS connections, and of the plain ones: two IDs, so that each connection's
/// topics are its own, of the same length (the same MQTT bytes per message).
inline constexpr std::uint64_t kBenchDevice = 0xa1;
inline constexpr std::uint64_t kPlainBenchDevice = 0xa2;
inline constexpr std::uint8_t kBenchAction = 7;

/// How a contender's messages travel: the project's client (TLS 1.3, certificate) or plain MQTT
/// (TCP, username and password; bench_plain_client.hpp).
enum class Transport : std::uint8_t { tls, plain };

/// What is measured: a command (C2 -> device, acted on, answered, the answer checked), or a
/// telemetry reading (device -> the C2's monitor, opened there).
enum class Flow : std::uint8_t { command, telemetry };

/// A message as an end received it.
struct Received {
  std::string topic;
  std::span<const std::uint8_t> payload;
};

/// What a handler made of a message: the exchange's awaited message (done), or one that belongs
/// to it but does not end it (a telemetry Checkpoint or Telemetry Key). A refusal throws.
enum class Seen : std::uint8_t { done, other };

/// What `make` produced: the messages to publish, in order, and which one is the command or
/// reading itself (the others: a telemetry Checkpoint or Telemetry Key that fell due with it).
struct Made {
  std::vector<Bytes> messages;
  std::size_t main = 0;
};

/// What one contender does at each end. Commands: `make` runs on the caller's thread (the C2
/// sealing), `on_device` on the device's network thread (returns the answer to publish and marks
/// `acted`), `on_c2` on the C2's (Seen::done once the answer verified). Telemetry: `make` is the
/// device sealing a reading (every message it returns is published, in order, from the device's
/// end), `on_c2` the monitor opening them.
struct Contender {
  std::string name;
  std::string note;
  Flow flow = Flow::command;
  Transport transport = Transport::tls;
  std::function<Made(std::uint64_t n)> make;
  std::function<Bytes(const Received& m, BenchClock::time_point* acted)> on_device;
  std::function<Seen(const Received& m)> on_c2;
  /// Filled in by the exchanges: the latest command or reading's payload, its answer's.
  std::size_t message_bytes = 0;
  std::size_t answer_bytes = 0;
};

/// The contenders of a run, in the order they run each round. `tmpfs_dir` empty: no journal on
/// tmpfs; `disk_dir`: the journals on disk.
std::vector<Contender> make_contenders(const std::string& tmpfs_dir, const std::string& disk_dir);

/// One round's samples of one contender (microseconds).
struct Samples {
  std::vector<double> one_way, round_trip, device_cpu, c2_cpu;
  int lost = 0;
  double payload_bytes = 0;  ///< every MQTT payload of the measured exchanges, both ways
  // With --device-netns: IP bytes the device's side of the link sent (up) and received (down)
  // while the round's measured exchanges ran, per exchange (answers, acknowledgements and TLS
  // records included).
  double up_bytes = 0, down_bytes = 0;
};

/// Where the ends connect and how the plain connections log in.
struct WireOptions {
  std::string ca_file, cert_file, key_file;  ///< the TLS client's
  std::uint16_t tls_port = 0, plain_port = 0;
  std::string plain_username, plain_password;
  /// The device's ends in this network namespace, reaching the broker at broker_address; both
  /// empty: loopback.
  std::string device_netns, broker_address;
};

/// The connections of both ends, both transports, and the exchange in progress.
class Wire {
 public:
  explicit Wire(const WireOptions& o);
  ~Wire();
  Wire(const Wire&) = delete;
  Wire& operator=(const Wire&) = delete;
  /// One command or reading; false (and s->lost counted) if it did not complete within 10 s.
  /// Throws std::runtime_error when a handler refused a message.
  bool exchange(Contender& c, std::uint64_t n, Samples* s);
  /// Messages that arrived while no exchange was in progress: a late answer after a timeout, or a
  /// duplicate delivery. Plain MQTT's payloads carry no exchange number, so only this shows that
  /// none completed another exchange.
  std::uint64_t late_messages() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

double thread_cpu_us();

}  // namespace pqot::srup_tool::mqtt_bench
