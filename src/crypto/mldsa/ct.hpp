// What ML-DSA marks public on purpose for the constant-time check (the hook is ../declassify.hpp).
#pragma once

#include <cstddef>

#include "../declassify.hpp"

namespace pqot::crypto::mldsa {

// What ML-DSA declassifies: the outcome of each rejection test of the signing loop, the
// challenge seed c~ and the number of rejection-sampling draws.
using crypto::declassify;

}  // namespace pqot::crypto::mldsa
