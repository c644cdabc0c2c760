// srup-device's energy meter model (docs/srup-device.md, "Telemetry sources"): the physics a
// monitor may check, determinism per seed, and Readings with the channels of docs/srup-pq.md 5.3.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "pqot/srup/body.hpp"
#include "pqot/srup/meter_channels.hpp"
#include "srup-device/meter_model.hpp"

namespace {

using namespace pqot::srup_device;
namespace meter = pqot::srup::meter;

constexpr std::uint64_t kMeterT0 = 1'780'000'000'000;  // a Unix time in ms (2026)

TEST(SrupDeviceMeter, EachPhaseObeysPowerRelations) {
  for (int phases : {1, 3}) {
    MeterModel m(phases, 7, kMeterT0);
    for (int i = 1; i <= 500; ++i) {
      // Every 10 minutes of simulated time: across the daily load profile.
      const auto v = m.advance(kMeterT0 + static_cast<std::uint64_t>(i) * 600'000);
      double p_sum = 0, q_sum = 0;
      for (int p = 0; p < phases; ++p) {
        const auto& ph = v.phase[static_cast<std::size_t>(p)];
        EXPECT_NEAR(ph.active_power, ph.voltage * ph.current * ph.power_factor, 1e-6 * ph.active_power);
        EXPECT_NEAR(ph.apparent_power * ph.apparent_power,
                    ph.active_power * ph.active_power + ph.reactive_power * ph.reactive_power,
                    1e-6 * ph.apparent_power * ph.apparent_power);
        EXPECT_GE(ph.power_factor, 0.85);
        EXPECT_LE(ph.power_factor, 0.99);
        EXPECT_GE(ph.voltage, 230.0 * 0.98);
        EXPECT_LE(ph.voltage, 230.0 * 1.02);
        EXPECT_GT(ph.current, 0.0);
        p_sum += ph.active_power;
        q_sum += ph.reactive_power;
      }
      for (int p = phases; p < 3; ++p) EXPECT_EQ(v.phase[static_cast<std::size_t>(p)].voltage, 0.0);
      EXPECT_NEAR(v.active_power, p_sum, 1e-9 * p_sum);
      EXPECT_NEAR(v.reactive_power, q_sum, 1e-9 * q_sum);
      EXPECT_NEAR(v.apparent_power, std::hypot(p_sum, q_sum), 1e-9 * p_sum);
      EXPECT_NEAR(v.power_factor, p_sum / v.apparent_power, 1e-12);
      EXPECT_GE(v.frequency, 49.95);
      EXPECT_LE(v.frequency, 50.05);
    }
  }
}

TEST(SrupDeviceMeter, EnergyIsMonotoneAndIntegratesPower) {
  MeterModel m(3, 1, kMeterT0);
  double last = 0, last_q = 0;
  for (int i = 1; i <= 100; ++i) {
    const auto v = m.advance(kMeterT0 + static_cast<std::uint64_t>(i) * 1000);
    EXPECT_GT(v.active_energy_import, last);
    EXPECT_GT(v.reactive_energy, last_q);
    // One second at power P adds P / 3600 Wh.
    EXPECT_NEAR(v.active_energy_import - last, v.active_power / 3600.0, 1e-9 * v.active_power);
    EXPECT_EQ(v.active_energy_export, 0.0);
    last = v.active_energy_import;
    last_q = v.reactive_energy;
  }
  // The clock stepping back adds nothing, and takes nothing away.
  const auto back = m.advance(kMeterT0);
  EXPECT_EQ(back.active_energy_import, last);
}

TEST(SrupDeviceMeter, SameSeedSameReadings) {
  MeterModel a(3, 42, kMeterT0), b(3, 42, kMeterT0), c(3, 43, kMeterT0);
  for (int i = 1; i <= 10; ++i) {
    const auto t = kMeterT0 + static_cast<std::uint64_t>(i) * 5000;
    const auto ra = a.read(t);
    EXPECT_EQ(ra, b.read(t));
    EXPECT_NE(ra, c.read(t));
  }
}

TEST(SrupDeviceMeter, ReadingsCarryTheSection53Channels) {
  for (int phases : {1, 3}) {
    MeterModel m(phases, 3, kMeterT0);
    const auto r = m.read(kMeterT0 + 60'000);
    EXPECT_EQ(r.timestamp_ms, kMeterT0 + 60'000);
    EXPECT_EQ(r.channels.size(), phases == 3 ? 26u : 14u);
    std::uint16_t prev = 0;
    for (const auto& cv : r.channels) {
      EXPECT_GT(cv.channel, prev);  // strictly ascending, as the body requires
      prev = cv.channel;
      const auto known = meter::channel_by_number(cv.channel);
      ASSERT_TRUE(known.has_value()) << cv.channel;
      EXPECT_EQ(pqot::srup::type_of(cv.value), known->float64 ? pqot::srup::ValueType::float64 : pqot::srup::ValueType::float32)
          << known->name;
      if (phases == 1) {
        EXPECT_EQ(known->name.find("_l2"), std::string_view::npos);
      }
    }
    // It encodes as a Telemetry body and decodes back.
    const auto body = pqot::srup::encode_body(pqot::srup::MessageType::telemetry, pqot::srup::kDefaultSuite, r);
    EXPECT_EQ(std::get<pqot::srup::Reading>(
                  pqot::srup::decode_body(pqot::srup::MessageType::telemetry, pqot::srup::kDefaultSuite, body)),
              r);
  }
  EXPECT_THROW(MeterModel(2, 1, kMeterT0), std::invalid_argument);
}

TEST(SrupDeviceMeter, ChannelNamesAreUniqueAndLookUpBothWays) {
  std::set<std::string_view> names;
  std::uint16_t prev = 0;
  for (const auto& c : meter::kChannels) {
    EXPECT_TRUE(names.insert(c.name).second) << c.name;
    EXPECT_GT(c.channel, prev);
    prev = c.channel;
    EXPECT_EQ(meter::channel_by_name(c.name)->channel, c.channel);
    EXPECT_EQ(meter::channel_by_number(c.channel)->name, c.name);
  }
  EXPECT_EQ(meter::channel_by_name("power_factor")->channel, 0x0160);
  EXPECT_EQ(meter::channel_by_name("reactive_power_l3")->channel, 0x0173);
  EXPECT_EQ(meter::channel_by_name("apparent_power")->channel, 0x0180);
  EXPECT_TRUE(meter::channel_by_name("active_energy_export")->float64);
  EXPECT_FALSE(meter::channel_by_number(0x0104).has_value());
  EXPECT_FALSE(meter::channel_by_name("volts").has_value());
}

}  // namespace
