// srmcpd configuration: [server] and [limits] (docs/srmcpd.md), and which settings need a restart.
#include <algorithm>
#include <charconv>
#include <limits>
#include <optional>

#include "pqot/common/host_port.hpp"
#include "sections.hpp"

namespace pqot::srmcp {
namespace config {
namespace {

std::optional<std::uint16_t> port_of(std::string_view s) {
  unsigned v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size() || v < 1 || v > 65535) return std::nullopt;
  return static_cast<std::uint16_t>(v);
}

void parse_listen(const Reader& r, const toml::node& v, ServerConfig& server) {
  const std::string s = r.string_of(v, "server.listen");
  const auto hp = common::parse_host_port(s);
  if (!hp) {
    r.fail(v.source(),
         "server.listen: expected \"HOST:PORT\" or \"[IPV6]:PORT\" with PORT 1..65535, got " +
             in_quotes(s));
  }
  server.listen_host = hp->host;
  server.listen_port = hp->port;
}

void parse_data_ports(const Reader& r, const toml::node& v, ServerConfig& server) {
  const std::string s = r.string_of(v, "server.data_ports");
  const auto dash = s.find('-');
  const auto lo = port_of(std::string_view(s).substr(0, dash));
  const auto hi = dash == std::string::npos ? lo : port_of(std::string_view(s).substr(dash + 1));
  if (!lo || !hi || *lo > *hi) {
    r.fail(v.source(),
         "server.data_ports: expected \"MIN-MAX\" with 1 <= MIN <= MAX <= 65535, got " +
             in_quotes(s));
  }
  server.data_port_min = *lo;
  server.data_port_max = *hi;
}

void parse_kems(const Reader& r, const toml::node& v, ServerConfig& s) {
  const auto* a = v.as_array();
  if (!a || a->empty()) r.fail(v.source(), "server.kems must be a non-empty array of KEM names");
  std::vector<KemId> kems;
  for (const auto& e : *a) {
    const std::string name = r.string_of(e, "server.kems entries");
    const auto id = kem_id(name);
    if (!id)
      r.fail(e.source(),
           "server.kems: unknown KEM " + in_quotes(name) + " (ML-KEM-768, ML-KEM-1024, X-Wing)");
    if (std::find(kems.begin(), kems.end(), *id) != kems.end()) {
      r.fail(e.source(), "server.kems: " + in_quotes(name) + " listed twice");
    }
    kems.push_back(*id);
  }
  s.kem_preference = std::move(kems);
}

void parse_body_encodings(const Reader& r, const toml::node& v, ServerConfig& s) {
  const auto* a = v.as_array();
  if (!a || a->empty()) r.fail(v.source(), "server.body_encodings must be a non-empty array of encoding names");
  std::vector<BodyEncoding> encodings;
  for (const auto& e : *a) {
    const std::string name = r.string_of(e, "server.body_encodings entries");
    const auto enc = parse_encoding_name(name);
    if (!enc) r.fail(e.source(), "server.body_encodings: unknown encoding " + in_quotes(name) + " (compact, json)");
    if (std::find(encodings.begin(), encodings.end(), *enc) != encodings.end()) {
      r.fail(e.source(), "server.body_encodings: " + in_quotes(name) + " listed twice");
    }
    encodings.push_back(*enc);
  }
  s.body_encodings = std::move(encodings);
}

}  // namespace

void parse_server(const Reader& r, const toml::table& t, ServerConfig& s) {
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
          {"max_partial_bytes_per_identity",
           {65'536, u32max, [&](std::int64_t v) { s.max_partial_bytes_per_identity = static_cast<std::uint32_t>(v); }}},
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
      set(r.int_of(v, what, lo, hi));
    } else if (k == "listen") {
      parse_listen(r, v, s);
    } else if (k == "ca") {
      s.ca_file = r.path_of(v, what);
    } else if (k == "cert") {
      s.cert_file = r.path_of(v, what);
    } else if (k == "key") {
      s.key_file = r.path_of(v, what);
    } else if (k == "allow") {
      s.allow = r.strings_of(v, what);
    } else if (k == "data_ports") {
      parse_data_ports(r, v, s);
    } else if (k == "kems") {
      parse_kems(r, v, s);
    } else if (k == "body_encodings") {
      parse_body_encodings(r, v, s);
    } else if (k == "log_level") {
      s.log_level = r.string_of(v, what);
      static const std::vector<std::string> levels = {"trace", "debug", "info", "warn", "error"};
      if (std::find(levels.begin(), levels.end(), s.log_level) == levels.end()) {
        r.fail(v.source(), what + ": unknown level " + in_quotes(s.log_level) +
                             " (trace, debug, info, warn, error)");
      }
    } else {
      r.fail(key.source(), "unknown key " + in_quotes(what));
    }
  }
}

void parse_limits(const Reader& r, const toml::table& t, Limits& l) {
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
           {1, 65'535,
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
    if (it == ints.end()) r.fail(key.source(), "unknown key " + in_quotes("limits." + k));
    const auto& [lo, hi, set] = it->second;
    set(r.int_of(v, "limits." + k, lo, hi));
  }
}

}  // namespace config

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
  differ("server.body_encodings", a.body_encodings != b.body_encodings);
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
  differ("server.max_partial_bytes_per_identity", a.max_partial_bytes_per_identity != b.max_partial_bytes_per_identity);
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

}  // namespace pqot::srmcp
