// libFuzzer target: the parser of mosquitto's dynamic-security responses
// (include/pqot/mqtt/dynsec_commands.hpp, docs/mqtt.md "Registration"). Whatever arrives on the
// response topic, parse_responses returns bounded entries or throws DynsecError; nothing else.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "pqot/mqtt/dynsec_commands.hpp"

using namespace pqot::mqtt;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  try {
    const auto responses = dynsec::parse_responses(input);
    if (responses.size() > dynsec::kMaxResponses) std::abort();
    for (const auto& r : responses) {
      if (r.error && r.error->size() > dynsec::kMaxErrorLength) std::abort();
    }
  } catch (const dynsec::DynsecError&) {
  }
  return 0;
}
