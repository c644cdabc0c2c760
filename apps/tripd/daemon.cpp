// tripd's daemon: start and stop, reflecting and filtering, the paths' UDP sockets
// (docs/trip.md §2, §7, §8; docs/tripd.md).
#include "daemon_internal.hpp"
#include "pqot/crypto/random.hpp"

namespace pqot::tripd {

using asio::use_awaitable;

namespace {

std::uint64_t new_boot() {
  std::uint64_t b = 0;
  while (b == 0) b = crypto::random_u64();
  return b;
}

}  // namespace

// A UDP socket bound to `ep`, non-blocking (a full buffer drops a copy; nothing waits).
void open_udp(udp::socket& s, const udp::endpoint& ep, const std::string& what) {
  std::error_code ec;
  s.open(ep.protocol(), ec);
  if (!ec) s.bind(ep, ec);
  if (!ec) s.non_blocking(true, ec);
  if (ec) throw std::runtime_error("cannot bind UDP " + ep.address().to_string() + ":" + std::to_string(ep.port()) + " for " + what + ": " + ec.message());
}

asio::ip::address resolve_address(asio::io_context& io, const common::HostPort& hp, const std::string& what) {
  std::error_code ec;
  const auto a = asio::ip::make_address(hp.host, ec);
  if (!ec) return a;
  udp::resolver r(io);
  const auto results = r.resolve(hp.host, std::to_string(hp.port), ec);
  if (ec || results.empty()) throw std::runtime_error(what + ": cannot resolve '" + hp.host + "': " + ec.message());
  return results.begin()->endpoint().address();
}

Daemon::Daemon(asio::io_context& io, TripdConfig config)
    : io_(io), config_(std::move(config)), boot_(new_boot()), seal_buffer_(65536), open_buffer_(65536) {}

Daemon::~Daemon() { stop(); }

void Daemon::start() {
  if (config_.identity) {
    const channel::TlsFiles files{config_.identity->ca, config_.identity->cert, config_.identity->key};
    server_tls_ = std::make_unique<asio::ssl::context>(channel::make_server_tls(files));
    client_tls_ = std::make_unique<asio::ssl::context>(channel::make_client_tls(files));
  }
  for (const PathConfig& pc : config_.paths) {
    paths_.push_back(make_path(config_, pc));
    if (!pc.is_client()) bind_path(*paths_.back());
  }
  for (const FlowConfig& fc : config_.flows) {
    if (fc.reflects()) {
      auto f = std::make_unique<ReflectFlow>(io_, fc);
      for (const std::string& a : fc.allow_from) f->allow.push_back(resolve_address(io_, {a, 1}, "flow " + std::to_string(fc.id) + " allow_from"));
      open_udp(f->socket, udp::endpoint(resolve_address(io_, *fc.reflect, "flow reflect"), fc.reflect->port),
               "flow " + std::to_string(fc.id));
      reflect_flows_.push_back(std::move(f));
    } else {
      auto f = std::make_unique<FilterFlow>(io_, fc, config_.limits.session_grace);
      f->destination = udp::endpoint(resolve_address(io_, *fc.deliver, "flow deliver"), fc.deliver->port);
      const udp::endpoint from = fc.deliver_from
                                     ? udp::endpoint(resolve_address(io_, *fc.deliver_from, "flow deliver_from"), fc.deliver_from->port)
                                     : udp::endpoint(f->destination.protocol(), 0);
      open_udp(f->socket, from, "flow " + std::to_string(fc.id) + " delivery");
      filter_flows_.emplace(fc.id, std::move(f));
    }
  }
  route_flows();
  for (auto& p : paths_) start_path(*p);
  for (auto& f : reflect_flows_) {
    spawn(flow_receive(*f));
  }
  spdlog::info("tripd started (boot {:016x}): {} paths, {} flows reflected, {} filtered", boot_, paths_.size(),
               reflect_flows_.size(), filter_flows_.size());
}

// Each reflected flow goes on the running paths its configuration names.
void Daemon::route_flows() {
  for (auto& f : reflect_flows_) {
    f->paths.clear();
    for (const PathConfig* pc : config_.paths_of(f->config)) {
      for (auto& p : paths_) {
        if (p->config.name == pc->name) f->paths.push_back(p.get());
      }
    }
  }
}

void Daemon::spawn(asio::awaitable<void> task, std::shared_ptr<void> keep) {
  ++tasks_;
  asio::co_spawn(io_, std::move(task), [this, keep = std::move(keep)](std::exception_ptr e) {
    --tasks_;
    if (!e) return;
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      spdlog::error("tripd: a task ended with an error: {}", x.what());
    }
  });
}

