// The relays one tripd runs (docs/tripd.md, "[[relay]]"), kept by name so that a reload
// (docs/tripd.md, "Reloading") starts the relays added, stops the ones removed and restarts the
// ones changed, leaving the others and their connections alone. On tripd's io_context thread.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "relay.hpp"
#include "reload_outcome.hpp"

namespace pqot::tripd {

class RelaySet {
 public:
  explicit RelaySet(asio::io_context& io) : io_(io) {}

  /// Starts a relay per configuration; throws std::runtime_error naming one that cannot start.
  void start(const std::vector<RelayConfig>& configs);
  /// Stops them all (listeners and connections closed).
  void stop();

  /// A reload's first half: the relays `next` adds, started. Nothing running changes; dropping
  /// it stops them again.
  struct Prepared {
    std::vector<RelayConfig> next;
    std::vector<std::unique_ptr<Relay>> added;  ///< in the order of `next`'s new names
  };
  /// Throws std::runtime_error (the relays it started stopped again) when an added one cannot
  /// start: its address is in use, its forward does not resolve.
  Prepared prepare(const std::vector<RelayConfig>& next) const;
  /// The second half: removed relays stopped, changed ones stopped and started again (one that
  /// cannot start then is logged and left out; the next reload tries it again). Returns what
  /// changed, for the log line.
  ReloadOutcome commit(Prepared p);

  /// Each running relay's name and counters, in configuration order.
  std::vector<std::pair<std::string, RelayStats>> stats() const;

 private:
  struct Entry {
    RelayConfig config;
    std::unique_ptr<Relay> relay;
  };
  asio::io_context& io_;
  std::vector<Entry> relays_;
};

}  // namespace pqot::tripd
