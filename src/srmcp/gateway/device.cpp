// One Modbus device of the gateway: queue, polling, caching, batched reads, on the device's strand.
#include "device.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <iterator>

#include "pqot/modbus/batch.hpp"
#include "pqot/modbus/pdu.hpp"

namespace pqot::srmcp::gateway {

Device::Device(ModbusDeviceConfig c)
    : cfg_(std::move(c)),
      label_(cfg_.host + ":" + std::to_string(cfg_.port) + " unit " + std::to_string(cfg_.unit)) {}

// ---- called from sessions (any thread) ----------------------------------------------------------

void Device::read(const std::shared_ptr<PointState>& p, ReadDone done) {
  if (p->keeps_cache()) {
    std::unique_lock lock(p->mu);
    // A polled node answers from the last poll, failures included; a cached one reuses a
    // successful read that is young enough.
    const bool fresh =
        p->cached && (p->poll.count() > 0 || (p->cached->status == Status::ok &&
                                              Clock::now() - p->cached_at <= p->cache_age));
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
    if (!BackendBatch::defer(this, [self = shared_from_this()] { self->wake(); })) wake();
    return;
  }
  lock.unlock();
  finish(job, refused);
}

// Any thread: one wake-up on the strand at a time; it ends the idle wait of run(), which then
// takes whatever is queued. A wake that finds run() busy costs nothing: run() looks at the queue
// before it waits again.
void Device::wake() {
  std::unique_lock lock(mu_);
  if (wake_posted_ || !strand_) return;
  wake_posted_ = true;
  const Strand strand = *strand_;
  lock.unlock();
  asio::post(strand, [self = shared_from_this()] {
    {
      std::lock_guard held(self->mu_);
      self->wake_posted_ = false;
    }
    self->idle_->cancel();
  });
}

// ---- lifetime -----------------------------------------------------------------------------------

void Device::start(asio::io_context& io) {
  std::unique_lock lock(mu_);
  if (strand_ || stopping_) return;
  strand_.emplace(asio::make_strand(io));
  conn_ = std::make_unique<Connection>(cfg_, label_, *strand_);
  idle_ = std::make_unique<asio::steady_timer>(*strand_);
  const Strand strand = *strand_;
  lock.unlock();
  asio::co_spawn(strand, run(shared_from_this()), asio::detached);
}

void Device::stop() {
  std::deque<Job> left;
  std::optional<Strand> strand;
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    left.swap(queue_);
    strand = strand_;
  }
  for (auto& j : left) finish(j, Status::shutting_down);
  // The strand closes the connection: a request under way ends SHUTTING_DOWN, run() returns.
  if (strand) {
    asio::post(*strand, [self = shared_from_this()] {
      self->conn_->shut_down();
      self->idle_->cancel();
    });
  }
}

DeviceStats Device::stats() const {
  DeviceStats s;
  s.name = cfg_.name;
  s.address = label_;
  s.failed_fast = failed_fast_.load();
  s.expired = expired_.load();
  s.rejected = rejected_.load();
  std::lock_guard lock(mu_);
  if (conn_) conn_->add_stats(s);
  s.queued = queue_.size();
  return s;
}

// ---- on the device's strand ---------------------------------------------------------------------

asio::awaitable<void> Device::run(std::shared_ptr<Device> self) {
  (void)co_await conn_->ensure_connected();
  for (;;) {
    std::vector<Job> jobs;
    {
      std::lock_guard lock(mu_);
      if (stopping_) break;
      jobs.assign(std::make_move_iterator(queue_.begin()), std::make_move_iterator(queue_.end()));
      queue_.clear();
    }
    add_due_polls(jobs);
    if (!jobs.empty()) {
      try {
        co_await process(jobs);
      } catch (const std::exception& e) {  // a bug, not the device's doing: answer, keep serving
        spdlog::error("device {}: {}", cfg_.name, e.what());
        for (auto& j : jobs) finish(j, Status::backend_error);
      }
      continue;
    }
    idle_->expires_at(next_poll_due());
    asio::error_code ec;
    co_await idle_->async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  conn_->shut_down();
  (void)self;
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

asio::awaitable<void> Device::process(std::vector<Job>& jobs) {
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
      if (!jobs[i].finished) co_await do_write(jobs[i]);
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < jobs.size() && jobs[end].kind != Job::Kind::write) ++end;
    co_await do_reads(jobs, i, end);
    i = end;
  }
}

// The reads of jobs[begin, end) in as few Modbus requests as contiguous addresses allow.
asio::awaitable<void> Device::do_reads(std::vector<Job>& jobs, std::size_t begin, std::size_t end) {
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
    co_await read_span(std::move(span), s.table, s.start, s.count);
  }
}

