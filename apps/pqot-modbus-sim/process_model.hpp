// The simulated device: a legacy PLC (oven, conveyor, batch counter) with a 3-phase energy meter,
// as a libmodbus register mapping whose values follow the monotonic clock. The register map is
// documented in docs/modbus-sim.md; the constants below are the single source of it.
#pragma once

#include <modbus.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <span>

namespace pqot::modbus_sim {

namespace reg {
// Holding registers (FC03; FC06/FC16 write).
inline constexpr int kHoldingRegisters = 200;
inline constexpr int kHrOvenSetpoint = 0;   ///< int16, 0.1 degC
inline constexpr int kHrConveyorSpeed = 1;  ///< uint16, mm/s
inline constexpr int kHrMode = 2;           ///< 0 stop, 1 manual, 2 auto
inline constexpr int kHrBatchCounter = 10;  ///< uint32, 10-11, high word first
inline constexpr int kHrDeviceName = 20;    ///< 16 bytes, 20-27, high byte first
inline constexpr int kHrDeviceNameBytes = 16;
inline constexpr int kHrReadOnlyFirst = 3;  ///< writes touching 3..99: ILLEGAL DATA ADDRESS
inline constexpr int kHrReadOnlyLast = 99;
inline constexpr int kHrScratch = 100;  ///< 100-199
inline constexpr char kDeviceName[] = "PQOT-SIM-PLC";
inline constexpr std::uint16_t kInitialOvenSetpoint = 1800;
inline constexpr std::uint16_t kInitialConveyorSpeed = 250;
inline constexpr std::uint16_t kInitialMode = 2;

// Input registers (FC04). Floats are IEEE-754, high word first.
inline constexpr int kInputRegisters = 200;
inline constexpr int kIrOvenTemperature = 0;  ///< float32 degC
inline constexpr int kIrRamp = 2;             ///< uint16 0..999 over 60 s
inline constexpr int kIrSine = 3;             ///< int16 +-1000, period 10 s
inline constexpr int kIrPressure = 4;         ///< int16, 0.01 bar
inline constexpr int kIrVoltage = 100;        ///< float32 V, L1/L2/L3 at 100/102/104
inline constexpr int kIrCurrent = 106;        ///< float32 A, 106/108/110
inline constexpr int kIrPower = 112;          ///< float32 W, 112/114/116
inline constexpr int kIrTotalPower = 118;     ///< float32 W
inline constexpr int kIrFrequency = 120;      ///< float32 Hz
inline constexpr int kIrEnergy = 122;         ///< float64 kWh, 122-125, highest word first
inline constexpr double kInitialEnergyKwh = 12345.0;

// Coils (FC01; FC05/FC15 write) and discrete inputs (FC02).
inline constexpr int kCoils = 64;
inline constexpr int kCoilConveyorRun = 0;
inline constexpr int kCoilAlarmReset = 1;
inline constexpr int kDiscreteInputs = 16;
inline constexpr int kDiConveyorRunning = 0;
inline constexpr int kDiBlink = 1;
inline constexpr int kDiOverTemperature = 2;
}  // namespace reg

class ProcessModel {
 public:
  using Clock = std::chrono::steady_clock;

  /// The mapping with its initial values at `start`; `seed` drives the noise.
  ProcessModel(std::uint64_t seed, Clock::time_point start);

  modbus_mapping_t* mapping() { return map_.get(); }

  /// Advances the process to `now` (integrating the oven lag and the energy over the time since
  /// the last update) and writes every live value into the mapping. Called before each request.
  void update(Clock::time_point now);

  /// Applies what a request may have written: coil 1 (alarm reset) clears the over-temperature
  /// latch and reads back 0; DI 0 mirrors coil 0. Called after each request.
  void after_request();

  /// Whether the request PDU (function code first) writes a holding register in 3..99. Requests
  /// with a quantity out of range are left to libmodbus (ILLEGAL DATA VALUE comes first).
  static bool writes_read_only(std::span<const std::uint8_t> pdu);

 private:
  struct MappingFree {
    void operator()(modbus_mapping_t* m) const { modbus_mapping_free(m); }
  };

  double noise(double amplitude);

  std::unique_ptr<modbus_mapping_t, MappingFree> map_;
  std::mt19937_64 rng_;
  Clock::time_point start_;
  Clock::time_point last_;
  double oven_degc_ = 20.0;  ///< the lag's state, without noise
  double energy_kwh_ = reg::kInitialEnergyKwh;
  bool over_temperature_ = false;
};

}  // namespace pqot::modbus_sim
