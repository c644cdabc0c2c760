// The MQTT client (docs/mqtt.md, "The client"). libmosquitto does the protocol; this file owns the
// network thread. mosquitto_loop_start() is not used: in libmosquitto 2.0.11 with OpenSSL 3 its
// thread ends for good when the broker dies (SSL "unexpected eof" is taken as fatal EPROTO), and
// its reconnect wait is an uninterruptible nanosleep. Our thread drives mosquitto_loop() and
// mosquitto_reconnect() itself, with a backoff wait that stop() interrupts.
#include "pqot/mqtt/client.hpp"

#include <mosquitto.h>
#include <mqtt_protocol.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_set>

namespace pqot::mqtt {

namespace {

constexpr std::size_t kClientMaxTopicLength = 1024;
constexpr std::size_t kClientMaxLogText = 512;

void client_lib_init() {
  static std::once_flag once;
  std::call_once(once, [] { mosquitto_lib_init(); });
}

std::string openssl_reason() {
  const unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0) return "unknown OpenSSL error";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  return buf;
}

void client_check_readable(const std::string& path, const char* what) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    throw ClientError(std::string("MQTT TLS ") + what + " '" + path + "' is not a readable file");
  }
}

// Loads the TLS files the way the connection will, so that a bad file is an error here and not a
// connection that fails over and over.
void client_check_tls(const TlsFiles& tls) {
  client_check_readable(tls.ca_file, "CA file");
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_client_method()), SSL_CTX_free);
  if (!ctx) throw ClientError("cannot create a TLS context: " + openssl_reason());
  ERR_clear_error();
  if (SSL_CTX_load_verify_locations(ctx.get(), tls.ca_file.c_str(), nullptr) != 1) {
    throw ClientError("MQTT TLS CA file '" + tls.ca_file + "' is unusable: " + openssl_reason());
  }
  if (tls.cert_file.empty()) return;
  client_check_readable(tls.cert_file, "certificate file");
  client_check_readable(tls.key_file, "key file");
  if (SSL_CTX_use_certificate_chain_file(ctx.get(), tls.cert_file.c_str()) != 1) {
    throw ClientError("MQTT TLS certificate file '" + tls.cert_file + "' is unusable: " + openssl_reason());
  }
  if (SSL_CTX_use_PrivateKey_file(ctx.get(), tls.key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    throw ClientError("MQTT TLS key file '" + tls.key_file + "' is unusable: " + openssl_reason());
  }
  if (SSL_CTX_check_private_key(ctx.get()) != 1) {
    throw ClientError("MQTT TLS key file '" + tls.key_file + "' does not match certificate '" +
                      tls.cert_file + "'");
  }
}

void client_check_options(const ClientOptions& o) {
  const auto bad = [](const std::string& what) { throw ClientError("MQTT client option " + what); };
  if (o.client_id.empty() || o.client_id.size() > ClientOptions::kMaxClientIdLength) {
    bad("client_id must be 1.." + std::to_string(ClientOptions::kMaxClientIdLength) + " characters");
  }
  for (const char c : o.client_id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) bad("client_id '" + o.client_id + "' may hold only A-Z a-z 0-9 . _ -");
  }
  if (o.host.empty() || o.host.size() > 253) bad("host must be 1..253 characters");
  if (o.port == 0) bad("port must be 1..65535");
  if (o.tls.ca_file.empty()) bad("tls.ca_file is required (TLS is not optional)");
  if (o.tls.cert_file.empty() != o.tls.key_file.empty()) bad("tls.cert_file and tls.key_file go together");
  if (o.keepalive.count() < 5 || o.keepalive.count() > 65535) bad("keepalive must be 5..65535 s");
  if (o.reconnect_min.count() < 10 || o.reconnect_max > std::chrono::hours(1) ||
      o.reconnect_min > o.reconnect_max) {
    bad("reconnect_min..reconnect_max must lie in 10 ms..1 h with min <= max");
  }
  if (o.max_inflight < 1 || o.max_inflight > 65535) bad("max_inflight must be 1..65535");
  if (o.max_queued < 1 || o.max_queued > 1000000) bad("max_queued must be 1..1000000");
  if (o.max_payload < 1 || o.max_payload > (std::size_t{256} << 20)) bad("max_payload must be 1..268435456");
  if (o.max_subscriptions < 1 || o.max_subscriptions > 65535) bad("max_subscriptions must be 1..65535");
}

