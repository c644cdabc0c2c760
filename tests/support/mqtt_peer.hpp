// An MQTT client for the broker tests: a pqot::mqtt::Client that records what its handlers saw
// (messages, connection events, SUBACKs, PUBACKs), optionally with a DynsecAdmin, and the waits the
// tests need. Handlers run on the client's thread; everything recorded is guarded.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "pqot/mqtt/client.hpp"
#include "pqot/mqtt/dynsec.hpp"
#include "wait.hpp"

namespace pqot::test {

class MqttPeer {
 public:
  /// With `admin`, a DynsecAdmin is created on this client (its responses are routed to it).
  explicit MqttPeer(mqtt::ClientOptions options, bool admin = false) : client_(std::move(options)) {
    client_.on_message([this](const mqtt::Message& m) {
      if (admin_ && admin_->handle(m)) return;
      std::lock_guard g(mu_);
      messages_.push_back(m);
    });
    client_.on_connection([this](const mqtt::ConnectionEvent& e) {
      std::lock_guard g(mu_);
      events_.push_back(e);
    });
    client_.on_suback([this](const mqtt::SubackEvent& e) {
      std::lock_guard g(mu_);
      subacks_.push_back(e);
    });
    client_.on_puback([this](const mqtt::PubackEvent& e) {
      std::lock_guard g(mu_);
      pubacks_[e.mid] = e.reason_code;
    });
    if (admin) admin_ = std::make_unique<mqtt::DynsecAdmin>(client_);
  }
  ~MqttPeer() {
    client_.stop();  // first: the message handler uses admin_
    admin_.reset();
  }

  mqtt::Client& client() { return client_; }
  mqtt::DynsecAdmin& admin() { return *admin_; }
  void start() { client_.start(); }
  mqtt::ClientStats stats() const { return client_.stats(); }

  /// Waits for the n-th accepted CONNACK.
  bool wait_connects(std::uint64_t n = 1) const {
    return eventually([&] { return client_.connected() && client_.stats().connects >= n; }, kPatience * 3);
  }
  /// Waits for the SUBACK of `filter`; its result (nullopt if none came).
  std::optional<int> wait_suback(const std::string& filter) const {
    std::optional<int> r;
    eventually([&] {
      r = client_.subscription_result(filter);
      return r.has_value();
    });
    return r;
  }
  /// subscribe() and wait_suback().
  std::optional<int> subscribe(const std::string& filter) {
    client_.subscribe(filter, 1);
    return wait_suback(filter);
  }
  /// Publishes (QoS 1) and waits for the PUBACK; its reason code, or -1 if publish() refused
  /// or no PUBACK came.
  int publish_acked(const std::string& topic, const std::string& payload) {
    const auto r = client_.publish(topic, payload, 1);
    if (!r) return -1;
    return wait_puback(r.mid);
  }
  int wait_puback(int mid) const {
    int code = -1;
    eventually([&] {
      std::lock_guard g(mu_);
      const auto it = pubacks_.find(mid);
      if (it == pubacks_.end()) return false;
      code = it->second;
      return true;
    }, kPatience * 3);
    return code;
  }

  std::vector<mqtt::Message> messages() const {
    std::lock_guard g(mu_);
    return messages_;
  }
  std::size_t count(const std::string& topic, const std::string& payload = "") const {
    std::lock_guard g(mu_);
    std::size_t n = 0;
    for (const auto& m : messages_) {
      if (m.topic == topic && (payload.empty() || std::string(m.payload.begin(), m.payload.end()) == payload)) ++n;
    }
    return n;
  }
  bool wait_message(const std::string& topic, const std::string& payload, std::size_t times = 1) const {
    return eventually([&] { return count(topic, payload) >= times; }, kPatience * 3);
  }
  std::vector<mqtt::ConnectionEvent> events() const {
    std::lock_guard g(mu_);
    return events_;
  }
  /// The reason of the last failed connection attempt ("" if none).
  std::string last_failure() const {
    std::lock_guard g(mu_);
    for (auto it = events_.rbegin(); it != events_.rend(); ++it) {
      if (it->kind == mqtt::ConnectionEvent::Kind::connect_failed) return it->reason;
    }
    return "";
  }

 private:
  mutable std::mutex mu_;
  std::vector<mqtt::Message> messages_;
  std::vector<mqtt::ConnectionEvent> events_;
  std::vector<mqtt::SubackEvent> subacks_;
  std::map<int, int> pubacks_;
  mqtt::Client client_;
  std::unique_ptr<mqtt::DynsecAdmin> admin_;
};

/// Whether `reason` (MqttPeer::last_failure) is what a client without a certificate sees when
/// the broker requires one. TLS 1.3 lets the client finish its side of the handshake and send
/// CONNECT before the broker has checked it; the broker's alert then races the reset its close
/// causes. The client reads either the alert ("... certificate required") or the reset, which
/// libmosquitto reports as EPROTO ("Protocol error") with no OpenSSL text. Only the broker's log
/// says why in every run ("peer did not return a certificate").
inline bool is_no_certificate_refusal(const std::string& reason) {
  return reason.find("certificate required") != std::string::npos || reason == "Protocol error";
}

/// The ACLs of a device `dev` (docs/mqtt.md, "Registration"; the design note's device role).
inline std::vector<mqtt::dynsec::Acl> device_acls(const std::string& dev) {
  using mqtt::dynsec::AclType;
  return {{AclType::publish_client_send, "srup/" + dev + "/dev", true, 0},
          {AclType::publish_client_send, "srup/" + dev + "/tm", true, 0},
          {AclType::publish_client_send, "srup/" + dev + "/tk/+", true, 0},
          {AclType::subscribe_pattern, "srup/" + dev + "/c2", true, 0},
          {AclType::publish_client_receive, "srup/" + dev + "/c2", true, 0}};
}

/// All of srup/# both ways (a bridge, or a test subscriber).
inline std::vector<mqtt::dynsec::Acl> all_srup_acls() {
  using mqtt::dynsec::AclType;
  return {{AclType::publish_client_send, "srup/#", true, 0},
          {AclType::publish_client_receive, "srup/#", true, 0},
          {AclType::subscribe_pattern, "srup/#", true, 0}};
}

/// Registers `username` with `acls` through `admin`; "" on success, else the failing command and
/// the plugin's error.
inline std::string register_identity(MqttPeer& admin, const std::string& username,
                                     const std::vector<mqtt::dynsec::Acl>& acls) {
  for (const auto& r : admin.admin().execute_all(mqtt::dynsec::register_identity(username, acls))) {
    if (!r.ok) return r.command + ": " + r.error;
  }
  return "";
}

}  // namespace pqot::test
