// The relays of one tripd and their reload (relay_set.hpp).
#include "relay_set.hpp"

#include <algorithm>

namespace pqot::tripd {

void RelaySet::start(const std::vector<RelayConfig>& configs) {
  for (const RelayConfig& rc : configs) {
    auto r = std::make_unique<Relay>(io_, rc);
    r->start();
    relays_.push_back({rc, std::move(r)});
  }
}

void RelaySet::stop() {
  for (auto& e : relays_) e.relay->stop();
}

RelaySet::Prepared RelaySet::prepare(const std::vector<RelayConfig>& next) const {
  Prepared p;
  p.next = next;
  for (const RelayConfig& rc : next) {
    const bool known = std::any_of(relays_.begin(), relays_.end(), [&](const Entry& e) { return e.config.name == rc.name; });
    if (known) continue;
    auto r = std::make_unique<Relay>(io_, rc);
    r->start();  // throws: those started before are stopped as `p` goes
    p.added.push_back(std::move(r));
  }
  return p;
}

ReloadOutcome RelaySet::commit(Prepared p) {
  ReloadOutcome out;
  std::vector<std::string> added;
  std::vector<std::string> removed;
  std::vector<std::string> restarted;
  std::vector<Entry> now;
  auto fresh = p.added.begin();
  for (const RelayConfig& rc : p.next) {
    const auto it = std::find_if(relays_.begin(), relays_.end(), [&](const Entry& e) { return e.config.name == rc.name; });
    if (it == relays_.end()) {
      now.push_back({rc, std::move(*fresh++)});
      added.push_back(rc.name);
      continue;
    }
    if (it->config == rc) {
      now.push_back(std::move(*it));
      continue;
    }
    // Changed: its listener goes first, so that the new one may take the same address.
    it->relay->stop();
    restarted.push_back(rc.name);
    try {
      auto r = std::make_unique<Relay>(io_, rc);
      r->start();
      now.push_back({rc, std::move(r)});
    } catch (const std::exception& e) {
      out.failed.push_back(e.what());  // stays stopped until a later reload
    }
  }
  for (auto& e : relays_) {
    if (!e.relay) continue;  // moved into `now`
    const bool kept = std::any_of(p.next.begin(), p.next.end(), [&](const RelayConfig& rc) { return rc.name == e.config.name; });
    if (!kept) {
      e.relay->stop();
      removed.push_back(e.config.name);
    }
  }
  relays_ = std::move(now);
  out.line = "relays added: " + name_list(added) + "; removed: " + name_list(removed) + "; restarted: " + name_list(restarted);
  return out;
}

std::vector<std::pair<std::string, RelayStats>> RelaySet::stats() const {
  std::vector<std::pair<std::string, RelayStats>> out;
  for (const auto& e : relays_) out.emplace_back(e.config.name, e.relay->stats());
  return out;
}

}  // namespace pqot::tripd
