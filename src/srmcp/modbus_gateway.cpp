// Modbus TCP gateway backend (docs/srmcpd-modbus.md): one libmodbus connection and one thread per
// device, a bounded request queue, batching, polling, caching, reconnect with backoff.
#include "pqot/srmcp/modbus_gateway.hpp"

#include <modbus.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace pqot::srmcp::modbus {

using namespace pqot::modbus;  // NOLINT: interim, until the gateway leaves this namespace

namespace {

using Clock = std::chrono::steady_clock;

// A node's point and what the device last said about it.
struct PointState {
  Point point;
  std::string node_id;
  Clock::duration poll{0};
  Clock::duration cache_age{0};
  std::mutex mu;                     // guards cached and cached_at (sessions read, the device writes)
  std::optional<ReadResult> cached;  // last poll (or on-demand read, with a cache age)
  Clock::time_point cached_at;
  Clock::time_point next_poll;       // used by the device thread only

  bool keeps_cache() const { return poll.count() > 0 || cache_age.count() > 0; }
};

struct Job {
  enum class Kind { read, write, poll };
  Kind kind = Kind::read;
  std::shared_ptr<PointState> point;
  std::vector<std::uint16_t> regs;  // what a write stores
  ReadDone read_done;
  WriteDone write_done;
  Clock::time_point deadline;
  bool finished = false;
};

std::string errno_text(int e) { return modbus_strerror(e); }

bool is_exception(int e) { return e >= EMBXILFUN && e <= EMBXGTAR; }

}  // namespace

struct Gateway::Device {
  explicit Device(ModbusDeviceConfig c)
      : cfg(std::move(c)), label(cfg.host + ":" + std::to_string(cfg.port) + " unit " + std::to_string(cfg.unit)) {}
  ~Device() {
    stop();
    if (ctx) modbus_free(ctx);
  }

  // ---- called from sessions (any thread) ----

  void read(const std::shared_ptr<PointState>& p, ReadDone done) {
    if (p->keeps_cache()) {
      std::unique_lock lock(p->mu);
      // A polled node answers from the last poll, failures included; a cached one reuses a
      // successful read that is young enough.
      const bool fresh = p->cached && (p->poll.count() > 0 ||
                                       (p->cached->status == Status::ok && Clock::now() - p->cached_at <= p->cache_age));
      if (fresh) {
        ReadResult r = *p->cached;
        lock.unlock();
        done(std::move(r));
        return;
      }
    }
    Job job;
    job.kind = Job::Kind::read;
    job.point = p;
    job.read_done = std::move(done);
    enqueue(std::move(job));
  }

  void write(const std::shared_ptr<PointState>& p, const Json& value, WriteDone done) {
    auto encoded = encode(p->point, value);
    if (auto* why = std::get_if<std::string>(&encoded)) {
      spdlog::debug("device {}: node '{}': {}", cfg.name, p->node_id, *why);
      done(WriteResult{Status::type_mismatch, nullptr});
      return;
    }
    Job job;
    job.kind = Job::Kind::write;
    job.point = p;
    job.regs = std::move(std::get<std::vector<std::uint16_t>>(encoded));
    job.write_done = std::move(done);
    enqueue(std::move(job));
  }

  void enqueue(Job job) {
    job.deadline = Clock::now() + cfg.request_deadline;
    std::unique_lock lock(mu);
    Status refused = Status::ok;
    if (stopping) {
      refused = Status::shutting_down;
    } else if (queue.size() >= kMaxQueuedPerDevice) {
      refused = Status::busy;
      ++rejected;
    } else {
      queue.push_back(std::move(job));
      lock.unlock();
      // Within one READ or WRITE the device wakes once, with all of that request's jobs queued.
      if (!BackendBatch::defer(this, [this] { cv.notify_one(); })) cv.notify_one();
      return;
    }
    lock.unlock();
    finish(job, refused);
  }

  // ---- lifetime ----

