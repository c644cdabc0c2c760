// tripd's configuration (config.hpp; docs/tripd.md, "Configuration").
#include "config.hpp"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

namespace pqot::tripd {

namespace {

using config::in_quotes;
using config::TomlReader;

// Calls f(node) when `key` is in `t`.
template <class F>
void with(const toml::table& t, std::string_view key, F&& f) {
  if (const toml::node* n = t.get(key)) f(*n);
}

common::HostPort host_port_of(const TomlReader& r, const toml::node& n, std::string_view what, bool allow_zero = false) {
  const std::string s = r.string_of(n, what);
  const auto hp = common::parse_host_port(s, allow_zero);
  if (!hp) r.fail(n, std::string(what) + " = " + in_quotes(s) + " is not HOST:PORT (IPv6 in brackets)");
  return *hp;
}

std::string name_of(const TomlReader& r, const toml::node& n, std::string_view what) {
  const std::string s = r.string_of(n, what);
  const bool ok = !s.empty() && s.size() <= 64 && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
  });
  if (!ok) r.fail(n, std::string(what) + " = " + in_quotes(s) + ": 1..64 letters, digits, '-', '_' or '.'");
  return s;
}

trip::KemId kem_of(const TomlReader& r, const toml::node& n, std::string_view what) {
  const std::string s = r.string_of(n, what);
  if (s == "ML-KEM-768") return trip::KemId::ml_kem_768;
  if (s == "ML-KEM-1024") return trip::KemId::ml_kem_1024;
  if (s == "X-Wing") return trip::KemId::x_wing;
  r.fail(n, std::string(what) + " = " + in_quotes(s) + ": ML-KEM-768, ML-KEM-1024 or X-Wing");
}

Millis ms_of(const TomlReader& r, const toml::node& n, std::string_view what, std::int64_t lo, std::int64_t hi) {
  return Millis(r.int_of(n, what, lo, hi));
}

void read_identity(const TomlReader& r, const toml::table& t, TripdConfig& c) {
  r.only_keys(t, "identity", {"ca", "cert", "key"});
  IdentityConfig id;
  for (const auto& [key, field] : {std::pair<const char*, std::string*>{"ca", &id.ca}, {"cert", &id.cert}, {"key", &id.key}}) {
    const toml::node* n = t.get(key);
    if (n == nullptr) r.fail(t, std::string("[identity] needs ") + key);
    *field = r.path_of(*n, std::string("identity.") + key);
  }
  c.identity = id;
}

