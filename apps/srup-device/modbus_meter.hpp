// srup-device: an energy meter read over Modbus TCP (docs/srup-device.md, "Telemetry sources"):
// each configured channel is a pqot::modbus point, read in as few requests as plan_reads allows,
// through libmodbus on the meter's own thread (libmodbus blocks), so the agent's loop only asks
// and is told. A failed read gives no reading and counts an error; the connection then backs off.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "pqot/srup/body.hpp"
#include "srup-device/config.hpp"

namespace pqot::srup_device {

struct ModbusMeterStats {
  bool connected = false;
  std::uint64_t readings = 0;          ///< complete readings delivered
  std::uint64_t errors = 0;            ///< reads that gave no reading (any cause below)
  std::uint64_t connect_failures = 0;  ///< connection attempts that failed
  std::uint64_t skipped_backoff = 0;   ///< reads refused while waiting to reconnect
  std::uint64_t bad_values = 0;        ///< points whose registers held no valid number
};

class ModbusMeter {
 public:
  /// Called on the meter's thread with the reading, or nothing if this read failed.
  using Done = std::function<void(std::optional<srup::Reading>)>;

  explicit ModbusMeter(TelemetryModbus config);
  /// Stops the thread; waits at most for the request in progress (bounded by the timeouts).
  ~ModbusMeter();
  ModbusMeter(const ModbusMeter&) = delete;
  ModbusMeter& operator=(const ModbusMeter&) = delete;

  /// Asks for one reading and returns at once. False (and `done` is not called) if a read is
  /// still in progress: a slow meter is read as often as it can answer, never queued up.
  bool read_async(Done done);

  ModbusMeterStats stats() const;

 private:
  struct Impl;
  void loop();

  std::unique_ptr<Impl> impl_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::optional<Done> pending_;
  bool busy_ = false;
  bool stopping_ = false;
  ModbusMeterStats stats_;
  std::thread thread_;
};

}  // namespace pqot::srup_device
