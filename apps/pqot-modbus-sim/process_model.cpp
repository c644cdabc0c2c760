#include "process_model.hpp"

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <new>
#include <numbers>
#include <optional>

namespace pqot::modbus_sim {

namespace {

using namespace reg;

constexpr double kOvenStartDegc = 20.0;
constexpr double kOvenTimeConstantS = 20.0;
constexpr double kOverTemperatureMarginDegc = 10.0;
constexpr double kPowerFactor = 0.95;
constexpr double kTwoPi = 2.0 * std::numbers::pi;

void put_u16(std::uint16_t* tab, int addr, std::uint16_t v) {
  tab[addr] = v;
}

void put_i16(std::uint16_t* tab, int addr, long v) {
  tab[addr] = static_cast<std::uint16_t>(static_cast<std::int16_t>(v));
}

void put_u32(std::uint16_t* tab, int addr, std::uint32_t v) {
  tab[addr] = static_cast<std::uint16_t>(v >> 16);
  tab[addr + 1] = static_cast<std::uint16_t>(v & 0xFFFF);
}

/// IEEE-754 binary32, high word first (byte order ABCD on the wire).
void put_f32(std::uint16_t* tab, int addr, double v) {
  put_u32(tab, addr, std::bit_cast<std::uint32_t>(static_cast<float>(v)));
}

/// IEEE-754 binary64, highest word first.
void put_f64(std::uint16_t* tab, int addr, double v) {
  const auto bits = std::bit_cast<std::uint64_t>(v);
  for (int i = 0; i < 4; ++i) {
    tab[addr + i] = static_cast<std::uint16_t>(bits >> (48 - 16 * i));
  }
}

/// Big-endian 16-bit field of a PDU, if the PDU is long enough.
std::optional<unsigned> be16(std::span<const std::uint8_t> pdu, std::size_t offset) {
  if (pdu.size() < offset + 2) return std::nullopt;
  return static_cast<unsigned>((pdu[offset] << 8) | pdu[offset + 1]);
}

bool overlaps_read_only(unsigned first, unsigned count) {
  const unsigned last = first + count - 1;
  return first <= static_cast<unsigned>(kHrReadOnlyLast) &&
         last >= static_cast<unsigned>(kHrReadOnlyFirst);
}

}  // namespace

ProcessModel::ProcessModel(std::uint64_t seed, Clock::time_point start)
    : map_(modbus_mapping_new(kCoils, kDiscreteInputs, kHoldingRegisters, kInputRegisters)),
      rng_(seed),
      start_(start),
      last_(start),
      oven_degc_(kOvenStartDegc) {
  if (!map_) throw std::bad_alloc();
  auto* hr = map_->tab_registers;
  put_u16(hr, kHrOvenSetpoint, kInitialOvenSetpoint);
  put_u16(hr, kHrConveyorSpeed, kInitialConveyorSpeed);
  put_u16(hr, kHrMode, kInitialMode);
  static_assert(sizeof kDeviceName - 1 <= kHrDeviceNameBytes);
  std::array<std::uint8_t, kHrDeviceNameBytes> name{};  // NUL-padded
  std::memcpy(name.data(), kDeviceName, sizeof kDeviceName - 1);
  for (std::size_t i = 0; i < name.size() / 2; ++i) {
    hr[kHrDeviceName + i] = static_cast<std::uint16_t>((name[2 * i] << 8) | name[2 * i + 1]);
  }
  map_->tab_bits[kCoilConveyorRun] = 1;
  update(start);
}

double ProcessModel::noise(double amplitude) {
  return std::uniform_real_distribution<double>(-amplitude, amplitude)(rng_);
}

void ProcessModel::update(Clock::time_point now) {
  using std::chrono::duration;
  if (now < last_) now = last_;
  const double dt = duration<double>(now - last_).count();
  const double t = duration<double>(now - start_).count();
  last_ = now;
  auto* hr = map_->tab_registers;
  auto* ir = map_->tab_input_registers;

  // Oven: first-order lag toward the set point; exact for a set point constant over dt.
  const double setpoint = static_cast<std::int16_t>(hr[kHrOvenSetpoint]) / 10.0;
  oven_degc_ += (setpoint - oven_degc_) * (1.0 - std::exp(-dt / kOvenTimeConstantS));
  if (oven_degc_ > setpoint + kOverTemperatureMarginDegc) over_temperature_ = true;
  put_f32(ir, kIrOvenTemperature, oven_degc_ + noise(0.05));
  put_u16(ir, kIrRamp, static_cast<std::uint16_t>(std::floor(1000.0 * std::fmod(t, 60.0) / 60.0)));
  put_i16(ir, kIrSine, std::lround(1000.0 * std::sin(kTwoPi * t / 10.0)));
  put_i16(ir, kIrPressure, 250 + std::lround(noise(3.0)));

  // Energy meter: phases L1/L2/L3 at 0, 120 and 240 degrees.
  double total_w = 0.0;
  for (int phase = 0; phase < 3; ++phase) {
    const double shift = kTwoPi * phase / 3.0;
    const double volts = 230.0 + 2.0 * std::sin(kTwoPi * t / 30.0 + shift) + noise(0.2);
    const double amps = 10.0 + 3.0 * std::sin(kTwoPi * t / 20.0 + shift) + noise(0.05);
    const double watts = volts * amps * kPowerFactor;
    put_f32(ir, kIrVoltage + 2 * phase, volts);
    put_f32(ir, kIrCurrent + 2 * phase, amps);
    put_f32(ir, kIrPower + 2 * phase, watts);
    total_w += watts;
  }
  put_f32(ir, kIrTotalPower, total_w);
  put_f32(ir, kIrFrequency, 50.0 + 0.02 * std::sin(kTwoPi * t / 7.0));
  // Rectangle rule with the power of this instant: W * s -> kWh.
  energy_kwh_ += total_w * dt / 3.6e6;
  put_f64(ir, kIrEnergy, energy_kwh_);

  put_u32(hr, kHrBatchCounter, static_cast<std::uint32_t>(std::floor(t)));
  map_->tab_input_bits[kDiBlink] = std::fmod(t, 1.0) < 0.5 ? 1 : 0;
  after_request();
}

void ProcessModel::after_request() {
  if (map_->tab_bits[kCoilAlarmReset] != 0) {
    over_temperature_ = false;
    map_->tab_bits[kCoilAlarmReset] = 0;
  }
  map_->tab_input_bits[kDiConveyorRunning] = map_->tab_bits[kCoilConveyorRun] != 0 ? 1 : 0;
  map_->tab_input_bits[kDiOverTemperature] = over_temperature_ ? 1 : 0;
}

bool ProcessModel::writes_read_only(std::span<const std::uint8_t> pdu) {
  if (pdu.empty()) return false;
  const auto address = be16(pdu, 1);
  switch (pdu[0]) {
    case MODBUS_FC_WRITE_SINGLE_REGISTER:
    case MODBUS_FC_MASK_WRITE_REGISTER:
      return address && overlaps_read_only(*address, 1);
    case MODBUS_FC_WRITE_MULTIPLE_REGISTERS: {
      const auto count = be16(pdu, 3);
      return address && count && *count >= 1 && *count <= MODBUS_MAX_WRITE_REGISTERS &&
             overlaps_read_only(*address, *count);
    }
    case MODBUS_FC_WRITE_AND_READ_REGISTERS: {
      const auto write_address = be16(pdu, 5);
      const auto write_count = be16(pdu, 7);
      return write_address && write_count && *write_count >= 1 &&
             *write_count <= MODBUS_MAX_WR_WRITE_REGISTERS &&
             overlaps_read_only(*write_address, *write_count);
    }
    default:
      return false;
  }
}

}  // namespace pqot::modbus_sim
