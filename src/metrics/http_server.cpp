// The scrape endpoint (docs/metrics.md): one request, one response, bounded in size, time and
// connections.
#include "pqot/metrics/http_server.hpp"

#include "http_request.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <asio.hpp>
#include <atomic>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string_view>
#include <system_error>

namespace pqot::metrics {

namespace {

using Tcp = asio::ip::tcp;
using Strand = asio::strand<asio::io_context::executor_type>;
using asio::awaitable;
using asio::use_awaitable;

constexpr std::size_t kMaxDrain = 65536;  // bytes read and dropped after the response
constexpr auto kAcceptPause = std::chrono::milliseconds(100);
constexpr std::string_view kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";
constexpr std::string_view kTextContentType = "text/plain; charset=utf-8";

struct Connection {
  Connection(Tcp::socket s, const Strand& strand) : socket(std::move(s)), deadline(strand) {}
  void close() {
    asio::error_code ec;
    deadline.cancel();
    socket.shutdown(Tcp::socket::shutdown_both, ec);
    socket.close(ec);
  }
  Tcp::socket socket;
  asio::steady_timer deadline;
};

std::string make_response(int status, std::string_view reason, std::string_view content_type,
                          std::string_view body, bool head_only,
                          std::string_view extra_headers = {}) {
  std::string r = "HTTP/1.1 ";
  r += std::to_string(status);
  r += ' ';
  r += reason;
  r += "\r\nContent-Type: ";
  r += content_type;
  r += "\r\nContent-Length: ";
  r += std::to_string(body.size());
  r += "\r\n";
  r += extra_headers;
  r += "Connection: close\r\n\r\n";
  if (!head_only) r += body;
  return r;
}

std::string host_port(const std::string& host, std::uint16_t port) {
  const bool v6 = host.find(':') != std::string::npos && !host.starts_with('[');
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

}  // namespace

struct MetricsHttpServer::Impl {
  Impl(asio::io_context& io, std::string host_, std::uint16_t port_,
       std::function<std::string()> render_, std::function<bool()> healthy_,
       MetricsHttpOptions options_)
      : strand(asio::make_strand(io)),
        host(std::move(host_)),
        requested_port(port_),
        options(options_),
        acceptor(strand),
        accept_pause(strand),
        render(std::move(render_)),
        healthy(std::move(healthy_)) {}

  Strand strand;
  const std::string host;
  const std::uint16_t requested_port;
  const MetricsHttpOptions options;
  std::atomic<std::uint16_t> bound_port{0};

  // Used only on `strand`.
  Tcp::acceptor acceptor;
  asio::steady_timer accept_pause;  // after a failed accept (e.g. out of descriptors)
  std::set<std::shared_ptr<Connection>> connections;
  bool closed = false;

  // Guards the callbacks, so that none runs once stop() has returned.
  std::mutex callback_mutex;
  std::function<std::string()> render;
  std::function<bool()> healthy;
  bool started = false;
  bool stopped = false;

