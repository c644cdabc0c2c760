// libFuzzer target: srup-device's configuration loader (docs/srup-device.md, "Configuration").
// Any text is either a configuration whose values keep the documented bounds, or one ConfigError
// that names the file.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "pqot/srup/meter_channels.hpp"
#include "srup-device/config.hpp"

using namespace pqot::srup_device;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 16384) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  DeviceConfig c;
  try {
    c = parse_device_config(text, "fuzz.toml", "/base");
  } catch (const ConfigError& e) {
    if (std::string(e.what()).rfind("fuzz.toml:", 0) != 0) std::abort();  // every error names the file
    return 0;
  }
  if (c.device.state_dir.empty() || c.broker.host.empty() || c.update.dir.empty()) std::abort();
  if (c.limits.max_concurrent_actions < 1 || c.limits.max_concurrent_actions > 64) std::abort();
  if (c.broker.reconnect_max_ms < c.broker.reconnect_min_ms) std::abort();
  for (const auto& a : c.actions) {
    if (a.program.empty() == a.builtin.empty()) std::abort();
    if (!a.program.empty() && a.program[0] != '/') std::abort();
  }
  for (const auto& ch : c.telemetry.modbus.channels) {
    if (!pqot::modbus::check(ch.point).empty()) std::abort();
    if (!pqot::srup::meter::channel_by_number(ch.channel)) std::abort();
  }
  return 0;
}
