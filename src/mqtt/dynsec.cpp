#include "pqot/mqtt/dynsec.hpp"

#include <condition_variable>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

namespace pqot::mqtt {

namespace {

struct DynsecOutstanding {
  std::string command;
  std::chrono::steady_clock::time_point deadline;
  DynsecAdmin::Callback done;
};

}  // namespace

struct DynsecAdmin::Impl {
  Client& client;
  DynsecAdminOptions opt;
  mutable std::mutex mu;
  std::condition_variable cv;
  std::map<std::string, DynsecOutstanding> outstanding;
  std::uint64_t next_id = 1;
  bool stopping = false;
  std::thread timer;
  // Commands (correlation id, payload) held until the broker has granted our subscription to its
  // responses in the current session. libmosquitto sends its queued publishes as soon as the
  // CONNACK arrives, before the client subscribes again: a command sent then would be answered
  // to nobody, and time out.
  std::vector<std::pair<std::string, std::string>> held;

  Impl(Client& c, DynsecAdminOptions o) : client(c), opt(o) {}

  bool responses_subscribed() const {
    const auto r = client.subscription_result(std::string(dynsec::kResponseTopic));
    return r && *r >= 0 && *r < 0x80;
  }

  // Publishes a command; false (and the reason) if the client refused it.
  std::optional<std::string> send(const std::string& payload) {
    const PublishResult sent = client.publish(std::string(dynsec::kCommandTopic), payload, 1);
    if (sent) return std::nullopt;
    return std::string("publish failed: ") + to_string(sent.error);
  }

  // Completes the outstanding command `id` with `error` (if it is still outstanding).
  void fail(const std::string& id, const std::string& error) {
    DynsecOutstanding o;
    {
      std::lock_guard g(mu);
      const auto it = outstanding.find(id);
      if (it == outstanding.end()) return;
      o = std::move(it->second);
      outstanding.erase(it);
    }
    o.done({false, o.command, error, nullptr});
  }

  // Sends the held commands once the subscription is granted (called by the timer thread, locked).
  void release_held(std::unique_lock<std::mutex>& l) {
    if (held.empty() || !responses_subscribed()) return;
    auto batch = std::move(held);
    held.clear();
    l.unlock();
    for (auto& [id, payload] : batch) {
      if (auto error = send(payload)) fail(id, *error);
    }
    l.lock();
  }

