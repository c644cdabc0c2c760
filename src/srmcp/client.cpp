// SRMCP v2 client: connect, handshake, data links and rotation, the public API. The transactions
// are in client_requests.cpp. Section numbers refer to docs/srmcp.md.
#include "client_impl.hpp"
#include "pqot/common/byte_io.hpp"
#include "pqot/crypto/error.hpp"
#include "pqot/crypto/kem.hpp"
#include "pqot/crypto/random.hpp"

namespace pqot::srmcp {

namespace {

[[noreturn]] void fail(Status s, const std::string& what) {
  throw ClientError(s, what);
}

Response expect_ok(Response r, std::string_view what) {
  if (r.status != Status::ok) {
    fail(r.status,
         std::string(what) + " failed: " + status_name(r.status) +
             (r.body.contains("message") ? " (" + r.body["message"].get<std::string>() + ")" : ""));
  }
  return r;
}

// HELLO_REFUSED (§4): the server shares no body encoding or no KEM with this client.
[[noreturn]] void refused(const HelloRefused& r, const ClientHello& hello) {
  if (r.reason == HelloRefused::Reason::no_common_version) {
    fail(Status::wrong_phase,
         "the server refused the hello: no common body encoding (this client offers " +
             hello_list_text(hello.versions) + "; the server accepts " +
             hello_list_text(r.versions) + ")");
  }
  fail(Status::wrong_phase, "the server refused the hello: no common KEM (this client offers " +
                                hello_list_text(hello.kems) + "; the server accepts " +
                                hello_list_text(r.kems) + ")");
}

}  // namespace

// TCP connect and TLS handshake to host:port, bounded by the connect timeout.
awaitable<std::shared_ptr<FramedStream>> Client::Impl::open_tls(std::uint16_t port, bool control) {
  Tcp::socket socket(strand);
  auto stream = std::make_shared<FramedStream>(TlsSocket(std::move(socket), *tls), options.limits,
                                               std::chrono::milliseconds(10000));
  stream->start_watchdog();
  stream->arm(options.connect_timeout);
  // A failure closes the stream, which ends its watchdog: nothing is left running.
  try {
    asio::error_code literal_error;
    const auto address = asio::ip::make_address(options.host, literal_error);
    if (!literal_error) {
      // An IP literal needs no resolver (which would start a thread for getaddrinfo).
      co_await stream->tls().lowest_layer().async_connect(Tcp::endpoint(address, port),
                                                          use_awaitable);
    } else {
      Tcp::resolver resolver(strand);
      const auto endpoints =
          co_await resolver.async_resolve(options.host, std::to_string(port), use_awaitable);
      co_await asio::async_connect(stream->tls().lowest_layer(), endpoints, use_awaitable);
    }
    stream->tls().lowest_layer().set_option(Tcp::no_delay(true));
    channel::set_server_identity(stream->tls(), options.host);
    // §7: the control connection always gets a full handshake (fresh certificate checks) and
    // brings the session's ticket, ahead of SERVER_HELLO; a data link offers it.
    if (control) {
      tickets->watch(stream->tls().native_handle());
    } else {
      (void)tickets->offer(
          stream->tls().native_handle());  // none held (or expired): a full handshake
    }
    co_await stream->tls().async_handshake(asio::ssl::stream_base::client, use_awaitable);
    if (!control) ++(channel::resumed(stream->tls().native_handle()) ? links_resumed : links_full);
  } catch (...) {
    stream->close();
    throw;
  }
  co_return stream;
}

// §4: CLIENT_HELLO (again after HELLO_RETRY), SERVER_HELLO, keys, SESSION_READY.
awaitable<void> Client::Impl::handshake(std::shared_ptr<Link> link0) {
  FramedStream& control = *link0->stream;
  KemId kem_id = options.kems.front();
  ClientHello hello;
  hello.kems = options.kems;
  hello.versions.clear();
  for (BodyEncoding e : options.encodings) hello.versions.push_back(static_cast<std::uint8_t>(e));
  crypto::KemKeyPair kp;
  Bytes hello_body;
  RawFrame frame;
  for (int attempt = 0; attempt < 2; ++attempt) {
    hello.kem = kem_id;
    kp = crypto::kem_by_name(*kem_name(kem_id)).generate_keypair();
    hello.ek = kp.public_key;
    crypto::random_bytes(hello.client_random);
    hello_body = encode(hello);
    control.send(plain_frame(FrameType::client_hello, hello_body));
    frame = co_await control.read_frame();
    if (frame.header.type != FrameType::hello_retry || attempt == 1) break;
    kem_id = parse_hello_retry(frame.body);
    if (std::find(options.kems.begin(), options.kems.end(), kem_id) == options.kems.end()) {
      fail(Status::internal, "server asked for a KEM that was not offered");
    }
  }
  if (frame.header.type == FrameType::hello_refused)
    refused(parse_hello_refused(frame.body), hello);
  if (frame.header.type != FrameType::server_hello)
    fail(Status::internal, "handshake: no SERVER_HELLO");
  const ServerHello sh = parse_server_hello(frame.body);
  if (sh.kem != kem_id) fail(Status::internal, "handshake: server answered with another KEM");
  const auto chosen = encoding_of_version(sh.version);
  if (!chosen || std::find(options.encodings.begin(), options.encodings.end(), *chosen) ==
                     options.encodings.end()) {
    fail(Status::internal, "handshake: server chose protocol version " +
                               std::to_string(sh.version) + ", which this client did not offer");
  }
  encoding = *chosen;
  const crypto::SecretBytes ss =
      crypto::kem_by_name(*kem_name(kem_id)).decapsulate(kp.secret_key, sh.ct);
  const auto th = transcript_hash(hello_body, frame.body);
  Bytes exporter = channel::tls_exporter(control.tls(), "EXPORTER-SRMCP-v2");
  const SessionKeys keys = derive_session_keys(exporter, ss, th);
  crypto::secure_wipe(exporter);
  // §4: the announced max_frame_body bounds the frames of both directions on every link.
  if (sh.max_frame_body < 1024 || sh.max_frame_body > kMaxFrameBodyCeiling) {
    fail(Status::internal,
         "handshake: server announced max_frame_body " + std::to_string(sh.max_frame_body));
  }
  options.limits.max_frame_body = sh.max_frame_body;
  control.set_limits(options.limits);
  timestamp_window_ms = sh.timestamp_window_ms;
  endpoint.emplace(keys, Direction::client_to_server, options.limits, sh.key_update_messages,
                   std::chrono::seconds(sh.key_update_seconds));
  link_key = keys.link;
  session.session_id = sh.session_id;
  session.kem = kem_id;
  session.encoding = encoding;

  // SESSION_READY confirms that both sides hold the same keys.
  frame = co_await control.read_frame();
  auto ready = endpoint->on_frame(*link0, frame);
  if (!ready || ready->header.type != MessageType::session_ready)
    fail(Status::internal, "handshake: no SESSION_READY");
  const Json info = parse_json_body(ready->body, options.limits, 0);
  session.identity = info.value("identity", "");
  endpoint->add_link(link0);
}

// §7: LINK_REQUEST, connect to the offered port, LINK_BIND, LINK_READY.
awaitable<void> Client::Impl::open_data_link() {
  Response offer =
      expect_ok(co_await request(MessageType::link_request, Json::object()), "LINK_REQUEST");
  const auto link_id = offer.body.at("link_id").get<std::uint32_t>();
  // §6, §7: ids are assigned 1, 2, 3, ... below 2^31 and never reused; another would reuse a nonce.
  // (Offers may be answered out of order while links open concurrently, hence a set.)
  if (link_id == 0 || link_id > 0x7fffffffu || !used_link_ids.insert(link_id).second) {
    fail(Status::bad_request, "LINK_OFFER: link_id not new");
  }
  const auto port = offer.body.at("port").get<std::uint16_t>();
  const Bytes token = crypto::from_hex(offer.body.at("token").get<std::string>());
  auto stream = co_await open_tls(port, false);
  const Bytes exporter = channel::tls_exporter(stream->tls(), "EXPORTER-SRMCP-v2-link");
  LinkBind bind{session.session_id, link_bind_proof(*link_key, token, link_id, exporter)};
  crypto::Aes256Gcm bind_key(link_key->span());
  stream->send(seal_frame(bind_key, Direction::client_to_server,
                          FrameHeader{FrameType::link_bind, link_id, 0, 0}, encode(bind)));
  const RawFrame ready = co_await stream->read_frame();
  auto link = std::make_shared<Link>();
  link->id = link_id;
  link->stream = stream;
  link->send_seq = 1;
  const Bytes plain = endpoint->open_frame_on(*link, ready, FrameType::link_ready);
  common::ByteReader r(plain);
  if (r.u64() != session.session_id) fail(Status::internal, "LINK_READY for another session");
  stream->disarm();
  endpoint->add_link(link);
  asio::co_spawn(strand, read_loop(link), asio::detached);
}

// §7 rotation: every interval, attach a new data link, then retire the oldest one. The old link is
// marked draining at once (no new requests on it); the server answers LINK_CLOSE, flushes and
// closes it, and its read loop here detaches it after reading whatever was still in flight.
awaitable<void> Client::Impl::rotate_links() {
  auto self = shared_from_this();
  rotation_timer = std::make_shared<asio::steady_timer>(strand);
  auto timer = rotation_timer;
  while (!closed) {
    timer->expires_after(options.rotate_interval);
    asio::error_code ec;
    co_await timer->async_wait(asio::redirect_error(use_awaitable, ec));
    if (closed) break;
    std::shared_ptr<Link> oldest;
    std::size_t data_links = 0;
    for (const auto& [id, link] : endpoint->links()) {
      if (id == 0 || link->draining) continue;
      ++data_links;
      if (!oldest || link->attached < oldest->attached) oldest = link;
    }
    try {
      co_await open_data_link();
    } catch (const std::exception&) {
      ++link_failures;
      continue;  // keep the old links; try again next interval
    }
    // Fewer links than wanted (one failed earlier): this one tops up instead of replacing.
    if (!oldest || closed || data_links < options.links) continue;
    // §7.4: LINK_CLOSE travels on the link it closes, as the last frame sent there, so every
    // request sent on it before is read by the server first; the server closes it after that.
    oldest->draining = true;
    Json body;  // (not a braced initializer: GCC 12 mis-compiles those inside coroutines)
    body["link_id"] = oldest->id;
    (void)co_await request(MessageType::link_close, body, oldest);
    ++rotations;
  }
}

// Opens `count` links at once: their TLS handshakes overlap instead of adding up.
awaitable<void> Client::Impl::open_data_links(unsigned count) {
  if (count == 0) co_return;
  auto self = shared_from_this();
  auto done =
      std::make_shared<asio::steady_timer>(strand, std::chrono::steady_clock::time_point::max());
  auto remaining = std::make_shared<unsigned>(count);
  auto failure = std::make_shared<std::exception_ptr>();
  for (unsigned i = 0; i < count; ++i) {
    asio::co_spawn(strand, open_data_link(),
                   [self, done, remaining, failure](std::exception_ptr e) {
                     if (e) {
                       ++self->link_failures;
                       if (!*failure) *failure = e;
                     }
                     if (--*remaining == 0) done->cancel();
                   });
  }
  asio::error_code ec;
  co_await done->async_wait(asio::redirect_error(use_awaitable, ec));
  // A data link that could not be opened (its offer burned, its port unreachable) does not fail
  // the session: it carries on with the links it got, and rotation tops up later (§7).
  if (*failure && closed) std::rethrow_exception(*failure);
}

awaitable<void> Client::Impl::read_loop(std::shared_ptr<Link> link) {
  auto self = shared_from_this();
  RawFrame frame;  // reused frame after frame
  while (!closed && !link->stream->closed()) {
    try {
      co_await link->stream->read_frame(frame);
    } catch (const std::exception&) {
      break;
    }
    try {
      if (auto m = endpoint->on_frame(*link, frame)) deliver(std::move(*m));
    } catch (const ProtocolError& e) {
      if (e.action() == Action::close) break;
    }
    endpoint->expire_partial(options.deadline);
  }
  if (closed) co_return;
  if (link->id == 0) {
    // The session ends with its control connection: fail everything outstanding.
    shutdown();
  } else {
    endpoint->remove_link(link->id);
  }
}

void Client::Impl::shutdown() {
  if (closed) return;
  closed = true;
  if (rotation_timer) rotation_timer->cancel();
  if (sweep) sweep->cancel();
  if (endpoint) endpoint->close_all();
  for (auto& [tid, p] : pending) p->wake.cancel();
}

// ---- Client
// --------------------------------------------------------------------------------------

Client::Client(ClientOptions options) {
  auto io = std::make_unique<asio::io_context>();
  impl_ = std::make_shared<Impl>(*io, std::move(options));
  impl_->own_io = std::move(io);
  impl_->work.emplace(impl_->own_io->get_executor());
  std::promise<void> done;
  impl_->thread_done = done.get_future();
  impl_->thread = std::thread([io = impl_->own_io.get(), done = std::move(done)]() mutable {
    io->run();
    done.set_value();
  });
}

Client::Client(asio::io_context& io, ClientOptions options)
    : impl_(std::make_shared<Impl>(io, std::move(options))) {}

Client::~Client() {
  if (impl_->own_io) {
    asio::post(impl_->strand, [impl = impl_] { impl->shutdown(); });
    // Let the closed sockets and cancelled timers finish their coroutines (they hold the Impl),
    // so that nothing is left behind; stop hard only if that takes unreasonably long.
    impl_->work.reset();
    if (impl_->thread_done.wait_for(std::chrono::seconds(2)) != std::future_status::ready)
      impl_->own_io->stop();
    if (impl_->thread.joinable()) impl_->thread.join();
  }
}

// The public coroutines run their body as a separate coroutine on the client's strand and await it.
// (`co_await asio::dispatch(strand)` would not do: a coroutine resumes on the executor it was
// spawned with, so after its first suspension it would leave the strand, which is a data race
// when the caller's io_context has several threads.)
awaitable<void> Client::async_connect() {
  auto impl = impl_;
  co_await asio::co_spawn(impl->strand, impl->connect(), use_awaitable);
}

awaitable<void> Client::Impl::connect() {
  auto impl = shared_from_this();
  if (impl->options.kems.empty()) fail(Status::internal, "no KEM to offer");
  if (impl->options.encodings.empty() || impl->options.encodings.size() > 8) {
    fail(Status::internal, "offer 1..8 body encodings");
  }
  if (!impl->tls) {
    impl->tls =
        impl->options.tls_context
            ? impl->options.tls_context
            : std::make_shared<asio::ssl::context>(channel::make_client_tls(impl->options.tls));
  }
  auto link0 = std::make_shared<Link>();
  link0->id = 0;
  link0->stream = co_await impl->open_tls(impl->options.port, true);
  try {
    co_await impl->handshake(link0);
  } catch (...) {
    link0->stream->close();  // (ends its watchdog: a failed connect leaves nothing running)
    throw;
  }
  link0->stream->disarm();
  impl->connected = true;
  asio::co_spawn(impl->strand, impl->read_loop(link0), asio::detached);
  co_await impl->open_data_links(impl->options.links);
  impl->session.data_links = impl->endpoint->link_count() - 1;
  if (impl->options.rotate_interval.count() > 0 && impl->options.links > 0) {
    asio::co_spawn(impl->strand, impl->rotate_links(), asio::detached);
  }
}

awaitable<Response> Client::async_request(MessageType type, Json body) {
  auto impl = impl_;
  co_return co_await asio::co_spawn(impl->strand, impl->request(type, std::move(body)),
                                    use_awaitable);
}

awaitable<ReadReply> Client::async_read(std::vector<std::string> ids) {
  auto impl = impl_;
  co_return co_await asio::co_spawn(impl->strand, impl->read_values(std::move(ids)), use_awaitable);
}

awaitable<WriteReply> Client::async_write(std::vector<std::pair<std::string, Value>> values) {
  auto impl = impl_;
  co_return co_await asio::co_spawn(impl->strand, impl->write_values(std::move(values)),
                                    use_awaitable);
}

awaitable<void> Client::async_close() {
  auto impl = impl_;
  co_await asio::co_spawn(impl->strand, impl->close(), use_awaitable);
}

awaitable<void> Client::Impl::close() {
  auto self = shared_from_this();
  if (!closed && connected) (void)co_await request(MessageType::close, Json::object());
  shutdown();
}

void Client::connect() {
  try {
    impl_->run_blocking(impl_->connect());
  } catch (const ClientError&) {
    throw;
  } catch (const std::exception& e) {
    throw ClientError(Status::internal, std::string("connect to ") + impl_->options.host + ":" +
                                            std::to_string(impl_->options.port) +
                                            " failed: " + e.what());
  }
}

Response Client::request(MessageType type, const Json& body) {
  return impl_->run_blocking(impl_->request(type, body));
}

Json Client::browse(const std::string& root, int depth) {
  Json body = Json::object();
  if (!root.empty()) body["root"] = root;
  if (depth >= 0) body["depth"] = depth;
  return expect_ok(request(MessageType::browse, body), "BROWSE").body;
}

Json Client::read(const std::vector<std::string>& ids) {
  return expect_ok(request(MessageType::read, Json{{"ids", ids}}), "READ").body;
}

Json Client::write(const std::vector<std::pair<std::string, Json>>& values) {
  Json list = Json::array();
  for (const auto& [id, v] : values) list.push_back(Json{{"id", id}, {"value", v}});
  return expect_ok(request(MessageType::write, Json{{"values", list}}), "WRITE").body;
}

std::vector<NodeReading> Client::read_values(const std::vector<std::string>& ids) {
  ReadReply r = impl_->run_blocking(impl_->read_values(ids));
  if (r.status != Status::ok)
    fail(r.status, "READ failed: " + status_name(r.status) + " (" + r.message + ")");
  return std::move(r.values);
}

std::vector<WriteOutcome> Client::write_values(
    const std::vector<std::pair<std::string, Value>>& values) {
  WriteReply r = impl_->run_blocking(impl_->write_values(values));
  if (r.status != Status::ok)
    fail(r.status, "WRITE failed: " + status_name(r.status) + " (" + r.message + ")");
  return std::move(r.values);
}

std::uint64_t Client::subscribe(const std::vector<std::string>& ids,
                                std::chrono::milliseconds interval) {
  const Json body{{"ids", ids}, {"interval_ms", interval.count()}};
  return expect_ok(request(MessageType::subscribe, body), "SUBSCRIBE")
      .body.at("subscription")
      .get<std::uint64_t>();
}

void Client::unsubscribe(std::uint64_t subscription) {
  expect_ok(request(MessageType::unsubscribe, Json{{"subscription", subscription}}), "UNSUBSCRIBE");
}

Json Client::ping() {
  return expect_ok(request(MessageType::ping, Json::object()), "PING").body;
}

void Client::close() {
  impl_->run_blocking(impl_->close());
}

void Client::on_notification(std::function<void(const Json&)> handler) {
  asio::post(impl_->strand, [impl = impl_, h = std::move(handler)]() mutable {
    impl->notification_handler = std::move(h);
  });
}

void Client::on_notification_values(std::function<void(const Notification&)> handler) {
  asio::post(impl_->strand, [impl = impl_, h = std::move(handler)]() mutable {
    impl->notification_values_handler = std::move(h);
  });
}

SessionInfo Client::info() const {
  SessionInfo i = impl_->session;
  i.rotations = impl_->rotations;
  i.link_failures = impl_->link_failures;
  i.links_resumed = impl_->links_resumed;
  i.links_full_handshake = impl_->links_full;
  return i;
}

}  // namespace pqot::srmcp