void read_session(const TomlReader& r, const toml::table& t, SessionConfig& s) {
  r.only_keys(t, "session", {"kem", "accept_kems", "keepalive_ms", "dead_after_ms", "key_update_datagrams", "key_update_seconds"});
  with(t, "kem", [&](const toml::node& n) { s.kem = kem_of(r, n, "session.kem"); });
  with(t, "accept_kems", [&](const toml::node& n) {
    const auto* a = n.as_array();
    if (a == nullptr || a->empty() || a->size() > 3) r.fail(n, "session.accept_kems must be an array of 1..3 KEM names");
    s.accept_kems.clear();
    for (const toml::node& e : *a) s.accept_kems.push_back(kem_of(r, e, "session.accept_kems entry"));
  });
  with(t, "keepalive_ms", [&](const toml::node& n) { s.keepalive_ms = static_cast<std::uint32_t>(r.int_of(n, "session.keepalive_ms", 50, 60'000)); });
  with(t, "dead_after_ms", [&](const toml::node& n) { s.dead_after_ms = static_cast<std::uint32_t>(r.int_of(n, "session.dead_after_ms", 101, 600'000)); });
  with(t, "key_update_datagrams", [&](const toml::node& n) {
    s.key_update_datagrams = static_cast<std::uint32_t>(r.int_of(n, "session.key_update_datagrams", 1, UINT32_MAX));
  });
  with(t, "key_update_seconds", [&](const toml::node& n) {
    s.key_update_seconds = static_cast<std::uint32_t>(r.int_of(n, "session.key_update_seconds", 1, 86'400));
  });
  if (s.dead_after_ms <= 2ull * s.keepalive_ms) {
    r.fail(t, "session.dead_after_ms (" + std::to_string(s.dead_after_ms) + ") must be more than twice keepalive_ms (" +
                  std::to_string(s.keepalive_ms) + ")");
  }
}

void read_limits(const TomlReader& r, const toml::table& t, LimitsConfig& l) {
  r.only_keys(t, "limits", {"max_handshakes", "max_handshakes_per_source", "handshake_timeout_ms", "session_grace_ms",
                            "reconnect_min_ms", "reconnect_max_ms", "max_datagram"});
  with(t, "max_handshakes", [&](const toml::node& n) { l.max_handshakes = static_cast<std::size_t>(r.int_of(n, "limits.max_handshakes", 1, 1024)); });
  with(t, "max_handshakes_per_source", [&](const toml::node& n) {
    l.max_handshakes_per_source = static_cast<std::size_t>(r.int_of(n, "limits.max_handshakes_per_source", 1, 1024));
  });
  with(t, "handshake_timeout_ms", [&](const toml::node& n) { l.handshake_timeout = ms_of(r, n, "limits.handshake_timeout_ms", 100, 120'000); });
  with(t, "session_grace_ms", [&](const toml::node& n) { l.session_grace = ms_of(r, n, "limits.session_grace_ms", 0, 600'000); });
  with(t, "reconnect_min_ms", [&](const toml::node& n) { l.reconnect_min = ms_of(r, n, "limits.reconnect_min_ms", 10, 60'000); });
  with(t, "reconnect_max_ms", [&](const toml::node& n) { l.reconnect_max = ms_of(r, n, "limits.reconnect_max_ms", 10, 600'000); });
  with(t, "max_datagram", [&](const toml::node& n) {
    l.max_datagram = static_cast<std::size_t>(r.int_of(n, "limits.max_datagram", 1, static_cast<std::int64_t>(trip::kMaxPayload)));
  });
  if (l.reconnect_max < l.reconnect_min) r.fail(t, "limits.reconnect_max_ms is below reconnect_min_ms");
  if (l.max_handshakes_per_source > l.max_handshakes) r.fail(t, "limits.max_handshakes_per_source is above max_handshakes");
}

PathConfig read_path(const TomlReader& r, const toml::table& t) {
  r.only_keys(t, "path", {"name", "number", "connect", "server_name", "listen", "peers"});
  PathConfig p;
  const toml::node* name = t.get("name");
  if (name == nullptr) r.fail(t, "[[path]] needs a name");
  p.name = name_of(r, *name, "path.name");
  const std::string what = "path " + in_quotes(p.name);
  const toml::node* number = t.get("number");
  if (number == nullptr) r.fail(t, what + " needs a number (1..255, the same on both daemons is usual, not required)");
  p.number = static_cast<std::uint8_t>(r.int_of(*number, what + ": number", 1, 255));
  with(t, "connect", [&](const toml::node& n) { p.connect = host_port_of(r, n, what + ": connect"); });
  with(t, "server_name", [&](const toml::node& n) { p.server_name = name_of(r, n, what + ": server_name"); });
  with(t, "listen", [&](const toml::node& n) { p.listen = host_port_of(r, n, what + ": listen", true); });
  with(t, "peers", [&](const toml::node& n) {
    for (const std::string& s : r.strings_of(n, what + ": peers", 64)) {
      if (s.empty() || s.size() > 64) r.fail(n, what + ": a peer name must be 1..64 bytes");
      p.peers.push_back(s);
    }
  });
  if (p.connect.has_value() == p.listen.has_value()) r.fail(t, what + " needs exactly one of connect (client) and listen (server)");
  if (p.listen && p.peers.empty()) r.fail(t, what + " listens: it needs peers, the client certificate names it accepts");
  if (p.connect && !p.peers.empty()) r.fail(t, what + " connects: peers is for the listening side (use server_name)");
  if (p.listen && !p.server_name.empty()) r.fail(t, what + " listens: server_name is for the connecting side");
  if (p.connect && p.server_name.empty()) p.server_name = p.connect->host;
  return p;
}

FlowConfig read_flow(const TomlReader& r, const toml::table& t) {
  r.only_keys(t, "flow", {"id", "name", "reflect", "allow_from", "deliver", "deliver_from", "max_age_ms", "paths"});
  FlowConfig f;
  const toml::node* id = t.get("id");
  if (id == nullptr) r.fail(t, "[[flow]] needs an id (1..65535, the same on both daemons)");
  f.id = static_cast<std::uint16_t>(r.int_of(*id, "flow.id", 1, 65535));
  const std::string what = "flow " + std::to_string(f.id);
  with(t, "name", [&](const toml::node& n) { f.name = name_of(r, n, what + ": name"); });
  if (f.name.empty()) f.name = "flow-" + std::to_string(f.id);
  with(t, "reflect", [&](const toml::node& n) { f.reflect = host_port_of(r, n, what + ": reflect"); });
  with(t, "allow_from", [&](const toml::node& n) { f.allow_from = r.strings_of(n, what + ": allow_from", 64); });
  with(t, "deliver", [&](const toml::node& n) { f.deliver = host_port_of(r, n, what + ": deliver"); });
  with(t, "deliver_from", [&](const toml::node& n) { f.deliver_from = host_port_of(r, n, what + ": deliver_from", true); });
  with(t, "max_age_ms", [&](const toml::node& n) { f.max_age = ms_of(r, n, what + ": max_age_ms", 0, 3'600'000); });
  with(t, "paths", [&](const toml::node& n) { f.paths = r.strings_of(n, what + ": paths", 255); });
  if (f.reflect.has_value() == f.deliver.has_value()) {
    r.fail(t, what + " needs exactly one of reflect (this side takes the legacy datagrams) and deliver (this side filters)");
  }
  if (f.reflect && (f.deliver_from || f.max_age.count() != 0)) r.fail(t, what + " reflects: deliver_from and max_age_ms are for the filtering side");
  if (f.deliver && !f.allow_from.empty()) r.fail(t, what + " filters: allow_from is for the reflecting side");
  return f;
}

RelayConfig read_relay(const TomlReader& r, const toml::table& t) {
  r.only_keys(t, "relay", {"name", "listen", "forward", "max_connections", "max_associations", "idle_ms", "max_buffer"});
  RelayConfig c;
  const toml::node* name = t.get("name");
  if (name == nullptr) r.fail(t, "[[relay]] needs a name");
  c.name = name_of(r, *name, "relay.name");
  const std::string what = "relay " + in_quotes(c.name);
  const toml::node* listen = t.get("listen");
  const toml::node* forward = t.get("forward");
  if (listen == nullptr || forward == nullptr) r.fail(t, what + " needs listen and forward");
  c.listen = host_port_of(r, *listen, what + ": listen");
  c.forward = host_port_of(r, *forward, what + ": forward");
  with(t, "max_connections", [&](const toml::node& n) { c.max_connections = static_cast<std::size_t>(r.int_of(n, what + ": max_connections", 1, 65'536)); });
  with(t, "max_associations", [&](const toml::node& n) { c.max_associations = static_cast<std::size_t>(r.int_of(n, what + ": max_associations", 1, 65'536)); });
  with(t, "idle_ms", [&](const toml::node& n) { c.idle = ms_of(r, n, what + ": idle_ms", 1'000, 86'400'000); });
  with(t, "max_buffer", [&](const toml::node& n) { c.max_buffer = static_cast<std::size_t>(r.int_of(n, what + ": max_buffer", 4096, 64 << 20)); });
  return c;
}

void check_whole(const TomlReader& r, const toml::table& root, TripdConfig& c) {
  std::set<std::string> path_names;
  std::set<int> path_numbers;
  for (const PathConfig& p : c.paths) {
    if (!path_names.insert(p.name).second) r.fail_file("two paths are named " + in_quotes(p.name));
    if (!path_numbers.insert(p.number).second) r.fail_file("two paths have number " + std::to_string(p.number));
  }
  std::set<int> flow_ids;
  for (const FlowConfig& f : c.flows) {
    if (!flow_ids.insert(f.id).second) r.fail_file("two flows have id " + std::to_string(f.id));
    for (const std::string& p : f.paths) {
      if (!path_names.count(p)) r.fail_file("flow " + std::to_string(f.id) + " names path " + in_quotes(p) + ", which is not configured");
    }
  }
  if (!c.flows.empty() && c.paths.empty()) r.fail_file("flows are configured but no [[path]]");
  if (!c.paths.empty() && !c.identity) r.fail_file("paths need an [identity] (ca, cert, key)");
  if (c.paths.empty() && c.relays.empty()) r.fail_file("nothing to do: configure [[path]] and [[flow]], or [[relay]]");
  // docs/trip.md §4.1: a CLIENT_HELLO (at most 4,096 bytes) holds 48 bytes, the encapsulation key
  // and 3 bytes per flow; the flows of a path must fit with the largest key this side may send
  // (connecting) or accept (listening).
  const auto ek_size = [](trip::KemId k) -> std::size_t {
    switch (k) {
      case trip::KemId::ml_kem_768: return 1184;
      case trip::KemId::ml_kem_1024: return 1568;
      case trip::KemId::x_wing: return 1216;
    }
    return 1568;
  };
  for (const PathConfig& p : c.paths) {
    std::size_t ek = ek_size(c.session.kem);
    if (!p.is_client()) {
      ek = 0;
      for (trip::KemId k : c.session.accept_kems) ek = std::max(ek, ek_size(k));
    }
    const std::size_t room = (trip::kMaxControlBody - 48 - ek) / 3;
    const std::size_t n = c.session_flows(p).size();
    if (n > room) {
      r.fail_file("path " + in_quotes(p.name) + " carries " + std::to_string(n) + " flows; with its KEM a handshake holds at most " +
                  std::to_string(room));
    }
  }
  // A filtered flow trusts one reflector: the paths that carry it must accept the same peers
  // (listening) or expect the same server name (connecting), else another identity allowed on
  // one of them could claim the flow's boot (docs/trip.md §8).
  for (const FlowConfig& f : c.flows) {
    if (f.reflects()) continue;
    const auto on = c.paths_of(f);
    for (const PathConfig* p : on) {
      const PathConfig& first = *on.front();
      std::set<std::string> a(p->peers.begin(), p->peers.end());
      std::set<std::string> b(first.peers.begin(), first.peers.end());
      if (p->is_client() != first.is_client() || a != b || p->server_name != first.server_name) {
        r.fail_file("flow " + std::to_string(f.id) + " is filtered here: its paths " + in_quotes(first.name) + " and " +
                    in_quotes(p->name) + " must trust the same peer (the same side, peers and server_name)");
      }
    }
  }
  std::set<std::string> relay_names;
  for (const RelayConfig& rc : c.relays) {
    if (!relay_names.insert(rc.name).second) r.fail_file("two relays are named " + in_quotes(rc.name));
  }
  (void)root;
}

}  // namespace

std::vector<const PathConfig*> TripdConfig::paths_of(const FlowConfig& f) const {
  std::vector<const PathConfig*> out;
  for (const PathConfig& p : paths) {
    if (f.paths.empty() || std::find(f.paths.begin(), f.paths.end(), p.name) != f.paths.end()) out.push_back(&p);
  }
  return out;
}

std::vector<trip::SessionFlow> TripdConfig::session_flows(const PathConfig& p) const {
  std::vector<trip::SessionFlow> out;
  for (const FlowConfig& f : flows) {
    const auto on = paths_of(f);
    if (std::find(on.begin(), on.end(), &p) == on.end()) continue;
    // The client reflects (0) when this side is the client and reflects, or the server and filters.
    const bool client_reflects = p.is_client() == f.reflects();
    out.push_back({f.id, client_reflects ? trip::FlowDirection::client_reflects : trip::FlowDirection::server_reflects});
  }
  std::sort(out.begin(), out.end());
  return out;
}

TripdConfig parse_config(std::string_view text, const std::string& name, const std::string& base_dir) {
  const TomlReader r(name, base_dir);
  const toml::table root = r.parse(text);
  r.only_keys(root, "top level", {"identity", "session", "limits", "path", "flow", "relay", "metrics", "status", "log"});
  TripdConfig c;
  with(root, "identity", [&](const toml::node& n) { read_identity(r, r.table_of(n, "[identity]"), c); });
  with(root, "session", [&](const toml::node& n) { read_session(r, r.table_of(n, "[session]"), c.session); });
  with(root, "limits", [&](const toml::node& n) { read_limits(r, r.table_of(n, "[limits]"), c.limits); });
  with(root, "path", [&](const toml::node& n) {
    for (const toml::table* t : r.tables_of(n, "path", 255)) c.paths.push_back(read_path(r, *t));
  });
  with(root, "flow", [&](const toml::node& n) {
    for (const toml::table* t : r.tables_of(n, "flow", trip::kMaxFlowsPerSession)) c.flows.push_back(read_flow(r, *t));
  });
  with(root, "relay", [&](const toml::node& n) {
    for (const toml::table* t : r.tables_of(n, "relay", 64)) c.relays.push_back(read_relay(r, *t));
  });
  with(root, "metrics", [&](const toml::node& n) {
    const toml::table& t = r.table_of(n, "[metrics]");
    r.only_keys(t, "metrics", {"listen"});
    with(t, "listen", [&](const toml::node& v) { c.metrics_listen = host_port_of(r, v, "metrics.listen", true); });
  });
  with(root, "status", [&](const toml::node& n) {
    const toml::table& t = r.table_of(n, "[status]");
    r.only_keys(t, "status", {"socket"});
    with(t, "socket", [&](const toml::node& v) { c.status_socket = r.path_of(v, "status.socket"); });
  });
  with(root, "log", [&](const toml::node& n) {
    const toml::table& t = r.table_of(n, "[log]");
    r.only_keys(t, "log", {"level"});
    with(t, "level", [&](const toml::node& v) {
      c.log_level = r.string_of(v, "log.level");
      const char* levels[] = {"trace", "debug", "info", "warning", "error"};
      if (std::find(std::begin(levels), std::end(levels), c.log_level) == std::end(levels)) {
        r.fail(v, "log.level = " + in_quotes(c.log_level) + ": trace, debug, info, warning or error");
      }
    });
  });
  check_whole(r, root, c);
  return c;
}

TripdConfig load_config(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ConfigError(file.string() + ": cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  if (text.str().size() > (1u << 20)) throw ConfigError(file.string() + ": larger than 1 MiB");
  return parse_config(text.str(), file.string(), file.parent_path().string());
}

}  // namespace pqot::tripd
