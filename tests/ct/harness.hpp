// Shared helpers of the constant-time check (tests/ct/ct_check.cpp): marking buffers secret
// (undefined for memcheck) or public (defined) with valgrind's client requests.
#pragma once

#include <valgrind/memcheck.h>

#include "pqot/crypto/kem.hpp"

namespace pqot::ct_check {

template <class Buffer>
void mark_secret(Buffer& b) {
  VALGRIND_MAKE_MEM_UNDEFINED(b.data(), b.size());
}
template <class Buffer>
void mark_public(const Buffer& b) {
  VALGRIND_MAKE_MEM_DEFINED(b.data(), b.size());
}

/// Each returns the number of wrong results; memcheck counts the leaks.
int check_kem(const crypto::Kem& kem, int rounds);
int check_mlkem(int rounds);
int check_mldsa(int rounds);
int check_contenders(int rounds);

}  // namespace pqot::ct_check
