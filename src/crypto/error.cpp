#include "pqot/crypto/error.hpp"

namespace pqot::crypto {

const char* to_string(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::invalid_length: return "invalid_length";
    case ErrorCode::invalid_encoding: return "invalid_encoding";
    case ErrorCode::invalid_key: return "invalid_key";
    case ErrorCode::unknown_algorithm: return "unknown_algorithm";
    case ErrorCode::invalid_argument: return "invalid_argument";
    case ErrorCode::auth_failed: return "auth_failed";
    case ErrorCode::nonce_exhausted: return "nonce_exhausted";
    case ErrorCode::internal: return "internal";
  }
  return "unknown";
}

}  // namespace pqot::crypto
