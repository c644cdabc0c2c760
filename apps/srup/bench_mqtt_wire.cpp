// The two ends of `srup bench-mqtt` (bench_mqtt.hpp): per transport, the C2's connection and the
// device's, and the exchange one contender is running. The device's connections are made on a
// thread inside --device-netns, so their sockets and network threads live there.
#include <time.h>

#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "bench_mqtt.hpp"
#include "bench_netns.hpp"
#include "bench_plain_client.hpp"
#include "pqot/mqtt/client.hpp"
#include "pqot/srup/topics.hpp"

namespace pqot::srup_tool::mqtt_bench {

double thread_cpu_us() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

namespace {

using Handler = std::function<void(const Received&)>;

// One MQTT connection with its subscriptions; messages go to the handler on its network thread.
class End {
 public:
  virtual ~End() = default;
  virtual bool publish(const std::string& topic, std::span<const std::uint8_t> payload) = 0;
  virtual bool subscribed() const = 0;
  /// Ends the connection and joins its network thread: no handler runs after it returns.
  virtual void stop() = 0;
};

class TlsEnd final : public End {
 public:
  TlsEnd(const WireOptions& o, const std::string& host, const std::string& id,
         const std::vector<std::string>& filters, Handler handler)
      : client_(options(o, host, id)), filters_(filters) {
    client_.on_message([h = std::move(handler)](const mqtt::Message& m) { h(Received{m.topic, m.payload}); });
    for (const auto& f : filters_) client_.subscribe(f, 1);
    client_.start();
  }
  bool publish(const std::string& topic, std::span<const std::uint8_t> payload) override {
    return static_cast<bool>(client_.publish(topic, payload, 1));
  }
  void stop() override { client_.stop(); }
  bool subscribed() const override {
    for (const auto& f : filters_) {
      if (client_.subscription_result(f).value_or(0x80) >= 0x80) return false;
    }
    return true;
  }

 private:
  static mqtt::ClientOptions options(const WireOptions& o, const std::string& host, const std::string& id) {
    mqtt::ClientOptions c;
    c.host = host;
    c.port = o.tls_port;
    c.client_id = id;
    c.tls = {o.ca_file, o.cert_file, o.key_file};
    c.clean_session = true;
    c.reconnect_min = std::chrono::milliseconds(50);
    c.reconnect_max = std::chrono::milliseconds(500);
    return c;
  }
  mqtt::Client client_;
  std::vector<std::string> filters_;
};

class PlainEnd final : public End {
 public:
  PlainEnd(const WireOptions& o, const std::string& host, const std::string& id,
           const std::vector<std::string>& filters, Handler handler)
      : client_(PlainMqttOptions{host, o.plain_port, id, o.plain_username, o.plain_password, filters},
                [h = std::move(handler)](const std::string& topic, std::span<const std::uint8_t> payload) {
                  h(Received{topic, payload});
                }) {}
  bool publish(const std::string& topic, std::span<const std::uint8_t> payload) override {
    return client_.publish(topic, payload);
  }
  bool subscribed() const override { return client_.subscribed(); }
  void stop() override { client_.stop(); }

 private:
  PlainMqttClient client_;
};

std::uint64_t device_of(Transport t) { return t == Transport::tls ? kBenchDevice : kPlainBenchDevice; }

}  // namespace

struct Wire::Impl {
  // The exchange in progress, filled in by the network threads, awaited by the caller.
  std::mutex m;
  std::condition_variable cv;
  Contender* current = nullptr;
  std::size_t expected = 0, seen = 0;  // messages the C2 end awaits / has handled
  bool done = false;
  BenchClock::time_point acted, finished;
  double device_cpu = 0, c2_cpu = 0;
  std::size_t answer_bytes = 0;
  std::string error;  // the first refusal a handler caught
  std::uint64_t late = 0;  // messages that came with no exchange in progress

  std::unique_ptr<End> c2[2], device[2];  // by Transport; ~Wire stops the devices' first
  // Each transport's topics, made once (not inside the timed exchanges).
  struct Topics {
    std::string to_device, from_device, telemetry;
  };
  Topics topics[2] = {topics_of(kBenchDevice), topics_of(kPlainBenchDevice)};

  static Topics topics_of(std::uint64_t dev) {
    return {srup::topic_to_device(dev), srup::topic_from_device(dev), srup::topic_telemetry(dev)};
  }

  void fail(const std::string& what) {
    std::lock_guard lock(m);
    if (error.empty()) error = what;
    cv.notify_all();
  }

  void on_device(Transport t, const Received& r) {
    Contender* c;
    {
      std::lock_guard lock(m);
      c = current;
      if (c == nullptr || c->flow != Flow::command || c->transport != t) {
        ++late;
        return;
      }
    }
    try {
      const double cpu0 = thread_cpu_us();
      BenchClock::time_point at;
      const Bytes answer = c->on_device(r, &at);
      const double cpu = thread_cpu_us() - cpu0;
      {
        std::lock_guard lock(m);
        acted = at;
        device_cpu = cpu;
        answer_bytes = answer.size();
      }
      if (!device[static_cast<int>(t)]->publish(topics[static_cast<int>(t)].from_device, answer)) {
        throw std::runtime_error("the device's publish was refused");
      }
    } catch (const std::exception& e) {
      fail(std::string("device: ") + e.what());
    }
  }

