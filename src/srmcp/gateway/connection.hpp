// One libmodbus TCP connection to a device (docs/srmcpd-modbus.md, "Failures"): connecting with
// exponential backoff, the Modbus function calls, error classification, per-device counters.
// Used by the device's own thread only (libmodbus is blocking and not thread-safe); the counters
// may be read from any thread.
#pragma once

#include <modbus.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "pqot/modbus/point.hpp"
#include "pqot/srmcp/config.hpp"
#include "pqot/srmcp/gateway.hpp"
#include "pqot/metrics/histogram.hpp"

namespace pqot::srmcp::gateway {

class Connection {
 public:
  using Clock = std::chrono::steady_clock;

  Connection(const ModbusDeviceConfig& cfg, std::string label);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  /// Connects unless connected or still backing off after a failure; true if connected.
  bool ensure_connected();
  /// Closes the connection (the device thread's end).
  void close();
  bool connected() const { return connected_; }
  /// The status of the last failure: what requests get while the connection backs off.
  Status last_failure() const { return last_failure_; }

  /// FC01/02/03/04 over [start, start + count): bits go to `bits`, registers to `regs` (sized
  /// count). Returns the count read or -1 with errno set, as libmodbus does.
  int read(modbus::Table table, int start, int count, std::span<std::uint8_t> bits, std::span<std::uint16_t> regs);
  /// FC05 for a bit point, FC06 for one register, FC16 for several. Returns -1 with errno on failure.
  int write(const modbus::Point& p, const std::vector<std::uint16_t>& regs);

  /// True for errno values that are Modbus exception answers.
  static bool is_exception(int e);
  /// Counts an exception answer that is handled by asking again (a batch split up).
  void count_exception() { ++exceptions_; }
  /// Classifies a libmodbus error and counts it; connection-level failures close the connection
  /// and back off.
  Status on_error(int e, const char* what);

  /// Adds the connection's counters to `s`.
  void add_stats(DeviceStats& s) const;

 private:
  int transact(const std::function<int()>& f);
  void disconnect(Status why, const std::string& what);
  void schedule_retry(Status why);
  void set_timeout(std::chrono::milliseconds t);

  const ModbusDeviceConfig& cfg_;
  const std::string label_;
  modbus_t* ctx_ = nullptr;
  bool connected_ = false;
  bool was_down_ = false;
  Clock::time_point next_attempt_{};
  Clock::duration backoff_{0};
  Status last_failure_ = Status::backend_error;

  std::atomic<bool> connected_flag_{false};
  std::atomic<std::uint64_t> transactions_{0}, comm_errors_{0}, timeouts_{0}, exceptions_{0}, connects_{0},
      connect_failures_{0};
  metrics::LatencyHistogram latency_;
};

}  // namespace pqot::srmcp::gateway
