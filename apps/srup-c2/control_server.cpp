// The C2's control socket: a bounded, owner-only line server (docs/srup-c2.md, "Control socket").
#include "control_server.hpp"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <spdlog/spdlog.h>

namespace pqot::srup_c2 {

namespace fs = std::filesystem;
using asio::local::stream_protocol;

class ControlServer::Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(ControlServer& server, stream_protocol::socket socket)
      : server_(server), alive_(server.alive_), socket_(std::move(socket)), timer_(socket_.get_executor()),
        buffer_(server.options_.request_max_bytes + 1) {}

  void start() {
    arm_idle_timer();
    read_next();
  }

  void close() {
    std::error_code ignored;
    timer_.cancel();
    socket_.shutdown(stream_protocol::socket::shutdown_both, ignored);
    socket_.close(ignored);
  }

  ~Connection() {
    if (*alive_) --server_.clients_;
  }

 private:
  void arm_idle_timer() {
    timer_.expires_after(server_.options_.idle_timeout);
    timer_.async_wait([self = shared_from_this()](std::error_code ec) {
      if (ec || !*self->alive_) return;
      // idle, a request line still incomplete, or an answer the client does not read
      ++self->server_.stats_.timed_out;
      self->server_.note("closed a connection idle for " + std::to_string(self->server_.options_.idle_timeout.count()) +
                         " ms");
      self->close();
    });
  }

  void read_next() {
    asio::async_read_until(socket_, buffer_, '\n',
                           [self = shared_from_this()](std::error_code ec, std::size_t n) {
                             self->on_line(ec, n);
                           });
  }

  void on_line(std::error_code ec, std::size_t n) {
    if (!*alive_) return;
    if (ec == asio::error::not_found) {  // the line outgrew request_max_bytes
      ++server_.stats_.bad_requests;
      ++server_.stats_.too_long;
      server_.note("closed a connection whose request is longer than " +
                   std::to_string(server_.options_.request_max_bytes) + " bytes");
      write_and_close(format_error(ControlErrorCode::bad_request,
                                   "request longer than " + std::to_string(server_.options_.request_max_bytes) + " bytes"));
      return;
    }
    if (ec) {
      close();
      return;
    }
    std::string line(asio::buffers_begin(buffer_.data()), asio::buffers_begin(buffer_.data()) + static_cast<std::ptrdiff_t>(n) - 1);
    buffer_.consume(n);
    ++server_.stats_.requests;
    ControlRequest request;
    try {
      request = parse_control_request(line);
    } catch (const ControlError& e) {
      ++server_.stats_.bad_requests;
      server_.note(std::string("bad request: ") + e.what());
      write(format_error(e.code(), e.what()));
      return;
    }
    timer_.cancel();  // the handler may wait for a device; the idle clock restarts after the answer
    auto self = shared_from_this();
    auto answered = std::make_shared<bool>(false);
    server_.handler_(std::move(request), [self, answered](std::string answer) {
      if (*answered || !*self->alive_) return;
      *answered = true;
      self->write(std::move(answer));
    });
  }

  void write(std::string answer) {
    auto text = std::make_shared<std::string>(std::move(answer));
    arm_idle_timer();  // a client that never reads its answers must not hold the slot for good
    asio::async_write(socket_, asio::buffer(*text),
                      [self = shared_from_this(), text](std::error_code ec, std::size_t) {
                        if (ec || !*self->alive_) {
                          self->close();
                          return;
                        }
                        self->arm_idle_timer();
                        self->read_next();
                      });
  }

  void write_and_close(std::string answer) {
    auto text = std::make_shared<std::string>(std::move(answer));
    arm_idle_timer();
    asio::async_write(socket_, asio::buffer(*text),
                      [self = shared_from_this(), text](std::error_code, std::size_t) { self->close(); });
  }

  ControlServer& server_;
  std::shared_ptr<bool> alive_;
  stream_protocol::socket socket_;
  asio::steady_timer timer_;
  asio::streambuf buffer_;
};

