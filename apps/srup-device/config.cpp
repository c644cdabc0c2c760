// srup-device configuration loader (docs/srup-device.md, "Configuration"): the sections in a
// fixed order, every key checked against its range, unknown keys refused.
#include "config.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "config_reader.hpp"
#include "pqot/common/host_port.hpp"
#include "pqot/srup/body.hpp"
#include "pqot/srup/meter_channels.hpp"

namespace pqot::srup_device {
namespace {

using config::in_quotes;
using config::Reader;
constexpr std::int64_t kDay = 86'400'000;

/// A short text (type, log level): bounded, printable ASCII.
std::string short_text_of(const Reader& r, const toml::node& n, const std::string& what, std::size_t max) {
  std::string s = r.string_of(n, what);
  if (s.size() > max) r.fail(n, what + " is longer than " + std::to_string(max) + " bytes");
  for (char c : s)
    if (c < 0x20 || c > 0x7e) r.fail(n, what + " must be printable ASCII");
  return s;
}

void parse_device(const Reader& r, const toml::table& t, DeviceConfig& c) {
  r.only_keys(t, "[device]", {"state_dir", "type", "log_level"});
  if (const auto* v = t.get("state_dir")) c.device.state_dir = r.path_of(*v, "device.state_dir");
  if (const auto* v = t.get("type")) c.device.type = short_text_of(r, *v, "device.type", 255);
  if (const auto* v = t.get("log_level")) {
    const std::string s = r.string_of(*v, "device.log_level");
    constexpr std::string_view levels[] = {"trace", "debug", "info", "warn", "error", "critical", "off"};
    if (std::find(std::begin(levels), std::end(levels), s) == std::end(levels))
      r.fail(*v, "device.log_level: " + in_quotes(s) + " is not one of trace, debug, info, warn, error, critical, off");
    c.device.log_level = s;
  }
}

void parse_c2(const Reader& r, const toml::table& t, DeviceConfig& c) {
  r.only_keys(t, "[c2]", {"public_identity"});
  if (const auto* v = t.get("public_identity")) c.c2.public_identity = r.path_of(*v, "c2.public_identity");
}

void parse_broker(const Reader& r, const toml::table& t, DeviceConfig& c) {
  r.only_keys(t, "[broker]", {"host", "port", "ca", "cert", "key", "keepalive_s", "reconnect_min_ms", "reconnect_max_ms"});
  auto& b = c.broker;
  if (const auto* v = t.get("host")) {
    b.host = r.string_of(*v, "broker.host");
    if (b.host.empty() || b.host.size() > 253) r.fail(*v, "broker.host must be 1..253 bytes");
  }
  if (const auto* v = t.get("port")) b.port = static_cast<std::uint16_t>(r.int_of(*v, "broker.port", 1, 65535));
  if (const auto* v = t.get("ca")) b.ca = r.path_of(*v, "broker.ca");
  if (const auto* v = t.get("cert")) b.cert = r.path_of(*v, "broker.cert");
  if (const auto* v = t.get("key")) b.key = r.path_of(*v, "broker.key");
  if (const auto* v = t.get("keepalive_s")) b.keepalive_s = static_cast<std::uint32_t>(r.int_of(*v, "broker.keepalive_s", 5, 65535));
  if (const auto* v = t.get("reconnect_min_ms"))
    b.reconnect_min_ms = static_cast<std::uint32_t>(r.int_of(*v, "broker.reconnect_min_ms", 10, 600'000));
  if (const auto* v = t.get("reconnect_max_ms"))
    b.reconnect_max_ms = static_cast<std::uint32_t>(r.int_of(*v, "broker.reconnect_max_ms", 10, 3'600'000));
  if (b.reconnect_max_ms < b.reconnect_min_ms) {
    const auto* at = t.get("reconnect_max_ms") ? t.get("reconnect_max_ms") : t.get("reconnect_min_ms");
    r.fail(*at, "broker.reconnect_max_ms must be >= broker.reconnect_min_ms");
  }
}

std::uint64_t peer_id_of(const Reader& r, const toml::node& n, const std::string& what) {
  const std::string s = r.string_of(n, what);
  std::uint64_t v = 0;
  const bool hex = s.size() == 16 && std::all_of(s.begin(), s.end(), [](char ch) {
                     return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f');
                   });
  if (hex) std::from_chars(s.data(), s.data() + s.size(), v, 16);
  if (!hex || v == 0 || v == ~std::uint64_t{0})
    r.fail(n, what + " must be 16 lower-case hex digits, not all zeros or all f (got " + in_quotes(s.substr(0, 32)) + ")");
  return v;
}

void parse_join(const Reader& r, const toml::table& t, DeviceConfig& c) {
  r.only_keys(t, "[join]", {"mode", "observer", "code_file", "observe_dir", "observe_wait_ms"});
  if (const auto* v = t.get("mode")) {
    const std::string s = r.string_of(*v, "join.mode");
    if (s == "simple") c.join.mode = JoinMode::simple;
    else if (s == "human") c.join.mode = JoinMode::human;
    else if (s == "observed") c.join.mode = JoinMode::observed;
    else r.fail(*v, "join.mode: " + in_quotes(s) + " is not one of simple, human, observed");
  }
  if (const auto* v = t.get("observer")) {
    if (c.join.mode != JoinMode::observed) r.fail(*v, "join.observer is only for mode = \"observed\"");
    c.join.observer = peer_id_of(r, *v, "join.observer");
  } else if (c.join.mode == JoinMode::observed) {
    r.fail(t, "join.mode = \"observed\" needs join.observer (the observer's ID)");
  }
  if (const auto* v = t.get("code_file")) c.join.code_file = r.path_of(*v, "join.code_file");
  if (const auto* v = t.get("observe_dir")) c.join.observe_dir = r.path_of(*v, "join.observe_dir");
  if (const auto* v = t.get("observe_wait_ms"))
    c.join.observe_wait_ms = static_cast<std::uint32_t>(r.int_of(*v, "join.observe_wait_ms", 0, 3'600'000));
}

std::vector<std::string> env_of(const Reader& r, const toml::node& n, const std::string& what) {
  auto env = r.strings_of(n, what);
  if (env.size() > 64) r.fail(n, what + ": at most 64 entries");
  for (const auto& e : env) {
    const auto name = std::string_view(e).substr(0, e.find('='));
    const bool ok = !name.empty() && !(name[0] >= '0' && name[0] <= '9') &&
                    std::all_of(name.begin(), name.end(), [](char ch) {
                      return ch == '_' || (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
                    });
    if (!ok || e.size() > 4096 || e.find('\0') != std::string::npos)
      r.fail(n, what + ": " + in_quotes(e.substr(0, 64)) + " is not NAME or NAME=VALUE (NAME letters, digits, _)");
  }
  return env;
}

std::vector<std::string> args_of(const Reader& r, const toml::node& n, const std::string& what) {
  auto args = r.strings_of(n, what);
  if (args.size() > 64) r.fail(n, what + ": at most 64 arguments");
  for (const auto& a : args)
    if (a.find('\0') != std::string::npos || a.size() > 4096) r.fail(n, what + ": an argument is over 4,096 bytes or holds NUL");
  return args;
}

void parse_action(const Reader& r, const toml::table& t, DeviceConfig& c) {
  r.only_keys(t, "[[action]]",
              {"id", "program", "args", "pass_argument", "end_of_options", "timeout_ms", "env", "builtin"});
  ActionSpec a;
  const auto* id = t.get("id");
  if (!id) r.fail(t, "[[action]] needs id (0..255)");
  a.id = static_cast<std::uint8_t>(r.int_of(*id, "action.id", 0, 255));
  if (c.action(a.id)) r.fail(*id, "action.id " + std::to_string(a.id) + " is given twice");
  const auto* program = t.get("program");
  const auto* builtin = t.get("builtin");
  if ((program == nullptr) == (builtin == nullptr))
    r.fail(t, "[[action]] " + std::to_string(a.id) + " needs exactly one of program and builtin");
  if (program) {
    a.program = r.path_of(*program, "action.program");
    if (!std::filesystem::path(a.program).is_absolute())
      r.fail(*program, "action.program must be an absolute path (no PATH search)");
    if (const auto* v = t.get("args")) a.args = args_of(r, *v, "action.args");
    if (const auto* v = t.get("pass_argument")) a.pass_argument = r.bool_of(*v, "action.pass_argument");
    if (const auto* v = t.get("end_of_options")) {
      a.end_of_options = r.bool_of(*v, "action.end_of_options");
      if (!a.pass_argument) r.fail(*v, "action.end_of_options needs pass_argument = true");
    }
    if (const auto* v = t.get("timeout_ms")) a.timeout_ms = static_cast<std::uint32_t>(r.int_of(*v, "action.timeout_ms", 1, kDay));
    if (const auto* v = t.get("env")) a.env = env_of(r, *v, "action.env");
  } else {
    a.builtin = r.string_of(*builtin, "action.builtin");
    if (std::find(std::begin(kBuiltinActions), std::end(kBuiltinActions), a.builtin) == std::end(kBuiltinActions))
      r.fail(*builtin, "action.builtin: " + in_quotes(a.builtin) + " is not one of log, reboot-simulated, set-interval");
    for (const char* k : {"args", "pass_argument", "end_of_options", "timeout_ms", "env"})
      if (const auto* v = t.get(k)) r.fail(*v, std::string("action.") + k + " is for programs, not built-in actions");
  }
  c.actions.push_back(std::move(a));
}

void parse_update(const Reader& r, const toml::table& t, DeviceConfig& c) {
  r.only_keys(t, "[update]", {"dir", "max_bytes", "timeout_ms", "io_timeout_ms", "apply_program", "apply_args",
                              "apply_timeout_ms", "allowed_file_root", "redirects"});
  auto& u = c.update;
  if (const auto* v = t.get("dir")) u.dir = r.path_of(*v, "update.dir");
  if (const auto* v = t.get("max_bytes")) u.max_bytes = static_cast<std::uint64_t>(r.int_of(*v, "update.max_bytes", 1, 4ll << 30));
  if (const auto* v = t.get("timeout_ms")) u.timeout_ms = static_cast<std::uint32_t>(r.int_of(*v, "update.timeout_ms", 100, kDay));
  if (const auto* v = t.get("io_timeout_ms"))
    u.io_timeout_ms = static_cast<std::uint32_t>(r.int_of(*v, "update.io_timeout_ms", 10, 600'000));
  if (const auto* v = t.get("apply_program")) {
    u.apply_program = r.path_of(*v, "update.apply_program");
    if (!std::filesystem::path(u.apply_program).is_absolute())
      r.fail(*v, "update.apply_program must be an absolute path (no PATH search)");
  }
  if (const auto* v = t.get("apply_args")) {
    if (u.apply_program.empty()) r.fail(*v, "update.apply_args needs update.apply_program");
    u.apply_args = args_of(r, *v, "update.apply_args");
  }
  if (const auto* v = t.get("apply_timeout_ms"))
    u.apply_timeout_ms = static_cast<std::uint32_t>(r.int_of(*v, "update.apply_timeout_ms", 1, kDay));
  if (const auto* v = t.get("allowed_file_root")) {
    u.allowed_file_root = r.path_of(*v, "update.allowed_file_root");
    if (!std::filesystem::path(u.allowed_file_root).is_absolute())
      r.fail(*v, "update.allowed_file_root must be an absolute path");
  }
  if (const auto* v = t.get("redirects")) {
    const std::string s = r.string_of(*v, "update.redirects");
    if (s == "none") u.redirects = UpdateRedirects::none;
    else if (s == "same-origin") u.redirects = UpdateRedirects::same_origin;
    else if (s == "public") u.redirects = UpdateRedirects::public_hosts;
    else r.fail(*v, "update.redirects: " + in_quotes(s) + " is not one of none, same-origin, public");
  }
}

void parse_modbus(const Reader& r, const toml::table& t, TelemetryModbus& m) {
  r.only_keys(t, "[telemetry.modbus]", {"address", "unit", "timeout_ms", "backoff_min_ms", "backoff_max_ms", "channel"});
  if (const auto* v = t.get("address")) {
    const std::string s = r.string_of(*v, "telemetry.modbus.address");
    const auto hp = common::parse_host_port(s);
    if (!hp) r.fail(*v, "telemetry.modbus.address: expected \"HOST:PORT\" or \"[IPV6]:PORT\", got " + in_quotes(s.substr(0, 64)));
    m.host = hp->host;
    m.port = hp->port;
  } else {
    r.fail(t, "[telemetry.modbus] needs address (\"HOST:PORT\")");
  }
  if (const auto* v = t.get("unit")) m.unit = static_cast<int>(r.int_of(*v, "telemetry.modbus.unit", 0, 255));
  if (const auto* v = t.get("timeout_ms")) m.timeout_ms = static_cast<std::uint32_t>(r.int_of(*v, "telemetry.modbus.timeout_ms", 10, 60'000));
  if (const auto* v = t.get("backoff_min_ms"))
    m.backoff_min_ms = static_cast<std::uint32_t>(r.int_of(*v, "telemetry.modbus.backoff_min_ms", 10, 600'000));
  if (const auto* v = t.get("backoff_max_ms"))
    m.backoff_max_ms = static_cast<std::uint32_t>(r.int_of(*v, "telemetry.modbus.backoff_max_ms", 10, 3'600'000));
  if (m.backoff_max_ms < m.backoff_min_ms) r.fail(t, "telemetry.modbus.backoff_max_ms must be >= backoff_min_ms");
  const auto* chans = t.get("channel");
  if (!chans) r.fail(t, "[telemetry.modbus] needs at least one [[telemetry.modbus.channel]]");
  for (const auto& e : r.tables_of(*chans, "telemetry.modbus.channel")) {
    const auto& ct = *e.as_table();
    r.only_keys(ct, "[[telemetry.modbus.channel]]", {"name", "point"});
    const auto* name = ct.get("name");
    const auto* point = ct.get("point");
    if (!name || !point) r.fail(ct, "[[telemetry.modbus.channel]] needs name and point");
    ModbusChannel mc;
    mc.name = r.string_of(*name, "telemetry.modbus.channel.name");
    const auto known = srup::meter::channel_by_name(mc.name);
    if (!known) r.fail(*name, "telemetry.modbus.channel.name: " + in_quotes(mc.name.substr(0, 64)) + " is not a meter channel (docs/srup-device.md)");
    mc.channel = known->channel;
    for (const auto& other : m.channels)
      if (other.channel == mc.channel) r.fail(*name, "telemetry.modbus.channel " + in_quotes(mc.name) + " is given twice");
    auto p = parse_point_spec(r.string_of(*point, "telemetry.modbus.channel.point"));
    if (auto* msg = std::get_if<std::string>(&p)) r.fail(*point, "telemetry.modbus.channel.point: " + *msg);
    mc.point = std::get<modbus::Point>(p);
    m.channels.push_back(std::move(mc));
  }
  if (m.channels.empty()) r.fail(*chans, "[telemetry.modbus] needs at least one [[telemetry.modbus.channel]]");
  if (m.channels.size() > srup::kMaxChannels) r.fail(*chans, "at most 64 telemetry channels (a reading's limit)");
}

void parse_telemetry(const Reader& r, const toml::table& t, DeviceConfig& c) {
  r.only_keys(t, "[telemetry]", {"enabled", "interval_ms", "source", "phases", "seed", "key_resend_s", "modbus"});
  auto& tm = c.telemetry;
  if (const auto* v = t.get("enabled")) tm.enabled = r.bool_of(*v, "telemetry.enabled");
  if (const auto* v = t.get("interval_ms")) tm.interval_ms = static_cast<std::uint32_t>(r.int_of(*v, "telemetry.interval_ms", 100, kDay));
  if (const auto* v = t.get("source")) {
    const std::string s = r.string_of(*v, "telemetry.source");
    if (s == "model") tm.source = TelemetrySource::model;
    else if (s == "modbus") tm.source = TelemetrySource::modbus;
    else r.fail(*v, "telemetry.source: " + in_quotes(s) + " is not one of model, modbus");
  }
  if (const auto* v = t.get("phases")) {
    tm.phases = static_cast<int>(r.int_of(*v, "telemetry.phases", 1, 3));
    if (tm.phases == 2) r.fail(*v, "telemetry.phases must be 1 or 3");
  }
  if (const auto* v = t.get("key_resend_s")) {
    tm.key_resend_s = static_cast<std::uint32_t>(r.int_of(*v, "telemetry.key_resend_s", 1, 86'400));
  }
  if (const auto* v = t.get("seed")) tm.seed = static_cast<std::uint64_t>(r.int_of(*v, "telemetry.seed", 0, std::numeric_limits<std::int64_t>::max()));
  const auto* m = t.get("modbus");
  if (tm.source == TelemetrySource::modbus && !m) r.fail(t, "telemetry.source = \"modbus\" needs [telemetry.modbus]");
  if (tm.source == TelemetrySource::model && m) r.fail(*m, "[telemetry.modbus] is only for source = \"modbus\"");
  if (m) parse_modbus(r, r.table_of(*m, "telemetry.modbus"), tm.modbus);
}

void parse_limits(const Reader& r, const toml::table& t, DeviceConfig& c) {
  r.only_keys(t, "[limits]", {"max_concurrent_actions"});
  if (const auto* v = t.get("max_concurrent_actions"))
    c.limits.max_concurrent_actions = static_cast<std::uint32_t>(r.int_of(*v, "limits.max_concurrent_actions", 1, 64));
}

void parse_metrics(const Reader& r, const toml::table& t, DeviceConfig& c) {
  r.only_keys(t, "[metrics]", {"listen"});
  if (const auto* v = t.get("listen")) {
    const std::string s = r.string_of(*v, "metrics.listen");
    const auto hp = common::parse_host_port(s);
    if (!hp) r.fail(*v, "metrics.listen: expected \"HOST:PORT\" or \"[IPV6]:PORT\" with PORT 1..65535, got " + in_quotes(s.substr(0, 64)));
    c.metrics.listen = *hp;
  }
}

void require(const Reader& r, bool present, const toml::node& at, const std::string& what) {
  if (!present) r.fail(at, what + " is required");
}

}  // namespace

const ActionSpec* DeviceConfig::action(std::uint8_t id) const {
  for (const auto& a : actions)
    if (a.id == id) return &a;
  return nullptr;
}

std::variant<modbus::Point, std::string> parse_point_spec(std::string_view spec) {
  constexpr std::string_view form = "expected TABLE:ADDRESS:TYPE[:SCALE], e.g. \"input:100:float32\"";
  std::vector<std::string_view> parts;
  for (std::size_t at = 0;;) {
    const auto colon = spec.find(':', at);
    parts.push_back(spec.substr(at, colon == std::string_view::npos ? std::string_view::npos : colon - at));
    if (colon == std::string_view::npos || parts.size() > 4) break;
    at = colon + 1;
  }
  if (parts.size() < 3 || parts.size() > 4) return std::string(form);
  modbus::Point p;
  const auto table = modbus::parse_table(parts[0]);
  if (!table) return "unknown table " + in_quotes(parts[0].substr(0, 32)) + " (coil, discrete_input, holding, input)";
  p.table = *table;
  unsigned address = 0;
  const auto [end, ec] = std::from_chars(parts[1].data(), parts[1].data() + parts[1].size(), address);
  if (ec != std::errc{} || end != parts[1].data() + parts[1].size() || address > 65535 || parts[1].empty())
    return "address " + in_quotes(parts[1].substr(0, 32)) + " is not 0..65535";
  p.address = static_cast<std::uint16_t>(address);
  const auto type = modbus::parse_data_type(parts[2]);
  if (!type || *type == modbus::DataType::string)
    return "type " + in_quotes(parts[2].substr(0, 32)) + " is not bool, int16, uint16, int32, uint32, float32 or float64";
  p.type = *type;
  p.count = modbus::is_bit_table(p.table) ? 1 : std::max<std::uint16_t>(1, modbus::registers_of(p.type));
  if (parts.size() == 4) {
    double scale = 0;
    const auto [e2, ec2] = std::from_chars(parts[3].data(), parts[3].data() + parts[3].size(), scale);
    if (ec2 != std::errc{} || e2 != parts[3].data() + parts[3].size() || !std::isfinite(scale) || scale == 0)
      return "scale " + in_quotes(parts[3].substr(0, 32)) + " is not a finite non-zero number";
    p.scale = scale;
  }
  if (auto why = modbus::check(p); !why.empty()) return why;
  return p;
}

DeviceConfig parse_device_config(const std::string& text, const std::string& name, const std::string& base_dir) {
  const Reader r(name, base_dir);
  toml::table root;
  try {
    root = toml::parse(std::string_view(text), std::string_view(name));
  } catch (const toml::parse_error& e) {
    r.fail_at(e.source().begin.line, std::string(e.description()));
  }
  r.only_keys(root, "the file", {"device", "c2", "broker", "join", "action", "update", "telemetry", "limits", "metrics"});
  DeviceConfig c;
  const auto* device = root.get("device");
  require(r, device != nullptr, root, "[device]");
  parse_device(r, r.table_of(*device, "device"), c);
  require(r, !c.device.state_dir.empty(), *device, "device.state_dir");
  const auto* c2 = root.get("c2");
  require(r, c2 != nullptr, root, "[c2]");
  parse_c2(r, r.table_of(*c2, "c2"), c);
  require(r, !c.c2.public_identity.empty(), *c2, "c2.public_identity");
  const auto* broker = root.get("broker");
  require(r, broker != nullptr, root, "[broker]");
  parse_broker(r, r.table_of(*broker, "broker"), c);
  for (auto [value, key] : {std::pair{&c.broker.host, "broker.host"}, {&c.broker.ca, "broker.ca"},
                            {&c.broker.cert, "broker.cert"}, {&c.broker.key, "broker.key"}})
    require(r, !value->empty(), *broker, key);
  if (const auto* v = root.get("join")) parse_join(r, r.table_of(*v, "join"), c);
  if (c.join.code_file.empty()) c.join.code_file = (std::filesystem::path(c.device.state_dir) / "join-code").string();
  if (const auto* v = root.get("action"))
    for (const auto& e : r.tables_of(*v, "action")) parse_action(r, *e.as_table(), c);
  if (const auto* v = root.get("update")) parse_update(r, r.table_of(*v, "update"), c);
  if (c.update.dir.empty()) c.update.dir = (std::filesystem::path(c.device.state_dir) / "updates").string();
  if (const auto* v = root.get("telemetry")) parse_telemetry(r, r.table_of(*v, "telemetry"), c);
  if (const auto* v = root.get("limits")) parse_limits(r, r.table_of(*v, "limits"), c);
  if (const auto* v = root.get("metrics")) parse_metrics(r, r.table_of(*v, "metrics"), c);
  return c;
}

DeviceConfig load_device_config(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path + ": cannot open the file");
  std::string text;
  char buf[4096];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<std::size_t>(in.gcount()));
    if (text.size() > (1u << 20)) throw ConfigError(path + ": larger than 1 MiB");
  }
  if (in.bad()) throw ConfigError(path + ": cannot read the file");
  return parse_device_config(text, path, std::filesystem::path(path).parent_path().string());
}

}  // namespace pqot::srup_device
