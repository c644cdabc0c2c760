// The ErrorCode a pqot::crypto call throws (a test failure if it throws none).
#pragma once

#include <gtest/gtest.h>

#include "pqot/crypto/error.hpp"

namespace pqot::test {

template <class F>
crypto::ErrorCode code_of(F&& f) {
  try {
    f();
  } catch (const crypto::Error& e) {
    return e.code();
  }
  ADD_FAILURE() << "no pqot::crypto::Error thrown";
  return crypto::ErrorCode::internal;
}

}  // namespace pqot::test
