// srmcpd configuration loader (docs/srmcpd.md): TOML via toml++, every key checked, every error
// reported as "FILE:LINE: message" so an operator can fix the file without guessing.
#include "pqot/srmcp/config.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <sstream>

#include "pqot/common/host_port.hpp"

namespace pqot::srmcp {
namespace {

std::string toml_type(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
    case toml::node_type::none:
      break;
  }
  return "nothing";
}

std::string in_quotes(std::string_view s) {
  // Built by appending: "'" + s + "'" trips a GCC 12 -Wrestrict false positive.
  std::string out;
  out.reserve(s.size() + 2);
  out.push_back('\'');
  out.append(s);
  out.push_back('\'');
  return out;
}

// The node type of a Modbus point's values.
ValueType node_type_of(const modbus::Point& p) {
  switch (modbus::value_kind(p)) {
    case modbus::ValueKind::boolean: return ValueType::boolean;
    case modbus::ValueKind::integer: return ValueType::int64;
    case modbus::ValueKind::real: return ValueType::float64;
    case modbus::ValueKind::string: return ValueType::string;
  }
  return ValueType::int64;
}

class Parser {
 public:
  Parser(std::string name, std::string base_dir)
      : name_(std::move(name)), base_dir_(std::move(base_dir)) {}

  LoadedConfig parse(const std::string& text) {
    toml::table root;
    try {
      root = toml::parse(std::string_view(text), std::string_view(name_));
    } catch (const toml::parse_error& e) {
      fail_at(e.source().begin.line, std::string(e.description()));
    }
    // Sections in a fixed order so that errors come out in a predictable order.
    for (auto&& [k, v] : root) {
      if (k != "server" && k != "limits" && k != "node" && k != "device") {
        fail(k.source(), "unknown key " + in_quotes(k.str()) +
                             " (expected [server], [limits], [[device]], [[node]])");
      }
    }
    if (const auto* s = root.get("server")) parse_server(table_of(*s, "server"));
    if (const auto* l = root.get("limits")) parse_limits(table_of(*l, "limits"));
    if (const auto* d = root.get("device")) parse_devices(*d);  // before the nodes that use them
    if (const auto* n = root.get("node")) parse_nodes(*n);
    check_overlaps();
    return std::move(out_);
  }

 private:
  // ---- errors and typed getters --------------------------------------------------------------

  [[noreturn]] void fail_at(std::uint32_t line, const std::string& msg) const {
    throw ConfigError(name_ + ":" + std::to_string(line) + ": " + msg);
  }
  [[noreturn]] void fail(const toml::source_region& at, const std::string& msg) const {
    fail_at(at.begin.line, msg);
  }

  const toml::table& table_of(const toml::node& n, std::string_view what) const {
    if (const auto* t = n.as_table()) return *t;
    fail(n.source(), std::string(what) + " must be a table, not " + toml_type(n));
  }

  std::string string_of(const toml::node& n, std::string_view what) const {
    if (const auto* s = n.as_string()) return s->get();
    fail(n.source(), std::string(what) + " must be a string, not " + toml_type(n));
  }

  std::int64_t int_of(const toml::node& n, std::string_view what, std::int64_t lo,
                      std::int64_t hi) const {
    const auto* i = n.as_integer();
    if (!i) fail(n.source(), std::string(what) + " must be an integer, not " + toml_type(n));
    const std::int64_t v = i->get();
    if (v < lo || v > hi) {
      fail(n.source(), std::string(what) + " = " + std::to_string(v) + " is out of range " +
                           std::to_string(lo) + ".." + std::to_string(hi));
    }
    return v;
  }

  double number_of(const toml::node& n, std::string_view what) const {
    double v = 0;
    if (const auto* i = n.as_integer()) {
      v = static_cast<double>(i->get());
    } else if (const auto* f = n.as_floating_point()) {
      v = f->get();
    } else {
      fail(n.source(), std::string(what) + " must be a number, not " + toml_type(n));
    }
    if (!std::isfinite(v)) fail(n.source(), std::string(what) + " must be finite");
    return v;
  }

  std::vector<std::string> strings_of(const toml::node& n, std::string_view what) const {
    const auto* a = n.as_array();
    if (!a)
      fail(n.source(), std::string(what) + " must be an array of strings, not " + toml_type(n));
    std::vector<std::string> out;
    for (const auto& e : *a) {
      std::string s = string_of(e, std::string(what) + " entries");
      if (s.empty()) fail(e.source(), std::string(what) + ": empty string");
      out.push_back(std::move(s));
    }
    return out;
  }

  // ---- [server] ---------------------------------------------------------------------------------