bool client_topic_ok(const std::string& topic, bool filter) {
  if (topic.empty() || topic.size() > kClientMaxTopicLength) return false;
  if (mosquitto_validate_utf8(topic.c_str(), static_cast<int>(topic.size())) != MOSQ_ERR_SUCCESS) return false;
  return (filter ? mosquitto_sub_topic_check2(topic.c_str(), topic.size())
                 : mosquitto_pub_topic_check2(topic.c_str(), topic.size())) == MOSQ_ERR_SUCCESS;
}

struct ClientCounters {
  std::atomic<std::uint64_t> connects{0}, disconnects{0}, connect_failures{0}, sessions_present{0},
      sessions_new{0}, resubscribes{0}, published{0}, acked{0}, refused_publishes{0},
      rejected_publishes{0}, granted_subscriptions{0}, refused_subscriptions{0}, received{0},
      dropped_oversized{0};
};

}  // namespace

const char* to_string(PublishError error) noexcept {
  switch (error) {
    case PublishError::none: return "ok";
    case PublishError::not_connected: return "not connected";
    case PublishError::payload_too_large: return "payload too large";
    case PublishError::queue_full: return "queue full";
    case PublishError::invalid_topic: return "invalid topic";
    case PublishError::invalid_qos: return "invalid QoS";
    case PublishError::library: return "refused by libmosquitto";
  }
  return "?";
}

struct Client::Impl {
  struct Subscription {
    int qos = 1;
    std::optional<int> result;  // last SUBACK in this session
    bool held = false;          // granted in the current session
  };

  ClientOptions opt;
  mosquitto* mosq = nullptr;
  MessageHandler message_handler;
  ConnectionHandler connection_handler;
  SubackHandler suback_handler;
  PubackHandler puback_handler;

  std::mutex lifecycle_mu;  // start/stop; never taken by publish() (handlers call it during stop())
  std::atomic<bool> started{false};
  std::atomic<bool> stopped{false};
  std::thread thread;

  // Held around mosquitto_connect_bind_v5 (it recreates libmosquitto's wake-up socket pair) and
  // around every call into libmosquitto from other threads. Order: connect_mu, then state_mu.
  std::mutex connect_mu;
  mutable std::mutex state_mu;
  std::map<std::string, Subscription> subs;
  std::map<int, std::string> sub_mids;
  std::unordered_set<int> pending;
  std::atomic<bool> connected{false};

  std::mutex wait_mu;
  std::condition_variable wait_cv;
  std::atomic<bool> stopping{false};

  // Network thread only.
  bool attempt_connected = false;
  bool attempt_reported = false;
  bool reset_backoff = false;
  bool in_connect_call = false;  // inside mosquitto_connect_bind_v5, connect_mu held: no handlers

  std::mutex log_mu;
  std::string last_error_log;
  ClientCounters n;

  std::string reason_text(int rc) {
    std::string text = mosquitto_strerror(rc);
    std::lock_guard g(log_mu);
    if (!last_error_log.empty()) text += " (" + last_error_log + ")";
    return text;
  }

  void emit(const ConnectionEvent& e) {
    if (connection_handler) connection_handler(e);
  }

  void report_failure(int code, std::string reason) {
    if (attempt_reported) return;
    attempt_reported = true;
    ++n.connect_failures;
    emit({ConnectionEvent::Kind::connect_failed, false, code, std::move(reason)});
  }

  // Network thread, from the CONNACK callback: state_mu held by the caller.
  void send_subscription_locked(const std::string& filter, const Subscription& s) {
    int mid = 0;
    if (mosquitto_subscribe_v5(mosq, &mid, filter.c_str(), s.qos, 0, nullptr) == MOSQ_ERR_SUCCESS) {
      sub_mids[mid] = filter;
    }
  }

  void on_connect(int rc, int flags) {
    if (rc != 0) {
      report_failure(rc, std::string("CONNACK refused: ") + mosquitto_reason_string(rc));
      return;
    }
    const bool session_present = (flags & 1) != 0;
    attempt_connected = true;
    attempt_reported = true;
    reset_backoff = true;
    ++n.connects;
    ++(session_present ? n.sessions_present : n.sessions_new);
    {
      std::lock_guard g(state_mu);
      connected = true;
      sub_mids.clear();
      for (auto& [filter, s] : subs) {
        if (!session_present) {
          s.held = false;
          s.result.reset();
        }
        if (s.held) continue;
        send_subscription_locked(filter, s);
        ++n.resubscribes;
      }
    }
    emit({ConnectionEvent::Kind::connected, session_present, 0, "connected"});
  }