bool Daemon::ending(const Path& p) const noexcept { return stopped_ || p.stopping; }

void Daemon::stop() {
  if (stopped_) return;
  stopped_ = true;
  std::error_code ec;
  for (auto& p : paths_) {
    for (auto& weak : p->connections) {
      if (auto c = weak.lock()) c->close(trip::CloseCode::shutdown, "tripd is stopping");
    }
    p->connections.clear();
    p->keepalive_timer.cancel();
    p->retry_timer.cancel();
    p->grace_timer.cancel();
    p->previous.reset();  // its keys wiped now
    if (p->acceptor) p->acceptor->close(ec);
    if (p->connecting) p->connecting->abort();
    p->data.close(ec);
  }
  for (auto& f : reflect_flows_) f->socket.close(ec);
  for (auto& [id, f] : filter_flows_) f->socket.close(ec);
}

// ---- reflecting -------------------------------------------------------------------------------

asio::awaitable<void> Daemon::flow_receive(ReflectFlow& f) {
  std::vector<std::uint8_t> buf(65536);
  udp::endpoint from;
  for (;;) {
    std::size_t n = 0;
    try {
      n = co_await f.socket.async_receive_from(asio::buffer(buf), from, use_awaitable);
    } catch (const std::system_error& e) {
      if (stopped_) co_return;
      if (e.code() == asio::error::operation_aborted) co_return;
      continue;  // ICMP errors of earlier sends surface here: not ours to stop on
    }
    if (!f.allow.empty() && std::find(f.allow.begin(), f.allow.end(), from.address()) == f.allow.end()) {
      ++f.counters.refused_source;
      if (f.log_limit.allow().log) spdlog::warn("flow {}: datagram from {} refused (not in allow_from)", f.config.id, from.address().to_string());
      continue;
    }
    if (n > config_.limits.max_datagram) {
      ++f.counters.oversized;
      if (f.log_limit.allow().log) spdlog::warn("flow {}: a {}-byte datagram is over max_datagram ({}): dropped", f.config.id, n, config_.limits.max_datagram);
      continue;
    }
    reflect(f, crypto::ByteView(buf.data(), n));
  }
}

void Daemon::reflect(ReflectFlow& f, crypto::ByteView payload) {
  ++f.counters.taken;
  const std::uint64_t label = f.next_label++;
  std::vector<std::uint8_t>& out = seal_buffer_;
  const auto now = Clock::now();
  bool any = false;
  for (Path* p : f.paths) {
    if (!p->current || !p->current->peer || !p->current->session->reflects(f.config.id)) continue;
    const std::size_t n = p->current->session->seal_data(f.config.id, label, payload, out, now);
    if (send_on(*p, crypto::ByteView(out.data(), n))) {
      ++p->counters.sent;
      any = true;
    }
  }
  if (!any) ++f.counters.no_path;
}

bool Daemon::send_on(Path& p, crypto::ByteView datagram) {
  std::error_code ec;
  p.data.send_to(asio::buffer(datagram.data(), datagram.size()), *p.current->peer, 0, ec);
  if (ec) {
    ++p.counters.send_errors;
    return false;
  }
  return true;
}

// ---- the paths' UDP sockets: filtering -----------------------------------------------------------

asio::awaitable<void> Daemon::path_receive(Path& p) {
  std::vector<std::uint8_t> buf(65536);
  udp::endpoint from;
  for (;;) {
    std::size_t n = 0;
    try {
      n = co_await p.data.async_receive_from(asio::buffer(buf), from, use_awaitable);
    } catch (const std::system_error& e) {
      if (ending(p) || e.code() == asio::error::operation_aborted || e.code() == asio::error::bad_descriptor) co_return;
      continue;  // an ICMP error of an earlier send (the far side not yet listening)
    }
    on_datagram(p, crypto::ByteView(buf.data(), n), from);
  }
}