  void parse_server(const toml::table& t) {
    ServerConfig& s = out_.server;
    using Ms = std::chrono::milliseconds;
    constexpr std::int64_t u32max = std::numeric_limits<std::uint32_t>::max();
    // Integer keys: name, range, setter.
    const std::map<std::string,
                   std::tuple<std::int64_t, std::int64_t, std::function<void(std::int64_t)>>>
        ints = {
            {"handshake_deadline_ms",
             {100, 600'000, [&](std::int64_t v) { s.handshake_deadline = Ms(v); }}},
            {"offer_lifetime_ms",
             {100, 600'000, [&](std::int64_t v) { s.offer_lifetime = Ms(v); }}},
            {"idle_frame_deadline_ms",
             {100, 600'000, [&](std::int64_t v) { s.idle_frame_deadline = Ms(v); }}},
            {"max_sessions",
             {1, 1'000'000,
              [&](std::int64_t v) { s.max_sessions = static_cast<std::uint32_t>(v); }}},
            {"max_pending_links",
             {1, 100'000,
              [&](std::int64_t v) { s.max_pending_links = static_cast<std::uint32_t>(v); }}},
            {"max_sessions_per_identity",
             {1, 1'000'000, [&](std::int64_t v) { s.max_sessions_per_identity = static_cast<std::uint32_t>(v); }}},
            {"max_handshakes",
             {1, 100'000, [&](std::int64_t v) { s.max_handshakes = static_cast<std::uint32_t>(v); }}},
            {"max_handshakes_per_source",
             {1, 100'000, [&](std::int64_t v) { s.max_handshakes_per_source = static_cast<std::uint32_t>(v); }}},
            {"max_pending_links_per_identity",
             {1, 100'000, [&](std::int64_t v) { s.max_pending_links_per_identity = static_cast<std::uint32_t>(v); }}},
            {"max_queued_bytes",
             {65'536, 1 << 30, [&](std::int64_t v) { s.max_queued_bytes = static_cast<std::uint32_t>(v); }}},
            {"max_queued_bytes_per_link",
             {65'536, 1 << 30, [&](std::int64_t v) { s.max_queued_bytes_per_link = static_cast<std::uint32_t>(v); }}},
            {"send_stall_timeout_ms",
             {100, 600'000, [&](std::int64_t v) { s.send_stall_timeout = Ms(v); }}},
            {"max_partial_bytes",
             {65'536, 1 << 30, [&](std::int64_t v) { s.max_partial_bytes = static_cast<std::uint32_t>(v); }}},
            {"max_partial_bytes_total",
             {65'536, u32max, [&](std::int64_t v) { s.max_partial_bytes_total = static_cast<std::uint32_t>(v); }}},
            {"max_subscriptions",
             {1, 100'000, [&](std::int64_t v) { s.max_subscriptions = static_cast<std::uint32_t>(v); }}},
            {"max_subscribed_ids",
             {1, 1'000'000, [&](std::int64_t v) { s.max_subscribed_ids = static_cast<std::uint32_t>(v); }}},
            {"max_backend_ops",
             {1, 1'000'000, [&](std::int64_t v) { s.max_backend_ops = static_cast<std::uint32_t>(v); }}},
            {"min_backend_sample_ms",
             {0, 600'000, [&](std::int64_t v) { s.min_backend_sample = Ms(v); }}},
            {"link_close_grace_ms",
             {0, 600'000, [&](std::int64_t v) { s.link_close_grace = Ms(v); }}},
            {"key_update_messages",
             {1, u32max,
              [&](std::int64_t v) { s.key_update_messages = static_cast<std::uint32_t>(v); }}},
            {"key_update_seconds",
             {1, 7 * 86'400,
              [&](std::int64_t v) { s.key_update_seconds = static_cast<std::uint32_t>(v); }}},
            {"timestamp_window_ms",
             {1000, 3'600'000,
              [&](std::int64_t v) { s.timestamp_window_ms = static_cast<std::uint32_t>(v); }}},
            {"threads", {1, 64, [&](std::int64_t v) { s.threads = static_cast<unsigned>(v); }}},
        };
    for (auto&& [key, v] : t) {
      const std::string k(key.str());
      const std::string what = "server." + k;
      if (const auto it = ints.find(k); it != ints.end()) {
        const auto& [lo, hi, set] = it->second;
        set(int_of(v, what, lo, hi));
      } else if (k == "listen") {
        parse_listen(v);
      } else if (k == "ca") {
        s.ca_file = path_of(v, what);
      } else if (k == "cert") {
        s.cert_file = path_of(v, what);
      } else if (k == "key") {
        s.key_file = path_of(v, what);
      } else if (k == "allow") {
        s.allow = strings_of(v, what);
      } else if (k == "data_ports") {
        parse_data_ports(v);
      } else if (k == "kems") {
        parse_kems(v);
      } else if (k == "log_level") {
        s.log_level = string_of(v, what);
        static const std::vector<std::string> levels = {"trace", "debug", "info", "warn", "error"};
        if (std::find(levels.begin(), levels.end(), s.log_level) == levels.end()) {
          fail(v.source(), what + ": unknown level " + in_quotes(s.log_level) +
                               " (trace, debug, info, warn, error)");
        }
      } else {
        fail(key.source(), "unknown key " + in_quotes(what));
      }
    }
  }

  std::optional<std::uint16_t> port_of(std::string_view s) const {
    unsigned v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || end != s.data() + s.size() || v < 1 || v > 65535) return std::nullopt;
    return static_cast<std::uint16_t>(v);
  }

  void parse_listen(const toml::node& v) {
    const std::string s = string_of(v, "server.listen");
    const auto hp = common::parse_host_port(s);
    if (!hp) {
      fail(v.source(),
           "server.listen: expected \"HOST:PORT\" or \"[IPV6]:PORT\" with PORT 1..65535, got " +
               in_quotes(s));
    }
    out_.server.listen_host = hp->host;
    out_.server.listen_port = hp->port;
  }

  void parse_data_ports(const toml::node& v) {
    const std::string s = string_of(v, "server.data_ports");
    const auto dash = s.find('-');
    const auto lo = port_of(std::string_view(s).substr(0, dash));
    const auto hi = dash == std::string::npos ? lo : port_of(std::string_view(s).substr(dash + 1));
    if (!lo || !hi || *lo > *hi) {
      fail(v.source(),
           "server.data_ports: expected \"MIN-MAX\" with 1 <= MIN <= MAX <= 65535, got " +
               in_quotes(s));
    }
    out_.server.data_port_min = *lo;
    out_.server.data_port_max = *hi;
  }

  void parse_kems(const toml::node& v) {
    const auto* a = v.as_array();
    if (!a || a->empty()) fail(v.source(), "server.kems must be a non-empty array of KEM names");
    std::vector<KemId> kems;
    for (const auto& e : *a) {
      const std::string name = string_of(e, "server.kems entries");
      const auto id = kem_id(name);
      if (!id)
        fail(e.source(),
             "server.kems: unknown KEM " + in_quotes(name) + " (ML-KEM-768, ML-KEM-1024, X-Wing)");
      if (std::find(kems.begin(), kems.end(), *id) != kems.end()) {
        fail(e.source(), "server.kems: " + in_quotes(name) + " listed twice");
      }
      kems.push_back(*id);
    }
    out_.server.kem_preference = std::move(kems);
  }

  std::string path_of(const toml::node& v, const std::string& what) const {
    const std::string s = string_of(v, what);
    if (s.empty()) fail(v.source(), what + ": empty path");
    const std::filesystem::path p(s);
    if (p.is_relative() && !base_dir_.empty())
      return (std::filesystem::path(base_dir_) / p).string();
    return s;
  }

  // ---- [limits] ---------------------------------------------------------------------------------

  void parse_limits(const toml::table& t) {
    Limits& l = out_.server.limits;
    const std::map<std::string,
                   std::tuple<std::int64_t, std::int64_t, std::function<void(std::int64_t)>>>
        ints = {
            {"max_frame_body",
             {1024, kMaxFrameBodyCeiling,
              [&](std::int64_t v) { l.max_frame_body = static_cast<std::uint32_t>(v); }}},
            {"max_message",
             {1024, 64 << 20,
              [&](std::int64_t v) { l.max_message = static_cast<std::uint32_t>(v); }}},
            {"max_nodes_per_request",
             {1, 100'000,
              [&](std::int64_t v) { l.max_nodes_per_request = static_cast<std::uint32_t>(v); }}},
            {"max_links",
             {0, 64, [&](std::int64_t v) { l.max_links = static_cast<std::uint16_t>(v); }}},
            {"max_reassemblies",
             {1, 4096,
              [&](std::int64_t v) { l.max_reassemblies = static_cast<std::uint16_t>(v); }}},
            {"max_json_depth",
             {4, 256, [&](std::int64_t v) { l.max_json_depth = static_cast<std::uint32_t>(v); }}},
        };
    for (auto&& [key, v] : t) {
      const std::string k(key.str());
      const auto it = ints.find(k);
      if (it == ints.end()) fail(key.source(), "unknown key " + in_quotes("limits." + k));
      const auto& [lo, hi, set] = it->second;
      set(int_of(v, "limits." + k, lo, hi));
    }
  }

  // The [[what]] tables of the file ("node = []" is none); anything else is an error at its line.
  const toml::array& tables_of(const toml::node& n, const std::string& what) const {
    static const toml::array none;
    const auto* arr = n.as_array();
    if (arr && arr->empty()) return none;
    if (!arr || !arr->is_array_of_tables()) {
      fail(n.source(), what + " must be an array of tables: write each " + what + " as [[" + what + "]]");
    }
    return *arr;
  }

  // ---- [[device]] -------------------------------------------------------------------------------

  void parse_devices(const toml::node& n) {
    for (const auto& e : tables_of(n, "device")) out_.devices.push_back(parse_device(*e.as_table()));
  }

  ModbusDeviceConfig parse_device(const toml::table& t) {
    using Ms = std::chrono::milliseconds;
    ModbusDeviceConfig d;
    d.line = t.source().begin.line;
    const auto* name = t.get("name");
    if (!name) fail(t.source(), "[[device]] without a name");
    d.name = string_of(*name, "device.name");
    const bool name_ok = !d.name.empty() && d.name.size() <= 64 &&
                         std::all_of(d.name.begin(), d.name.end(), [](char c) {
                           return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
                         });
    if (!name_ok) fail(name->source(), "device name " + in_quotes(d.name) + " must be 1..64 of A-Z a-z 0-9 _ - .");
    for (const auto& other : out_.devices) {
      if (other.name == d.name) {
        fail(name->source(), "duplicate device " + in_quotes(d.name) + " (first defined on line " +
                                 std::to_string(other.line) + ")");
      }
    }
    const std::string who = "device " + in_quotes(d.name) + ": ";
    const std::map<std::string, std::tuple<std::int64_t, std::int64_t, std::function<void(std::int64_t)>>> ints = {
        {"port", {1, 65535, [&](std::int64_t v) { d.port = static_cast<std::uint16_t>(v); }}},
        {"unit", {0, 255, [&](std::int64_t v) { d.unit = static_cast<int>(v); }}},
        {"timeout_ms", {10, 60'000, [&](std::int64_t v) { d.timeout = Ms(v); }}},
        {"connect_timeout_ms", {10, 60'000, [&](std::int64_t v) { d.connect_timeout = Ms(v); }}},
        {"backoff_min_ms", {10, 600'000, [&](std::int64_t v) { d.backoff_min = Ms(v); }}},
        {"backoff_max_ms", {10, 600'000, [&](std::int64_t v) { d.backoff_max = Ms(v); }}},
        {"request_deadline_ms", {10, 600'000, [&](std::int64_t v) { d.request_deadline = Ms(v); }}},
        {"max_registers", {1, modbus::kMaxReadRegisters,
                           [&](std::int64_t v) { d.max_registers = static_cast<std::uint16_t>(v); }}},
    };
    for (auto&& [key, v] : t) {
      const std::string k(key.str());
      if (const auto it = ints.find(k); it != ints.end()) {
        const auto& [lo, hi, set] = it->second;
        set(int_of(v, who + k, lo, hi));
      } else if (k == "host") {
        d.host = string_of(v, who + "host");
        if (d.host.empty() || d.host.size() > 253) fail(v.source(), who + "host must be 1..253 characters");
      } else if (k != "name") {
        fail(key.source(), "unknown key " + in_quotes("device." + k));
      }
    }
    if (d.host.empty()) fail(t.source(), who + "no host");
    if (d.backoff_max < d.backoff_min) {
      fail(t.get("backoff_max_ms")->source(), who + "backoff_max_ms is below backoff_min_ms");
    }
    return d;
  }

  // `modbus = { device, table, address, type, count, word_order, byte_order, scale, offset,
  // poll_ms, cache_ms }` of a [[node]]; the node's type follows from the point's unless given.
  void parse_modbus(NodeSpec& spec, const toml::node& v, const toml::node* type, const std::string& who) {
    const toml::table& t = table_of(v, who + "modbus");
    ModbusBinding b;
    b.node_id = spec.id;
    b.line = v.source().begin.line;
    const auto required = [&](const char* k) -> const toml::node& {
      const auto* n = t.get(k);
      if (!n) fail(v.source(), who + "modbus." + k + " is required");
      return *n;
    };
    const toml::node& dev = required("device");
    b.device = string_of(dev, who + "modbus.device");
    const bool known = std::any_of(out_.devices.begin(), out_.devices.end(),
                                   [&](const ModbusDeviceConfig& d) { return d.name == b.device; });
    if (!known) fail(dev.source(), who + "unknown device " + in_quotes(b.device) + " (no [[device]] of that name)");
    const toml::node& table = required("table");
    const std::string table_text = string_of(table, who + "modbus.table");
    const auto tab = modbus::parse_table(table_text);
    if (!tab) {
      fail(table.source(), who + "unknown modbus.table " + in_quotes(table_text) +
                               " (coil, discrete_input, holding, input)");
    }
    b.point.table = *tab;
    b.point.address = static_cast<std::uint16_t>(int_of(required("address"), who + "modbus.address", 0, 65535));
    b.point.type = modbus::is_bit_table(*tab) ? modbus::DataType::boolean : modbus::DataType::uint16;
    bool have_count = false;
    const auto order_of = [&](const toml::node& n, const std::string& what) {
      const std::string o = string_of(n, what);
      if (o != "big" && o != "little") fail(n.source(), what + " must be \"big\" or \"little\"");
      return o == "big" ? modbus::Order::big : modbus::Order::little;
    };
    for (auto&& [key, e] : t) {
      const std::string k(key.str());
      const std::string what = who + "modbus." + k;
      if (k == "device" || k == "table" || k == "address") continue;
      if (k == "type") {
        const std::string s = string_of(e, what);
        const auto dt = modbus::parse_data_type(s);
        if (!dt) {
          fail(e.source(), who + "unknown modbus.type " + in_quotes(s) +
                               " (bool, int16, uint16, int32, uint32, float32, float64, string)");
        }
        b.point.type = *dt;
      } else if (k == "count") {
        b.point.count = static_cast<std::uint16_t>(int_of(e, what, 1, modbus::kMaxStringRegisters));
        have_count = true;
      } else if (k == "word_order") {
        b.point.word_order = order_of(e, what);
      } else if (k == "byte_order") {
        b.point.byte_order = order_of(e, what);
      } else if (k == "scale") {
        b.point.scale = number_of(e, what);
        if (b.point.scale == 0.0) fail(e.source(), what + " must not be 0");
      } else if (k == "offset") {
        b.point.offset = number_of(e, what);
      } else if (k == "poll_ms") {
        b.poll = std::chrono::milliseconds(int_of(e, what, 10, 3'600'000));
      } else if (k == "cache_ms") {
        b.cache_age = std::chrono::milliseconds(int_of(e, what, 0, 3'600'000));
      } else {
        fail(key.source(), who + "unknown key " + in_quotes("modbus." + k));
      }
    }
    if (!have_count) {
      if (b.point.type == modbus::DataType::string) fail(v.source(), who + "a string point needs modbus.count (registers)");
      b.point.count = modbus::is_bit_table(*tab) ? 1 : modbus::registers_of(b.point.type);
    }
    if (b.poll.count() > 0 && b.cache_age.count() > 0) {
      fail(v.source(), who + "give modbus.poll_ms or modbus.cache_ms, not both");
    }
    if (const std::string why = modbus::check(b.point); !why.empty()) fail(v.source(), who + "modbus: " + why);
    const ValueType derived = node_type_of(b.point);
    if (type && spec.type != derived) {
      fail(type->source(), who + "type " + std::string(type_name(spec.type)) + " does not match the Modbus point (" +
                               std::string(modbus::data_type_name(b.point.type)) +
                               (b.point.scale != 1.0 || b.point.offset != 0.0 ? ", scaled" : "") + " gives " +
                               std::string(type_name(derived)) + ")");
    }
    spec.type = derived;
    if (!spec.writers.empty() && !modbus::is_writable(*tab)) {
      fail(v.source(), who + "a " + table_text + " cannot be written: remove access/writers");
    }
    out_.modbus.push_back(std::move(b));
  }

  // Two nodes on the same registers or bits would fight over them (and a write to one would
  // silently change the other): rejected, with both lines.
  void check_overlaps() const {
    std::vector<const ModbusBinding*> sorted;
    for (const auto& b : out_.modbus) sorted.push_back(&b);
    const auto key = [](const ModbusBinding* b) { return std::tuple(b->device, b->point.table, b->point.address); };
    std::sort(sorted.begin(), sorted.end(), [&](const auto* a, const auto* b) { return key(a) < key(b); });
    for (std::size_t i = 1; i < sorted.size(); ++i) {
      const ModbusBinding& a = *sorted[i - 1];
      const ModbusBinding& b = *sorted[i];
      if (a.device != b.device || a.point.table != b.point.table) continue;
      if (static_cast<std::uint32_t>(a.point.address) + a.point.count > b.point.address) {
        const ModbusBinding& later = a.line > b.line ? a : b;
        const ModbusBinding& earlier = a.line > b.line ? b : a;
        fail_at(later.line, "node " + in_quotes(later.node_id) + ": modbus " +
                                std::string(modbus::table_name(later.point.table)) + " " +
                                std::to_string(later.point.address) + ".." +
                                std::to_string(later.point.address + later.point.count - 1) + " on device " +
                                in_quotes(later.device) + " overlaps node " + in_quotes(earlier.node_id) +
                                " (line " + std::to_string(earlier.line) + ")");
      }
    }
  }

  // ---- [[node]] ---------------------------------------------------------------------------------

  struct Defined {
    std::uint32_t line;
    ValueType type;
  };

  void parse_nodes(const toml::node& n) {
    const toml::array& arr = tables_of(n, "node");
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
        fail(key.source(), "unknown key " + in_quotes("node." + k));
      }
      f[k] = &v;
    }
    const auto get = [&](const char* k) -> const toml::node* {
      const auto it = f.find(k);
      return it == f.end() ? nullptr : it->second;
    };

    NodeSpec spec;
    const toml::node* id = get("id");
    if (!id) fail(t.source(), "[[node]] without an id");
    spec.id = string_of(*id, "node.id");
    if (!valid_node_id(spec.id)) {
      fail(id->source(), "node id " + in_quotes(spec.id) +
                             " must be 1..128 printable ASCII characters without spaces");
    }
    if (const auto it = defined_.find(spec.id); it != defined_.end()) {
      fail(id->source(), "duplicate node id " + in_quotes(spec.id) + " (first defined on line " +
                             std::to_string(it->second.line) + ")");
    }
    const std::string who = "node " + in_quotes(spec.id) + ": ";

    spec.name = spec.id;
    if (const auto* v = get("name")) {
      spec.name = string_of(*v, who + "name");
      if (spec.name.size() > 256) fail(v->source(), who + "name longer than 256 characters");
    }
    if (const auto* v = get("type")) {
      const std::string s = string_of(*v, who + "type");
      const auto type = parse_type_name(s);
      if (!type)
        fail(v->source(),
             who + "unknown type " + in_quotes(s) + " (folder, bool, int64, double, string, json)");
      spec.type = *type;
    }
    // A Modbus node takes its type from the point (parse_modbus); until then it is no folder.
    if (!get("type") && get("modbus")) spec.type = ValueType::int64;
    parse_parents(spec, get("parent"), get("parents"), who);
    if (const auto* v = get("description")) spec.description = string_of(*v, who + "description");

    const bool folder = spec.type == ValueType::folder;
    if (folder) {
      // A folder has no value, so these keys can only be a mistake (usually a forgotten type).
      for (const char* k : {"unit", "access", "readers", "writers", "value", "signal", "modbus"}) {
        if (const auto* v = get(k)) {
          fail(v->source(),
               who + "a folder has no " + in_quotes(k) + " (set type = \"double\", ...)");
        }
      }
    } else {
      if (const auto* v = get("unit")) spec.unit = string_of(*v, who + "unit");
      parse_access(spec, get("access"), get("readers"), get("writers"), who);
      if (const auto* v = get("value")) spec.initial = value_of(spec.type, *v, who);
      if (const auto* v = get("signal")) parse_signal(spec, *v, get("value"), who);
      if (const auto* v = get("modbus")) {
        if (const auto* other = get("signal")) fail(other->source(), who + "give signal or modbus, not both");
        if (const auto* value = get("value")) fail(value->source(), who + "a Modbus node has no initial value");
        parse_modbus(spec, *v, get("type"), who);
      }
    }
    defined_.emplace(spec.id, Defined{id->source().begin.line, spec.type});
    return spec;
  }

  void parse_parents(NodeSpec& spec, const toml::node* parent, const toml::node* parents,
                     const std::string& who) {
    if (parent && parents) fail(parents->source(), who + "give parent or parents, not both");
    std::vector<const toml::node*> list;
    if (parent) list.push_back(parent);
    if (parents) {
      const auto* a = parents->as_array();
      if (!a)
        fail(parents->source(),
             who + "parents must be an array of node ids, not " + toml_type(*parents));
      for (const auto& e : *a) list.push_back(&e);
    }
    for (const toml::node* p : list) {
      const std::string pid = string_of(*p, who + "parent");
      if (pid == spec.id) fail(p->source(), who + "a node cannot be its own parent");
      const auto it = defined_.find(pid);
      if (it == defined_.end()) {
        const auto later = later_.find(pid);
        if (later != later_.end()) {
          fail(p->source(), who + "parent " + in_quotes(pid) + " is defined later (line " +
                                std::to_string(later->second) +
                                "); define parents before their children");
        }
        fail(p->source(), who + "unknown parent " + in_quotes(pid));
      }
      if (it->second.type != ValueType::folder)
        fail(p->source(), who + "parent " + in_quotes(pid) + " is not a folder");
      if (std::find(spec.parents.begin(), spec.parents.end(), pid) != spec.parents.end()) {
        fail(p->source(), who + "parent " + in_quotes(pid) + " listed twice");
      }
      spec.parents.push_back(pid);
    }
  }

  Acl acl_of(const toml::node& v, const std::string& what) const {
    const auto* a = v.as_array();
    if (!a)
      fail(v.source(),
           what + " must be an array of \"*\", identities and \"role:NAME\", not " + toml_type(v));
    Acl acl;
    for (const auto& e : *a) {
      std::string s = string_of(e, what + " entries");
      const bool control = std::any_of(s.begin(), s.end(),
                                       [](char c) { return static_cast<unsigned char>(c) < 0x20; });
      if (s.empty() || s == "role:" || control)
        fail(e.source(), what + ": invalid entry " + in_quotes(s));
      acl.push_back(std::move(s));
    }
    return acl;
  }

  void parse_access(NodeSpec& spec, const toml::node* access, const toml::node* readers,
                    const toml::node* writers, const std::string& who) {
    if (readers) spec.readers = acl_of(*readers, who + "readers");
    std::optional<bool> rw;
    if (access) {
      const std::string s = string_of(*access, who + "access");
      if (s != "read" && s != "readwrite")
        fail(access->source(), who + "access must be \"read\" or \"readwrite\"");
      rw = s == "readwrite";
      if (*rw) spec.writers = {"*"};
    }
    if (writers) {
      spec.writers = acl_of(*writers, who + "writers");
      // The shorthand and the explicit list must not contradict each other.
      if (rw && *rw == spec.writers.empty()) {
        fail(writers->source(),
             who + "writers contradict access = " + (*rw ? "\"readwrite\"" : "\"read\""));
      }
    }
  }

  Json value_of(ValueType type, const toml::node& v, const std::string& who) const {
    const auto wrong = [&](const char* expected) {
      fail(v.source(), who + "value must be " + expected + " for type " +
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
        return number_of(v, who + "value");
      case ValueType::string:
        if (!v.is_string()) wrong("a string");
        return v.as_string()->get();
      case ValueType::json: {
        Json j;
        if (const auto* s = v.as_string()) {  // JSON text, for values TOML cannot express (null)
          try {
            j = Json::parse(s->get());
          } catch (const Json::exception&) {
            fail(v.source(), who + "value is not valid JSON text");
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
    if (v.is_floating_point()) return number_of(v, who + "value");
    fail(v.source(), who + "value: " + toml_type(v) + " has no JSON form");
  }

  void parse_signal(NodeSpec& spec, const toml::node& v, const toml::node* value,
                    const std::string& who) {
    if (spec.type != ValueType::float64 && spec.type != ValueType::int64) {
      fail(v.source(),
           who + "a signal needs type double or int64, not " + std::string(type_name(spec.type)));
    }
    if (!spec.writers.empty())
      fail(v.source(), who + "a simulated node is read-only: remove access/writers");
    if (value) fail(value->source(), who + "a simulated node has no initial value");
    const toml::table& t = table_of(v, who + "signal");
    SignalSpec sig;
    bool have_kind = false;
    for (auto&& [key, e] : t) {
      const std::string k(key.str());
      const std::string what = who + "signal." + k;
      if (k == "kind") {
        const std::string s = string_of(e, what);
        static const std::map<std::string, SignalSpec::Kind> kinds = {
            {"sine", SignalSpec::Kind::sine},
            {"ramp", SignalSpec::Kind::ramp},
            {"square", SignalSpec::Kind::square},
            {"random_walk", SignalSpec::Kind::random_walk},
            {"counter", SignalSpec::Kind::counter}};
        const auto it = kinds.find(s);
        if (it == kinds.end()) {
          fail(e.source(), who + "unknown signal kind " + in_quotes(s) +
                               " (sine, ramp, square, random_walk, counter)");
        }
        sig.kind = it->second;
        have_kind = true;
      } else if (k == "amplitude") {
        sig.amplitude = number_of(e, what);
      } else if (k == "offset") {
        sig.offset = number_of(e, what);
      } else if (k == "period_s") {
        sig.period_s = number_of(e, what);
        if (sig.period_s <= 0) fail(e.source(), who + "signal.period_s must be > 0");
      } else if (k == "noise") {
        sig.noise = number_of(e, what);
        if (sig.noise < 0) fail(e.source(), who + "signal.noise must be >= 0");
      } else {
        fail(key.source(), who + "unknown key " + in_quotes("signal." + k));
      }
    }
    if (!have_kind) fail(v.source(), who + "signal without a kind");
    ReadFn read = make_signal(sig);
    if (spec.type == ValueType::int64 && sig.kind != SignalSpec::Kind::counter) {
      // An int64 node gets the signal rounded, so its reads stay integers.
      read = [inner = std::move(read)] {
        ReadResult r = inner();
        if (r.status == Status::ok && r.value.is_number_float()) {
          r.value = std::llround(std::clamp(r.value.get<double>(), -9e18, 9e18));
        }
        return r;
      };
    }
    spec.read = std::move(read);
  }

  std::string name_;
  std::string base_dir_;
  LoadedConfig out_;
  std::map<std::string, Defined> defined_;      // nodes parsed so far
  std::map<std::string, std::uint32_t> later_;  // every id in the file, for better messages
};

}  // namespace

LoadedConfig parse_config(const std::string& text, const std::string& name,
                          const std::string& base_dir) {
  return Parser(name, base_dir).parse(text);
}

std::vector<std::string> settings_needing_restart(const ServerConfig& a, const ServerConfig& b) {
  std::vector<std::string> out;
  const auto differ = [&](const char* name, bool changed) {
    if (changed) out.emplace_back(name);
  };
  differ("server.listen", a.listen_host != b.listen_host || a.listen_port != b.listen_port);
  differ("server.ca", a.ca_file != b.ca_file);
  differ("server.cert", a.cert_file != b.cert_file);
  differ("server.key", a.key_file != b.key_file);
  differ("server.allow", a.allow != b.allow);
  differ("server.data_ports", a.data_port_min != b.data_port_min || a.data_port_max != b.data_port_max);
  differ("server.kems", a.kem_preference != b.kem_preference);
  differ("server.handshake_deadline_ms", a.handshake_deadline != b.handshake_deadline);
  differ("server.offer_lifetime_ms", a.offer_lifetime != b.offer_lifetime);
  differ("server.idle_frame_deadline_ms", a.idle_frame_deadline != b.idle_frame_deadline);
  differ("server.max_sessions", a.max_sessions != b.max_sessions);
  differ("server.max_pending_links", a.max_pending_links != b.max_pending_links);
  differ("server.max_sessions_per_identity", a.max_sessions_per_identity != b.max_sessions_per_identity);
  differ("server.max_handshakes", a.max_handshakes != b.max_handshakes);
  differ("server.max_handshakes_per_source", a.max_handshakes_per_source != b.max_handshakes_per_source);
  differ("server.max_pending_links_per_identity", a.max_pending_links_per_identity != b.max_pending_links_per_identity);
  differ("server.max_queued_bytes", a.max_queued_bytes != b.max_queued_bytes);
  differ("server.max_queued_bytes_per_link", a.max_queued_bytes_per_link != b.max_queued_bytes_per_link);
  differ("server.send_stall_timeout_ms", a.send_stall_timeout != b.send_stall_timeout);
  differ("server.max_partial_bytes", a.max_partial_bytes != b.max_partial_bytes);
  differ("server.max_partial_bytes_total", a.max_partial_bytes_total != b.max_partial_bytes_total);
  differ("server.max_subscriptions", a.max_subscriptions != b.max_subscriptions);
  differ("server.max_subscribed_ids", a.max_subscribed_ids != b.max_subscribed_ids);
  differ("server.max_backend_ops", a.max_backend_ops != b.max_backend_ops);
  differ("server.min_backend_sample_ms", a.min_backend_sample != b.min_backend_sample);
  differ("server.link_close_grace_ms", a.link_close_grace != b.link_close_grace);
  differ("server.key_update_messages", a.key_update_messages != b.key_update_messages);
  differ("server.key_update_seconds", a.key_update_seconds != b.key_update_seconds);
  differ("server.timestamp_window_ms", a.timestamp_window_ms != b.timestamp_window_ms);
  differ("server.threads", a.threads != b.threads);
  const Limits& la = a.limits;
  const Limits& lb = b.limits;
  differ("limits", la.max_frame_body != lb.max_frame_body || la.max_message != lb.max_message ||
                       la.max_segments != lb.max_segments || la.max_reassemblies != lb.max_reassemblies ||
                       la.max_nodes_per_request != lb.max_nodes_per_request ||
                       la.max_json_depth != lb.max_json_depth || la.max_links != lb.max_links);
  return out;
}

LoadedConfig load_config(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path + ": cannot open the file");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw ConfigError(path + ": cannot read the file");
  return parse_config(text.str(), path, std::filesystem::path(path).parent_path().string());
}

}  // namespace pqot::srmcp