  void start() {
    std::lock_guard lock(mu);
    if (thread.joinable() || stopping) return;
    thread = std::thread([this] { run(); });
  }

  void stop() {
    {
      std::lock_guard lock(mu);
      stopping = true;
    }
    cv.notify_all();
    if (thread.joinable()) {
      if (thread.get_id() == std::this_thread::get_id()) {
        thread.detach();  // cannot happen through Gateway, which joins from its own thread
      } else {
        thread.join();
      }
    }
    std::deque<Job> left;
    {
      std::lock_guard lock(mu);
      left.swap(queue);
    }
    for (auto& j : left) finish(j, Status::shutting_down);
  }

  DeviceStats stats() const {
    DeviceStats s;
    s.name = cfg.name;
    s.address = label;
    s.connected = connected_flag.load();
    s.transactions = transactions.load();
    s.comm_errors = comm_errors.load();
    s.timeouts = timeouts.load();
    s.exceptions = exceptions.load();
    s.connects = connects.load();
    s.connect_failures = connect_failures.load();
    s.failed_fast = failed_fast.load();
    s.expired = expired.load();
    s.rejected = rejected.load();
    s.latency = latency.snapshot();
    {
      std::lock_guard lock(mu);
      s.queued = queue.size();
    }
    return s;
  }

  // ---- the device thread ----

  void run() {
    (void)ensure_connected();
    std::unique_lock lock(mu);
    while (!stopping) {
      const auto wake = next_poll_due();
      const auto ready = [&] { return stopping || !queue.empty(); };
      if (wake == Clock::time_point::max()) {
        cv.wait(lock, ready);
      } else {
        cv.wait_until(lock, wake, ready);
      }
      if (stopping) break;
      std::vector<Job> jobs(std::make_move_iterator(queue.begin()), std::make_move_iterator(queue.end()));
      queue.clear();
      lock.unlock();
      add_due_polls(jobs);
      if (!jobs.empty()) process(jobs);
      jobs.clear();  // the completions' captures are released outside the lock
      lock.lock();
    }
    lock.unlock();
    if (ctx && connected) modbus_close(ctx);
    connected = false;
    connected_flag = false;
  }

  Clock::time_point next_poll_due() const {
    auto t = Clock::time_point::max();
    for (const auto& p : polled) t = std::min(t, p->next_poll);
    return t;
  }

  void add_due_polls(std::vector<Job>& jobs) {
    const auto now = Clock::now();
    for (const auto& p : polled) {
      if (p->next_poll > now) continue;
      p->next_poll += p->poll;
      if (p->next_poll <= now) p->next_poll = now + p->poll;  // fell behind: skip, do not burst
      Job j;
      j.kind = Job::Kind::poll;
      j.point = p;
      j.deadline = now + cfg.request_deadline;
      jobs.push_back(std::move(j));
    }
  }

  void process(std::vector<Job>& jobs) {
    const auto now = Clock::now();
    for (auto& j : jobs) {
      if (j.kind != Job::Kind::poll && now > j.deadline) {
        ++expired;
        finish(j, Status::timeout);  // waited behind a slow device for too long
      }
    }
    // In arrival order: runs of reads are batched; each write is on its own, so a read queued
    // after a write sees the written value.
    std::size_t i = 0;
    while (i < jobs.size()) {
      if (jobs[i].kind == Job::Kind::write) {
        if (!jobs[i].finished) do_write(jobs[i]);
        ++i;
        continue;
      }
      std::size_t end = i;
      while (end < jobs.size() && jobs[end].kind != Job::Kind::write) ++end;
      do_reads(jobs, i, end);
      i = end;
    }
  }