void Daemon::on_datagram(Path& p, crypto::ByteView dg, const udp::endpoint& from) {
  const auto h = trip::parse_header(dg);
  if (!h) {
    ++p.counters.malformed;
    return;
  }
  const auto now = Clock::now();
  if (p.previous && now - p.previous->retired > config_.limits.session_grace) p.previous.reset();
  LiveSession* live = nullptr;
  if (p.current && p.current->session->number() == h->session) live = &*p.current;
  if (!live && p.previous && p.previous->session->number() == h->session) live = &*p.previous;
  if (!live) {
    ++p.counters.unknown_session;
    return;
  }
  std::vector<std::uint8_t>& plain = open_buffer_;
  trip::DropReason why{};
  const auto opened = live->session->open(*h, dg, plain, now, why);
  if (!opened) {
    switch (why) {
      case trip::DropReason::unknown_flow: ++p.counters.unknown_flow; break;
      case trip::DropReason::auth: ++p.counters.auth_failures; break;
      default: ++p.counters.malformed; break;
    }
    if (p.log_limit.allow().log) {
      spdlog::warn("path {}: datagram from {} dropped: {}", p.config.name, from.address().to_string(), trip::drop_reason_name(why));
    }
    return;
  }
  if (opened->type == trip::DatagramType::keepalive) {
    const auto body = trip::decode_keepalive(crypto::ByteView(plain.data(), opened->size));
    if (body && live->session->on_keepalive(opened->counter, *body, now)) {
      ++p.counters.keepalives_received;  // new ones only: a replay is not counted
      if (live->session->role() == trip::SessionRole::server) live->peer = from;  // docs/trip.md §2.1 step 6
    }
    return;
  }
  ++p.counters.received;
  const auto it = filter_flows_.find(opened->flow);
  if (it == filter_flows_.end()) return;  // agreed in the handshake, so not reached
  FilterFlow& f = *it->second;
  const trip::FilterVerdict v = f.filter.accept(live->session->peer_boot(), opened->counter, now);
  switch (v) {
    case trip::FilterVerdict::deliver:
    case trip::FilterVerdict::deliver_late: {
      ++p.counters.won;
      ++f.counters.delivered;
      if (v == trip::FilterVerdict::deliver_late) ++f.counters.late;
      std::error_code ec;
      f.socket.send_to(asio::buffer(plain.data(), opened->size), f.destination, 0, ec);
      if (ec) ++f.counters.deliver_errors;
      break;
    }
    case trip::FilterVerdict::duplicate:
      ++p.counters.duplicates;
      ++f.counters.duplicates;
      break;
    case trip::FilterVerdict::too_old: ++f.counters.too_old; break;
    case trip::FilterVerdict::stale_boot: ++f.counters.stale_boot; break;
  }
}

// ---- status -----------------------------------------------------------------------------------

std::vector<PathStatus> Daemon::paths() const {
  std::vector<PathStatus> out;
  for (const auto& p : paths_) {
    PathStatus s;
    s.name = p->config.name;
    s.client = p->config.is_client();
    s.up = p->current.has_value();
    if (p->current) {
      s.session = p->current->session->number();
      s.rtt = p->current->session->last_rtt();
      s.srtt = p->current->session->smoothed_rtt();
      s.keepalives_missing = p->current->session->keepalives_missing();
      if (p->loss_samples.size() >= 2) {
        const auto& first = p->loss_samples.front();
        const auto& last = p->loss_samples.back();
        const std::uint64_t delivered = last.delivered - first.delivered;
        const std::uint64_t brought = last.brought - first.brought;
        if (delivered >= kLossMinDatagrams) {
          s.data_loss = brought >= delivered ? 0.0 : 1.0 - static_cast<double>(brought) / static_cast<double>(delivered);
        }
      }
    }
    s.counters = p->counters;
    out.push_back(s);
  }
  return out;
}

std::vector<FlowStatus> Daemon::flows() const {
  std::vector<FlowStatus> out;
  for (const auto& f : reflect_flows_) out.push_back({f->config.id, f->config.name, true, f->next_label, f->counters});
  for (const auto& [id, f] : filter_flows_) out.push_back({id, f->config.name, false, 0, f->counters});
  return out;
}

std::uint16_t Daemon::listen_port(const std::string& path) const {
  for (const auto& p : paths_) {
    if (p->config.name == path) return p->bound_port;
  }
  return 0;
}

std::uint16_t Daemon::reflect_port(std::uint16_t flow) const {
  for (const auto& f : reflect_flows_) {
    std::error_code ec;
    if (f->config.id == flow) return f->socket.local_endpoint(ec).port();
  }
  return 0;
}

}  // namespace pqot::tripd