  // Completes commands whose deadline passed; waits until the next deadline or a change.
  void run_timer() {
    std::unique_lock l(mu);
    while (!stopping) {
      const auto now = std::chrono::steady_clock::now();
      std::vector<DynsecOutstanding> expired;
      auto next = now + std::chrono::hours(1);
      for (auto it = outstanding.begin(); it != outstanding.end();) {
        if (it->second.deadline <= now) {
          expired.push_back(std::move(it->second));
          it = outstanding.erase(it);
        } else {
          next = std::min(next, it->second.deadline);
          ++it;
        }
      }
      if (!expired.empty()) {
        std::erase_if(held, [&](const auto& h) { return outstanding.count(h.first) == 0; });
        l.unlock();
        for (auto& e : expired) {
          e.done({false, e.command,
                  "timeout: no response within " + std::to_string(opt.timeout.count()) + " ms", nullptr});
        }
        l.lock();
        continue;
      }
      release_held(l);
      if (!held.empty()) next = std::min(next, now + std::chrono::milliseconds(20));
      cv.wait_until(l, next);
    }
  }
};

DynsecAdmin::DynsecAdmin(Client& client, DynsecAdminOptions options)
    : impl_(std::make_unique<Impl>(client, options)) {
  if (options.timeout.count() < 10 || options.timeout > std::chrono::minutes(10)) {
    throw dynsec::DynsecError("dynsec admin timeout must be 10 ms..10 min");
  }
  if (options.max_outstanding < 1 || options.max_outstanding > 10000) {
    throw dynsec::DynsecError("dynsec admin max_outstanding must be 1..10000");
  }
  client.subscribe(std::string(dynsec::kResponseTopic), 1);
  impl_->timer = std::thread([this] { impl_->run_timer(); });
}

DynsecAdmin::~DynsecAdmin() {
  std::map<std::string, DynsecOutstanding> left;
  {
    std::lock_guard g(impl_->mu);
    impl_->stopping = true;
    left.swap(impl_->outstanding);
  }
  impl_->cv.notify_all();
  impl_->timer.join();
  for (auto& [id, o] : left) o.done({false, o.command, "dynsec admin stopped", nullptr});
}

bool DynsecAdmin::handle(const Message& message) {
  if (message.topic != dynsec::kResponseTopic) return false;
  std::vector<dynsec::Response> responses;
  try {
    responses = dynsec::parse_responses(
        std::string_view(reinterpret_cast<const char*>(message.payload.data()), message.payload.size()));
  } catch (const dynsec::DynsecError&) {
    return true;  // not a response we can read; our commands then time out
  }
  for (auto& r : responses) {
    DynsecOutstanding o;
    {
      std::lock_guard g(impl_->mu);
      const auto it = impl_->outstanding.find(r.correlation);
      if (it == impl_->outstanding.end()) continue;  // another admin's, or already timed out
      o = std::move(it->second);
      impl_->outstanding.erase(it);
    }
    DynsecResult result;
    result.ok = !r.error.has_value();
    result.command = r.command;
    result.error = r.error.value_or("");
    result.data = std::move(r.data);
    o.done(result);
  }
  return true;
}

void DynsecAdmin::submit(nlohmann::json command, Callback done) {
  if (!command.is_object() || !command.contains("command") || !command["command"].is_string()) {
    throw dynsec::DynsecError("dynsec command without a \"command\" string");
  }
  const std::string name = command["command"].get<std::string>();
  std::string id;
  std::string refused;
  {
    std::lock_guard g(impl_->mu);
    if (impl_->stopping) {
      refused = "dynsec admin stopped";
    } else if (impl_->outstanding.size() >= impl_->opt.max_outstanding) {
      refused = "too many outstanding dynsec commands (" + std::to_string(impl_->opt.max_outstanding) + ")";
    } else {
      // Unique per admin object; responses to other admins on the shared topic do not match.
      id = "pqot-" + std::to_string(reinterpret_cast<std::uintptr_t>(this)) + "-" + std::to_string(impl_->next_id++);
      impl_->outstanding[id] = {name, std::chrono::steady_clock::now() + impl_->opt.timeout, std::move(done)};
    }
  }
  if (!refused.empty()) {
    done({false, name, refused, nullptr});
    return;
  }
  command["correlationData"] = id;
  std::string payload = dynsec::encode_commands({command});
  if (!impl_->responses_subscribed()) {
    {
      std::lock_guard g(impl_->mu);
      impl_->held.emplace_back(id, std::move(payload));
    }
    impl_->cv.notify_all();
    return;
  }
  impl_->cv.notify_all();
  if (auto error = impl_->send(payload)) impl_->fail(id, *error);
}

DynsecResult DynsecAdmin::execute(nlohmann::json command) {
  auto promise = std::make_shared<std::promise<DynsecResult>>();
  auto future = promise->get_future();
  submit(std::move(command), [promise](const DynsecResult& r) { promise->set_value(r); });
  return future.get();  // the timer bounds the wait
}

std::vector<DynsecResult> DynsecAdmin::execute_all(const std::vector<nlohmann::json>& commands) {
  std::vector<DynsecResult> out;
  for (const auto& c : commands) {
    out.push_back(execute(c));
    if (!out.back().ok) break;
  }
  return out;
}

std::size_t DynsecAdmin::outstanding() const {
  std::lock_guard g(impl_->mu);
  return impl_->outstanding.size();
}

}  // namespace pqot::mqtt