asio::awaitable<void> Device::read_span(std::vector<Job*> span, modbus::Table table,
                                        std::uint16_t start, std::uint16_t count) {
  if (!conn_->connected() && !co_await conn_->ensure_connected()) {
    for (Job* j : span) fail_fast(*j);
    co_return;
  }
  const auto request = modbus::read_request(table, start, count);
  const Connection::Reply reply = co_await conn_->transact(request);
  if (reply.status != Status::ok) {
    for (Job* j : span) finish(*j, reply.status);
    co_return;
  }
  const modbus::Answer a = modbus::decode_read_response(table, count, reply.pdu);
  if (a.kind == modbus::Answer::Kind::malformed) {
    const Status s = conn_->on_malformed(a, "read");
    for (Job* j : span) finish(*j, s);
    co_return;
  }
  if (a.kind == modbus::Answer::Kind::exception) {
    conn_->on_exception(a, "read");
    if (span.size() == 1) {
      finish(*span.front(), Status::device_exception);
      co_return;
    }
    // One bad address must not fail its neighbours: ask for each node alone, as long as its
    // deadline allows (a device that answers each single read slowly holds the batch no longer).
    for (Job* j : span) {
      if (Clock::now() > j->deadline) {
        ++expired_;
        finish(*j, Status::timeout);
        continue;
      }
      const modbus::Point& p = j->point->point;
      std::vector<Job*> alone(1, j);  // named: GCC 12 cannot co_await a call with a braced list
      co_await read_span(std::move(alone), p.table, p.address,
                         modbus::is_bit_table(p.table) ? std::uint16_t{1} : p.count);
    }
    co_return;
  }
  for (Job* j : span) {
    const modbus::Point& p = j->point->point;
    const auto off = static_cast<std::size_t>(p.address - start);
    if (modbus::is_bit_table(table)) {
      finish_read(*j, ReadResult{Status::ok, modbus::decode_bit(a.bits[off] != 0),
                                 std::chrono::system_clock::now()});
    } else if (auto v = modbus::decode_registers(p, std::span(a.regs).subspan(off, p.count))) {
      finish_read(*j, ReadResult{Status::ok, std::move(*v), std::chrono::system_clock::now()});
    } else {
      finish(*j, Status::backend_error);  // NaN or infinity: no value to give
    }
  }
}

asio::awaitable<void> Device::do_write(Job& j) {
  if (Clock::now() > j.deadline) {
    ++expired_;
    finish(j, Status::timeout);
    co_return;
  }
  if (!conn_->connected() && !co_await conn_->ensure_connected()) {
    fail_fast(j);
    co_return;
  }
  const modbus::Point& p = j.point->point;
  const auto request = modbus::write_request(p.table, p.address, j.regs);
  const Connection::Reply reply = co_await conn_->transact(request);
  if (reply.status != Status::ok) {
    finish(j, reply.status);
    co_return;
  }
  const modbus::Answer a = modbus::decode_write_response(request, reply.pdu);
  if (a.kind == modbus::Answer::Kind::malformed) {
    finish(j, conn_->on_malformed(a, "write"));
    co_return;
  }
  if (a.kind == modbus::Answer::Kind::exception) {
    conn_->on_exception(a, "write");
    finish(j, Status::device_exception);
    co_return;
  }
  // What the client is told was stored (§9 echo) is the device's own word for it: by default the
  // point read back. A device configured with write_confirm = "echo" is trusted to store what its
  // FC05/FC06 answer repeats (checked equal to the request above; Modbus application protocol
  // 6.5, 6.6), which saves the second exchange. An FC16 answer repeats only the address and
  // quantity, so such a write is always read back.
  // Either way the value reaches the client and the cache through finish_read, as a read would.
  Job back;
  back.kind = Job::Kind::read;
  back.point = j.point;
  WriteDone done = std::move(j.write_done);
  j.finished = true;
  back.read_done = [done](ReadResult r) { done(WriteResult{r.status, std::move(r.value)}); };
  if (cfg_.write_confirm == ModbusDeviceConfig::WriteConfirm::echo &&
      (request[0] == 0x05 || request[0] == 0x06)) {
    std::optional<Json> stored = modbus::is_bit_table(p.table)
                                     ? std::optional<Json>(modbus::decode_bit(j.regs[0] != 0))
                                     : modbus::decode_registers(p, j.regs);
    if (stored) {
      finish_read(back,
                  ReadResult{Status::ok, std::move(*stored), std::chrono::system_clock::now()});
      co_return;
    }
  }
  std::vector<Job*> alone(1, &back);
  co_await read_span(std::move(alone), p.table, p.address,
                     modbus::is_bit_table(p.table) ? std::uint16_t{1} : p.count);
}

void Device::fail_fast(Job& j) {
  ++failed_fast_;
  finish(j, conn_->last_failure());
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
