// One Modbus device of the gateway: thread, queue, polling, caching, batched reads.
#include "device.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <iterator>

#include "pqot/modbus/batch.hpp"

namespace pqot::srmcp::gateway {

Device::Device(ModbusDeviceConfig c)
    : cfg_(std::move(c)),
      label_(cfg_.host + ":" + std::to_string(cfg_.port) + " unit " + std::to_string(cfg_.unit)),
      conn_(cfg_, label_) {}

Device::~Device() { stop(); }

// ---- called from sessions (any thread) ----------------------------------------------------------

void Device::read(const std::shared_ptr<PointState>& p, ReadDone done) {
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

void Device::write(const std::shared_ptr<PointState>& p, const Json& value, WriteDone done) {
  auto encoded = modbus::encode(p->point, value);
  if (auto* why = std::get_if<std::string>(&encoded)) {
    spdlog::debug("device {}: node '{}': {}", cfg_.name, p->node_id, *why);
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

void Device::enqueue(Job job) {
  job.deadline = Clock::now() + cfg_.request_deadline;
  std::unique_lock lock(mu_);
  Status refused = Status::ok;
  if (stopping_) {
    refused = Status::shutting_down;
  } else if (queue_.size() >= kMaxQueuedPerDevice) {
    refused = Status::busy;
    ++rejected_;
  } else {
    queue_.push_back(std::move(job));
    lock.unlock();
    // Within one READ or WRITE the device wakes once, with all of that request's jobs queued.
    if (!BackendBatch::defer(this, [this] { cv_.notify_one(); })) cv_.notify_one();
    return;
  }
  lock.unlock();
  finish(job, refused);
}

// ---- lifetime -----------------------------------------------------------------------------------

void Device::start() {
  std::lock_guard lock(mu_);
  if (thread_.joinable() || stopping_) return;
  thread_ = std::thread([this] { run(); });
}

void Device::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) {
    if (thread_.get_id() == std::this_thread::get_id()) {
      thread_.detach();  // cannot happen through Gateway, which joins from its own thread
    } else {
      thread_.join();
    }
  }
  std::deque<Job> left;
  {
    std::lock_guard lock(mu_);
    left.swap(queue_);
  }
  for (auto& j : left) finish(j, Status::shutting_down);
}

DeviceStats Device::stats() const {
  DeviceStats s;
  s.name = cfg_.name;
  s.address = label_;
  conn_.add_stats(s);
  s.failed_fast = failed_fast_.load();
  s.expired = expired_.load();
  s.rejected = rejected_.load();
  {
    std::lock_guard lock(mu_);
    s.queued = queue_.size();
  }
  return s;
}

// ---- the device thread --------------------------------------------------------------------------

void Device::run() {
  (void)conn_.ensure_connected();
  std::unique_lock lock(mu_);
  while (!stopping_) {
    const auto wake = next_poll_due();
    const auto ready = [&] { return stopping_ || !queue_.empty(); };
    if (wake == Clock::time_point::max()) {
      cv_.wait(lock, ready);
    } else {
      cv_.wait_until(lock, wake, ready);
    }
    if (stopping_) break;
    std::vector<Job> jobs(std::make_move_iterator(queue_.begin()), std::make_move_iterator(queue_.end()));
    queue_.clear();
    lock.unlock();
    add_due_polls(jobs);
    if (!jobs.empty()) process(jobs);
    jobs.clear();  // the completions' captures are released outside the lock
    lock.lock();
  }
  lock.unlock();
  conn_.close();
}

Clock::time_point Device::next_poll_due() const {
  auto t = Clock::time_point::max();
  for (const auto& p : polled_) t = std::min(t, p->next_poll);
  return t;
}

void Device::add_due_polls(std::vector<Job>& jobs) {
  const auto now = Clock::now();
  for (const auto& p : polled_) {
    if (p->next_poll > now) continue;
    p->next_poll += p->poll;
    if (p->next_poll <= now) p->next_poll = now + p->poll;  // fell behind: skip, do not burst
    Job j;
    j.kind = Job::Kind::poll;
    j.point = p;
    j.deadline = now + cfg_.request_deadline;
    jobs.push_back(std::move(j));
  }
}

void Device::process(std::vector<Job>& jobs) {
  const auto now = Clock::now();
  for (auto& j : jobs) {
    if (j.kind != Job::Kind::poll && now > j.deadline) {
      ++expired_;
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

// The reads of jobs[begin, end) in as few Modbus requests as contiguous addresses allow.
void Device::do_reads(std::vector<Job>& jobs, std::size_t begin, std::size_t end) {
  std::vector<Job*> reads;
  std::vector<const modbus::Point*> points;
  for (std::size_t i = begin; i < end; ++i) {
    if (jobs[i].finished) continue;
    reads.push_back(&jobs[i]);
    points.push_back(&jobs[i].point->point);
  }
  for (const modbus::ReadSpan& s : modbus::plan_reads(points, cfg_.max_registers)) {
    std::vector<Job*> span;
    for (const std::size_t m : s.members) span.push_back(reads[m]);
    read_span(span, s.table, s.start, s.count);
  }
}

void Device::read_span(const std::vector<Job*>& span, modbus::Table table, int start, int count) {
  if (!conn_.connected() && !conn_.ensure_connected()) {
    for (Job* j : span) fail_fast(*j);
    return;
  }
  std::vector<std::uint16_t> regs;
  std::vector<std::uint8_t> bits;
  const bool bit_table = modbus::is_bit_table(table);
  (bit_table ? bits.resize(static_cast<std::size_t>(count)) : regs.resize(static_cast<std::size_t>(count)));
  const int rc = conn_.read(table, start, count, bits, regs);
  if (rc == count) {
    for (Job* j : span) {
      const modbus::Point& p = j->point->point;
      const auto off = static_cast<std::size_t>(p.address - start);
      if (bit_table) {
        finish_read(*j, ReadResult{Status::ok, modbus::decode_bit(bits[off] != 0), std::chrono::system_clock::now()});
      } else if (auto v = modbus::decode_registers(p, std::span(regs).subspan(off, p.count))) {
        finish_read(*j, ReadResult{Status::ok, std::move(*v), std::chrono::system_clock::now()});
      } else {
        finish(*j, Status::backend_error);  // NaN or infinity: no value to give
      }
    }
    return;
  }
  const int e = rc < 0 ? errno : EMBMDATA;
  if (Connection::is_exception(e) && span.size() > 1) {
    // One bad address must not fail its neighbours: ask for each node alone.
    conn_.count_exception();
    for (Job* j : span) {
      const modbus::Point& p = j->point->point;
      read_span({j}, p.table, p.address, modbus::is_bit_table(p.table) ? 1 : p.count);
    }
    return;
  }
  const Status s = conn_.on_error(e, "read");
  for (Job* j : span) finish(*j, s);
}

void Device::do_write(Job& j) {
  if (Clock::now() > j.deadline) {
    ++expired_;
    finish(j, Status::timeout);
    return;
  }
  if (!conn_.connected() && !conn_.ensure_connected()) {
    fail_fast(j);
    return;
  }
  const modbus::Point& p = j.point->point;
  if (conn_.write(p, j.regs) < 0) {
    finish(j, conn_.on_error(errno, "write"));
    return;
  }
  // The device's value, read back, is what the client is told was stored (§9 echo).
  Job back;
  back.kind = Job::Kind::read;
  back.point = j.point;
  WriteDone done = std::move(j.write_done);
  j.finished = true;
  back.read_done = [done](ReadResult r) { done(WriteResult{r.status, std::move(r.value)}); };
  read_span({&back}, p.table, p.address, modbus::is_bit_table(p.table) ? 1 : p.count);
}

void Device::fail_fast(Job& j) {
  ++failed_fast_;
  finish(j, conn_.last_failure());
}

void Device::finish_read(Job& j, ReadResult r) {
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

void Device::finish(Job& j, Status s) {
  if (j.finished) return;
  if (j.kind == Job::Kind::write) {
    j.finished = true;
    auto done = std::move(j.write_done);
    if (done) done(WriteResult{s, nullptr});
    return;
  }
  finish_read(j, ReadResult{s, nullptr, std::chrono::system_clock::now()});
}

}  // namespace pqot::srmcp::gateway