  // Merges the reads of jobs[begin, end) into as few Modbus requests as contiguous addresses allow.
  void do_reads(std::vector<Job>& jobs, std::size_t begin, std::size_t end) {
    std::vector<Job*> reads;
    for (std::size_t i = begin; i < end; ++i) {
      if (!jobs[i].finished) reads.push_back(&jobs[i]);
    }
    std::sort(reads.begin(), reads.end(), [](const Job* a, const Job* b) {
      const Point& x = a->point->point;
      const Point& y = b->point->point;
      return std::pair(x.table, x.address) < std::pair(y.table, y.address);
    });
    std::size_t i = 0;
    while (i < reads.size()) {
      const Point& first = reads[i]->point->point;
      const std::uint32_t limit = is_bit_table(first.table) ? kMaxReadBits : cfg.max_registers;
      std::uint32_t span_end = first.address + first.count;
      std::size_t j = i + 1;
      while (j < reads.size()) {
        const Point& p = reads[j]->point->point;
        const std::uint32_t new_end = std::max<std::uint32_t>(span_end, p.address + p.count);
        if (p.table != first.table || p.address > span_end || new_end - first.address > limit) break;
        span_end = new_end;
        ++j;
      }
      read_span(std::vector<Job*>(reads.begin() + static_cast<std::ptrdiff_t>(i),
                                  reads.begin() + static_cast<std::ptrdiff_t>(j)),
                first.table, first.address, static_cast<int>(span_end - first.address));
      i = j;
    }
  }

  void read_span(const std::vector<Job*>& span, Table table, int start, int count) {
    if (!connected && !ensure_connected()) {
      for (Job* j : span) fail_fast(*j);
      return;
    }
    std::vector<std::uint16_t> regs;
    std::vector<std::uint8_t> bits;
    const bool bit_table = is_bit_table(table);
    (bit_table ? bits.resize(static_cast<std::size_t>(count)) : regs.resize(static_cast<std::size_t>(count)));
    const int rc = transact([&] {
      switch (table) {
        case Table::coil: return modbus_read_bits(ctx, start, count, bits.data());
        case Table::discrete_input: return modbus_read_input_bits(ctx, start, count, bits.data());
        case Table::holding_register: return modbus_read_registers(ctx, start, count, regs.data());
        case Table::input_register: return modbus_read_input_registers(ctx, start, count, regs.data());
      }
      return -1;
    });
    if (rc == count) {
      for (Job* j : span) {
        const Point& p = j->point->point;
        const auto off = static_cast<std::size_t>(p.address - start);
        if (bit_table) {
          finish_read(*j, ReadResult{Status::ok, decode_bit(bits[off] != 0), std::chrono::system_clock::now()});
        } else if (auto v = decode_registers(p, std::span(regs).subspan(off, p.count))) {
          finish_read(*j, ReadResult{Status::ok, std::move(*v), std::chrono::system_clock::now()});
        } else {
          finish(*j, Status::backend_error);  // NaN or infinity: no value to give
        }
      }
      return;
    }
    const int e = rc < 0 ? errno : EMBMDATA;
    if (is_exception(e) && span.size() > 1) {
      // One bad address must not fail its neighbours: ask for each node alone.
      ++exceptions;
      for (Job* j : span) {
        const Point& p = j->point->point;
        read_span({j}, p.table, p.address, is_bit_table(p.table) ? 1 : p.count);
      }
      return;
    }
    const Status s = on_error(e, "read");
    for (Job* j : span) finish(*j, s);
  }

  void do_write(Job& j) {
    if (Clock::now() > j.deadline) {
      ++expired;
      finish(j, Status::timeout);
      return;
    }
    if (!connected && !ensure_connected()) {
      fail_fast(j);
      return;
    }
    const Point& p = j.point->point;
    const int rc = transact([&] {
      if (is_bit_table(p.table)) return modbus_write_bit(ctx, p.address, j.regs.at(0) != 0 ? 1 : 0);
      if (p.count == 1) return modbus_write_register(ctx, p.address, j.regs.at(0));
      return modbus_write_registers(ctx, p.address, p.count, j.regs.data());
    });
    if (rc < 0) {
      finish(j, on_error(errno, "write"));
      return;
    }
    // The device's value, read back, is what the client is told was stored (§9 echo).
    Job back;
    back.kind = Job::Kind::read;
    back.point = j.point;
    WriteDone done = std::move(j.write_done);
    j.finished = true;
    back.read_done = [done](ReadResult r) { done(WriteResult{r.status, std::move(r.value)}); };
    read_span({&back}, p.table, p.address, is_bit_table(p.table) ? 1 : p.count);
  }

