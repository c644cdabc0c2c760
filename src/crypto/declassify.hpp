// The valgrind hook that marks a value derived from secrets as public on purpose (docs/crypto.md,
// "Constant time"). Each scheme lists what it declassifies and why (mlkem/ct.hpp, mldsa/ct.hpp).
#pragma once

#include <cstddef>

#ifdef PQOT_HAVE_VALGRIND
#include <valgrind/memcheck.h>
#endif

namespace pqot::crypto {

/// Tells valgrind's memcheck that `data` is public although computed from secrets. The
/// constant-time test marks secrets undefined; without this, legitimate branches on public values
/// would be reported. A no-op outside valgrind, or where memcheck.h was missing at build time.
inline void declassify(const void* data, std::size_t size) noexcept {
#ifdef PQOT_HAVE_VALGRIND
  VALGRIND_MAKE_MEM_DEFINED(data, size);
#else
  (void)data;
  (void)size;
#endif
}

}  // namespace pqot::crypto
