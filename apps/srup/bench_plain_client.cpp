#include "bench_plain_client.hpp"

#include <mosquitto.h>
#include <mqtt_protocol.h>

#include <chrono>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace pqot::srup_tool {

namespace {

void plain_check(int rc, const std::string& what) {
  if (rc != MOSQ_ERR_SUCCESS) throw std::runtime_error("bench-mqtt: plain MQTT: " + what + ": " + mosquitto_strerror(rc));
}

}  // namespace

PlainMqttClient::PlainMqttClient(PlainMqttOptions options, Handler on_message)
    : options_(std::move(options)), on_message_(std::move(on_message)) {
  static std::once_flag once;
  std::call_once(once, [] { mosquitto_lib_init(); });
  mosq_ = mosquitto_new(options_.client_id.c_str(), true, this);
  if (mosq_ == nullptr) throw std::runtime_error("bench-mqtt: plain MQTT: mosquitto_new failed");
  try {
    plain_check(mosquitto_int_option(mosq_, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V5), "MQTT 5");
    plain_check(mosquitto_int_option(mosq_, MOSQ_OPT_TCP_NODELAY, 1), "TCP_NODELAY");
    plain_check(mosquitto_username_pw_set(mosq_, options_.username.c_str(), options_.password.c_str()), "credentials");
    mosquitto_connect_v5_callback_set(mosq_, [](mosquitto* m, void* obj, int rc, int, const mosquitto_property*) {
      auto* self = static_cast<PlainMqttClient*>(obj);
      self->connack_ = rc;
      if (rc != 0) return;
      self->granted_ = 0;
      for (const auto& filter : self->options_.subscriptions) {
        mosquitto_subscribe_v5(m, nullptr, filter.c_str(), 1, 0, nullptr);
      }
    });
    mosquitto_subscribe_v5_callback_set(
        mosq_, [](mosquitto*, void* obj, int, int count, const int* granted, const mosquitto_property*) {
          auto* self = static_cast<PlainMqttClient*>(obj);
          if (count == 1 && granted[0] >= 0 && granted[0] < 0x80) ++self->granted_;
        });
    mosquitto_disconnect_v5_callback_set(mosq_, [](mosquitto*, void* obj, int, const mosquitto_property*) {
      static_cast<PlainMqttClient*>(obj)->granted_ = 0;
    });
    mosquitto_message_v5_callback_set(
        mosq_, [](mosquitto*, void* obj, const mosquitto_message* msg, const mosquitto_property*) {
          auto* self = static_cast<PlainMqttClient*>(obj);
          const auto* p = static_cast<const std::uint8_t*>(msg->payload);
          self->on_message_(msg->topic, std::span<const std::uint8_t>(p, static_cast<std::size_t>(msg->payloadlen)));
        });
    plain_check(mosquitto_connect(mosq_, options_.host.c_str(), options_.port, 30),
                "connecting to " + options_.host + ":" + std::to_string(options_.port));
    plain_check(mosquitto_loop_start(mosq_), "network thread");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (connack_.load() < 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (connack_.load() != 0) {
      throw std::runtime_error("bench-mqtt: plain MQTT: " +
                               (connack_.load() < 0 ? std::string("no CONNACK within 10 s")
                                                    : "CONNACK refused: " + std::string(mosquitto_reason_string(connack_.load()))));
    }
  } catch (...) {
    mosquitto_disconnect(mosq_);
    mosquitto_loop_stop(mosq_, true);
    mosquitto_destroy(mosq_);
    mosq_ = nullptr;
    throw;
  }
}

void PlainMqttClient::stop() {
  if (stopped_) return;
  stopped_ = true;
  mosquitto_disconnect(mosq_);
  mosquitto_loop_stop(mosq_, false);
}

PlainMqttClient::~PlainMqttClient() {
  stop();
  mosquitto_destroy(mosq_);
}

bool PlainMqttClient::publish(const std::string& topic, std::span<const std::uint8_t> payload) {
  return mosquitto_publish_v5(mosq_, nullptr, topic.c_str(), static_cast<int>(payload.size()), payload.data(), 1,
                              false, nullptr) == MOSQ_ERR_SUCCESS;
}

}  // namespace pqot::srup_tool
