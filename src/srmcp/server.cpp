// SRMCP v2 server: accepting control connections, admission before authentication, and the
// public Server API. Section numbers refer to docs/srmcp.md; the limits are in docs/srmcpd.md,
// "Limits and denial of service". The sessions themselves: server_session.cpp and its siblings.
#include "pqot/srmcp/server.hpp"

#include "server_impl.hpp"

namespace pqot::srmcp {

namespace {

constexpr std::array<std::string_view, kRefusalKinds> kRefusalNames = {
    "handshakes_total", "handshakes_per_source", "handshake_evicted", "handshake_deadline",
    "tls_failed",       "hello_failed",          "not_allowed",       "sessions_total",
    "sessions_per_identity", "accept_error",     "send_backlog",      "subscriptions",
    "offers_per_identity", "link_bind_failed",   "segments_dropped",  "partial_expired",
    "protocol_violation", "internal_error",
};

std::size_t type_slot(MessageType t) {
  for (std::size_t i = 0; i < kCountedTypes.size(); ++i) {
    if (kCountedTypes[i].first == t) return i;
  }
  return kCountedTypes.size();
}

}  // namespace

std::string_view refusal_name(Refusal r) { return kRefusalNames.at(static_cast<std::size_t>(r)); }

std::string hex64(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string source_key(const asio::ip::address& a) {
  if (a.is_v6()) {
    const auto v6 = a.to_v6();
    if (v6.is_v4_mapped()) return asio::ip::make_address_v4(asio::ip::v4_mapped, v6).to_string();
    auto bytes = v6.to_bytes();
    std::fill(bytes.begin() + 8, bytes.end(), 0);  // one /64 is one source
    return asio::ip::address_v6(bytes).to_string() + "/64";
  }
  return a.to_string();
}

// ---- Server::Impl --------------------------------------------------------------------------------

Server::Impl::Impl(asio::io_context& io_, ServerConfig config_, std::shared_ptr<NodeStore> nodes_in,
                   std::vector<asio::io_context*> contexts_)
    : io(io_),
      contexts(std::move(contexts_)),
      config(std::move(config_)),
      acceptor(io_),
      handshakes(std::make_shared<common::HandshakeSlots>(config.max_handshakes, config.max_handshakes_per_source)),
      partial_budget(std::make_shared<ReassemblyBudget>(config.max_partial_bytes_total)),
      nodes_(std::move(nodes_in)) {
  if (contexts.empty()) contexts.push_back(&io);
}

std::shared_ptr<NodeStore> Server::Impl::nodes() {
  std::lock_guard lock(nodes_mutex_);
  return nodes_;
}

void Server::Impl::set_nodes(std::shared_ptr<NodeStore> n) {
  std::lock_guard lock(nodes_mutex_);
  nodes_ = std::move(n);
  nodes_generation.fetch_add(1, std::memory_order_release);
}

void Server::Impl::count_response(Status s) {
  responses_by_status[std::min<std::size_t>(static_cast<std::size_t>(s), kStatusSlots - 1)].fetch_add(
      1, std::memory_order_relaxed);
}

void Server::Impl::count_request(MessageType t, Clock::time_point arrived) {
  const auto slot = type_slot(t);
  requests_by_type[slot].fetch_add(1, std::memory_order_relaxed);
  latency_by_type[slot].observe(Clock::now() - arrived);
}

void Server::Impl::refuse(Refusal r, std::string_view peer, std::string_view what) {
  refusals[static_cast<std::size_t>(r)].fetch_add(1, std::memory_order_relaxed);
  const auto permit = refusal_logs[static_cast<std::size_t>(r)].allow();
  if (!permit.log) return;
  if (permit.suppressed > 0) {
    spdlog::warn("{} more refusals ({}) not logged (rate limit; every one is counted in the metrics)",
                 permit.suppressed, refusal_name(r));
  }
  spdlog::warn("{}: refused ({}): {}", peer, refusal_name(r), common::printable(what));
}

// Entries of identities without a session are dropped as the map is walked: it holds at most the
// identities with live sessions plus those that left since the last call.
std::shared_ptr<ReassemblyBudget> Server::Impl::partial_budget_for(const std::string& identity) {
  std::lock_guard lock(identity_budgets_mutex);
  std::erase_if(identity_budgets, [](const auto& entry) { return entry.second.expired(); });
  if (auto live = identity_budgets[identity].lock()) return live;
  auto budget = std::make_shared<ReassemblyBudget>(config.max_partial_bytes_per_identity, partial_budget);
  identity_budgets[identity] = budget;
  return budget;
}

std::optional<Refusal> Server::Impl::try_establish(const std::string& identity) {
  std::uint32_t n = established.load();
  do {
    if (n >= config.max_sessions) return Refusal::sessions_total;
  } while (!established.compare_exchange_weak(n, n + 1));
  if (!sessions_by_identity.try_acquire(identity, config.max_sessions_per_identity)) {
    --established;
    return Refusal::sessions_per_identity;
  }
  return std::nullopt;
}

void Server::Impl::release_established(const std::string& identity) {
  sessions_by_identity.release(identity);
  --established;
}

// Accepts connections for as long as the server runs. When accept() fails (out of descriptors:
// EMFILE, ENFILE; out of memory) the listener waits before trying again, 10 ms doubling up to 1 s,
// instead of spinning on a connection it cannot take.
asio::awaitable<void> Server::Impl::accept_loop() {
  auto self = shared_from_this();
  auto backoff = std::chrono::milliseconds(0);
  asio::steady_timer pause(io);
  while (!stopping) {
    // Accepted on the listener's own context: while the accept waits, this frame holds nothing of
    // a session context (whose owner may destroy it first at shutdown).
    Tcp::socket accepted(io);
    asio::error_code ec;
    co_await acceptor.async_accept(accepted, asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      if (stopping || ec == asio::error::operation_aborted) break;
      // Out of a resource: wait before trying again. Anything else (a connection that failed
      // between SYN and accept: ECONNABORTED, EPROTO, ...) concerns that connection only.
      const bool resource = ec == asio::error::no_descriptors || ec == std::errc::too_many_files_open_in_system ||
                            ec == asio::error::no_buffer_space || ec == asio::error::no_memory;
      if (!resource) {
        refuse(Refusal::accept_error, "listener", "accept failed: " + ec.message());
        continue;
      }
      backoff = std::clamp(backoff * 2, std::chrono::milliseconds(10), std::chrono::milliseconds(1000));
      refuse(Refusal::accept_error, "listener",
             "accept failed: " + ec.message() + "; next try in " + std::to_string(backoff.count()) + " ms");
      pause.expires_after(backoff);
      co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      continue;
    }
    // One success does not end a shortage: the wait shrinks by half, not to nothing.
    backoff = backoff < std::chrono::milliseconds(20) ? std::chrono::milliseconds(0) : backoff / 2;
    // A session lives on one io_context, on its own strand; with one thread per context (srmcpd),
    // its work never crosses threads. The descriptor moves to a socket of that strand.
    auto strand = asio::make_strand(*contexts[next_context++ % contexts.size()]);
    Tcp::socket socket(strand);
    const auto protocol = accepted.local_endpoint(ec).protocol();
    if (ec) continue;  // already gone
    socket.assign(protocol, accepted.release(ec), ec);
    if (ec) continue;
    admit(std::move(socket), strand);
  }
}

// Before anything else, a new connection needs a handshake slot: within max_handshakes in total
// and max_handshakes_per_source for its source. Refused connections are closed at once.
void Server::Impl::admit(Tcp::socket socket, asio::strand<asio::io_context::executor_type> strand) {
  asio::error_code ec;
  const auto remote = socket.remote_endpoint(ec);
  if (ec) return;  // already gone
  const std::string peer = remote.address().to_string() + ":" + std::to_string(remote.port());
  const std::string source = source_key(remote.address());
  auto session = std::make_shared<ServerSession>(shared_from_this(), strand, peer, source);
  auto [verdict, ticket] = handshakes->admit(source, [weak = std::weak_ptr<ServerSession>(session), this, peer] {
    refuse(Refusal::handshake_evicted, peer, "handshake in progress closed to make room for another source");
    if (auto s = weak.lock()) s->evict();
  });
  if (verdict == common::HandshakeSlots::Verdict::source_full ||
      verdict == common::HandshakeSlots::Verdict::total_full) {
    const bool per_source = verdict == common::HandshakeSlots::Verdict::source_full;
    refuse(per_source ? Refusal::handshakes_per_source : Refusal::handshakes_total, peer,
           per_source ? "too many handshakes in progress from this source; closed"
                      : "too many handshakes in progress; closed");
    socket.close(ec);
    return;
  }
  socket.set_option(Tcp::no_delay(true), ec);  // requests are small: never wait for Nagle
  session->hold(std::move(ticket));
  {
    std::lock_guard lock(mutex);
    if (stopping) return;  // stop() has already shut down the sessions it saw
    sessions.insert(session);
  }
  auto self = shared_from_this();
  // However run() ends (returned or threw), the session is closed and forgotten; the completion
  // runs on the session's strand.
  asio::co_spawn(strand, session->run(std::move(socket)), [self, session](std::exception_ptr e) {
    if (e) {
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& ex) {
        self->refuse(Refusal::internal_error, "session", std::string("session ended on an error: ") + ex.what());
      } catch (...) {
        self->refuse(Refusal::internal_error, "session", "session ended on an unknown error");
      }
    }
    session->finished();
    self->forget(session);
  });
}

void Server::Impl::forget(const std::shared_ptr<ServerSession>& s) {
  std::lock_guard lock(mutex);
  sessions.erase(s);
}

std::optional<std::uint16_t> Server::Impl::reserve_port(std::mt19937_64& rng) {
  const std::uint32_t span = config.data_port_max - config.data_port_min + 1u;
  std::lock_guard lock(mutex);
  for (int attempt = 0; attempt < 64; ++attempt) {
    const auto port = static_cast<std::uint16_t>(config.data_port_min + rng() % span);
    if (used_ports.insert(port).second) return port;
  }
  return std::nullopt;
}

void Server::Impl::release_port(std::uint16_t port) {
  std::lock_guard lock(mutex);
  used_ports.erase(port);
}

// ---- Server --------------------------------------------------------------------------------------

void Server::set_nodes(std::shared_ptr<NodeStore> nodes) { impl_->set_nodes(std::move(nodes)); }

Server::Server(asio::io_context& io, ServerConfig config, std::shared_ptr<NodeStore> nodes,
               std::vector<asio::io_context*> session_contexts)
    : impl_(std::make_shared<Impl>(io, std::move(config), std::move(nodes), std::move(session_contexts))) {}

Server::~Server() {
  stop();
  // Sessions hold the Impl and the Impl's set holds them: a session whose coroutine never ran to
  // its end (its io_context stopped first) would keep both alive. The set lets go here.
  std::lock_guard lock(impl_->mutex);
  impl_->sessions.clear();
}

void Server::start() {
  auto& cfg = impl_->config;
  impl_->tls.emplace(channel::make_server_tls(TlsFiles{cfg.ca_file, cfg.cert_file, cfg.key_file}));
  cfg.link_ticket_lifetime = std::max(cfg.link_ticket_lifetime, std::chrono::seconds(2));
  channel::enable_scoped_resumption(*impl_->tls, cfg.link_ticket_lifetime);  // data links only (§7)
  asio::error_code ec;
  const auto address = asio::ip::make_address(cfg.listen_host, ec);
  if (ec) throw std::runtime_error("listen address '" + cfg.listen_host + "' is not an IP address");
  const Tcp::endpoint ep(address, cfg.listen_port);
  try {
    impl_->acceptor.open(ep.protocol());
    impl_->acceptor.set_option(Tcp::acceptor::reuse_address(true));
    impl_->acceptor.bind(ep);
    impl_->acceptor.listen(asio::socket_base::max_listen_connections);
  } catch (const std::system_error& e) {
    throw std::runtime_error("cannot listen on " + cfg.listen_host + ":" + std::to_string(cfg.listen_port) + ": " +
                             e.what());
  }
  asio::co_spawn(impl_->io, impl_->accept_loop(), asio::detached);
}

void Server::stop() {
  if (!impl_ || impl_->stopping.exchange(true)) return;
  asio::post(impl_->io, [impl = impl_] {
    asio::error_code ec;
    impl->acceptor.close(ec);
  });
  std::lock_guard lock(impl_->mutex);
  for (const auto& s : impl_->sessions) s->shutdown();
}

std::uint16_t Server::port() const {
  asio::error_code ec;
  return impl_->acceptor.local_endpoint(ec).port();
}

ServerStats Server::stats() const {
  ServerStats s;
  s.sessions_total = impl_->sessions_total;
  s.sessions_compact = impl_->sessions_compact;
  s.sessions_json = impl_->sessions_json;
  s.sessions_active = impl_->established.load();
  s.handshakes_in_progress = impl_->handshakes->in_progress();
  s.partial_bytes = impl_->partial_budget->used();
  s.links_active = impl_->links_active;
  s.requests = impl_->requests;
  s.errors = impl_->errors;
  s.closed_on_error = impl_->closed_on_error;
  s.link_handshakes_resumed = impl_->link_handshakes_resumed;
  s.link_handshakes_full = impl_->link_handshakes_full;
  s.link_tickets_refused = impl_->link_tickets_refused;
  for (std::size_t i = 0; i < kStatusSlots; ++i) s.responses_by_status[i] = impl_->responses_by_status[i].load();
  for (std::size_t i = 0; i < kRefusalKinds; ++i) s.refusals[i] = impl_->refusals[i].load();
  for (std::size_t i = 0; i < kTypeSlots; ++i) {
    s.by_type.push_back(RequestTypeStats{i < kCountedTypes.size() ? kCountedTypes[i].second : "other",
                                         impl_->requests_by_type[i].load(), impl_->latency_by_type[i].snapshot()});
  }
  return s;
}

}  // namespace pqot::srmcp
