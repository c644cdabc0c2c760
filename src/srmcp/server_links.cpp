// Data links of a server session (§7): offers, LINK_BIND on the offered port, LINK_CLOSE.
//
// An offer is a one-shot listener. It is consumed only by a valid LINK_BIND: connections that fail
// TLS, present another identity or send anything else are closed and the offer keeps listening
// until it expires, so that someone who reaches the port range cannot burn offers. Until its TLS
// handshake is done, a connection to an offer's port holds a handshake slot like a control
// connection (per source and in total, with the same fair share), so a stranger flooding the port
// can neither exhaust the server nor push the client's own connection out. An offer counts against
// the session's max_links, the server's max_pending_links and its identity's
// max_pending_links_per_identity until it is bound or expires.
#include "pqot/common/byte_io.hpp"
#include "pqot/crypto/random.hpp"
#include "server_impl.hpp"

namespace pqot::srmcp {

using asio::awaitable;
using asio::use_awaitable;

namespace {
constexpr std::uint32_t kMaxLinkId = 0x7fffffff;  // §6: link_id < 2^31 (the nonce's direction bit)
}

Json ServerSession::open_link_offer(std::uint32_t tid) {
  const auto& cfg = server_->config;
  // §7: a fresh ticket once the newest is half its lifetime old. It travels on the control
  // connection; until it arrives the client still holds a valid older one.
  if (resumption_ && resumption_->newest_age() >= cfg.link_ticket_lifetime / 2) issue_link_ticket();
  if (endpoint_->link_count() - 1 + offers_.size() >= cfg.limits.max_links) {
    throw ProtocolError(Action::reply, Status::too_many_links,
                        "session link limit of " + std::to_string(cfg.limits.max_links) + " reached", tid);
  }
  if (next_link_id_ > kMaxLinkId) {
    throw ProtocolError(Action::reply, Status::too_many_links, "link ids of this session used up", tid);
  }
  if (!server_->offers_by_identity.try_acquire(principal_.identity, cfg.max_pending_links_per_identity)) {
    server_->refuse(Refusal::offers_per_identity, peer_,
                    "client '" + principal_.identity + "' holds " + std::to_string(cfg.max_pending_links_per_identity) +
                        " pending link offers");
    throw ProtocolError(Action::reply, Status::busy, "too many pending data links for this identity", tid);
  }
  if (server_->pending_offers.fetch_add(1) >= cfg.max_pending_links) {
    --server_->pending_offers;
    server_->offers_by_identity.release(principal_.identity);
    throw ProtocolError(Action::reply, Status::busy, "too many pending data links on this server", tid);
  }
  std::shared_ptr<Tcp::acceptor> acceptor;
  std::optional<std::uint16_t> port;
  for (int attempt = 0; attempt < 64 && !acceptor; ++attempt) {
    port = server_->reserve_port(endpoint_->rng());
    if (!port) break;
    try {
      auto a = std::make_shared<Tcp::acceptor>(strand_);
      const Tcp::endpoint ep(asio::ip::make_address(cfg.listen_host), *port);
      a->open(ep.protocol());
      // Ports of earlier links linger in TIME_WAIT; a fresh listener may still use them.
      a->set_option(Tcp::acceptor::reuse_address(true));
      a->bind(ep);
      a->listen(16);
      acceptor = std::move(a);
    } catch (const std::system_error& e) {
      spdlog::debug("data-link port {}: {}", *port, e.what());
      server_->release_port(*port);  // in use by something else: try another
    }
  }
  if (!acceptor) {
    --server_->pending_offers;
    server_->offers_by_identity.release(principal_.identity);
    throw ProtocolError(Action::reply, Status::busy, "no free data-link port", tid);
  }
  auto offer = std::make_shared<Offer>();
  offer->link_id = next_link_id_++;
  offer->port = *port;
  offer->token = crypto::SecretBytes(32);
  crypto::random_secret_bytes(offer->token);
  offer->acceptor = std::move(acceptor);
  offer->expires = Clock::now() + cfg.offer_lifetime;
  offers_.emplace(offer->link_id, offer);
  asio::co_spawn(strand_, serve_offer(offer), asio::detached);
  return Json{{"link_id", offer->link_id},
              {"port", offer->port},
              {"token", crypto::to_hex(offer->token)},
              {"expires_ms", cfg.offer_lifetime.count()}};
}

// Accepts connections on the offer's port until one binds or the offer expires.
awaitable<void> ServerSession::serve_offer(std::shared_ptr<Offer> offer) {
  auto self = shared_from_this();
  asio::steady_timer expiry(strand_, offer->expires);
  expiry.async_wait([offer](asio::error_code ec) {
    if (ec) return;
    asio::error_code ignored;
    offer->acceptor->close(ignored);
  });
  while (!closed_ && !offer->bound) {
    Tcp::socket socket(strand_);
    asio::error_code ec;
    co_await offer->acceptor->async_accept(socket, asio::redirect_error(use_awaitable, ec));
    if (ec || closed_ || offer->bound) break;
    socket.set_option(Tcp::no_delay(true), ec);
    asio::co_spawn(strand_, bind_attempt(offer, std::move(socket)), asio::detached);
  }
  expiry.cancel();
  finish_offer(offer);
}

// Queues a data-link ticket on the control connection (§2, §7). A failure costs only full handshakes
// on the links that follow, so it fails nothing else.
void ServerSession::issue_link_ticket() {
  try {
    if (!resumption_) resumption_ = channel::ResumptionScope::create(kLinkTicketsHeld);
    if (resumption_->issue(control_->tls().native_handle())) return;
    spdlog::debug("session {}: OpenSSL issued no data-link ticket", hex64(session_id_));
  } catch (const std::exception& e) {
    spdlog::debug("session {}: no data-link ticket: {}", hex64(session_id_), e.what());
  }
}

void ServerSession::count_link_handshake(channel::ResumptionScope::Handshake h) {
  using H = channel::ResumptionScope::Handshake;
  ++(h == H::resumed ? server_->link_handshakes_resumed : server_->link_handshakes_full);
  if (h == H::full_ticket_refused) ++server_->link_tickets_refused;
}

// Releases what a pending offer holds (idempotent): its listener, port and counts.
void ServerSession::finish_offer(const std::shared_ptr<Offer>& offer) {
  auto it = offers_.find(offer->link_id);
  if (it == offers_.end() || it->second != offer) return;
  offers_.erase(it);
  asio::error_code ec;
  offer->acceptor->close(ec);
  server_->release_port(offer->port);
  --server_->pending_offers;
  server_->offers_by_identity.release(principal_.identity);
  if (!offer->bound) {
    for (auto& w : offer->attempts) {
      if (auto s = w.lock()) s->close();
    }
  }
}

// One connection to an offer's port: TLS with the session's identity, then LINK_BIND (§7.3), all
// within the offer's lifetime.
awaitable<void> ServerSession::bind_attempt(std::shared_ptr<Offer> offer, Tcp::socket socket) {
  auto self = shared_from_this();
  const auto& cfg = server_->config;
  asio::error_code ec;
  const auto remote = socket.remote_endpoint(ec);
  const std::string from = ec ? "?" : remote.address().to_string() + ":" + std::to_string(remote.port());
  auto stream = std::make_shared<FramedStream>(TlsSocket(std::move(socket), *server_->tls), cfg.limits,
                                               cfg.idle_frame_deadline);
  stream->start_watchdog();
  stream->arm(offer->expires - Clock::now());
  std::erase_if(offer->attempts, [](const auto& w) { return w.expired() || w.lock()->closed(); });
  offer->attempts.push_back(stream);
  auto [verdict, ticket] =
      ec ? std::pair{common::HandshakeSlots::Verdict::source_full, common::HandshakeSlots::Ticket{}}
         : server_->handshakes->admit(source_key(remote.address()),
                                      [weak = std::weak_ptr<FramedStream>(stream), strand = strand_] {
                                        asio::post(strand, [weak] {
                                          if (auto s = weak.lock()) s->close();
                                        });
                                      });
  if (!ticket) {
    server_->refuse(verdict == common::HandshakeSlots::Verdict::total_full ? Refusal::handshakes_total
                                                                           : Refusal::handshakes_per_source,
                    from, "connection to an offer's port: no handshake slot; closed");
    stream->close();
    co_return;
  }
  const auto fail = [&](const std::string& why) {
    server_->refuse(Refusal::link_bind_failed, from,
                    "session " + hex64(session_id_) + " data link " + std::to_string(offer->link_id) + ": " + why);
    stream->close();
  };
  std::shared_ptr<Link> link;
  try {
    // §7: this session's ticket may resume here (and only here); a resumed session keeps the peer
    // certificate it was issued to, so the identity check below holds either way.
    if (resumption_) resumption_->accept_on(stream->tls().native_handle());
    co_await stream->tls().async_handshake(asio::ssl::stream_base::server, use_awaitable);
    const Principal who = channel::peer_principal(stream->tls());
    if (who.identity != principal_.identity) {
      fail("presented identity '" + who.identity + "'");
      co_return;
    }
    count_link_handshake(channel::ResumptionScope::outcome(stream->tls().native_handle()));
    ticket.release();  // authenticated as the session's client: no longer a stranger's handshake
    RawFrame frame = co_await stream->read_frame();
    if (frame.header.type != FrameType::link_bind || frame.header.link_id != offer->link_id ||
        frame.header.seq != 0 || frame.header.epoch != 0) {
      fail("first frame is not this link's LINK_BIND");
      co_return;
    }
    crypto::Aes256Gcm bind_key(link_key_->span());
    const Bytes plain = open_frame(bind_key, Direction::client_to_server, frame.header, frame.aad, frame.body);
    const LinkBind bind = parse_link_bind(plain);
    const Bytes exporter = channel::tls_exporter(stream->tls(), "EXPORTER-SRMCP-v2-link");
    const auto expected = link_bind_proof(*link_key_, offer->token, offer->link_id, exporter);
    if (bind.session_id != session_id_ || !crypto::ct_equal(expected, bind.proof)) {
      fail("LINK_BIND proof does not verify");
      co_return;
    }
    if (closed_ || offer->bound || Clock::now() >= offer->expires) {
      stream->close();
      co_return;
    }
    // The offer is consumed by this bind: stop listening, drop the other attempts.
    offer->bound = true;
    for (auto& w : offer->attempts) {
      if (auto s = w.lock(); s && s != stream) s->close();
    }
    asio::error_code ignored;
    offer->acceptor->close(ignored);
    stream->disarm();
    link = std::make_shared<Link>();
    link->id = offer->link_id;
    link->stream = stream;
    link->recv_seq = 1;
    // LINK_READY (§7): seq 0, s2c frame key, plaintext session_id; sealed before the link is
    // counted anywhere, so nothing below can fail with the link half attached.
    Bytes ready;
    common::ByteWriter(ready).u64(session_id_);
    Bytes ready_frame = endpoint_->seal_frame_on(*link, FrameType::link_ready, ready);
    add_link(link);
    finish_offer(offer);  // it is a link now: it counts in link_count instead
    ++server_->links_active;
    link->stream->send(std::move(ready_frame));
    spdlog::debug("session {}: data link {} attached on port {}", hex64(session_id_), link->id, offer->port);
  } catch (const std::exception& e) {
    fail(e.what());
    co_return;
  }
  co_await read_loop(link);  // never throws
}

// LINK_CLOSE (§7.4). The link gets no new frames at once. Sent on the link it closes, it is the
// last frame the client sends there: the server closes the link once its queued frames are out.
// Sent on another link, requests may still be on their way on the closing one: it is read, and
// what arrives is answered, for link_close_grace before it is closed.
Json ServerSession::close_link(Link& arrived_on, std::uint32_t link_id, std::uint32_t tid) {
  auto link = link_id == 0 ? nullptr : endpoint_->link(link_id);
  if (!link) throw ProtocolError(Action::reply, Status::bad_request, "no such data link", tid);
  if (link->draining) throw ProtocolError(Action::reply, Status::bad_request, "data link already closing", tid);
  link->draining = true;
  // Flushing is bounded too: a client that stops reading the link does not keep it open.
  const auto flush_deadline = server_->config.send_stall_timeout;
  if (&arrived_on == link.get()) {
    link->stream->close_after_flush(flush_deadline);
  } else {
    auto timer = std::make_shared<asio::steady_timer>(strand_, server_->config.link_close_grace);
    timer->async_wait([timer, flush_deadline, weak = std::weak_ptr<FramedStream>(link->stream)](asio::error_code) {
      if (auto s = weak.lock()) s->close_after_flush(flush_deadline);
    });
  }
  return Json::object();
}

}  // namespace pqot::srmcp
