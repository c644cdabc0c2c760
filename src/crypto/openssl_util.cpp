#include "openssl_util.hpp"

#include <openssl/err.h>

#include <array>

#include "pqot/crypto/error.hpp"

namespace pqot::crypto::ossl {

void throw_error(const std::string& what) {
  std::string message = "OpenSSL: " + what + " failed";
  const char* separator = ": ";
  while (const unsigned long code = ERR_get_error()) {
    std::array<char, 256> text{};
    ERR_error_string_n(code, text.data(), text.size());
    message += separator;
    message += text.data();
    separator = "; ";
  }
  throw Error(ErrorCode::internal, message);
}

}  // namespace pqot::crypto::ossl