  std::string respond(std::string_view head);
  void close_all();
};

std::string MetricsHttpServer::Impl::respond(std::string_view head) {
  const auto request = http::parse_request(head);
  if (!request) {
    spdlog::debug("metrics endpoint: malformed request: 400");
    return make_response(400, "Bad Request", kTextContentType, "bad request\n", false);
  }
  const bool head_only = request->method == "HEAD";
  if (request->method != "GET" && !head_only) {
    spdlog::debug("metrics endpoint: {}: 405", request->method);
    return make_response(405, "Method Not Allowed", kTextContentType, "method not allowed\n", false,
                         "Allow: GET, HEAD\r\n");
  }
  const std::string_view path = http::target_path(request->target);
  if (path.empty()) {
    spdlog::debug("metrics endpoint: {} with a target that is not a path: 400", request->method);
    return make_response(400, "Bad Request", kTextContentType, "bad request\n", head_only);
  }
  spdlog::debug("metrics endpoint: {} {}", request->method, path);
  std::lock_guard lock(callback_mutex);
  if (stopped) return {};  // the connection is being closed
  try {
    if (path == "/metrics") {
      return make_response(200, "OK", kMetricsContentType, render ? render() : std::string(),
                           head_only);
    }
    if (path == "/healthz") {
      if (!healthy || healthy())
        return make_response(200, "OK", kTextContentType, "ok\n", head_only);
      return make_response(503, "Service Unavailable", kTextContentType, "unhealthy\n", head_only);
    }
  } catch (const std::exception& e) {
    spdlog::warn("metrics endpoint: {} failed: {}", path, e.what());
    return make_response(500, "Internal Server Error", kTextContentType, "internal error\n",
                         head_only);
  }
  return make_response(404, "Not Found", kTextContentType, "not found\n", head_only);
}

void MetricsHttpServer::Impl::close_all() {
  closed = true;
  asio::error_code ec;
  acceptor.close(ec);
  accept_pause.cancel();
  for (const auto& c : connections) c->close();  // their coroutines end and remove them
}

namespace {

using Impl = MetricsHttpServer::Impl;

// One request, one response, then a lingering close.
awaitable<void> exchange(std::shared_ptr<Impl> self, std::shared_ptr<Connection> conn) {
  Tcp::socket& socket = conn->socket;
  const std::size_t limit = self->options.max_request_head;
  std::string data;
  std::size_t head_end = std::string::npos;
  asio::error_code ec;
  while ((head_end = http::find_head_end(data)) == std::string::npos && data.size() < limit) {
    const std::size_t old = data.size();
    data.resize(std::min(limit, old + 2048));
    const std::size_t n =
        co_await socket.async_read_some(asio::buffer(data.data() + old, data.size() - old),
                                        asio::redirect_error(use_awaitable, ec));
    data.resize(old + n);
    if (ec) co_return;  // closed, reset or past the deadline before a whole request arrived
  }
  std::string response;
  if (head_end == std::string::npos) {
    spdlog::debug("metrics endpoint: request head over {} bytes: 431", limit);
    response = make_response(431, "Request Header Fields Too Large", kTextContentType,
                             "request header fields too large\n", false);
  } else {
    response = self->respond(std::string_view(data).substr(0, head_end));
    if (response.empty()) co_return;
  }
  co_await asio::async_write(socket, asio::buffer(response),
                             asio::redirect_error(use_awaitable, ec));
  if (ec) co_return;
  // Closing with unread bytes (a body, the rest of an oversized head) would send a reset that can
  // destroy the response before the client reads it: send FIN, then read until the client closes
  // (bounded by the deadline and kMaxDrain).
  socket.shutdown(Tcp::socket::shutdown_send, ec);
  std::array<char, 2048> sink{};
  std::size_t drained = 0;
  while (!ec && drained < kMaxDrain) {
    drained += co_await socket.async_read_some(asio::buffer(sink),
                                               asio::redirect_error(use_awaitable, ec));
  }
}

awaitable<void> serve(std::shared_ptr<Impl> self, std::shared_ptr<Connection> conn) {
  try {
    co_await exchange(self, conn);
  } catch (const std::exception& e) {
    spdlog::debug("metrics endpoint: connection ended: {}", e.what());
  }
  conn->close();
  self->connections.erase(conn);
}

awaitable<void> accept_loop(std::shared_ptr<Impl> self) {
  while (!self->closed) {
    Tcp::socket socket(self->strand);
    asio::error_code ec;
    co_await self->acceptor.async_accept(socket, asio::redirect_error(use_awaitable, ec));
    if (self->closed || ec == asio::error::operation_aborted) break;
    if (ec) {
      spdlog::warn("metrics endpoint: accept failed: {}", ec.message());
      self->accept_pause.expires_after(kAcceptPause);  // no busy loop when out of descriptors
      co_await self->accept_pause.async_wait(asio::redirect_error(use_awaitable, ec));
      continue;
    }
    if (self->connections.size() >= self->options.max_connections) {
      spdlog::debug("metrics endpoint: {} connections open; closed a new one",
                    self->connections.size());
      socket.close(ec);
      continue;
    }
    auto conn = std::make_shared<Connection>(std::move(socket), self->strand);
    self->connections.insert(conn);
    conn->deadline.expires_after(self->options.deadline);
    conn->deadline.async_wait([weak = std::weak_ptr<Connection>(conn)](asio::error_code wait_ec) {
      if (wait_ec) return;
      if (auto c = weak.lock()) c->close();  // a slow client: its coroutine sees the error and ends
    });
    asio::co_spawn(self->strand, serve(self, std::move(conn)), asio::detached);
  }
}

}  // namespace

MetricsHttpServer::MetricsHttpServer(asio::io_context& io, std::string host, std::uint16_t port,
                                     std::function<std::string()> render,
                                     std::function<bool()> healthy, MetricsHttpOptions options)
    : impl_(std::make_shared<Impl>(io, std::move(host), port, std::move(render), std::move(healthy),
                                   options)) {}

MetricsHttpServer::~MetricsHttpServer() {
  try {
    stop();
  } catch (const std::exception&) {
    // Only allocation can fail here; destroying `io` then closes what is left.
  }
}

void MetricsHttpServer::start() {
  Impl& s = *impl_;
  {
    std::lock_guard lock(s.callback_mutex);
    if (s.started || s.stopped)
      throw std::logic_error("metrics endpoint: start() after start() or stop()");
    s.started = true;
  }
  const std::string where = host_port(s.host, s.requested_port);
  auto failure = [&](const std::string& why) {  // leaves the server as before, so start() may retry
    asio::error_code ignored;
    s.acceptor.close(ignored);
    std::lock_guard lock(s.callback_mutex);
    s.started = false;
    return std::runtime_error("cannot listen on " + where + ": " + why);
  };
  std::string address_text = s.host;
  if (address_text.size() >= 2 && address_text.front() == '[' && address_text.back() == ']') {
    address_text = address_text.substr(1, address_text.size() - 2);
  }
  asio::error_code ec;
  const auto address = asio::ip::make_address(address_text, ec);
  if (ec) throw failure("'" + s.host + "' is not an IP address");
  const Tcp::endpoint ep(address, s.requested_port);
  try {
    s.acceptor.open(ep.protocol());
    s.acceptor.set_option(Tcp::acceptor::reuse_address(true));
    s.acceptor.bind(ep);
    s.acceptor.listen(asio::socket_base::max_listen_connections);
    s.bound_port = s.acceptor.local_endpoint().port();
  } catch (const std::system_error& e) {
    throw failure(e.what());
  }
  asio::co_spawn(s.strand, accept_loop(impl_), asio::detached);
}

void MetricsHttpServer::stop() {
  if (!impl_) return;
  std::function<std::string()> render;
  std::function<bool()> healthy;
  {
    std::lock_guard lock(impl_->callback_mutex);  // waits for a render in progress
    if (impl_->stopped) return;
    impl_->stopped = true;
    render.swap(impl_->render);  // released below, outside the lock
    healthy.swap(impl_->healthy);
  }
  // Sockets belong to the strand: closed there (at once when called on it). If `io` never runs
  // again, destroying it destroys the coroutines and their sockets.
  asio::dispatch(impl_->strand, [impl = impl_] { impl->close_all(); });
}

std::uint16_t MetricsHttpServer::port() const {
  return impl_->bound_port;
}

}  // namespace pqot::metrics
