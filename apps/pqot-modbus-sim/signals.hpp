// SIGTERM, SIGINT and SIGUSR1 as bytes on a pipe (the self-pipe trick): the handler only write()s,
// which is async-signal-safe, and the poll() loop reads the signals like any other event.
#pragma once

#include <vector>

namespace pqot::modbus_sim {

class SignalPipe {
 public:
  /// Creates the pipe and installs the handlers (one instance per process); ignores SIGPIPE.
  SignalPipe();
  /// Restores the default dispositions and closes the pipe.
  ~SignalPipe();
  SignalPipe(const SignalPipe&) = delete;
  SignalPipe& operator=(const SignalPipe&) = delete;

  /// Readable when a signal is pending.
  int fd() const;
  /// The signals received since the last call, in order.
  std::vector<int> drain();
};

}  // namespace pqot::modbus_sim
