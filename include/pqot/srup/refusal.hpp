// Why a received SRUP-PQ envelope was refused (docs/srup-pq.md, section 6 and 9). A refusal is
// never answered on the wire and changes no state.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace pqot::srup {

enum class Refusal : std::uint8_t {
  malformed,          ///< step 1-2: size, magic, version, lengths, type or mode
  unknown_sender,     ///< step 3
  unsupported_suite,  ///< step 4: not the sender's enrolled suite
  bad_signature,      ///< step 5, modes 0 and 1
  wrong_recipient,    ///< step 6
  wrong_topic,        ///< step 7
  expired,            ///< step 8
  decrypt_failed,     ///< step 5 (modes 2, 3) or 9 (mode 1)
  replay,             ///< step 10
  bad_request,        ///< step 11: authenticated, but the body is not valid for its type
};

/// "MALFORMED", "UNKNOWN_SENDER", ... as docs/srup-pq.md and `srup open` spell them.
std::string_view to_string(Refusal r) noexcept;

/// Thrown by the decoders and the receive path. what() says what was wrong without quoting
/// payload bytes.
class Refused : public std::runtime_error {
 public:
  Refused(Refusal reason, const std::string& detail)
      : std::runtime_error(std::string(to_string(reason)) + ": " + detail), reason_(reason) {}
  Refusal reason() const noexcept { return reason_; }

 private:
  Refusal reason_;
};

}  // namespace pqot::srup
