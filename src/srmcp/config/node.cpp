// srmcpd configuration: [[node]] tables (docs/srmcpd.md, "Nodes"): ids, parents, access,
// initial values; their `signal` and `modbus` keys are parsed by signal.cpp and device.cpp.
#include <algorithm>
#include <map>
#include <optional>

#include "sections.hpp"

namespace pqot::srmcp::config {
namespace {

class NodeParser {
 public:
  NodeParser(const Reader& reader, LoadedConfig& out) : r(reader), out_(out) {}

  struct Defined {
    std::uint32_t line;
    ValueType type;
  };

  void parse_nodes(const toml::node& n) {
    const toml::array& arr = r.tables_of(n, "node");
    // Every id first, so that a parent defined further down gets its own message.
    for (const auto& e : arr) {
      const auto* id = e.as_table()->get("id");
      if (id && id->is_string() && !later_.contains(id->as_string()->get())) {
        later_.emplace(id->as_string()->get(), id->source().begin.line);
      }
    }
    for (const auto& e : arr) out_.nodes.push_back(parse_node(*e.as_table()));
  }

  NodeSpec parse_node(const toml::table& t) {
    static const std::vector<std::string> known = {"id",      "name",    "type",  "parent", "parents",
                                                   "description", "unit", "access", "readers",
                                                   "writers", "value",   "signal", "modbus"};
    std::map<std::string, const toml::node*> f;
    for (auto&& [key, v] : t) {
      const std::string k(key.str());
      if (std::find(known.begin(), known.end(), k) == known.end()) {
        r.fail(key.source(), "unknown key " + in_quotes("node." + k));
      }
      f[k] = &v;
    }
    const auto get = [&](const char* k) -> const toml::node* {
      const auto it = f.find(k);
      return it == f.end() ? nullptr : it->second;
    };

    NodeSpec spec;
    const toml::node* id = get("id");
    if (!id) r.fail(t.source(), "[[node]] without an id");
    spec.id = r.string_of(*id, "node.id");
    if (!valid_node_id(spec.id)) {
      r.fail(id->source(), "node id " + in_quotes(spec.id) +
                             " must be 1..128 printable ASCII characters without spaces");
    }
    if (const auto it = defined_.find(spec.id); it != defined_.end()) {
      r.fail(id->source(), "duplicate node id " + in_quotes(spec.id) + " (first defined on line " +
                             std::to_string(it->second.line) + ")");
    }
    const std::string who = "node " + in_quotes(spec.id) + ": ";

    spec.name = spec.id;
    if (const auto* v = get("name")) {
      spec.name = r.string_of(*v, who + "name");
      if (spec.name.size() > 256) r.fail(v->source(), who + "name longer than 256 characters");
    }
    if (const auto* v = get("type")) {
      const std::string s = r.string_of(*v, who + "type");
      const auto type = parse_type_name(s);
      if (!type)
        r.fail(v->source(),
             who + "unknown type " + in_quotes(s) + " (folder, bool, int64, double, string, json)");
      spec.type = *type;
    }
    // A Modbus node takes its type from the point (parse_modbus); until then it is no folder.
    if (!get("type") && get("modbus")) spec.type = ValueType::int64;
    parse_parents(spec, get("parent"), get("parents"), who);
    if (const auto* v = get("description")) spec.description = r.string_of(*v, who + "description");

    const bool folder = spec.type == ValueType::folder;
    if (folder) {
      // A folder has no value, so these keys can only be a mistake (usually a forgotten type).
      for (const char* k : {"unit", "access", "readers", "writers", "value", "signal", "modbus"}) {
        if (const auto* v = get(k)) {
          r.fail(v->source(),
               who + "a folder has no " + in_quotes(k) + " (set type = \"double\", ...)");
        }
      }
    } else {
      if (const auto* v = get("unit")) spec.unit = r.string_of(*v, who + "unit");
      parse_access(spec, get("access"), get("readers"), get("writers"), who);
      if (const auto* v = get("value")) spec.initial = value_of(spec.type, *v, who);
      if (const auto* v = get("signal")) parse_signal(r, spec, *v, get("value"), who);
      if (const auto* v = get("modbus")) {
        if (const auto* other = get("signal")) r.fail(other->source(), who + "give signal or modbus, not both");
        if (const auto* value = get("value")) r.fail(value->source(), who + "a Modbus node has no initial value");
        out_.modbus.push_back(parse_modbus(r, spec, *v, get("type"), who, out_.devices));
      }
    }
    defined_.emplace(spec.id, Defined{id->source().begin.line, spec.type});
    return spec;
  }

