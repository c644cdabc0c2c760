// The length check every primitive runs at its API edge, with one message shape:
// "ALG: WHAT must be N bytes, got M" (Error{invalid_length}).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "pqot/crypto/bytes.hpp"
#include "pqot/crypto/error.hpp"

namespace pqot::crypto {

inline void require_size(ByteView data, std::size_t expected, const char* what,
                         std::string_view alg) {
  if (data.size() != expected) {
    throw Error(ErrorCode::invalid_length, std::string(alg) + ": " + what + " must be " +
                                               std::to_string(expected) + " bytes, got " +
                                               std::to_string(data.size()));
  }
}

}  // namespace pqot::crypto