ControlServer::ControlServer(asio::io_context& io, ControlServerOptions options, Handler handler)
    : io_(io), options_(std::move(options)), handler_(std::move(handler)), acceptor_(io) {
  if (options_.request_max_bytes < 1024 || options_.request_max_bytes > kMaxRequestLine) {
    throw std::invalid_argument("control socket: request_max_bytes must be 1024.." + std::to_string(kMaxRequestLine));
  }
  if (options_.max_clients == 0) throw std::invalid_argument("control socket: max_clients must be at least 1");
}

ControlServer::~ControlServer() { stop(); }

namespace {

// Whether a process still listens on the socket at `path`.
bool someone_listens(const fs::path& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  const bool listening = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return listening;
}

}  // namespace

void ControlServer::start() {
  const fs::path& path = options_.socket;
  if (path.native().size() >= sizeof(sockaddr_un{}.sun_path)) {
    throw std::runtime_error("control socket " + path.string() + ": path longer than " +
                             std::to_string(sizeof(sockaddr_un{}.sun_path) - 1) + " bytes");
  }
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      throw std::runtime_error("control socket " + path.string() + " exists and is not a socket");
    }
    if (someone_listens(path)) {
      throw std::runtime_error("control socket " + path.string() +
                               " is in use: another srup-c2 runs on this state directory");
    }
    ::unlink(path.c_str());  // left by a process that is gone
  }
  // Created owner-only from the start (no window in which others could connect), then checked.
  const mode_t old_mask = ::umask(0177);
  std::error_code ec;
  acceptor_.open(stream_protocol(), ec);
  if (!ec) acceptor_.bind(stream_protocol::endpoint(path.string()), ec);
  ::umask(old_mask);
  if (!ec) acceptor_.listen(static_cast<int>(options_.max_clients), ec);
  if (ec) throw std::runtime_error("control socket " + path.string() + ": " + ec.message());
  ::chmod(path.c_str(), 0600);
  accept_next();
}

void ControlServer::stop() {
  if (!*alive_) return;
  *alive_ = false;
  std::error_code ignored;
  if (acceptor_.is_open()) {
    acceptor_.close(ignored);
    ::unlink(options_.socket.c_str());
  }
  for (auto& weak : connections_) {
    if (auto c = weak.lock()) c->close();
  }
  connections_.clear();
}

void ControlServer::note(const std::string& what) {
  if (const auto permit = log_limiter_.allow(); permit.log) {
    spdlog::warn("control socket: {}{}", what,
                 permit.suppressed ? fmt::format(" ({} similar lines left out)", permit.suppressed) : std::string());
  }
}

void ControlServer::accept_next() {
  acceptor_.async_accept([this, alive = alive_](std::error_code ec, stream_protocol::socket socket) {
    if (!*alive) return;
    if (ec) {
      if (ec != asio::error::operation_aborted) accept_next();
      return;
    }
    ucred peer{};
    socklen_t len = sizeof(peer);
    const bool known = ::getsockopt(socket.native_handle(), SOL_SOCKET, SO_PEERCRED, &peer, &len) == 0;
    std::error_code ignored;
    if (!known || (peer.uid != ::geteuid() && peer.uid != 0)) {
      ++stats_.refused_peer;  // the file mode already keeps others out; this is the second fence
      note(known ? "refused a connection from uid " + std::to_string(peer.uid) + " (not the daemon's user or root)"
                 : std::string("refused a connection whose peer credentials are unknown"));
      socket.close(ignored);
    } else if (clients_ >= options_.max_clients) {
      ++stats_.refused_full;
      note("refused a connection: " + std::to_string(options_.max_clients) + " clients connected (max_clients)");
      const std::string busy = format_error(ControlErrorCode::busy, "too many control clients; try again");
      asio::write(socket, asio::buffer(busy), ignored);  // small, and the socket buffer is empty
      socket.close(ignored);
    } else {
      ++stats_.accepted;
      ++clients_;
      auto c = std::make_shared<Connection>(*this, std::move(socket));
      std::erase_if(connections_, [](const std::weak_ptr<Connection>& w) { return w.expired(); });
      connections_.push_back(c);
      c->start();
    }
    accept_next();
  });
}

}  // namespace pqot::srup_c2
