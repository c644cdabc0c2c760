// Energy-meter telemetry channels (docs/srup-pq.md, section 5.3): the numbers a device puts in a
// Reading and a monitor reads back, with one text name each (configuration files, logs). Constants
// and lookups only: no library to link.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace pqot::srup::meter {

/// Section 5.3's table. float32 values unless noted; phases L1-L3 are the base + 1..3.
inline constexpr std::uint16_t kVoltageL1 = 0x0101;  ///< V
inline constexpr std::uint16_t kVoltageL2 = 0x0102;
inline constexpr std::uint16_t kVoltageL3 = 0x0103;
inline constexpr std::uint16_t kCurrentL1 = 0x0111;  ///< A
inline constexpr std::uint16_t kCurrentL2 = 0x0112;
inline constexpr std::uint16_t kCurrentL3 = 0x0113;
inline constexpr std::uint16_t kActivePowerL1 = 0x0121;  ///< W
inline constexpr std::uint16_t kActivePowerL2 = 0x0122;
inline constexpr std::uint16_t kActivePowerL3 = 0x0123;
inline constexpr std::uint16_t kActivePower = 0x0130;          ///< W, total
inline constexpr std::uint16_t kActiveEnergyImport = 0x0140;   ///< Wh, float64
inline constexpr std::uint16_t kActiveEnergyExport = 0x0141;   ///< Wh, float64
inline constexpr std::uint16_t kReactiveEnergy = 0x0142;       ///< varh, float64
inline constexpr std::uint16_t kFrequency = 0x0150;            ///< Hz
inline constexpr std::uint16_t kPowerFactor = 0x0160;          ///< total
inline constexpr std::uint16_t kPowerFactorL1 = 0x0161;
inline constexpr std::uint16_t kPowerFactorL2 = 0x0162;
inline constexpr std::uint16_t kPowerFactorL3 = 0x0163;
inline constexpr std::uint16_t kReactivePower = 0x0170;  ///< var, total
inline constexpr std::uint16_t kReactivePowerL1 = 0x0171;
inline constexpr std::uint16_t kReactivePowerL2 = 0x0172;
inline constexpr std::uint16_t kReactivePowerL3 = 0x0173;
inline constexpr std::uint16_t kApparentPower = 0x0180;  ///< VA, total
inline constexpr std::uint16_t kApparentPowerL1 = 0x0181;
inline constexpr std::uint16_t kApparentPowerL2 = 0x0182;
inline constexpr std::uint16_t kApparentPowerL3 = 0x0183;

/// Channel of phase `phase` (1..3) of a per-phase quantity whose L1 channel is `l1`.
constexpr std::uint16_t phase_channel(std::uint16_t l1, unsigned phase) {
  return static_cast<std::uint16_t>(l1 + phase - 1);
}

struct ChannelName {
  std::uint16_t channel;
  std::string_view name;
  bool float64;  ///< carried as float64 (energies), else float32
};

/// Every channel, in ascending channel order.
inline constexpr std::array<ChannelName, 26> kChannels{{
    {kVoltageL1, "voltage_l1", false},
    {kVoltageL2, "voltage_l2", false},
    {kVoltageL3, "voltage_l3", false},
    {kCurrentL1, "current_l1", false},
    {kCurrentL2, "current_l2", false},
    {kCurrentL3, "current_l3", false},
    {kActivePowerL1, "active_power_l1", false},
    {kActivePowerL2, "active_power_l2", false},
    {kActivePowerL3, "active_power_l3", false},
    {kActivePower, "active_power", false},
    {kActiveEnergyImport, "active_energy_import", true},
    {kActiveEnergyExport, "active_energy_export", true},
    {kReactiveEnergy, "reactive_energy", true},
    {kFrequency, "frequency", false},
    {kPowerFactor, "power_factor", false},
    {kPowerFactorL1, "power_factor_l1", false},
    {kPowerFactorL2, "power_factor_l2", false},
    {kPowerFactorL3, "power_factor_l3", false},
    {kReactivePower, "reactive_power", false},
    {kReactivePowerL1, "reactive_power_l1", false},
    {kReactivePowerL2, "reactive_power_l2", false},
    {kReactivePowerL3, "reactive_power_l3", false},
    {kApparentPower, "apparent_power", false},
    {kApparentPowerL1, "apparent_power_l1", false},
    {kApparentPowerL2, "apparent_power_l2", false},
    {kApparentPowerL3, "apparent_power_l3", false},
}};

/// The entry of a channel name ("voltage_l1", ...), or nothing.
constexpr std::optional<ChannelName> channel_by_name(std::string_view name) {
  for (const auto& c : kChannels)
    if (c.name == name) return c;
  return std::nullopt;
}

/// The entry of a channel number, or nothing for a channel section 5.3 does not name.
constexpr std::optional<ChannelName> channel_by_number(std::uint16_t channel) {
  for (const auto& c : kChannels)
    if (c.channel == channel) return c;
  return std::nullopt;
}

}  // namespace pqot::srup::meter