  template <typename F>
  int transact(F&& f) {
    const auto t0 = Clock::now();
    const int rc = f();
    const int saved = errno;
    ++transactions;
    latency.observe(Clock::now() - t0);
    if (rc >= 0) backoff = Clock::duration::zero();  // the device works: the next failure starts afresh
    errno = saved;
    return rc;
  }

  // Classifies a libmodbus error; connection-level failures close the connection and back off.
  Status on_error(int e, const char* what) {
    if (is_exception(e)) {
      ++exceptions;
      spdlog::debug("device {}: {} answered with exception: {}", cfg.name, what, errno_text(e));
      return Status::device_exception;
    }
    if (e == ETIMEDOUT) {
      ++timeouts;
      // A late answer could still arrive and be taken for the next request's: start afresh.
      disconnect(Status::timeout, std::string(what) + " timed out");
      return Status::timeout;
    }
    ++comm_errors;
    disconnect(Status::backend_error, std::string(what) + " failed: " + errno_text(e));
    return Status::backend_error;
  }

  bool ensure_connected() {
    if (connected) return true;
    const auto now = Clock::now();
    if (now < next_attempt) return false;
    if (!ctx) {
      ctx = modbus_new_tcp_pi(cfg.host.c_str(), std::to_string(cfg.port).c_str());
      if (!ctx) {
        spdlog::error("device {}: cannot create a Modbus context for {}", cfg.name, label);
        schedule_retry(Status::backend_error);
        return false;
      }
      modbus_set_slave(ctx, cfg.unit);
    }
    set_timeout(cfg.connect_timeout);
    if (modbus_connect(ctx) == -1) {
      const int e = errno;
      ++connect_failures;
      const bool first = !was_down;
      schedule_retry(e == ETIMEDOUT ? Status::timeout : Status::backend_error);
      if (first) {
        spdlog::warn("device {} ({}): cannot connect: {}; retrying in {} ms", cfg.name, label, errno_text(e),
                     std::chrono::duration_cast<std::chrono::milliseconds>(backoff).count());
      } else {
        spdlog::debug("device {}: reconnect failed: {}; next in {} ms", cfg.name, errno_text(e),
                      std::chrono::duration_cast<std::chrono::milliseconds>(backoff).count());
      }
      was_down = true;
      return false;
    }
    set_timeout(cfg.timeout);
    connected = true;
    connected_flag = true;
    ++connects;
    spdlog::info("device {} ({}): connected", cfg.name, label);
    was_down = false;
    return true;
  }

  void disconnect(Status why, const std::string& what) {
    if (connected) modbus_close(ctx);
    connected = false;
    connected_flag = false;
    schedule_retry(why);
    if (!was_down) {
      spdlog::warn("device {} ({}): {}; reconnecting in {} ms", cfg.name, label, what,
                   std::chrono::duration_cast<std::chrono::milliseconds>(backoff).count());
    }
    was_down = true;
  }

  void schedule_retry(Status why) {
    last_failure = why;
    backoff = backoff == Clock::duration::zero() ? Clock::duration(cfg.backoff_min)
                                                 : std::min<Clock::duration>(backoff * 2, cfg.backoff_max);
    next_attempt = Clock::now() + backoff;
  }

  void set_timeout(std::chrono::milliseconds t) {
    const auto ms = static_cast<std::uint32_t>(t.count());
    modbus_set_response_timeout(ctx, ms / 1000, (ms % 1000) * 1000);
  }

