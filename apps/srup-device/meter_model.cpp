// srup-device: the energy meter model (docs/srup-device.md, "Telemetry sources").
#include "meter_model.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

#include "pqot/srup/meter_channels.hpp"

namespace pqot::srup_device {
namespace {

constexpr double kTwoPi = 2 * std::numbers::pi;
constexpr double kDayMs = 86'400'000.0;

/// SplitMix64 (Steele, Lea, Flood 2014): small, seedable, the same on every platform.
std::uint64_t meter_splitmix(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// The household load profile, in W per phase before scaling, at `ms` of the day (UTC): a night
/// base, a morning peak around 07:30 and an evening peak around 19:00.
double meter_load_profile(double day_ms) {
  const double h = day_ms / 3'600'000.0;
  const auto bump = [h](double centre, double width, double height) {
    const double d = (h - centre) / width;
    return height * std::exp(-d * d);
  };
  return 250.0 + bump(7.5, 1.2, 900.0) + bump(13.0, 2.0, 400.0) + bump(19.0, 1.8, 1500.0);
}

}  // namespace

MeterModel::MeterModel(int phases, std::uint64_t seed, std::uint64_t start_ms)
    : phases_(phases), rng_(seed), last_ms_(start_ms) {
  if (phases != 1 && phases != 3) throw std::invalid_argument("a meter has 1 or 3 phases");
  for (auto& s : phase_scale_) s = 0.8 + 0.4 * (static_cast<double>(meter_splitmix(rng_) >> 11) * 0x1.0p-53);
}

double MeterModel::noise(double amplitude) {
  const double u = static_cast<double>(meter_splitmix(rng_) >> 11) * 0x1.0p-53;  // [0, 1)
  return amplitude * (2 * u - 1);
}

MeterValues MeterModel::advance(std::uint64_t now_ms) {
  MeterValues v;
  v.timestamp_ms = now_ms;
  v.phases = phases_;
  const double t = static_cast<double>(now_ms) / 1000.0;  // s
  // 50 Hz ± 0.05: a slow swing of 0.03 plus noise of 0.015.
  v.frequency = 50.0 + 0.03 * std::sin(kTwoPi * t / 300.0) + noise(0.015);
  const double load = meter_load_profile(std::fmod(static_cast<double>(now_ms), kDayMs));
  for (int p = 0; p < phases_; ++p) {
    auto& ph = v.phase[static_cast<std::size_t>(p)];
    const double shift = kTwoPi * p / 3.0;
    // 230 V ± 2 %: a slow swing of 1.2 % plus noise of 0.5 %.
    ph.voltage = 230.0 * (1.0 + 0.012 * std::sin(kTwoPi * t / 600.0 + shift) + noise(0.005));
    ph.active_power = std::max(10.0, load * phase_scale_[static_cast<std::size_t>(p)] * (1.0 + noise(0.05)));
    ph.power_factor = std::clamp(0.92 + 0.05 * std::sin(kTwoPi * t / 900.0 + shift) + noise(0.01), 0.85, 0.99);
    ph.apparent_power = ph.active_power / ph.power_factor;
    ph.reactive_power = std::sqrt(ph.apparent_power * ph.apparent_power - ph.active_power * ph.active_power);
    ph.current = ph.apparent_power / ph.voltage;
    v.active_power += ph.active_power;
    v.reactive_power += ph.reactive_power;
  }
  v.apparent_power = std::hypot(v.active_power, v.reactive_power);
  v.power_factor = v.active_power / v.apparent_power;
  if (now_ms > last_ms_) {
    const double hours = static_cast<double>(now_ms - last_ms_) / 3'600'000.0;
    import_wh_ += v.active_power * hours;
    reactive_varh_ += v.reactive_power * hours;
    last_ms_ = now_ms;
  }
  v.active_energy_import = import_wh_;
  v.reactive_energy = reactive_varh_;
  return v;
}

srup::Reading MeterModel::read(std::uint64_t now_ms) { return to_reading(advance(now_ms)); }

srup::Reading to_reading(const MeterValues& v) {
  namespace m = srup::meter;
  srup::Reading r;
  r.timestamp_ms = v.timestamp_ms;
  const auto f32 = [&r](std::uint16_t ch, double x) { r.channels.push_back({ch, srup::Value(static_cast<float>(x))}); };
  const auto f64 = [&r](std::uint16_t ch, double x) { r.channels.push_back({ch, srup::Value(x)}); };
  const auto per_phase = [&](std::uint16_t l1, double PhaseValues::*field) {
    for (int p = 0; p < v.phases; ++p)
      f32(m::phase_channel(l1, static_cast<unsigned>(p + 1)), v.phase[static_cast<std::size_t>(p)].*field);
  };
  per_phase(m::kVoltageL1, &PhaseValues::voltage);
  per_phase(m::kCurrentL1, &PhaseValues::current);
  per_phase(m::kActivePowerL1, &PhaseValues::active_power);
  f32(m::kActivePower, v.active_power);
  f64(m::kActiveEnergyImport, v.active_energy_import);
  f64(m::kActiveEnergyExport, v.active_energy_export);
  f64(m::kReactiveEnergy, v.reactive_energy);
  f32(m::kFrequency, v.frequency);
  f32(m::kPowerFactor, v.power_factor);
  per_phase(m::kPowerFactorL1, &PhaseValues::power_factor);
  f32(m::kReactivePower, v.reactive_power);
  per_phase(m::kReactivePowerL1, &PhaseValues::reactive_power);
  f32(m::kApparentPower, v.apparent_power);
  per_phase(m::kApparentPowerL1, &PhaseValues::apparent_power);
  return r;
}

}  // namespace pqot::srup_device
