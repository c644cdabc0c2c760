// One Modbus device of the gateway (docs/srmcpd-modbus.md, "How requests reach a device"): the
// bounded request queue, polling and caching of points, reads batched by modbus::plan_reads,
// writes read back, all on one strand of an event loop (srmcpd: one of the server's). Sessions
// call read() and write() from any thread; the answers come from the device's strand.
#pragma once

#include <asio.hpp>
#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
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
  Clock::time_point next_poll;       ///< used on the device's strand only

  bool keeps_cache() const { return poll.count() > 0 || cache_age.count() > 0; }
};

class Device : public std::enable_shared_from_this<Device> {
 public:
  explicit Device(ModbusDeviceConfig c);
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const std::string& name() const { return cfg_.name; }
  /// Adds a polled point; before start() only.
  void add_polled(std::shared_ptr<PointState> p) { polled_.push_back(std::move(p)); }

  // ---- called from sessions (any thread) ----
  void read(const std::shared_ptr<PointState>& p, ReadDone done);
  void write(const std::shared_ptr<PointState>& p, const Json& value, WriteDone done);

  /// Runs the device on a new strand of `io`, which must outlive the device.
  void start(asio::io_context& io);
  /// Queued and later requests are answered SHUTTING_DOWN at once; the one under way when the
  /// strand closes the connection. Any thread; idempotent.
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
  void wake();
  // ---- on the device's strand ----
  asio::awaitable<void> run(std::shared_ptr<Device> self);
  Clock::time_point next_poll_due() const;
  void add_due_polls(std::vector<Job>& jobs);
  asio::awaitable<void> process(std::vector<Job>& jobs);
  asio::awaitable<void> do_reads(std::vector<Job>& jobs, std::size_t begin, std::size_t end);
  asio::awaitable<void> read_span(std::vector<Job*> span, modbus::Table table, std::uint16_t start,
                                  std::uint16_t count);
  asio::awaitable<void> do_write(Job& j);
  void fail_fast(Job& j);
  void finish_read(Job& j, ReadResult r);
  void finish(Job& j, Status s);

  const ModbusDeviceConfig cfg_;
  const std::string label_;  // "host:port unit N"
  std::vector<std::shared_ptr<PointState>> polled_;  // fixed before start()

  mutable std::mutex mu_;  // guards queue_, stopping_, wake_posted_, strand_, conn_
  std::deque<Job> queue_;
  bool stopping_ = false;
  bool wake_posted_ = false;
  std::optional<Strand> strand_;
  std::unique_ptr<Connection> conn_;     // used on the strand only; its counters from anywhere
  std::unique_ptr<asio::steady_timer> idle_;  // the strand waits here for work or the next poll

  std::atomic<std::uint64_t> failed_fast_{0}, expired_{0}, rejected_{0};
};

}  // namespace pqot::srmcp::gateway