  void on_disconnect(int rc) {
    {
      std::lock_guard g(state_mu);
      connected = false;
    }
    if (in_connect_call) return;  // run() reports the failed attempt once connect_mu is released
    if (attempt_connected) {
      attempt_connected = false;
      ++n.disconnects;
      emit({ConnectionEvent::Kind::disconnected, false, rc, rc == 0 ? "disconnected by us" : reason_text(rc)});
    } else {
      report_failure(rc, reason_text(rc));
    }
  }

  void on_subscribe(int mid, int count, const int* granted) {
    SubackEvent e;
    {
      std::lock_guard g(state_mu);
      const auto it = sub_mids.find(mid);
      if (it == sub_mids.end() || count < 1) return;
      e.filter = it->second;
      e.result = granted[0];
      sub_mids.erase(it);
      if (const auto s = subs.find(e.filter); s != subs.end()) {
        s->second.result = e.result;
        s->second.held = e.granted();
      }
    }
    ++(e.granted() ? n.granted_subscriptions : n.refused_subscriptions);
    if (suback_handler) suback_handler(e);
  }

  void on_publish(int mid, int reason_code) {
    {
      std::lock_guard g(state_mu);
      if (pending.erase(mid) == 0) return;  // QoS 0 (sent, no PUBACK) or not ours
    }
    const PubackEvent e{mid, reason_code};
    ++(e.accepted() ? n.acked : n.refused_publishes);
    if (puback_handler) puback_handler(e);
  }

  void on_message(const mosquitto_message* m) {
    if (m->payloadlen < 0 || static_cast<std::size_t>(m->payloadlen) > opt.max_payload || m->topic == nullptr) {
      ++n.dropped_oversized;
      return;
    }
    Message msg;
    msg.topic = m->topic;
    const auto* p = static_cast<const std::uint8_t*>(m->payload);
    if (m->payloadlen > 0) msg.payload.assign(p, p + m->payloadlen);
    msg.qos = m->qos;
    msg.retain = m->retain;
    ++n.received;
    if (message_handler) message_handler(msg);
  }

  void on_log(int level, const char* text) {
    if ((level & (MOSQ_LOG_ERR | MOSQ_LOG_WARNING)) == 0 || text == nullptr) return;
    std::lock_guard g(log_mu);
    last_error_log.assign(text, std::min(std::strlen(text), kClientMaxLogText));
  }

  bool wait_backoff(std::chrono::milliseconds delay) {
    std::unique_lock l(wait_mu);
    return !wait_cv.wait_for(l, delay, [this] { return stopping.load(); });
  }

  void run(mosquitto_property* props) {
    auto delay = opt.reconnect_min;
    bool first = true;
    while (!stopping) {
      {
        std::lock_guard g(log_mu);
        last_error_log.clear();
      }
      attempt_connected = false;
      attempt_reported = false;
      int rc = 0;
      if (first) {
        // Stores the CONNECT properties (session expiry, maximum packet size) in libmosquitto,
        // which sends them again on every mosquitto_reconnect(), even after a failed first try.
        std::lock_guard g(connect_mu);
        in_connect_call = true;
        rc = mosquitto_connect_bind_v5(mosq, opt.host.c_str(), opt.port,
                                       static_cast<int>(opt.keepalive.count()), nullptr, props);
        in_connect_call = false;
        first = false;
      } else {
        rc = mosquitto_reconnect(mosq);
      }
      while (rc == MOSQ_ERR_SUCCESS && !stopping) rc = mosquitto_loop(mosq, 1000, 1);
      if (stopping) break;
      if (!attempt_connected) report_failure(rc, reason_text(rc));
      if (reset_backoff) {
        reset_backoff = false;
        delay = opt.reconnect_min;
      }
      if (!wait_backoff(delay)) break;
      delay = std::min(delay * 2, opt.reconnect_max);
    }
    // Leaving: DISCONNECT (stop() queued it) goes out within a bounded number of loop turns.
    mosquitto_disconnect(mosq);
    for (int i = 0; i < 20 && mosquitto_socket(mosq) >= 0; ++i) {
      if (mosquitto_loop(mosq, 50, 1) != MOSQ_ERR_SUCCESS) break;
    }
    if (attempt_connected) on_disconnect(0);
    mosquitto_property_free_all(&props);
  }
};

Client::Client(ClientOptions options) : impl_(std::make_unique<Impl>()) {
  client_check_options(options);
  impl_->opt = std::move(options);
}

Client::~Client() {
  stop();
  if (impl_->mosq != nullptr) mosquitto_destroy(impl_->mosq);
}

