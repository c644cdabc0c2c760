// srmcpd configuration: the `signal` key of a [[node]] (docs/srmcpd.md, "Simulated signals").
#include <algorithm>
#include <cmath>
#include <map>

#include "pqot/srmcp/signal.hpp"
#include "sections.hpp"

namespace pqot::srmcp::config {

void parse_signal(const Reader& r, NodeSpec& spec, const toml::node& v, const toml::node* value,
                  const std::string& who) {
  if (spec.type != ValueType::float64 && spec.type != ValueType::int64) {
    r.fail(v.source(),
         who + "a signal needs type double or int64, not " + std::string(type_name(spec.type)));
  }
  if (!spec.writers.empty())
    r.fail(v.source(), who + "a simulated node is read-only: remove access/writers");
  if (value) r.fail(value->source(), who + "a simulated node has no initial value");
  const toml::table& t = r.table_of(v, who + "signal");
  SignalSpec sig;
  bool have_kind = false;
  for (auto&& [key, e] : t) {
    const std::string k(key.str());
    const std::string what = who + "signal." + k;
    if (k == "kind") {
      const std::string s = r.string_of(e, what);
      static const std::map<std::string, SignalSpec::Kind> kinds = {
          {"sine", SignalSpec::Kind::sine},
          {"ramp", SignalSpec::Kind::ramp},
          {"square", SignalSpec::Kind::square},
          {"random_walk", SignalSpec::Kind::random_walk},
          {"counter", SignalSpec::Kind::counter}};
      const auto it = kinds.find(s);
      if (it == kinds.end()) {
        r.fail(e.source(), who + "unknown signal kind " + in_quotes(s) +
                             " (sine, ramp, square, random_walk, counter)");
      }
      sig.kind = it->second;
      have_kind = true;
    } else if (k == "amplitude") {
      sig.amplitude = r.number_of(e, what);
    } else if (k == "offset") {
      sig.offset = r.number_of(e, what);
    } else if (k == "period_s") {
      sig.period_s = r.number_of(e, what);
      if (sig.period_s <= 0) r.fail(e.source(), who + "signal.period_s must be > 0");
    } else if (k == "noise") {
      sig.noise = r.number_of(e, what);
      if (sig.noise < 0) r.fail(e.source(), who + "signal.noise must be >= 0");
    } else {
      r.fail(key.source(), who + "unknown key " + in_quotes("signal." + k));
    }
  }
  if (!have_kind) r.fail(v.source(), who + "signal without a kind");
  ReadFn read = make_signal(sig);
  if (spec.type == ValueType::int64 && sig.kind != SignalSpec::Kind::counter) {
    // An int64 node gets the signal rounded, so its reads stay integers.
    read = [inner = std::move(read)] {
      ReadResult res = inner();
      if (res.status == Status::ok && res.value.is_number_float()) {
        res.value = std::llround(std::clamp(res.value.get<double>(), -9e18, 9e18));
      }
      return res;
    };
  }
  spec.read = std::move(read);
}

}  // namespace pqot::srmcp::config
