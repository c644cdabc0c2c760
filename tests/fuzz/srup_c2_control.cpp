// libFuzzer target: the C2 control protocol's request parser (docs/srup-c2.md, "Control socket").
// Any line is either a typed request or one ControlError{bad_request}; nothing else escapes, and a
// request that parsed formats an answer line that is valid JSON.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "control_protocol.hpp"

using namespace pqot::srup_c2;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 65536) return 0;
  const std::string line(reinterpret_cast<const char*>(data), size);
  try {
    (void)parse_control_request(line);
  } catch (const ControlError& e) {
    if (e.code() != ControlErrorCode::bad_request) std::abort();
    // The error text goes back to the client as JSON: it must always format.
    const std::string answer = format_error(e.code(), e.what());
    if (!nlohmann::json::accept(answer)) std::abort();
  }
  return 0;
}
