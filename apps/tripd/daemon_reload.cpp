// tripd's daemon: a new configuration applied without a restart (docs/tripd.md, "Reloading").
// Paths are matched by name: one only in the new configuration starts, one only in the old stops
// (CLOSE `shutdown`), one whose settings or flows changed is stopped and started again, and the
// others keep their session, keys, counters and UDP socket. Flows are neither added nor removed
// here (a restart does that): their windows and label counters live on.
#include <set>

#include "daemon_internal.hpp"

namespace pqot::tripd {

namespace {

// What a flow may change on a reload: its name, its paths and (reflecting) allow_from. Its role,
// its addresses and max_age_ms are bound to its socket and its filter: a restart changes those.
bool same_flow_but_routing(FlowConfig a, FlowConfig b) {
  a.name = b.name;
  a.paths = b.paths;
  a.allow_from = b.allow_from;
  return a == b;
}

// The daemon's own check: what cannot change without a restart. Throws ReloadRefused.
void check_flows(const TripdConfig& now, const TripdConfig& next) {
  std::map<std::uint16_t, const FlowConfig*> before;
  for (const FlowConfig& f : now.flows) before.emplace(f.id, &f);
  for (const FlowConfig& f : next.flows) {
    const auto it = before.find(f.id);
    if (it == before.end()) throw ReloadRefused("flow " + std::to_string(f.id) + " is added: adding a flow needs a restart");
    if (!same_flow_but_routing(*it->second, f)) {
      throw ReloadRefused("flow " + std::to_string(f.id) +
                          ": its role, addresses or max_age_ms changed: that needs a restart (a reload may change name, paths, allow_from)");
    }
    before.erase(it);
  }
  if (!before.empty()) {
    throw ReloadRefused("flow " + std::to_string(before.begin()->first) + " is removed: removing a flow needs a restart");
  }
}

}  // namespace

std::shared_ptr<Daemon::Path> Daemon::make_path(const TripdConfig& c, const PathConfig& pc) const {
  return std::make_shared<Path>(io_, pc, c.session_flows(pc), c.limits);
}

std::unique_ptr<Daemon::PreparedReload> Daemon::prepare_reload(TripdConfig next) {
  if (stopped_) throw ReloadRefused("tripd is stopping");
  check_flows(config_, next);
  auto r = std::make_unique<PreparedReload>();
  for (const FlowConfig& f : next.flows) {
    if (!f.reflects()) continue;
    auto& allow = r->allow[f.id];
    for (const std::string& a : f.allow_from) allow.push_back(resolve_address(io_, {a, 1}, "flow " + std::to_string(f.id) + " allow_from"));
  }
  // The identity's files are read again whether or not their names changed: a renewed
  // certificate keeps its file name. New handshakes use them; sessions up keep their keys.
  if (next.identity) {
    const channel::TlsFiles files{next.identity->ca, next.identity->cert, next.identity->key};
    r->server_tls = std::make_unique<asio::ssl::context>(channel::make_server_tls(files));
    r->client_tls = std::make_unique<asio::ssl::context>(channel::make_client_tls(files));
  }
  std::set<std::string> next_names;
  for (const PathConfig& pc : next.paths) {
    next_names.insert(pc.name);
    const auto it = std::find_if(paths_.begin(), paths_.end(), [&](const auto& p) { return p->config.name == pc.name; });
    if (it == paths_.end()) {
      r->added.push_back(make_path(next, pc));
      if (!pc.is_client()) bind_path(*r->added.back());  // throws: nothing changed yet
    } else if (!((*it)->config == pc) || (*it)->flows != next.session_flows(pc)) {
      r->restarted.push_back(pc.name);
      if (!pc.is_client() && !((*it)->config.listen == pc.listen)) {
        auto p = make_path(next, pc);
        bind_path(*p);  // throws: nothing changed yet (an address another path holds: two reloads)
        r->rebound.emplace(pc.name, std::move(p));
      }
    }
  }
  for (const auto& p : paths_) {
    if (!next_names.contains(p->config.name)) r->removed.push_back(p->config.name);
  }
  if (!(next.session.kem == config_.session.kem && next.session.accept_kems == config_.session.accept_kems &&
        next.session.keepalive_ms == config_.session.keepalive_ms && next.session.dead_after_ms == config_.session.dead_after_ms &&
        next.session.key_update_datagrams == config_.session.key_update_datagrams &&
        next.session.key_update_seconds == config_.session.key_update_seconds)) {
    r->changes.push_back("[session] for new sessions");
  }
  const LimitsConfig& a = config_.limits;
  const LimitsConfig& b = next.limits;
  if (a.max_handshakes != b.max_handshakes || a.max_handshakes_per_source != b.max_handshakes_per_source ||
      a.handshake_timeout != b.handshake_timeout || a.session_grace != b.session_grace || a.reconnect_min != b.reconnect_min ||
      a.reconnect_max != b.reconnect_max || a.max_datagram != b.max_datagram) {
    r->changes.push_back("[limits]");
  }
  for (const FlowConfig& f : next.flows) {
    const auto old = std::find_if(config_.flows.begin(), config_.flows.end(), [&](const FlowConfig& o) { return o.id == f.id; });
    if (!(*old == f)) r->changes.push_back("flow " + std::to_string(f.id));
  }
  r->config = std::move(next);
  return r;
}

ReloadOutcome Daemon::commit_reload(std::unique_ptr<PreparedReload> r) {
  ReloadOutcome out;
  config_ = std::move(r->config);
  if (r->server_tls) {
    server_tls_ = std::move(r->server_tls);
    client_tls_ = std::move(r->client_tls);
  }
  std::map<std::string, std::shared_ptr<Path>> running;
  for (auto& p : paths_) running.emplace(p->config.name, p);
  for (const std::string& name : r->removed) {
    const auto p = running[name];
    stop_path(*p, "the path was removed from the configuration (reload)");
    retiring_.push_back(p);
    running.erase(name);
  }
  std::vector<std::shared_ptr<Path>> to_start = r->added;
  for (auto& p : r->added) running.emplace(p->config.name, p);
  for (const std::string& name : r->restarted) {
    const auto old = running[name];
    stop_path(*old, "the path's configuration changed (reload): it starts again");
    retiring_.push_back(old);
    running.erase(name);
    const PathConfig& pc = *std::find_if(config_.paths.begin(), config_.paths.end(), [&](const PathConfig& c) { return c.name == name; });
    const auto rebound = r->rebound.find(name);
    auto p = rebound != r->rebound.end() ? rebound->second : make_path(config_, pc);
    p->counters = old->counters;  // one path to the operator: its counters go on
    p->next_session = old->next_session;  // the client may still hold the session before (§4.3)
    try {
      // Its address unchanged, it is taken again only now that the old socket closed.
      if (!pc.is_client() && rebound == r->rebound.end()) bind_path(*p);
    } catch (const std::exception& e) {
      // The next reload tries it again (it is not running, so it counts as added).
      out.failed.push_back(e.what());
      continue;
    }
    running.emplace(name, p);
    to_start.push_back(p);
  }
  paths_.clear();
  for (const PathConfig& pc : config_.paths) {
    if (const auto it = running.find(pc.name); it != running.end()) paths_.push_back(it->second);
  }
  for (auto& f : reflect_flows_) {
    f->config = *std::find_if(config_.flows.begin(), config_.flows.end(), [&](const FlowConfig& c) { return c.id == f->config.id; });
    f->allow = r->allow[f->config.id];
  }
  for (auto& [id, f] : filter_flows_) {
    f->config = *std::find_if(config_.flows.begin(), config_.flows.end(), [&, id = id](const FlowConfig& c) { return c.id == id; });
  }
  route_flows();
  for (auto& p : to_start) start_path(*p);
  std::erase_if(retiring_, [](const std::weak_ptr<Path>& w) { return w.expired(); });
  std::vector<std::string> added;
  for (const auto& p : r->added) added.push_back(p->config.name);
  out.line = "paths added: " + name_list(added) + "; removed: " + name_list(r->removed) + "; restarted: " + name_list(r->restarted);
  if (!r->changes.empty()) out.line += "; changed: " + name_list(r->changes);
  return out;
}

std::string Daemon::reload(TripdConfig next) { return commit_reload(prepare_reload(std::move(next))).line; }

std::size_t Daemon::paths_retiring() const {
  return static_cast<std::size_t>(std::count_if(retiring_.begin(), retiring_.end(), [](const std::weak_ptr<Path>& w) { return !w.expired(); }));
}

}  // namespace pqot::tripd
