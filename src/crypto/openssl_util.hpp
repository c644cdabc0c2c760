// Helpers shared by the OpenSSL wrappers of src/crypto, the only code that calls EVP.
#pragma once

#include <memory>
#include <string>

namespace pqot::crypto::ossl {

/// unique_ptr deleter calling an OpenSSL free function: Ptr<EVP_PKEY, EVP_PKEY_free>.
template <auto Free>
struct Deleter {
  template <class T>
  void operator()(T* p) const noexcept {
    Free(p);
  }
};
template <class T, auto Free>
using Ptr = std::unique_ptr<T, Deleter<Free>>;

/// Throws Error{internal} "OpenSSL: WHAT failed: reason; reason" with every queued OpenSSL error,
/// leaving the thread's error queue empty.
[[noreturn]] void throw_error(const std::string& what);

/// For OpenSSL calls that return 1 on success: throw_error(what) otherwise.
inline void check(int rc, const char* what) {
  if (rc != 1) throw_error(what);
}

}  // namespace pqot::crypto::ossl
