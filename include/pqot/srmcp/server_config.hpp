// The server's settings (docs/srmcpd.md): what pqot::srmcp::Server runs with. srmcpd loads them
// from TOML (config.hpp, library pqot_srmcp_config); a program embedding the server may fill them
// in code, without the loader.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "pqot/srmcp/wire.hpp"

namespace pqot::srmcp {

struct ServerConfig {
  std::string listen_host = "127.0.0.1";
  std::uint16_t listen_port = 4843;
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
  std::vector<std::string> allow;  ///< allowed client identities; empty = any the CA signed
  std::uint16_t data_port_min = 28000;  // below Linux's ephemeral range (32768-60999)
  std::uint16_t data_port_max = 28999;
  std::vector<KemId> kem_preference{KemId::ml_kem_768, KemId::ml_kem_1024, KemId::x_wing};
  /// Body encodings accepted, in preference order (§4): compact first, JSON for older clients.
  std::vector<BodyEncoding> body_encodings{BodyEncoding::compact, BodyEncoding::json};
  std::chrono::milliseconds handshake_deadline{5000};
  std::chrono::milliseconds offer_lifetime{5000};
  std::chrono::milliseconds idle_frame_deadline{10000};
  // Denial-of-service bounds (docs/srmcpd.md, "Limits and denial of service").
  std::uint32_t max_sessions = 1000;              ///< sessions whose client certificate verified
  std::uint32_t max_sessions_per_identity = 64;   ///< ... per client identity
  std::uint32_t max_handshakes = 256;             ///< handshakes in progress (TCP accepted, session not yet open)
  std::uint32_t max_handshakes_per_source = 32;   ///< ... per source IPv4 address or IPv6 /64
  std::uint32_t max_pending_links = 64;           ///< link offers not yet bound, server-wide
  std::uint32_t max_pending_links_per_identity = 16;
  std::uint32_t max_queued_bytes = 4u << 20;      ///< per session: reading pauses while more is queued
  std::uint32_t max_queued_bytes_per_link = 1u << 20;  ///< a link over this gets no new frames while another has room
  std::chrono::milliseconds send_stall_timeout{10000};  ///< reading paused this long for the queue: session closed
  std::uint32_t max_partial_bytes = 2u << 20;     ///< per session, partial segmented messages
  std::uint32_t max_partial_bytes_total = 64u << 20;  ///< server-wide, partial segmented messages
  std::uint32_t max_partial_bytes_per_identity = 16u << 20;  ///< over all sessions of one client identity
  std::uint32_t max_subscriptions = 16;           ///< per session
  std::uint32_t max_subscribed_ids = 1024;        ///< per session, over all its subscriptions
  std::uint32_t max_backend_ops = 256;            ///< per session: node operations waiting for devices
  std::chrono::milliseconds min_backend_sample{100};  ///< subscriptions sample device nodes at most this often
  std::chrono::milliseconds link_close_grace{2000};   ///< §7: a link closed from another link is still read this long
  /// §2, §7: lifetime of a session's data-link tickets (a new one at half of it); at least 2 s.
  /// Not an srmcpd setting (docs/srmcp.md §12 fixes it); tests shorten it.
  std::chrono::seconds link_ticket_lifetime{600};
  std::uint32_t key_update_messages = 1u << 20;
  std::uint32_t key_update_seconds = 3600;
  std::uint32_t timestamp_window_ms = 30000;
  Limits limits;
  unsigned threads = 2;
  std::string log_level = "info";  ///< trace, debug, info, warn, error
};

}  // namespace pqot::srmcp