  void fail_fast(Job& j) {
    ++failed_fast;
    finish(j, last_failure);
  }

  void finish_read(Job& j, ReadResult r) {
    if (j.point->keeps_cache()) {
      std::lock_guard lock(j.point->mu);
      j.point->cached = r;
      j.point->cached_at = Clock::now();
    }
    j.finished = true;
    if (j.read_done) {
      auto done = std::move(j.read_done);
      done(std::move(r));
    }
  }

  void finish(Job& j, Status s) {
    if (j.finished) return;
    if (j.kind == Job::Kind::write) {
      j.finished = true;
      auto done = std::move(j.write_done);
      if (done) done(WriteResult{s, nullptr});
      return;
    }
    finish_read(j, ReadResult{s, nullptr, std::chrono::system_clock::now()});
  }

  const ModbusDeviceConfig cfg;
  const std::string label;
  std::vector<std::shared_ptr<PointState>> polled;  // fixed before start()

  mutable std::mutex mu;  // guards queue, stopping, thread start
  std::condition_variable cv;
  std::deque<Job> queue;
  bool stopping = false;
  std::thread thread;

  // The device thread's own state.
  modbus_t* ctx = nullptr;
  bool connected = false;
  bool was_down = false;
  Clock::time_point next_attempt{};
  Clock::duration backoff{0};
  Status last_failure = Status::backend_error;

  std::atomic<bool> connected_flag{false};
  std::atomic<std::uint64_t> transactions{0}, comm_errors{0}, timeouts{0}, exceptions{0}, connects{0},
      connect_failures{0}, failed_fast{0}, expired{0}, rejected{0};
  LatencyHistogram latency;
};

Gateway::Gateway(std::vector<ModbusDeviceConfig> devices) {
  for (auto& d : devices) devices_.push_back(std::make_shared<Device>(std::move(d)));
}

Gateway::~Gateway() { stop(); }

void Gateway::bind(NodeSpec& spec, const ModbusBinding& binding) {
  const auto it = std::find_if(devices_.begin(), devices_.end(),
                               [&](const auto& d) { return d->cfg.name == binding.device; });
  if (it == devices_.end()) {
    throw std::invalid_argument("node '" + spec.id + "': unknown Modbus device '" + binding.device + "'");
  }
  std::shared_ptr<Device> dev = *it;
  auto p = std::make_shared<PointState>();
  p->point = binding.point;
  p->node_id = spec.id;
  p->poll = binding.poll;
  p->cache_age = binding.cache_age;
  p->next_poll = Clock::now();
  if (binding.poll.count() > 0) dev->polled.push_back(p);
  spec.read = nullptr;
  spec.read_async = [dev, p](ReadDone done) { dev->read(p, std::move(done)); };
  if (!spec.writers.empty()) {
    spec.write = nullptr;
    spec.write_async = [dev, p](const Json& v, WriteDone done) { dev->write(p, v, std::move(done)); };
  }
}

void Gateway::start() {
  for (auto& d : devices_) d->start();
}

void Gateway::stop() {
  for (auto& d : devices_) d->stop();
}

std::vector<DeviceStats> Gateway::stats() const {
  std::vector<DeviceStats> out;
  for (const auto& d : devices_) out.push_back(d->stats());
  return out;
}

std::size_t Gateway::device_count() const { return devices_.size(); }

std::shared_ptr<NodeStore> build_node_store(const LoadedConfig& config, Gateway& gateway) {
  std::map<std::string, const ModbusBinding*> bindings;
  for (const auto& b : config.modbus) bindings.emplace(b.node_id, &b);
  auto store = std::make_shared<NodeStore>();
  for (NodeSpec spec : config.nodes) {
    if (const auto it = bindings.find(spec.id); it != bindings.end()) gateway.bind(spec, *it->second);
    store->add(std::move(spec));
  }
  return store;
}

}  // namespace pqot::srmcp::modbus
