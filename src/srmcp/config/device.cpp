// srmcpd configuration of the Modbus gateway (docs/srmcpd-modbus.md): [[device]] tables, the
// `modbus` key of a [[node]], and points that overlap.
#include <algorithm>
#include <cctype>
#include <tuple>

#include "pqot/modbus/point.hpp"
#include "sections.hpp"

namespace pqot::srmcp::config {
namespace {

ModbusDeviceConfig parse_device(const Reader& r, const toml::table& t, const std::vector<ModbusDeviceConfig>& devices) {
  using Ms = std::chrono::milliseconds;
  ModbusDeviceConfig d;
  d.line = t.source().begin.line;
  const auto* name = t.get("name");
  if (!name) r.fail(t.source(), "[[device]] without a name");
  d.name = r.string_of(*name, "device.name");
  const bool name_ok = !d.name.empty() && d.name.size() <= 64 &&
                       std::all_of(d.name.begin(), d.name.end(), [](char c) {
                         return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
                       });
  if (!name_ok) r.fail(name->source(), "device name " + in_quotes(d.name) + " must be 1..64 of A-Z a-z 0-9 _ - .");
  for (const auto& other : devices) {
    if (other.name == d.name) {
      r.fail(name->source(), "duplicate device " + in_quotes(d.name) + " (first defined on line " +
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
      set(r.int_of(v, who + k, lo, hi));
    } else if (k == "host") {
      d.host = r.string_of(v, who + "host");
      if (d.host.empty() || d.host.size() > 253) r.fail(v.source(), who + "host must be 1..253 characters");
    } else if (k == "write_confirm") {
      const std::string c = r.string_of(v, who + "write_confirm");
      if (c == "read_back") {
        d.write_confirm = ModbusDeviceConfig::WriteConfirm::read_back;
      } else if (c == "echo") {
        d.write_confirm = ModbusDeviceConfig::WriteConfirm::echo;
      } else {
        r.fail(v.source(), who + "write_confirm must be \"read_back\" or \"echo\"");
      }
    } else if (k != "name") {
      r.fail(key.source(), "unknown key " + in_quotes("device." + k));
    }
  }
  if (d.host.empty()) r.fail(t.source(), who + "no host");
  if (d.backoff_max < d.backoff_min) {
    r.fail(t.get("backoff_max_ms")->source(), who + "backoff_max_ms is below backoff_min_ms");
  }
  return d;
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

}  // namespace

void parse_devices(const Reader& r, const toml::node& n, std::vector<ModbusDeviceConfig>& devices) {
  for (const auto& e : r.tables_of(n, "device")) devices.push_back(parse_device(r, *e.as_table(), devices));
}

// `modbus = { device, table, address, type, count, word_order, byte_order, scale, offset,
// poll_ms, cache_ms }` of a [[node]]; the node's type follows from the point's unless given.
ModbusBinding parse_modbus(const Reader& r, NodeSpec& spec, const toml::node& v, const toml::node* type,
                           const std::string& who, const std::vector<ModbusDeviceConfig>& devices) {
  const toml::table& t = r.table_of(v, who + "modbus");
  ModbusBinding b;
  b.node_id = spec.id;
  b.line = v.source().begin.line;
  const auto required = [&](const char* k) -> const toml::node& {
    const auto* n = t.get(k);
    if (!n) r.fail(v.source(), who + "modbus." + k + " is required");
    return *n;
  };
  const toml::node& dev = required("device");
  b.device = r.string_of(dev, who + "modbus.device");
  const bool known = std::any_of(devices.begin(), devices.end(),
                                 [&](const ModbusDeviceConfig& d) { return d.name == b.device; });
  if (!known) r.fail(dev.source(), who + "unknown device " + in_quotes(b.device) + " (no [[device]] of that name)");
  const toml::node& table = required("table");
  const std::string table_text = r.string_of(table, who + "modbus.table");
  const auto tab = modbus::parse_table(table_text);
  if (!tab) {
    r.fail(table.source(), who + "unknown modbus.table " + in_quotes(table_text) +
                             " (coil, discrete_input, holding, input)");
  }
  b.point.table = *tab;
  b.point.address = static_cast<std::uint16_t>(r.int_of(required("address"), who + "modbus.address", 0, 65535));
  b.point.type = modbus::is_bit_table(*tab) ? modbus::DataType::boolean : modbus::DataType::uint16;
  bool have_count = false;
  const auto order_of = [&](const toml::node& n, const std::string& what) {
    const std::string o = r.string_of(n, what);
    if (o != "big" && o != "little") r.fail(n.source(), what + " must be \"big\" or \"little\"");
    return o == "big" ? modbus::Order::big : modbus::Order::little;
  };
  for (auto&& [key, e] : t) {
    const std::string k(key.str());
    const std::string what = who + "modbus." + k;
    if (k == "device" || k == "table" || k == "address") continue;
    if (k == "type") {
      const std::string s = r.string_of(e, what);
      const auto dt = modbus::parse_data_type(s);
      if (!dt) {
        r.fail(e.source(), who + "unknown modbus.type " + in_quotes(s) +
                             " (bool, int16, uint16, int32, uint32, float32, float64, string)");
      }
      b.point.type = *dt;
    } else if (k == "count") {
      b.point.count = static_cast<std::uint16_t>(r.int_of(e, what, 1, modbus::kMaxStringRegisters));
      have_count = true;
    } else if (k == "word_order") {
      b.point.word_order = order_of(e, what);
    } else if (k == "byte_order") {
      b.point.byte_order = order_of(e, what);
    } else if (k == "scale") {
      b.point.scale = r.number_of(e, what);
      if (b.point.scale == 0.0) r.fail(e.source(), what + " must not be 0");
    } else if (k == "offset") {
      b.point.offset = r.number_of(e, what);
    } else if (k == "poll_ms") {
      b.poll = std::chrono::milliseconds(r.int_of(e, what, 10, 3'600'000));
    } else if (k == "cache_ms") {
      b.cache_age = std::chrono::milliseconds(r.int_of(e, what, 0, 3'600'000));
    } else {
      r.fail(key.source(), who + "unknown key " + in_quotes("modbus." + k));
    }
  }
  if (!have_count) {
    if (b.point.type == modbus::DataType::string) r.fail(v.source(), who + "a string point needs modbus.count (registers)");
    b.point.count = modbus::is_bit_table(*tab) ? 1 : modbus::registers_of(b.point.type);
  }
  if (b.poll.count() > 0 && b.cache_age.count() > 0) {
    r.fail(v.source(), who + "give modbus.poll_ms or modbus.cache_ms, not both");
  }
  if (const std::string why = modbus::check(b.point); !why.empty()) r.fail(v.source(), who + "modbus: " + why);
  const ValueType derived = node_type_of(b.point);
  if (type && spec.type != derived) {
    r.fail(type->source(), who + "type " + std::string(type_name(spec.type)) + " does not match the Modbus point (" +
                             std::string(modbus::data_type_name(b.point.type)) +
                             (b.point.scale != 1.0 || b.point.offset != 0.0 ? ", scaled" : "") + " gives " +
                             std::string(type_name(derived)) + ")");
  }
  spec.type = derived;
  if (!spec.writers.empty() && !modbus::is_writable(*tab)) {
    r.fail(v.source(), who + "a " + table_text + " cannot be written: remove access/writers");
  }
  return b;
}

// Two nodes on the same registers or bits would fight over them (and a write to one would
// silently change the other): rejected, with both lines.
void check_overlaps(const Reader& r, const std::vector<ModbusBinding>& modbus) {
  std::vector<const ModbusBinding*> sorted;
  for (const auto& b : modbus) sorted.push_back(&b);
  const auto key = [](const ModbusBinding* b) { return std::tuple(b->device, b->point.table, b->point.address); };
  std::sort(sorted.begin(), sorted.end(), [&](const auto* a, const auto* b) { return key(a) < key(b); });
  for (std::size_t i = 1; i < sorted.size(); ++i) {
    const ModbusBinding& a = *sorted[i - 1];
    const ModbusBinding& b = *sorted[i];
    if (a.device != b.device || a.point.table != b.point.table) continue;
    if (static_cast<std::uint32_t>(a.point.address) + a.point.count > b.point.address) {
      const ModbusBinding& later = a.line > b.line ? a : b;
      const ModbusBinding& earlier = a.line > b.line ? b : a;
      r.fail_at(later.line, "node " + in_quotes(later.node_id) + ": modbus " +
                              std::string(modbus::table_name(later.point.table)) + " " +
                              std::to_string(later.point.address) + ".." +
                              std::to_string(later.point.address + later.point.count - 1) + " on device " +
                              in_quotes(later.device) + " overlaps node " + in_quotes(earlier.node_id) +
                              " (line " + std::to_string(earlier.line) + ")");
    }
  }
}

}  // namespace pqot::srmcp::config