  void on_c2(Transport t, const Received& r) {
    Contender* c;
    {
      std::lock_guard lock(m);
      c = current;
      if (c == nullptr || c->transport != t) {
        ++late;
        return;
      }
    }
    try {
      const double cpu0 = thread_cpu_us();
      const Seen s = c->on_c2(r);
      const auto at = BenchClock::now();
      const double cpu = thread_cpu_us() - cpu0;
      std::lock_guard lock(m);
      c2_cpu += cpu;
      ++seen;
      if (s == Seen::done) {
        finished = at;
        if (c->flow == Flow::telemetry) acted = at;
        done = true;
      }
      cv.notify_all();
    } catch (const std::exception& e) {
      fail(std::string("C2: ") + e.what());
    }
  }
};

namespace {

void wire_wait_for(const std::function<bool()>& ready, const std::string& what) {
  const auto deadline = BenchClock::now() + std::chrono::seconds(15);
  while (!ready()) {
    if (BenchClock::now() > deadline) throw std::runtime_error("bench-mqtt: timed out waiting for " + what);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace

Wire::Wire(const WireOptions& o) : impl_(std::make_unique<Impl>()) {
  Impl& im = *impl_;
  const std::string device_host = o.broker_address.empty() ? "127.0.0.1" : o.broker_address;
  for (Transport t : {Transport::tls, Transport::plain}) {
    const int i = static_cast<int>(t);
    const std::uint64_t dev = device_of(t);
    const std::string suffix = t == Transport::tls ? "" : "-plain";
    auto make_device = [&] {
      Handler h = [&im, t](const Received& r) { im.on_device(t, r); };
      const std::string id = "dev-" + srup::id_text(dev) + suffix;
      const std::vector<std::string> filters{im.topics[i].to_device};
      if (t == Transport::tls) {
        im.device[i] = std::make_unique<TlsEnd>(o, device_host, id, filters, std::move(h));
      } else {
        im.device[i] = std::make_unique<PlainEnd>(o, device_host, id, filters, std::move(h));
      }
    };
    if (o.device_netns.empty()) {
      make_device();
    } else {
      run_in_netns(o.device_netns, make_device);
    }
    Handler h = [&im, t](const Received& r) { im.on_c2(t, r); };
    const std::string id = "c2-" + srup::id_text(kBenchC2) + suffix;
    const std::vector<std::string> filters{im.topics[i].from_device, im.topics[i].telemetry};
    if (t == Transport::tls) {
      im.c2[i] = std::make_unique<TlsEnd>(o, "127.0.0.1", id, filters, std::move(h));
    } else {
      im.c2[i] = std::make_unique<PlainEnd>(o, "127.0.0.1", id, filters, std::move(h));
    }
    const std::string what = t == Transport::tls ? " (TLS)" : " (plain)";
    wire_wait_for([&] { return im.device[i]->subscribed(); }, "the device's SUBACK" + what);
    wire_wait_for([&] { return im.c2[i]->subscribed(); }, "the C2's SUBACKs" + what);
  }
}

Wire::~Wire() {
  {
    std::lock_guard lock(impl_->m);
    impl_->current = nullptr;
  }
  // Every connection stopped (its network thread joined) before any is released: a device's
  // handler publishes through its own End.
  for (auto& d : impl_->device) d->stop();
  for (auto& c : impl_->c2) c->stop();
}

std::uint64_t Wire::late_messages() const {
  std::lock_guard lock(impl_->m);
  return impl_->late;
}

bool Wire::exchange(Contender& c, std::uint64_t n, Samples* s) {
  Impl& im = *impl_;
  const int i = static_cast<int>(c.transport);
  const Impl::Topics& topics = im.topics[i];
  {
    std::lock_guard lock(im.m);
    im.current = &c;
    im.seen = 0;
    im.done = false;
    im.device_cpu = im.c2_cpu = 0;
    im.answer_bytes = 0;
  }
  const double cpu0 = thread_cpu_us();
  const auto t0 = BenchClock::now();
  const Made made = c.make(n);
  const std::vector<Bytes>& messages = made.messages;
  const double make_cpu = thread_cpu_us() - cpu0;
  if (made.main >= messages.size()) throw std::logic_error("bench-mqtt: " + c.name + " made no message");
  {
    std::lock_guard lock(im.m);
    im.expected = c.flow == Flow::command ? 1 : messages.size();
  }
  double bytes = 0;
  for (const Bytes& m : messages) {
    const bool ok = c.flow == Flow::command ? im.c2[i]->publish(topics.to_device, m)
                                            : im.device[i]->publish(topics.telemetry, m);
    if (!ok) throw std::runtime_error("bench-mqtt: " + c.name + ": publish refused");
    bytes += static_cast<double>(m.size());
  }
  c.message_bytes = messages[made.main].size();
  std::unique_lock lock(im.m);
  const bool completed = im.cv.wait_for(lock, std::chrono::seconds(10),
                                        [&] { return (im.done && im.seen >= im.expected) || !im.error.empty(); });
  im.current = nullptr;  // from here, a message of this exchange counts as late
  if (!completed) {
    ++s->lost;
    // What is still on its way must not complete the next exchange: let it arrive (counted late).
    lock.unlock();
    std::this_thread::sleep_for(std::chrono::seconds(10));
    return false;
  }
  if (!im.error.empty()) throw std::runtime_error("bench-mqtt: " + c.name + ": " + im.error);
  c.answer_bytes = im.answer_bytes;
  s->payload_bytes += bytes + static_cast<double>(im.answer_bytes);
  s->one_way.push_back(std::chrono::duration<double, std::micro>(im.acted - t0).count());
  if (c.flow == Flow::command) {
    s->round_trip.push_back(std::chrono::duration<double, std::micro>(im.finished - t0).count());
    s->device_cpu.push_back(im.device_cpu);
    s->c2_cpu.push_back(make_cpu + im.c2_cpu);
  } else {
    s->device_cpu.push_back(make_cpu);
    s->c2_cpu.push_back(im.c2_cpu);
  }
  return true;
}

}  // namespace pqot::srup_tool::mqtt_bench