void Client::on_message(MessageHandler handler) { impl_->message_handler = std::move(handler); }
void Client::on_connection(ConnectionHandler handler) { impl_->connection_handler = std::move(handler); }
void Client::on_suback(SubackHandler handler) { impl_->suback_handler = std::move(handler); }
void Client::on_puback(PubackHandler handler) { impl_->puback_handler = std::move(handler); }

void Client::start() {
  Impl& im = *impl_;
  std::lock_guard life(im.lifecycle_mu);
  if (im.started) throw ClientError("MQTT client '" + im.opt.client_id + "' started twice");
  client_check_tls(im.opt.tls);
  client_lib_init();
  mosquitto* m = mosquitto_new(im.opt.client_id.c_str(), im.opt.clean_session, &im);
  if (m == nullptr) throw ClientError("mosquitto_new failed for client '" + im.opt.client_id + "'");
  im.mosq = m;
  const auto check = [&](int rc, const char* what) {
    if (rc != MOSQ_ERR_SUCCESS) throw ClientError(std::string(what) + ": " + mosquitto_strerror(rc));
  };
  check(mosquitto_int_option(m, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V5), "MQTT 5");
  check(mosquitto_threaded_set(m, true), "threaded mode");
  check(mosquitto_int_option(m, MOSQ_OPT_SEND_MAXIMUM, static_cast<int>(im.opt.max_inflight)), "send maximum");
  check(mosquitto_int_option(m, MOSQ_OPT_RECEIVE_MAXIMUM, static_cast<int>(im.opt.max_inflight)), "receive maximum");
  check(mosquitto_int_option(m, MOSQ_OPT_TCP_NODELAY, 1), "TCP_NODELAY");
  const TlsFiles& t = im.opt.tls;
  check(mosquitto_tls_set(m, t.ca_file.c_str(), nullptr, t.cert_file.empty() ? nullptr : t.cert_file.c_str(),
                          t.key_file.empty() ? nullptr : t.key_file.c_str(), nullptr),
        "TLS files");
  check(mosquitto_tls_opts_set(m, 1 /* SSL_VERIFY_PEER */, "tlsv1.3", nullptr), "TLS 1.3");
  mosquitto_connect_v5_callback_set(m, [](mosquitto*, void* obj, int rc, int flags, const mosquitto_property*) {
    static_cast<Impl*>(obj)->on_connect(rc, flags);
  });
  mosquitto_disconnect_v5_callback_set(m, [](mosquitto*, void* obj, int rc, const mosquitto_property*) {
    static_cast<Impl*>(obj)->on_disconnect(rc);
  });
  mosquitto_subscribe_v5_callback_set(m, [](mosquitto*, void* obj, int mid, int count, const int* granted,
                                            const mosquitto_property*) {
    static_cast<Impl*>(obj)->on_subscribe(mid, count, granted);
  });
  mosquitto_publish_v5_callback_set(m, [](mosquitto*, void* obj, int mid, int rc, const mosquitto_property*) {
    static_cast<Impl*>(obj)->on_publish(mid, rc);
  });
  mosquitto_message_v5_callback_set(m, [](mosquitto*, void* obj, const mosquitto_message* msg,
                                          const mosquitto_property*) { static_cast<Impl*>(obj)->on_message(msg); });
  mosquitto_log_callback_set(m, [](mosquitto*, void* obj, int level, const char* text) {
    static_cast<Impl*>(obj)->on_log(level, text);
  });

  mosquitto_property* props = nullptr;
  if (!im.opt.clean_session) {
    check(mosquitto_property_add_int32(&props, MQTT_PROP_SESSION_EXPIRY_INTERVAL, im.opt.session_expiry_s),
          "session expiry");
  }
  // Tells the broker not to send us more than a message of max_payload with a long topic.
  const std::size_t max_packet = std::min<std::size_t>(im.opt.max_payload + 65536 + 64, 268435455);
  if (mosquitto_property_add_int32(&props, MQTT_PROP_MAXIMUM_PACKET_SIZE, static_cast<std::uint32_t>(max_packet)) !=
      MOSQ_ERR_SUCCESS) {
    mosquitto_property_free_all(&props);
    throw ClientError("cannot build CONNECT properties");
  }
  im.started = true;
  im.thread = std::thread([&im, props] { im.run(props); });
}

void Client::stop() {
  Impl& im = *impl_;
  std::lock_guard life(im.lifecycle_mu);
  if (!im.started || im.stopped) return;
  im.stopped = true;
  {
    std::lock_guard g(im.wait_mu);
    im.stopping = true;
  }
  im.wait_cv.notify_all();
  {
    // Queues DISCONNECT, and its write to libmosquitto's socket pair wakes the loop's select.
    std::lock_guard g(im.connect_mu);
    mosquitto_disconnect(im.mosq);
  }
  im.thread.join();
  std::lock_guard g(im.state_mu);
  im.connected = false;
}

