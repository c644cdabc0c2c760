// One Modbus device of the gateway (docs/srmcpd-modbus.md, "How requests reach a device"): its
// thread, the bounded request queue, polling and caching of points, reads batched by
// modbus::plan_reads, writes read back. Sessions call read() and write() from any thread; the
// answers come from the device's thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "connection.hpp"
#include "pqot/modbus/point.hpp"
#include "pqot/srmcp/config.hpp"
#include "pqot/srmcp/gateway.hpp"
#include "pqot/srmcp/node.hpp"

namespace pqot::srmcp::gateway {

using Clock = std::chrono::steady_clock;

/// A node's point and what the device last said about it.
struct PointState {
  modbus::Point point;
  std::string node_id;
  Clock::duration poll{0};
  Clock::duration cache_age{0};
  std::mutex mu;                     ///< guards cached and cached_at (sessions read, the device writes)
  std::optional<ReadResult> cached;  ///< last poll (or on-demand read, with a cache age)
  Clock::time_point cached_at;
  Clock::time_point next_poll;       ///< used by the device thread only

  bool keeps_cache() const { return poll.count() > 0 || cache_age.count() > 0; }
};

class Device {
 public:
  explicit Device(ModbusDeviceConfig c);
  ~Device();  ///< stop()
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const std::string& name() const { return cfg_.name; }
  /// Adds a polled point; before start() only.
  void add_polled(std::shared_ptr<PointState> p) { polled_.push_back(std::move(p)); }

  // ---- called from sessions (any thread) ----
  void read(const std::shared_ptr<PointState>& p, ReadDone done);
  void write(const std::shared_ptr<PointState>& p, const Json& value, WriteDone done);

  void start();
  /// Stops the thread; queued and later requests are answered SHUTTING_DOWN. Idempotent.
  void stop();
  DeviceStats stats() const;

 private:
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

  void enqueue(Job job);
  // ---- the device thread ----
  void run();
  Clock::time_point next_poll_due() const;
  void add_due_polls(std::vector<Job>& jobs);
  void process(std::vector<Job>& jobs);
  void do_reads(std::vector<Job>& jobs, std::size_t begin, std::size_t end);
  void read_span(const std::vector<Job*>& span, modbus::Table table, int start, int count);
  void do_write(Job& j);
  void fail_fast(Job& j);
  void finish_read(Job& j, ReadResult r);
  void finish(Job& j, Status s);

  const ModbusDeviceConfig cfg_;
  const std::string label_;  // "host:port unit N"
  std::vector<std::shared_ptr<PointState>> polled_;  // fixed before start()

  mutable std::mutex mu_;  // guards queue_, stopping_, thread start
  std::condition_variable cv_;
  std::deque<Job> queue_;
  bool stopping_ = false;
  std::thread thread_;

  Connection conn_;  // the device thread's own
  std::atomic<std::uint64_t> failed_fast_{0}, expired_{0}, rejected_{0};
};

}  // namespace pqot::srmcp::gateway
