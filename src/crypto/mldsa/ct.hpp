// The valgrind hook that marks values derived from secrets as public on purpose (ML-DSA).
#pragma once

#include <cstddef>

#ifdef PQOT_HAVE_VALGRIND
#include <valgrind/memcheck.h>
#endif

namespace pqot::crypto::mldsa {

/// Tells valgrind's memcheck that `data` is public although computed from secrets: the outcome of
/// each rejection test of the signing loop, the challenge seed c~ and the number of rejection-
/// sampling draws. A no-op outside the constant-time build.
inline void declassify(const void* data, std::size_t size) noexcept {
#ifdef PQOT_HAVE_VALGRIND
  VALGRIND_MAKE_MEM_DEFINED(data, size);
#else
  (void)data;
  (void)size;
#endif
}

}  // namespace pqot::crypto::mldsa
