// Plain MQTT for `srup bench-mqtt`: the peer the SRUP paper compared against, as a plain MQTT
// program would be written with libmosquitto (docs/srup-tool.md, "bench-mqtt"): TCP without TLS,
// a dynsec username and password, MQTT 5, QoS 1, TCP_NODELAY, libmosquitto's own network thread
// (mosquitto_loop_start). Benchmark code only: the programs of pqot reach the broker through
// pqot::mqtt::Client, which speaks TLS 1.3 and nothing else.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

struct mosquitto;

namespace pqot::srup_tool {

struct PlainMqttOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  std::string client_id;
  std::string username, password;
  std::vector<std::string> subscriptions;  ///< topic filters, subscribed (QoS 1) after every CONNACK
};

class PlainMqttClient {
 public:
  using Handler = std::function<void(const std::string& topic, std::span<const std::uint8_t> payload)>;

  /// Connects (blocking, at most 10 s) and starts the network thread; `on_message` runs on it.
  /// Throws std::runtime_error naming what failed (connection, CONNACK refused).
  PlainMqttClient(PlainMqttOptions options, Handler on_message);
  ~PlainMqttClient();
  PlainMqttClient(const PlainMqttClient&) = delete;
  PlainMqttClient& operator=(const PlainMqttClient&) = delete;

  /// True once the broker granted every subscription of the current connection.
  bool subscribed() const noexcept { return granted_.load() >= options_.subscriptions.size(); }
  /// Disconnects and joins the network thread (no handler runs after it returns). Idempotent.
  void stop();
  /// QoS 1; callable from any thread. False if libmosquitto refused (not connected, ...).
  bool publish(const std::string& topic, std::span<const std::uint8_t> payload);

 private:
  PlainMqttOptions options_;
  Handler on_message_;
  mosquitto* mosq_ = nullptr;
  std::atomic<std::size_t> granted_{0};
  std::atomic<int> connack_{-1};
  bool stopped_ = false;
};

}  // namespace pqot::srup_tool