bool Client::connected() const noexcept { return impl_->connected; }

void Client::subscribe(const std::string& filter, int qos) {
  Impl& im = *impl_;
  if (!client_topic_ok(filter, true)) {
    throw ClientError("MQTT subscription filter '" + filter.substr(0, 64) + "' is not a valid filter of 1.." +
                      std::to_string(kClientMaxTopicLength) + " bytes");
  }
  if (qos != 0 && qos != 1) throw ClientError("MQTT subscription QoS must be 0 or 1");
  std::lock_guard c(im.connect_mu);
  std::lock_guard g(im.state_mu);
  if (im.subs.count(filter) == 0 && im.subs.size() >= im.opt.max_subscriptions) {
    throw ClientError("MQTT client '" + im.opt.client_id + "' already has " +
                      std::to_string(im.opt.max_subscriptions) + " subscriptions (max_subscriptions)");
  }
  auto& s = im.subs[filter];
  s.qos = qos;
  s.held = false;
  s.result.reset();
  if (im.connected) im.send_subscription_locked(filter, s);
}

std::optional<int> Client::subscription_result(const std::string& filter) const {
  std::lock_guard g(impl_->state_mu);
  const auto it = impl_->subs.find(filter);
  if (it == impl_->subs.end()) return std::nullopt;
  return it->second.result;
}

PublishResult Client::publish(const std::string& topic, std::span<const std::uint8_t> payload, int qos, bool retain) {
  Impl& im = *impl_;
  const auto fail = [&](PublishError e) {
    ++im.n.rejected_publishes;
    return PublishResult{0, e};
  };
  if (qos != 0 && qos != 1) return fail(PublishError::invalid_qos);
  if (payload.size() > im.opt.max_payload) return fail(PublishError::payload_too_large);
  if (!client_topic_ok(topic, false)) return fail(PublishError::invalid_topic);
  if (!im.started || im.stopped) return fail(PublishError::not_connected);
  std::lock_guard c(im.connect_mu);
  std::lock_guard g(im.state_mu);
  if (!im.connected && (qos == 0 || !im.opt.queue_while_offline)) return fail(PublishError::not_connected);
  if (qos == 1 && im.pending.size() >= im.opt.max_queued) return fail(PublishError::queue_full);
  int mid = 0;
  const int rc = mosquitto_publish_v5(im.mosq, &mid, topic.c_str(), static_cast<int>(payload.size()),
                                      payload.data(), qos, retain, nullptr);
  // QoS 1 while the socket is down: libmosquitto keeps the message in its queue and sends it after
  // the next CONNACK, but reports MOSQ_ERR_NO_CONN.
  if (rc == MOSQ_ERR_SUCCESS || (rc == MOSQ_ERR_NO_CONN && qos == 1 && mid != 0)) {
    if (qos == 1) im.pending.insert(mid);
    ++im.n.published;
    return PublishResult{mid, PublishError::none};
  }
  if (rc == MOSQ_ERR_NO_CONN) return fail(PublishError::not_connected);
  if (rc == MOSQ_ERR_PAYLOAD_SIZE || rc == MOSQ_ERR_OVERSIZE_PACKET) return fail(PublishError::payload_too_large);
  return fail(PublishError::library);
}

PublishResult Client::publish(const std::string& topic, std::string_view payload, int qos, bool retain) {
  return publish(topic, std::span(reinterpret_cast<const std::uint8_t*>(payload.data()), payload.size()), qos, retain);
}

ClientStats Client::stats() const {
  const auto& n = impl_->n;
  ClientStats s;
  s.connects = n.connects;
  s.disconnects = n.disconnects;
  s.connect_failures = n.connect_failures;
  s.sessions_present = n.sessions_present;
  s.sessions_new = n.sessions_new;
  s.resubscribes = n.resubscribes;
  s.published = n.published;
  s.acked = n.acked;
  s.refused_publishes = n.refused_publishes;
  s.rejected_publishes = n.rejected_publishes;
  s.granted_subscriptions = n.granted_subscriptions;
  s.refused_subscriptions = n.refused_subscriptions;
  s.received = n.received;
  s.dropped_oversized = n.dropped_oversized;
  std::lock_guard g(impl_->state_mu);
  s.pending = impl_->pending.size();
  return s;
}

const ClientOptions& Client::options() const noexcept { return impl_->opt; }

}  // namespace pqot::mqtt
