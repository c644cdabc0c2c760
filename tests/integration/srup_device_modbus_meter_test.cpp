// srup-device's Modbus TCP energy meter (docs/srup-device.md, "Telemetry sources") against
// pqot-modbus-sim's meter registers (docs/modbus-sim.md): a reading with the configured channels,
// then a device that refuses, answers late or answers with exceptions: no reading, a counted
// error, and a reconnect (after backoff) once the device is back.
#include <gtest/gtest.h>

#include <csignal>
#include <mutex>
#include <optional>

#include "../support/child_process.hpp"
#include "../support/programs.hpp"
#include "../support/wait.hpp"
#include "pqot/srup/meter_channels.hpp"
#include "srup-device/modbus_meter.hpp"

namespace {

using namespace pqot::srup_device;
namespace meter = pqot::srup::meter;

TelemetryModbus devmeter_config(int port, std::uint32_t timeout_ms = 2000) {
  TelemetryModbus m;
  m.host = "127.0.0.1";
  m.port = static_cast<std::uint16_t>(port);
  m.unit = 1;
  m.timeout_ms = timeout_ms;
  m.backoff_min_ms = 50;
  m.backoff_max_ms = 200;
  const std::pair<const char*, const char*> map[] = {
      {"voltage_l1", "input:100:float32"},        {"voltage_l2", "input:102:float32"},
      {"current_l1", "input:106:float32"},        {"active_power_l1", "input:112:float32"},
      {"active_power", "input:118:float32"},      {"frequency", "input:120:float32"},
      {"active_energy_import", "input:122:float64:1000"},  // kWh on the device, Wh in the reading
  };
  for (const auto& [name, point] : map) {
    ModbusChannel ch;
    ch.name = name;
    ch.channel = meter::channel_by_name(name)->channel;
    ch.point = std::get<pqot::modbus::Point>(parse_point_spec(point));
    m.channels.push_back(ch);
  }
  return m;
}

/// One read_async to its end: the reading, or nothing.
std::optional<pqot::srup::Reading> devmeter_read(ModbusMeter& m) {
  std::mutex mu;
  bool done = false;
  std::optional<pqot::srup::Reading> out;
  EXPECT_TRUE(m.read_async([&](std::optional<pqot::srup::Reading> r) {
    std::lock_guard lock(mu);
    out = std::move(r);
    done = true;
  }));
  EXPECT_TRUE(pqot::test::eventually([&] {
    std::lock_guard lock(mu);
    return done;
  }));
  std::lock_guard lock(mu);
  return out;
}

double devmeter_value(const pqot::srup::Reading& r, std::uint16_t channel) {
  for (const auto& cv : r.channels) {
    if (cv.channel != channel) continue;
    if (const auto* f = std::get_if<float>(&cv.value)) return *f;
    if (const auto* d = std::get_if<double>(&cv.value)) return *d;
  }
  ADD_FAILURE() << "channel " << channel << " missing";
  return 0;
}

TEST(SrupDeviceModbusMeter, ReadsTheSimulatorsMeterIntoAReading) {
  pqot::test::ChildProcess sim(pqot::test::kSim, {"--seed", "5"});
  ModbusMeter m(devmeter_config(sim.port()));
  const auto r = devmeter_read(m);
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->channels.size(), 7u);
  for (std::size_t i = 1; i < r->channels.size(); ++i) EXPECT_LT(r->channels[i - 1].channel, r->channels[i].channel);
  EXPECT_NEAR(devmeter_value(*r, meter::kVoltageL1), 230.0, 3.0);
  EXPECT_NEAR(devmeter_value(*r, meter::kVoltageL2), 230.0, 3.0);
  EXPECT_NEAR(devmeter_value(*r, meter::kCurrentL1), 10.0, 3.5);
  EXPECT_NEAR(devmeter_value(*r, meter::kFrequency), 50.0, 0.05);
  EXPECT_GE(devmeter_value(*r, meter::kActiveEnergyImport), 12'345'000.0);  // 12345 kWh in Wh
  for (const auto& cv : r->channels) {  // energy float64, the rest float32 (docs/srup-pq.md 5.3)
    EXPECT_EQ(std::holds_alternative<double>(cv.value), cv.channel == meter::kActiveEnergyImport) << cv.channel;
    EXPECT_EQ(std::holds_alternative<float>(cv.value), cv.channel != meter::kActiveEnergyImport) << cv.channel;
  }
  const auto s = m.stats();
  EXPECT_TRUE(s.connected);
  EXPECT_EQ(s.readings, 1u);
  EXPECT_EQ(s.errors, 0u);
}

TEST(SrupDeviceModbusMeter, RefusedConnectionsAreCountedAndTheMeterReconnects) {
  pqot::test::ChildProcess sim(pqot::test::kSim, {"--fault", "refuse", "--fault-start", "off"});
  ModbusMeter m(devmeter_config(sim.port()));
  ASSERT_TRUE(devmeter_read(m).has_value());
  sim.signal(SIGUSR1);
  ASSERT_TRUE(sim.wait_for_log("SIGUSR1: fault refuse on"));
  // The open connection is closed by the device: the next read fails, and so do reconnects.
  EXPECT_FALSE(devmeter_read(m).has_value());
  EXPECT_FALSE(m.stats().connected);
  EXPECT_TRUE(pqot::test::eventually([&] {
    devmeter_read(m);
    return m.stats().connect_failures >= 1;
  }));
  sim.signal(SIGUSR1);
  ASSERT_TRUE(sim.wait_for_log("SIGUSR1: fault refuse off"));
  EXPECT_TRUE(pqot::test::eventually([&] { return devmeter_read(m).has_value(); }));
  const auto s = m.stats();
  EXPECT_TRUE(s.connected);
  EXPECT_GE(s.errors, 2u);
  EXPECT_GE(s.readings, 2u);
}

TEST(SrupDeviceModbusMeter, ASlowDeviceTimesOutWithoutAReading) {
  pqot::test::ChildProcess sim(pqot::test::kSim, {"--fault", "slow", "--fault-delay-ms", "3000"});
  ModbusMeter m(devmeter_config(sim.port(), 200));
  EXPECT_FALSE(devmeter_read(m).has_value());
  const auto s = m.stats();
  EXPECT_EQ(s.readings, 0u);
  EXPECT_EQ(s.errors, 1u);
  EXPECT_FALSE(s.connected);  // dropped: a late answer must not be taken for the next request's
}

TEST(SrupDeviceModbusMeter, ExceptionsGiveNoReadingButKeepTheConnection) {
  pqot::test::ChildProcess sim(pqot::test::kSim, {"--fault", "exception"});
  ModbusMeter m(devmeter_config(sim.port()));
  EXPECT_FALSE(devmeter_read(m).has_value());
  const auto s = m.stats();
  EXPECT_EQ(s.errors, 1u);
  EXPECT_TRUE(s.connected);
}

TEST(SrupDeviceModbusMeter, OneReadAtATime) {
  pqot::test::ChildProcess sim(pqot::test::kSim, {"--fault", "slow", "--fault-delay-ms", "500"});
  ModbusMeter m(devmeter_config(sim.port(), 5000));
  std::atomic<int> calls{0};
  ASSERT_TRUE(m.read_async([&](std::optional<pqot::srup::Reading>) { ++calls; }));
  EXPECT_FALSE(m.read_async([&](std::optional<pqot::srup::Reading>) { ++calls; }));
  EXPECT_TRUE(pqot::test::eventually([&] { return calls == 1; }));
}

}  // namespace