  void parse_parents(NodeSpec& spec, const toml::node* parent, const toml::node* parents,
                     const std::string& who) {
    if (parent && parents) r.fail(parents->source(), who + "give parent or parents, not both");
    std::vector<const toml::node*> list;
    if (parent) list.push_back(parent);
    if (parents) {
      const auto* a = parents->as_array();
      if (!a)
        r.fail(parents->source(),
             who + "parents must be an array of node ids, not " + toml_type(*parents));
      for (const auto& e : *a) list.push_back(&e);
    }
    for (const toml::node* p : list) {
      const std::string pid = r.string_of(*p, who + "parent");
      if (pid == spec.id) r.fail(p->source(), who + "a node cannot be its own parent");
      const auto it = defined_.find(pid);
      if (it == defined_.end()) {
        const auto later = later_.find(pid);
        if (later != later_.end()) {
          r.fail(p->source(), who + "parent " + in_quotes(pid) + " is defined later (line " +
                                std::to_string(later->second) +
                                "); define parents before their children");
        }
        r.fail(p->source(), who + "unknown parent " + in_quotes(pid));
      }
      if (it->second.type != ValueType::folder)
        r.fail(p->source(), who + "parent " + in_quotes(pid) + " is not a folder");
      if (std::find(spec.parents.begin(), spec.parents.end(), pid) != spec.parents.end()) {
        r.fail(p->source(), who + "parent " + in_quotes(pid) + " listed twice");
      }
      spec.parents.push_back(pid);
    }
  }

  Acl acl_of(const toml::node& v, const std::string& what) const {
    const auto* a = v.as_array();
    if (!a)
      r.fail(v.source(),
           what + " must be an array of \"*\", identities and \"role:NAME\", not " + toml_type(v));
    Acl acl;
    for (const auto& e : *a) {
      std::string s = r.string_of(e, what + " entries");
      const bool control = std::any_of(s.begin(), s.end(),
                                       [](char c) { return static_cast<unsigned char>(c) < 0x20; });
      if (s.empty() || s == "role:" || control)
        r.fail(e.source(), what + ": invalid entry " + in_quotes(s));
      acl.push_back(std::move(s));
    }
    return acl;
  }

  void parse_access(NodeSpec& spec, const toml::node* access, const toml::node* readers,
                    const toml::node* writers, const std::string& who) {
    if (readers) spec.readers = acl_of(*readers, who + "readers");
    std::optional<bool> rw;
    if (access) {
      const std::string s = r.string_of(*access, who + "access");
      if (s != "read" && s != "readwrite")
        r.fail(access->source(), who + "access must be \"read\" or \"readwrite\"");
      rw = s == "readwrite";
      if (*rw) spec.writers = {"*"};
    }
    if (writers) {
      spec.writers = acl_of(*writers, who + "writers");
      // The shorthand and the explicit list must not contradict each other.
      if (rw && *rw == spec.writers.empty()) {
        r.fail(writers->source(),
             who + "writers contradict access = " + (*rw ? "\"readwrite\"" : "\"read\""));
      }
    }
  }

  Json value_of(ValueType type, const toml::node& v, const std::string& who) const {
    const auto wrong = [&](const char* expected) {
      r.fail(v.source(), who + "value must be " + expected + " for type " +
                           std::string(type_name(type)) + ", not " + toml_type(v));
    };
    switch (type) {
      case ValueType::boolean:
        if (!v.is_boolean()) wrong("a boolean");
        return v.as_boolean()->get();
      case ValueType::int64:
        if (!v.is_integer()) wrong("an integer");
        return v.as_integer()->get();
      case ValueType::float64:
        if (!v.is_number()) wrong("a number");
        return r.number_of(v, who + "value");
      case ValueType::string:
        if (!v.is_string()) wrong("a string");
        return v.as_string()->get();
      case ValueType::json: {
        Json j;
        if (const auto* s = v.as_string()) {  // JSON text, for values TOML cannot express (null)
          try {
            j = Json::parse(s->get());
          } catch (const Json::exception&) {
            r.fail(v.source(), who + "value is not valid JSON text");
          }
        } else if (v.is_table() || v.is_array()) {
          j = json_of(v, who);
        }
        if (!j.is_object() && !j.is_array())
          wrong("a table, an array or a JSON object/array string");
        return j;
      }
      case ValueType::folder:
        break;
    }
    return nullptr;
  }

  Json json_of(const toml::node& v, const std::string& who) const {
    if (const auto* t = v.as_table()) {
      Json o = Json::object();
      for (auto&& [k, e] : *t) o[std::string(k.str())] = json_of(e, who);
      return o;
    }
    if (const auto* a = v.as_array()) {
      Json arr = Json::array();
      for (const auto& e : *a) arr.push_back(json_of(e, who));
      return arr;
    }
    if (const auto* s = v.as_string()) return s->get();
    if (const auto* i = v.as_integer()) return i->get();
    if (const auto* b = v.as_boolean()) return b->get();
    if (v.is_floating_point()) return r.number_of(v, who + "value");
    r.fail(v.source(), who + "value: " + toml_type(v) + " has no JSON form");
  }

  const Reader& r;
  LoadedConfig& out_;
  std::map<std::string, Defined> defined_;      // nodes parsed so far
  std::map<std::string, std::uint32_t> later_;  // every id in the file, for better messages
};

}  // namespace

void parse_nodes(const Reader& r, const toml::node& n, LoadedConfig& out) { NodeParser(r, out).parse_nodes(n); }

}  // namespace pqot::srmcp::config
