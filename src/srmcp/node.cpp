// SRMCP node store (docs/srmcp.md §9, §11; docs/srmcpd.md "Node model"): types, ACLs, backends, READ/WRITE/BROWSE.
#include "pqot/srmcp/node.hpp"

#include "node_pending.hpp"

#include <algorithm>
#include <cmath>
#include <atomic>
#include <cstdint>
#include <future>
#include <limits>
#include <stdexcept>
#include <unordered_set>

namespace pqot::srmcp {

// ---- types and ACLs ----------------------------------------------------------------------------

std::string_view type_name(ValueType t) {
  switch (t) {
    case ValueType::folder:
      return "folder";
    case ValueType::boolean:
      return "bool";
    case ValueType::int64:
      return "int64";
    case ValueType::float64:
      return "double";
    case ValueType::string:
      return "string";
    case ValueType::json:
      return "json";
  }
  return "folder";
}

std::optional<ValueType> parse_type_name(std::string_view name) {
  for (ValueType t : {ValueType::folder, ValueType::boolean, ValueType::int64, ValueType::float64,
                      ValueType::string, ValueType::json}) {
    if (type_name(t) == name) return t;
  }
  return std::nullopt;
}

bool value_matches(ValueType t, const Json& v) {
  switch (t) {
    case ValueType::folder:
      return false;
    case ValueType::boolean:
      return v.is_boolean();
    case ValueType::int64:
      // nlohmann keeps non-negative integers unsigned: those above INT64_MAX do not fit.
      if (v.is_number_unsigned()) {
        return v.get<std::uint64_t>() <=
               static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
      }
      return v.is_number_integer();
    case ValueType::float64:
      // NaN and infinities have no JSON form (they would be sent as null).
      return v.is_number() && (!v.is_number_float() || std::isfinite(v.get<double>()));
    case ValueType::string:
      return v.is_string();
    case ValueType::json:
      return v.is_object() || v.is_array();
  }
  return false;
}

bool valid_node_id(std::string_view id) {
  if (id.empty() || id.size() > 128) return false;
  return std::all_of(id.begin(), id.end(), [](char c) { return c > 0x20 && c < 0x7f; });
}

bool acl_allows(const Acl& acl, const Principal& who) {
  for (const auto& entry : acl) {
    if (entry == "*") return true;
    if (entry.starts_with("role:")) {
      const std::string_view role = std::string_view(entry).substr(5);
      if (std::find(who.roles.begin(), who.roles.end(), role) != who.roles.end()) return true;
    } else if (!who.identity.empty() && entry == who.identity) {
      return true;
    }
  }
  return false;
}

namespace {

// The canonical stored form: int64 nodes hold signed integers, double nodes hold doubles, so that
// 21 written to a double node reads back as 21.0.
Json normalize(ValueType t, const Json& v) {
  if (t == ValueType::int64) return Json(v.get<std::int64_t>());
  if (t == ValueType::float64) return Json(v.get<double>());
  return v;
}

Json default_value(ValueType t) {
  switch (t) {
    case ValueType::boolean:
      return false;
    case ValueType::int64:
      return std::int64_t{0};
    case ValueType::float64:
      return 0.0;
    case ValueType::string:
      return "";
    case ValueType::json:
      return Json::object();
    case ValueType::folder:
      break;
  }
  return nullptr;
}


// What a backend gave, as a client may see it: a value of the wrong type means a broken backend.
ReadResult checked_read(ValueType type, ReadResult r) {
  if (r.status != Status::ok) return ReadResult{r.status, nullptr, r.timestamp};
  if (!value_matches(type, r.value)) return ReadResult{Status::backend_error, nullptr, r.timestamp};
  r.value = normalize(type, r.value);
  return r;
}

}  // namespace

// ---- BackendBatch ------------------------------------------------------------------------------

namespace {
struct BatchState {
  int depth = 0;
  std::vector<std::pair<const void*, std::function<void()>>> wakes;
};
thread_local BatchState t_batch;
}  // namespace

BackendBatch::BackendBatch() { ++t_batch.depth; }

BackendBatch::~BackendBatch() {
  if (--t_batch.depth > 0) return;
  auto wakes = std::move(t_batch.wakes);
  t_batch.wakes.clear();
  for (auto& [key, wake] : wakes) wake();
}

bool BackendBatch::defer(const void* key, std::function<void()> wake) {
  if (t_batch.depth == 0) return false;
  for (const auto& [k, w] : t_batch.wakes) {
    if (k == key) return true;
  }
  t_batch.wakes.emplace_back(key, std::move(wake));
  return true;
}

// ---- NodeStore ---------------------------------------------------------------------------------


ReadResult NodeStore::Node::read_value() const {
  std::lock_guard lock(mu);
  if (!spec.read) return ReadResult{Status::ok, value, ts};
  try {
    return checked_read(spec.type, spec.read());
  } catch (...) {
    return ReadResult{Status::backend_error, nullptr, std::chrono::system_clock::now()};
  }
}

NodeStore::NodeStore() = default;
NodeStore::~NodeStore() = default;

void NodeStore::add(NodeSpec spec) {
  if (!valid_node_id(spec.id)) {
    throw std::invalid_argument("node id '" + spec.id +
                                "' must be 1..128 printable ASCII characters without spaces");
  }
  if (nodes_.contains(spec.id)) throw std::invalid_argument("duplicate node id '" + spec.id + "'");
  if (spec.name.size() > 256)
    throw std::invalid_argument("node '" + spec.id + "': name longer than 256 characters");
  for (std::size_t i = 0; i < spec.parents.size(); ++i) {
    const auto& p = spec.parents[i];
    const auto it = nodes_.find(p);
    if (it == nodes_.end())
      throw std::invalid_argument("node '" + spec.id + "': unknown parent '" + p + "'");
    if (!it->second->is_folder()) {
      throw std::invalid_argument("node '" + spec.id + "': parent '" + p + "' is not a folder");
    }
    if (std::find(spec.parents.begin(), spec.parents.begin() + static_cast<std::ptrdiff_t>(i), p) !=
        spec.parents.begin() + static_cast<std::ptrdiff_t>(i)) {
      throw std::invalid_argument("node '" + spec.id + "': parent '" + p + "' listed twice");
    }
  }
  Json value;
  if (spec.type != ValueType::folder) {
    if (!spec.initial.is_null()) {
      if (!value_matches(spec.type, spec.initial)) {
        throw std::invalid_argument("node '" + spec.id + "': initial value is not of type " +
                                    std::string(type_name(spec.type)));
      }
      value = normalize(spec.type, spec.initial);
    } else {
      value = default_value(spec.type);
    }
    // A write to memory would never be seen through a Read callable.
    if ((spec.read || spec.read_async) && !(spec.write || spec.write_async) && !spec.writers.empty()) {
      throw std::invalid_argument("node '" + spec.id +
                                  "': writers but a Read callable without a Write callable");
    }
    if ((spec.read && spec.read_async) || (spec.write && spec.write_async)) {
      throw std::invalid_argument("node '" + spec.id + "': both a callable and one that waits");
    }
    if (spec.write_async && !spec.read_async) {
      throw std::invalid_argument("node '" + spec.id + "': a Write callable that waits needs one for Read");
    }
  }
  auto node = std::make_unique<Node>(std::move(spec));
  node->value = std::move(value);
  const std::string& id = node->spec.id;
  for (const auto& p : node->spec.parents) nodes_.at(p)->children.push_back(id);
  if (node->spec.parents.empty()) top_level_.push_back(id);
  nodes_.emplace(id, std::move(node));
}

std::size_t NodeStore::size() const {
  return nodes_.size();
}

bool NodeStore::contains(const std::string& id) const {
  return nodes_.contains(id);
}

Json NodeStore::browse(const std::string& root, int depth, const Principal& who) const {
  std::vector<const Node*> level;
  if (root.empty()) {
    for (const auto& id : top_level_) level.push_back(nodes_.at(id).get());
  } else {
    const auto it = nodes_.find(root);
    if (it == nodes_.end() || !it->second->visible_to(who)) {  // §11: invisible = unknown
      throw ProtocolError(Action::reply, Status::unknown_node,
                          "browse: unknown root '" + root + "'");
    }
    level.push_back(it->second.get());
  }
  // Breadth first, so a node reachable through several parents is listed once, at its shallowest
  // depth; the `seen` set bounds the output by the store size whatever the depth.
  Json out = Json::array();
  std::unordered_set<const Node*> seen;
  for (int d = 0; !level.empty(); ++d) {
    std::vector<const Node*> next;
    for (const Node* n : level) {
      if (!n->visible_to(who) || !seen.insert(n).second) continue;
      Json children = Json::array();
      for (const auto& c : n->children) {
        const Node* child = nodes_.at(c).get();
        if (!child->visible_to(who)) continue;  // do not reveal ids the client cannot use
        children.push_back(c);
        next.push_back(child);
      }
      const bool folder = n->is_folder();
      out.push_back({{"id", n->spec.id},
                     {"name", n->spec.name},
                     {"type", type_name(n->spec.type)},
                     {"parents", n->spec.parents},
                     {"children", std::move(children)},
                     {"description", n->spec.description},
                     {"unit", n->spec.unit},
                     {"readable", !folder && acl_allows(n->spec.readers, who)},
                     {"writable", !folder && acl_allows(n->spec.writers, who)}});
    }
    if (depth >= 0 && d >= depth) break;
    level = std::move(next);
  }
  return Json{{"nodes", std::move(out)}};
}


NodeStore::ReadAccess NodeStore::read_access(const std::string& id, const Principal& who) const {
  const auto it = nodes_.find(id);
  // A node the caller may neither read nor write is not revealed: UNKNOWN_NODE (§11).
  if (it == nodes_.end() || !it->second->visible_to(who)) return {nullptr, Status::unknown_node};
  const Node* n = it->second.get();
  if (n->is_folder()) return {n, Status::not_readable};
  if (!acl_allows(n->spec.readers, who)) return {n, Status::access_denied};
  return {n, Status::ok};
}

std::shared_ptr<NodeStore::PendingRead> NodeStore::start_read(const std::vector<std::string>& ids,
                                                              const Principal& who, ReadFinish finish,
                                                              bool& done_now) const {
  auto st = std::make_shared<PendingRead>();
  st->ids = ids;
  st->finish = std::move(finish);
  st->entries.reserve(ids.size());
  for (const auto& id : st->ids) {
    st->entries.push_back(ReadEntry{&id, std::nullopt, ReadResult{Status::ok, nullptr, std::chrono::system_clock::now()}});
  }
  const BackendBatch batch;  // one wake-up per device for the whole READ
  for (std::size_t i = 0; i < st->ids.size(); ++i) {
    ReadEntry& e = st->entries[i];
    const auto [node, status] = read_access(st->ids[i], who);
    if (node != nullptr) e.type = node->spec.type;
    if (status != Status::ok) {
      e.result.status = status;
    } else if (node->spec.read_async) {
      st->pending.fetch_add(1, std::memory_order_relaxed);
      const ValueType type = node->spec.type;
      try {
        node->spec.read_async([st, i, type](ReadResult r) {
          st->entries[i].result = checked_read(type, std::move(r));
          st->answered();
        });
      } catch (...) {
        e.result = ReadResult{Status::backend_error, nullptr, std::chrono::system_clock::now()};
        st->answered();
      }
    } else {
      e.result = node->read_value();
    }
  }
  done_now = st->pending.fetch_sub(1, std::memory_order_acq_rel) == 1;
  return st;
}

std::shared_ptr<NodeStore::PendingRead> NodeStore::read_and_wait(const std::vector<std::string>& ids,
                                                                 const Principal& who) const {
  auto finished = std::make_shared<std::promise<void>>();
  bool done_now = false;
  auto st = start_read(ids, who, [finished](PendingRead&) { finished->set_value(); }, done_now);
  if (!done_now) finished->get_future().wait();
  return st;
}


bool NodeStore::read_results(const std::vector<std::string>& ids, const Principal& who,
                             std::vector<ReadResult>& out, ResultsDone later) const {
  const auto results = [](PendingRead& p) {
    std::vector<ReadResult> r;
    r.reserve(p.entries.size());
    for (auto& e : p.entries) r.push_back(std::move(e.result));
    return r;
  };
  bool done_now = false;
  auto st = start_read(
      ids, who, [later = std::move(later), results](PendingRead& p) { later(results(p)); }, done_now);
  if (done_now) out = results(*st);
  return done_now;
}

std::optional<ReadResult> NodeStore::read_one(const std::string& id, const Principal& who) const {
  if (read_access(id, who).status != Status::ok) return std::nullopt;
  const auto st = read_and_wait({id}, who);
  return std::move(st->entries.front().result);
}

std::optional<std::pair<std::string, Status>> NodeStore::check_readable(const std::vector<std::string>& ids,
                                                                        const Principal& who) const {
  for (const auto& id : ids) {
    const Status status = read_access(id, who).status;
    if (status != Status::ok) return std::pair{id, status};
  }
  return std::nullopt;
}

// ---- WRITE -------------------------------------------------------------------------------------


namespace {

// What a Write callable reported, as a client may see it.
WriteResult checked_write(ValueType type, WriteResult w) {
  // A backend that reports storing a value of the wrong type is broken.
  if (w.status == Status::ok && !value_matches(type, w.stored)) w.status = Status::backend_error;
  if (w.status != Status::ok) return WriteResult{w.status, nullptr};
  w.stored = normalize(type, w.stored);
  return w;
}

}  // namespace

NodeStore::WriteAccess NodeStore::write_access(const std::string& id, const Json& value,
                                               const Principal& who) const {
  const auto it = nodes_.find(id);
  if (it == nodes_.end() || !it->second->visible_to(who)) return {nullptr, Status::unknown_node};  // §11
  Node* n = it->second.get();
  if (n->is_folder() || n->spec.writers.empty()) return {n, Status::not_writable};
  if (!acl_allows(n->spec.writers, who)) return {n, Status::access_denied};
  if (!value_matches(n->spec.type, value)) return {n, Status::type_mismatch};
  return {n, Status::ok};
}

NodeStore::WriteOutcome NodeStore::write_at_once(Node& n, const Json& value) {
  std::lock_guard lock(n.mu);
  Json v = normalize(n.spec.type, value);
  if (!n.spec.write) {
    n.value = v;
    n.ts = std::chrono::system_clock::now();
    return {Status::ok, std::move(v)};
  }
  WriteResult w;
  try {
    w = n.spec.write(v);
  } catch (...) {
    w.status = Status::backend_error;
  }
  w = checked_write(n.spec.type, std::move(w));
  // With memory reads the stored value is what later reads return.
  if (w.status == Status::ok && !n.spec.read) {
    n.value = w.stored;
    n.ts = std::chrono::system_clock::now();
  }
  return {w.status, std::move(w.stored)};
}

std::shared_ptr<NodeStore::PendingWrite> NodeStore::start_write(const std::vector<std::pair<std::string, Json>>& values,
                                                                const Principal& who, WriteFinish finish,
                                                                bool& done_now) {
  auto st = std::make_shared<PendingWrite>();
  st->finish = std::move(finish);
  st->entries.resize(values.size());
  const BackendBatch batch;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const auto& [id, value] = values[i];
    WriteEntry& e = st->entries[i];
    e.id = id;
    const auto [node, status] = write_access(id, value, who);
    if (node != nullptr) e.type = node->spec.type;
    if (status != Status::ok) {
      e.status = status;
    } else if (node->spec.write_async) {
      st->pending.fetch_add(1, std::memory_order_relaxed);
      const ValueType type = node->spec.type;
      try {
        node->spec.write_async(normalize(type, value), [st, i, type](WriteResult w) {
          w = checked_write(type, std::move(w));
          st->entries[i].status = w.status;
          st->entries[i].stored = std::move(w.stored);
          st->answered();
        });
      } catch (...) {
        e.status = Status::backend_error;
        st->answered();
      }
    } else {
      auto [s, stored] = write_at_once(*node, value);
      e.status = s;
      e.stored = std::move(stored);
    }
  }
  done_now = st->pending.fetch_sub(1, std::memory_order_acq_rel) == 1;
  return st;
}

}  // namespace pqot::srmcp
