// srup-device: a built-in energy meter model (docs/srup-device.md, "Telemetry sources"), for
// devices without a real meter and for tests: a 1- or 3-phase meter on a 230 V / 50 Hz grid with
// a daily load profile and noise, whose readings obey the physics a monitor may check
// (P = V·I·pf, S² = P² + Q², energy integrated over time). Deterministic for a given seed and
// sequence of reading times.
#pragma once

#include <array>
#include <cstdint>

#include "pqot/srup/body.hpp"

namespace pqot::srup_device {

/// One phase's instantaneous values.
struct PhaseValues {
  double voltage = 0;         ///< V
  double current = 0;         ///< A
  double active_power = 0;    ///< W
  double reactive_power = 0;  ///< var (inductive load: positive)
  double apparent_power = 0;  ///< VA
  double power_factor = 0;    ///< 0.85 .. 0.99
};

/// What the meter shows at one time.
struct MeterValues {
  std::uint64_t timestamp_ms = 0;
  int phases = 3;
  std::array<PhaseValues, 3> phase{};  ///< [0] = L1; unused phases are zero
  double frequency = 0;                ///< Hz, 50 ± 0.05
  double active_power = 0;             ///< W, sum of the phases
  double reactive_power = 0;           ///< var, sum of the phases
  double apparent_power = 0;           ///< VA, sqrt(P² + Q²) of the totals
  double power_factor = 0;             ///< P / S of the totals
  double active_energy_import = 0;     ///< Wh since the model started
  double active_energy_export = 0;     ///< Wh: always 0 (the model has no generation)
  double reactive_energy = 0;          ///< varh since the model started
};

class MeterModel {
 public:
  /// `phases` 1 or 3 (std::invalid_argument otherwise); `start_ms` the wall-clock time (Unix ms)
  /// at which the energy registers start at 0.
  MeterModel(int phases, std::uint64_t seed, std::uint64_t start_ms);

  /// Advances the model to `now_ms` and returns its values then. Energy grows by the power at
  /// `now_ms` times the time since the previous call; a time before the previous one counts as
  /// no time passed (the wall clock stepped back), never as negative energy.
  MeterValues advance(std::uint64_t now_ms);

  /// advance(now_ms) as a Reading with the channels of docs/srup-pq.md 5.3 (float32, energies
  /// float64), in ascending channel order: the L1 channels and totals for 1 phase, all for 3.
  srup::Reading read(std::uint64_t now_ms);

 private:
  double noise(double amplitude);  // uniform in [-amplitude, amplitude]

  int phases_;
  std::uint64_t rng_;
  std::uint64_t last_ms_;
  double import_wh_ = 0;
  double reactive_varh_ = 0;
  std::array<double, 3> phase_scale_{};  // each phase's share of the load, fixed by the seed
};

/// The Reading of `v` (docs/srup-pq.md 5.3).
srup::Reading to_reading(const MeterValues& v);

}  // namespace pqot::srup_device
