// The one error type of pqot::crypto: every failure at this API edge is an Error with a code.
#pragma once

#include <stdexcept>
#include <string>

namespace pqot::crypto {

enum class ErrorCode {
  invalid_length,    ///< an input has the wrong size for the algorithm
  invalid_encoding,  ///< malformed hex or similar textual input
  invalid_key,       ///< a key fails its input check (ML-KEM modulus or hash check)
  unknown_algorithm, ///< an algorithm name pqot does not implement
  invalid_argument,  ///< any other argument out of range
  auth_failed,       ///< AEAD tag did not verify
  nonce_exhausted,   ///< a counter nonce would wrap; the key must be replaced
  internal,          ///< OpenSSL or the OS failed where it should not
};

/// Short stable name of a code ("invalid_length", ...), for logs and CLI messages.
const char* to_string(ErrorCode code) noexcept;

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& what) : std::runtime_error(what), code_(code) {}
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

}  // namespace pqot::crypto
