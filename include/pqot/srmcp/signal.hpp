// Simulated signals (docs/srmcpd.md, "Simulated signals"): Read callables for nodes whose values
// are computed from the clock, for demonstrations and tests without devices.
#pragma once

#include <functional>

#include "pqot/srmcp/node.hpp"

namespace pqot::srmcp {

/// A simulated signal (read-only), computed from the time since `start`.
struct SignalSpec {
  enum class Kind { sine, ramp, square, random_walk, counter } kind = Kind::sine;
  double amplitude = 1.0;
  double offset = 0.0;
  double period_s = 60.0;
  double noise = 0.0;  ///< uniform noise of +- noise added to the value
};
/// A Read callable for a simulated signal of type double (counter: int64). docs/srmcpd.md gives
/// the shapes: sine = offset + amplitude*sin(2*pi*t/period_s); ramp = offset .. offset+amplitude
/// each period; square = offset+amplitude for the first half period, offset-amplitude for the
/// second; random_walk stays within offset +- amplitude; counter = round(offset) + whole periods
/// elapsed (JSON integer, no noise). Safe to call from several threads.
ReadFn make_signal(const SignalSpec& spec);
/// Same, with `seconds` returning the time since the start (tests use a fake clock).
ReadFn make_signal(const SignalSpec& spec, std::function<double()> seconds);

}  // namespace pqot::srmcp
