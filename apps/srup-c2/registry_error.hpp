// The C2 registry's errors (docs/srup-c2.md, "Registry").
#pragma once

#include <stdexcept>

namespace pqot::srup_c2 {

/// The registry cannot be used or a stored record is invalid: not a SQLite file, another
/// application's, a newer schema, locked by another process, an I/O error, a row whose stored
/// identity does not decode. what() names the file and the cause.
class RegistryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A bound from the configuration is reached (devices, pending joins, outbox rows); nothing was
/// written.
class RegistryFull : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A state change the registry does not allow (docs/srup-c2.md, "States"); nothing was written.
class TransitionError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

}  // namespace pqot::srup_c2
