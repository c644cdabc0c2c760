// srup-c2's configuration (docs/srup-c2.md, "Configuration"): sections in a fixed order, each key
// range-checked at its line, unknown keys refused.
#include "config.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <fstream>

#include "config_reader.hpp"

namespace pqot::srup_c2 {

namespace {

using config::c2_quoted;
using config::Reader;
using Ms = std::chrono::milliseconds;
using Sec = std::chrono::seconds;

constexpr std::int64_t kDay = 86'400;

// Calls f(value) for each key of `t` that is present.
template <class F>
void with(const toml::table& t, std::string_view key, F&& f) {
  if (const toml::node* v = t.get(key)) f(*v);
}

void parse_c2_section(const Reader& r, const toml::table& t, C2Config& c, bool& has_state_dir) {
  r.only_keys(t, "c2", {"state_dir", "log_level"});
  with(t, "state_dir", [&](const toml::node& v) {
    c.c2.state_dir = r.path_of(v, "c2.state_dir");
    has_state_dir = true;
  });
  with(t, "log_level", [&](const toml::node& v) {
    const std::string s = r.string_of(v, "c2.log_level");
    for (LogLevel l : {LogLevel::trace, LogLevel::debug, LogLevel::info, LogLevel::warn, LogLevel::error}) {
      if (s == to_string(l)) {
        c.c2.log_level = l;
        return;
      }
    }
    r.fail(v.source(), "c2.log_level: " + c2_quoted(s) + " is not one of trace, debug, info, warn, error");
  });
}

bool is_host(std::string_view h) {
  if (h.empty() || h.size() > 253) return false;
  for (char c : h) {
    if (c <= ' ' || c > '~' || c == '/' || c == '[' || c == ']') return false;
  }
  return true;
}

void parse_broker(const Reader& r, const toml::table& t, C2Config& c) {
  r.only_keys(t, "broker", {"host", "port", "ca", "cert", "key", "keepalive_s", "reconnect_min_ms", "reconnect_max_ms"});
  auto& b = c.broker;
  with(t, "host", [&](const toml::node& v) {
    b.host = r.string_of(v, "broker.host");
    if (!is_host(b.host)) {
      r.fail(v.source(), "broker.host: expected a host name or IP address (1..253 printable characters)");
    }
  });
  with(t, "port", [&](const toml::node& v) { b.port = static_cast<std::uint16_t>(r.int_of(v, "broker.port", 1, 65535)); });
  for (const char* key : {"ca", "cert", "key"}) {
    const toml::node* v = t.get(key);
    if (v == nullptr) r.fail(t.source(), std::string("[broker] needs ") + key + " (a PEM file path)");
    const std::string p = r.path_of(*v, std::string("broker.") + key);
    (std::string_view(key) == "ca" ? b.ca : std::string_view(key) == "cert" ? b.cert : b.key) = p;
  }
  with(t, "keepalive_s", [&](const toml::node& v) {
    b.keepalive_s = static_cast<std::uint32_t>(r.int_of(v, "broker.keepalive_s", 5, 3600));
  });
  with(t, "reconnect_min_ms", [&](const toml::node& v) { b.reconnect_min = Ms(r.int_of(v, "broker.reconnect_min_ms", 100, 600'000)); });
  with(t, "reconnect_max_ms", [&](const toml::node& v) { b.reconnect_max = Ms(r.int_of(v, "broker.reconnect_max_ms", 100, 3'600'000)); });
  if (b.reconnect_min > b.reconnect_max) {
    r.fail(t.source(), "[broker] reconnect_min_ms (" + std::to_string(b.reconnect_min.count()) +
                           ") is above reconnect_max_ms (" + std::to_string(b.reconnect_max.count()) + ")");
  }
}

void parse_enrolment(const Reader& r, const toml::table& t, C2Config& c) {
  r.only_keys(t, "enrolment", {"ca_cert", "ca_key", "cert_days", "default_join"});
  auto& e = c.enrolment;
  with(t, "ca_cert", [&](const toml::node& v) { e.ca_cert = r.path_of(v, "enrolment.ca_cert"); });
  with(t, "ca_key", [&](const toml::node& v) { e.ca_key = r.path_of(v, "enrolment.ca_key"); });
  if (e.ca_cert.has_value() != e.ca_key.has_value()) {
    r.fail(t.source(), "[enrolment] ca_cert and ca_key are given together (or neither)");
  }
  with(t, "cert_days", [&](const toml::node& v) {
    e.cert_days = static_cast<int>(r.int_of(v, "enrolment.cert_days", 1, C2Config::kMaxCertDays));
  });
  with(t, "default_join", [&](const toml::node& v) {
    const std::string s = r.string_of(v, "enrolment.default_join");
    const auto mode = parse_join_mode(s);
    if (!mode) r.fail(v.source(), "enrolment.default_join: " + c2_quoted(s) + " is not one of simple, human, observed");
    e.default_join = *mode;
  });
}

void parse_commands(const Reader& r, const toml::table& t, C2Config& c) {
  r.only_keys(t, "commands", {"lifetime_ms", "retry_initial_ms", "retry_max_ms", "expire_after_s",
                              "outbox_max_per_device", "outbox_max_total"});
  auto& k = c.commands;
  with(t, "lifetime_ms", [&](const toml::node& v) { k.lifetime = Ms(r.int_of(v, "commands.lifetime_ms", 1000, C2Config::kMaxLifetimeMs)); });
  with(t, "retry_initial_ms", [&](const toml::node& v) { k.retry_initial = Ms(r.int_of(v, "commands.retry_initial_ms", 100, 3'600'000)); });
  with(t, "retry_max_ms", [&](const toml::node& v) { k.retry_max = Ms(r.int_of(v, "commands.retry_max_ms", 100, 3'600'000)); });
  with(t, "expire_after_s", [&](const toml::node& v) { k.expire_after = Sec(r.int_of(v, "commands.expire_after_s", 1, 30 * kDay)); });
  with(t, "outbox_max_per_device", [&](const toml::node& v) {
    k.outbox_max_per_device = static_cast<std::size_t>(r.int_of(v, "commands.outbox_max_per_device", 1, 1024));
  });
  with(t, "outbox_max_total", [&](const toml::node& v) {
    k.outbox_max_total = static_cast<std::size_t>(r.int_of(v, "commands.outbox_max_total", 1, 1'000'000));
  });
  if (k.retry_initial > k.retry_max) {
    r.fail(t.source(), "[commands] retry_initial_ms (" + std::to_string(k.retry_initial.count()) +
                           ") is above retry_max_ms (" + std::to_string(k.retry_max.count()) + ")");
  }
  if (std::chrono::duration_cast<Ms>(k.expire_after) < k.lifetime) {
    r.fail(t.source(), "[commands] expire_after_s (" + std::to_string(k.expire_after.count()) +
                           " s) is shorter than lifetime_ms (" + std::to_string(k.lifetime.count()) +
                           " ms): a command would be given up while it can still be answered");
  }
}

void parse_join(const Reader& r, const toml::table& t, C2Config& c) {
  r.only_keys(t, "join", {"code_attempts", "pending_max", "code_lifetime_s"});
  with(t, "code_attempts", [&](const toml::node& v) { c.join.code_attempts = static_cast<std::uint32_t>(r.int_of(v, "join.code_attempts", 1, 100)); });
  with(t, "pending_max", [&](const toml::node& v) { c.join.pending_max = static_cast<std::size_t>(r.int_of(v, "join.pending_max", 1, 100'000)); });
  with(t, "code_lifetime_s", [&](const toml::node& v) { c.join.code_lifetime = Sec(r.int_of(v, "join.code_lifetime_s", 60, 30 * kDay)); });
}

void parse_telemetry(const Reader& r, const toml::table& t, C2Config& c) {
  r.only_keys(t, "telemetry", {"store", "retention_per_device", "provisional_max", "provisional_max_bytes",
                               "provisional_max_per_device", "provisional_max_bytes_per_device"});
  auto& m = c.telemetry;
  with(t, "store", [&](const toml::node& v) { m.store = r.bool_of(v, "telemetry.store"); });
  with(t, "retention_per_device", [&](const toml::node& v) {
    m.retention_per_device = static_cast<std::size_t>(r.int_of(v, "telemetry.retention_per_device", 1, 10'000'000));
  });
  with(t, "provisional_max", [&](const toml::node& v) {
    m.provisional_max = static_cast<std::size_t>(r.int_of(v, "telemetry.provisional_max", 1, 10'000'000));
  });
  with(t, "provisional_max_bytes", [&](const toml::node& v) {
    m.provisional_max_bytes = static_cast<std::size_t>(
        r.int_of(v, "telemetry.provisional_max_bytes", C2Config::kMinProvisionalBytes, C2Config::kMaxBudgetBytes));
  });
  with(t, "provisional_max_per_device", [&](const toml::node& v) {
    m.provisional_max_per_device = static_cast<std::size_t>(r.int_of(v, "telemetry.provisional_max_per_device", 1, 10'000'000));
  });
  with(t, "provisional_max_bytes_per_device", [&](const toml::node& v) {
    m.provisional_max_bytes_per_device = static_cast<std::size_t>(r.int_of(
        v, "telemetry.provisional_max_bytes_per_device", C2Config::kMinProvisionalBytes, C2Config::kMaxBudgetBytes));
  });
  if (m.provisional_max_per_device > m.provisional_max) {
    r.fail(t.source(), "[telemetry] provisional_max_per_device (" + std::to_string(m.provisional_max_per_device) +
                           ") is above provisional_max (" + std::to_string(m.provisional_max) + ")");
  }
  if (m.provisional_max_bytes_per_device > m.provisional_max_bytes) {
    r.fail(t.source(), "[telemetry] provisional_max_bytes_per_device (" +
                           std::to_string(m.provisional_max_bytes_per_device) + ") is above provisional_max_bytes (" +
                           std::to_string(m.provisional_max_bytes) + ")");
  }
}

void parse_queue(const Reader& r, const toml::table& t, C2Config& c) {
  r.only_keys(t, "queue", {"max_messages", "max_bytes", "max_messages_per_device", "max_bytes_per_device"});
  auto& q = c.queue;
  with(t, "max_messages", [&](const toml::node& v) {
    q.max_messages = static_cast<std::size_t>(r.int_of(v, "queue.max_messages", 1, 1'000'000));
  });
  with(t, "max_bytes", [&](const toml::node& v) {
    q.max_bytes = static_cast<std::size_t>(r.int_of(v, "queue.max_bytes", C2Config::kMinQueueBytes, C2Config::kMaxBudgetBytes));
  });
  with(t, "max_messages_per_device", [&](const toml::node& v) {
    q.max_messages_per_device = static_cast<std::size_t>(r.int_of(v, "queue.max_messages_per_device", 1, 1'000'000));
  });
  with(t, "max_bytes_per_device", [&](const toml::node& v) {
    q.max_bytes_per_device = static_cast<std::size_t>(
        r.int_of(v, "queue.max_bytes_per_device", C2Config::kMinQueueBytes, C2Config::kMaxBudgetBytes));
  });
  if (q.max_messages_per_device > q.max_messages) {
    r.fail(t.source(), "[queue] max_messages_per_device (" + std::to_string(q.max_messages_per_device) +
                           ") is above max_messages (" + std::to_string(q.max_messages) + ")");
  }
  if (q.max_bytes_per_device > q.max_bytes) {
    r.fail(t.source(), "[queue] max_bytes_per_device (" + std::to_string(q.max_bytes_per_device) +
                           ") is above max_bytes (" + std::to_string(q.max_bytes) + ")");
  }
}

void parse_limits(const Reader& r, const toml::table& t, C2Config& c) {
  r.only_keys(t, "limits", {"max_devices", "max_monitors"});
  with(t, "max_devices", [&](const toml::node& v) { c.limits.max_devices = static_cast<std::size_t>(r.int_of(v, "limits.max_devices", 1, 1'000'000)); });
  with(t, "max_monitors", [&](const toml::node& v) { c.limits.max_monitors = static_cast<std::size_t>(r.int_of(v, "limits.max_monitors", 1, 100'000)); });
}

void parse_control(const Reader& r, const toml::table& t, C2Config& c, std::optional<toml::source_region>& socket_at) {
  r.only_keys(t, "control", {"socket", "max_clients", "request_max_bytes", "idle_timeout_ms"});
  with(t, "socket", [&](const toml::node& v) {
    c.control.socket = r.path_of(v, "control.socket");
    socket_at = v.source();
  });
  with(t, "max_clients", [&](const toml::node& v) { c.control.max_clients = static_cast<std::size_t>(r.int_of(v, "control.max_clients", 1, 64)); });
  with(t, "request_max_bytes", [&](const toml::node& v) {
    c.control.request_max_bytes = static_cast<std::size_t>(r.int_of(v, "control.request_max_bytes", 1024, 1 << 20));
  });
  with(t, "idle_timeout_ms", [&](const toml::node& v) {
    c.control.idle_timeout = std::chrono::milliseconds(r.int_of(v, "control.idle_timeout_ms", 1000, 3'600'000));
  });
}

void parse_metrics(const Reader& r, const toml::table& t, C2Config& c) {
  r.only_keys(t, "metrics", {"listen"});
  with(t, "listen", [&](const toml::node& v) {
    const std::string s = r.string_of(v, "metrics.listen");
    const auto hp = common::parse_host_port(s);
    if (!hp) {
      r.fail(v.source(), "metrics.listen: expected \"HOST:PORT\" or \"[IPV6]:PORT\" with PORT 1..65535, got " + c2_quoted(s));
    }
    c.metrics.listen = *hp;
  });
}

}  // namespace

const char* to_string(LogLevel l) noexcept {
  switch (l) {
    case LogLevel::trace: return "trace";
    case LogLevel::debug: return "debug";
    case LogLevel::info: return "info";
    case LogLevel::warn: return "warn";
    case LogLevel::error: return "error";
  }
  return "?";
}

RegistryLimits C2Config::registry_limits() const {
  RegistryLimits l;
  l.max_devices = limits.max_devices;
  l.max_monitors = limits.max_monitors;
  l.pending_max = join.pending_max;
  l.join_code_attempts = join.code_attempts;
  l.join_code_lifetime_ms = static_cast<std::uint64_t>(std::chrono::duration_cast<Ms>(join.code_lifetime).count());
  l.outbox_max_per_device = commands.outbox_max_per_device;
  l.outbox_max_total = commands.outbox_max_total;
  l.telemetry_per_device = telemetry.retention_per_device;
  return l;
}

C2Config parse_c2_config(const std::string& text, const std::string& name, const std::string& base_dir) {
  const Reader r(name, base_dir);
  toml::table root;
  try {
    root = toml::parse(std::string_view(text), std::string_view(name));
  } catch (const toml::parse_error& e) {
    r.fail_at(e.source().begin.line, std::string(e.description()));
  }
  static constexpr std::string_view kSections[] = {"c2",        "broker", "enrolment", "commands", "join",
                                                   "telemetry", "queue",  "limits",    "control",  "metrics"};
  for (auto&& [k, v] : root) {
    if (std::find(std::begin(kSections), std::end(kSections), k.str()) == std::end(kSections)) {
      r.fail(k.source(), "unknown key " + c2_quoted(k.str()) +
                             " (expected [c2], [broker], [enrolment], [commands], [join], [telemetry], "
                             "[queue], [limits], [control], [metrics])");
    }
    r.table_of(v, k.str());
  }
  C2Config c;
  bool has_state_dir = false;
  std::optional<toml::source_region> socket_at;
  // Sections in a fixed order, so errors come out in a predictable order.
  if (const auto* t = root.get_as<toml::table>("c2")) parse_c2_section(r, *t, c, has_state_dir);
  if (!has_state_dir) r.fail_at(1, "[c2] state_dir is required (the C2's identity, state and registry live there)");
  const auto* broker = root.get_as<toml::table>("broker");
  if (broker == nullptr) r.fail_at(1, "[broker] is required (host, port, ca, cert, key)");
  parse_broker(r, *broker, c);
  if (const auto* t = root.get_as<toml::table>("enrolment")) parse_enrolment(r, *t, c);
  if (const auto* t = root.get_as<toml::table>("commands")) parse_commands(r, *t, c);
  if (const auto* t = root.get_as<toml::table>("join")) parse_join(r, *t, c);
  if (const auto* t = root.get_as<toml::table>("telemetry")) parse_telemetry(r, *t, c);
  if (const auto* t = root.get_as<toml::table>("queue")) parse_queue(r, *t, c);
  if (const auto* t = root.get_as<toml::table>("limits")) parse_limits(r, *t, c);
  if (const auto* t = root.get_as<toml::table>("control")) parse_control(r, *t, c, socket_at);
  if (const auto* t = root.get_as<toml::table>("metrics")) parse_metrics(r, *t, c);
  if (c.control.socket.empty()) c.control.socket = c.c2.state_dir / "control.sock";
  if (c.control.socket.native().size() > C2Config::kMaxSocketPath) {
    const std::string msg = "control.socket: the path " + c2_quoted(c.control.socket.native()) + " is longer than " +
                            std::to_string(C2Config::kMaxSocketPath) + " bytes (a Unix socket's limit)";
    if (socket_at) r.fail(*socket_at, msg);
    r.fail_at(1, msg + "; set [control] socket to a shorter path");
  }
  if (c.join.pending_max > c.limits.max_devices) {
    r.fail_at(1, "join.pending_max (" + std::to_string(c.join.pending_max) + ") is above limits.max_devices (" +
                     std::to_string(c.limits.max_devices) + ")");
  }
  return c;
}

C2Config load_c2_config(const std::filesystem::path& path) {
  constexpr std::size_t kMaxConfigBytes = 1 << 20;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path.string() + ": cannot open the file");
  std::string text(kMaxConfigBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) throw ConfigError(path.string() + ": cannot read the file");
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kMaxConfigBytes) throw ConfigError(path.string() + ": longer than 1 MiB");
  return parse_c2_config(text, path.string(), path.parent_path().string());
}

}  // namespace pqot::srup_c2
