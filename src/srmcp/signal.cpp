// Simulated signals: sine, ramp, square, random walk, counter (docs/srmcpd.md).
#include "pqot/srmcp/signal.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <mutex>
#include <numbers>
#include <random>

namespace pqot::srmcp {

namespace {

struct SignalState {
  SignalSpec spec;
  std::function<double()> seconds;
  std::mutex mu;  // guards the generator and the random walk: reads may come from any thread
  std::mt19937_64 rng{std::random_device{}()};
  double walk = 0.0;

  double uniform(double half_width) {
    if (half_width <= 0.0) return 0.0;
    return std::uniform_real_distribution<double>(-half_width, half_width)(rng);
  }
};

double fraction(double t, double period) {
  const double f = t / period - std::floor(t / period);
  return std::clamp(f, 0.0, 1.0);
}

ReadResult sample(SignalState& s) {
  const auto& sp = s.spec;
  const double period = sp.period_s > 0 ? sp.period_s : 1.0;
  std::lock_guard lock(s.mu);
  const double t = std::max(0.0, s.seconds());
  double v = sp.offset;
  switch (sp.kind) {
    case SignalSpec::Kind::sine:
      v = sp.offset + sp.amplitude * std::sin(2.0 * std::numbers::pi * t / period);
      break;
    case SignalSpec::Kind::ramp:
      v = sp.offset + sp.amplitude * fraction(t, period);
      break;
    case SignalSpec::Kind::square:
      v = fraction(t, period) < 0.5 ? sp.offset + sp.amplitude : sp.offset - sp.amplitude;
      break;
    case SignalSpec::Kind::random_walk: {
      // Steps of up to 5 % of the amplitude, reflected at the bounds so the walk never sticks
      // there.
      const double a = std::abs(sp.amplitude);
      double w = s.walk + s.uniform(0.05 * a);
      if (w > a) w = 2 * a - w;
      if (w < -a) w = -2 * a - w;
      s.walk = std::clamp(w, -a, a);
      v = sp.offset + s.walk;
      break;
    }
    case SignalSpec::Kind::counter: {
      // Bounded so that the conversion stays defined for absurd uptimes or tiny periods.
      const auto n = static_cast<std::int64_t>(std::min(std::floor(t / period), 1e15));
      return ReadResult{Status::ok, Json(std::llround(sp.offset) + n),
                        std::chrono::system_clock::now()};
    }
  }
  v += s.uniform(sp.noise);
  return ReadResult{Status::ok, Json(v), std::chrono::system_clock::now()};
}

}  // namespace

ReadFn make_signal(const SignalSpec& spec) {
  const auto start = std::chrono::steady_clock::now();
  return make_signal(spec, [start] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  });
}

ReadFn make_signal(const SignalSpec& spec, std::function<double()> seconds) {
  auto state = std::make_shared<SignalState>();
  state->spec = spec;
  state->seconds = std::move(seconds);
  return [state] { return sample(*state); };
}

}  // namespace pqot::srmcp
