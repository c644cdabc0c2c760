// Tests that open a thousand connections or more need more descriptors than a default soft limit
// of 1,024: raise the soft limit to the hard one (what srmcpd itself does at startup).
#pragma once

#include <sys/resource.h>

namespace pqot::test {

/// Raises RLIMIT_NOFILE's soft limit to its hard limit; returns the soft limit now in force.
inline rlim_t raise_fd_limit() {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return 0;
  if (rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  getrlimit(RLIMIT_NOFILE, &rl);
  return rl.rlim_cur;
}

}  // namespace pqot::test
