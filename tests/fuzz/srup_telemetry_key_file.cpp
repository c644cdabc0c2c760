// libFuzzer target: the file names of a reader's telemetry key store (docs/srup-mqtt.md 4.6,
// pqot/srup/telemetry_key_store.hpp). A name that parses is exactly the store's own spelling of
// that device's file; nothing else parses, and nothing throws.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "pqot/srup/telemetry_key_store.hpp"
#include "pqot/srup/topics.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view name(reinterpret_cast<const char*>(data), size);
  const auto device = pqot::srup::telemetry_key_file_device(name);
  if (!device) return 0;
  if (*device == 0 || *device == ~std::uint64_t{0}) std::abort();
  if (pqot::srup::id_text(*device) + std::string(pqot::srup::kTelemetryKeyFileSuffix) != name) std::abort();
  return 0;
}
