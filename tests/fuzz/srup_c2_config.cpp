// libFuzzer target: srup-c2's configuration loader (docs/srup-c2.md, "Configuration"). Any text is
// either a configuration within every documented range, or one ConfigError naming the file.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "config.hpp"
#include "registry.hpp"

using namespace pqot::srup_c2;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 16384) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  C2Config c;
  try {
    c = parse_c2_config(text, "fuzz.toml", "");
  } catch (const ConfigError& e) {
    if (std::string(e.what()).rfind("fuzz.toml:", 0) != 0) std::abort();  // every error names the file
    return 0;
  }
  // What the loader accepted is within the documented ranges and consistent.
  if (c.c2.state_dir.empty() || c.broker.ca.empty() || c.broker.cert.empty() || c.broker.key.empty()) std::abort();
  if (c.broker.port == 0 || c.broker.reconnect_min > c.broker.reconnect_max) std::abort();
  if (c.commands.retry_initial > c.commands.retry_max) std::abort();
  if (c.commands.lifetime.count() < 1000 || c.commands.lifetime.count() > C2Config::kMaxLifetimeMs) std::abort();
  if (c.enrolment.cert_days < 1 || c.enrolment.cert_days > C2Config::kMaxCertDays) std::abort();
  if (c.enrolment.ca_cert.has_value() != c.enrolment.ca_key.has_value()) std::abort();
  if (c.control.socket.native().size() > C2Config::kMaxSocketPath) std::abort();
  const auto& q = c.queue;
  if (q.max_messages_per_device == 0 || q.max_messages_per_device > q.max_messages ||
      q.max_bytes_per_device < static_cast<std::size_t>(C2Config::kMinQueueBytes) || q.max_bytes_per_device > q.max_bytes) {
    std::abort();
  }
  const auto& t = c.telemetry;
  if (t.provisional_max_per_device == 0 || t.provisional_max_per_device > t.provisional_max ||
      t.provisional_max_bytes_per_device < static_cast<std::size_t>(C2Config::kMinProvisionalBytes) ||
      t.provisional_max_bytes_per_device > t.provisional_max_bytes) {
    std::abort();
  }
  const RegistryLimits l = c.registry_limits();
  if (l.max_devices == 0 || l.pending_max == 0 || l.pending_max > l.max_devices || l.max_monitors == 0 ||
      l.outbox_max_per_device == 0 || l.outbox_max_total == 0 || l.join_code_attempts == 0 ||
      l.join_code_lifetime_ms == 0 || l.telemetry_per_device == 0) {
    std::abort();
  }
  return 0;
}
