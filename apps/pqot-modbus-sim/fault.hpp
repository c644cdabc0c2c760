// Fault injection: how the simulated device misbehaves, for the gateway's fault tests
// (docs/modbus-sim.md, "Faults"). SIGUSR1 toggles the configured fault on and off.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace pqot::modbus_sim {

enum class FaultKind {
  none,
  exception,  ///< every request is answered with one Modbus exception code
  drop,       ///< the request is read, then the connection is closed unanswered
  slow,       ///< the answer is sent after a delay (the whole device waits, see docs)
  wrong_tid,  ///< a correct answer, but with the MBAP transaction id + 1
  refuse,     ///< the listener is closed: connections are refused
};

/// The command-line names: none, exception, drop, slow, wrong-tid, refuse.
std::string_view fault_name(FaultKind kind);
std::optional<FaultKind> parse_fault_kind(std::string_view text);
/// "none, exception, drop, slow, wrong-tid, refuse" (for --help and error messages).
std::string fault_names();

struct Fault {
  FaultKind kind = FaultKind::none;
  bool on = false;
  std::chrono::milliseconds delay{2000};  ///< slow
  int exception_code = 4;                 ///< exception: SERVER DEVICE FAILURE

  /// The fault applies to what happens now (a kind is set and it is switched on).
  bool active() const { return kind != FaultKind::none && on; }
  bool active(FaultKind k) const { return kind == k && on; }
  /// "fault exception on", as logged.
  std::string describe() const;
};

/// Adds 1 (mod 2^16) to the transaction identifier, bytes 0-1 of the MBAP header (Modbus
/// Messaging on TCP/IP Implementation Guide V1.0b, 3.1.3). `adu` must hold at least 2 bytes.
void bump_transaction_id(std::span<std::uint8_t> adu);

}  // namespace pqot::modbus_sim
