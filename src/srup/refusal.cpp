#include "pqot/srup/refusal.hpp"

namespace pqot::srup {

std::string_view to_string(Refusal r) noexcept {
  switch (r) {
    case Refusal::malformed: return "MALFORMED";
    case Refusal::unknown_sender: return "UNKNOWN_SENDER";
    case Refusal::unsupported_suite: return "UNSUPPORTED_SUITE";
    case Refusal::bad_signature: return "BAD_SIGNATURE";
    case Refusal::wrong_recipient: return "WRONG_RECIPIENT";
    case Refusal::wrong_topic: return "WRONG_TOPIC";
    case Refusal::expired: return "EXPIRED";
    case Refusal::decrypt_failed: return "DECRYPT_FAILED";
    case Refusal::replay: return "REPLAY";
    case Refusal::bad_request: return "BAD_REQUEST";
  }
  return "UNKNOWN";
}

}  // namespace pqot::srup
