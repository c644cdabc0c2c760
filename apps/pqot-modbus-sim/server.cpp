#include "server.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <iostream>
#include <span>
#include <string>
#include <system_error>
#include <utility>

#include "log.hpp"

namespace pqot::modbus_sim {

namespace {

constexpr int kBacklog = 64;
constexpr int kMaxAcceptsPerRound = 64;  // then the clients get their turn
constexpr std::chrono::milliseconds kListenerRetry{1000};
constexpr std::chrono::milliseconds kAcceptPause{100};

std::string errno_text(int e) {
  return std::generic_category().message(e);
}

}  // namespace

Server::Server(ServerOptions options)
    : opt_(std::move(options)), fault_(opt_.fault), model_(opt_.seed, Clock::now()) {
  ctx_ = modbus_new_tcp(opt_.ip.c_str(), opt_.port);
  if (ctx_ == nullptr) throw std::system_error(errno, std::generic_category(), "modbus_new_tcp");
  // modbus_reply() sleeps the response timeout before some exception answers, to let the rest of
  // a bad serial frame arrive and flush it. Here the request has been read whole already: the
  // shortest timeout keeps a bad request from stalling every other client.
  modbus_set_response_timeout(ctx_, 0, 1);
}

Server::~Server() {
  for (auto& c : clients_) c.fd.reset();
  if (ctx_ != nullptr) {
    modbus_set_socket(ctx_, -1);
    modbus_free(ctx_);
  }
}

void Server::start() {
  try {
    listener_.reset(open_listener(opt_.ip, opt_.port, kBacklog));
    port_ = local_port(listener_.get());
  } catch (const std::system_error& e) {
    throw ListenError("cannot listen on " + opt_.ip + ":" + std::to_string(opt_.port) + ": " +
                      e.what());
  }
  // A refuse fault that starts on closes the listener before the port is announced: no
  // connection gets in.
  if (fault_.active(FaultKind::refuse)) listener_.reset();
  log_info("serving a simulated PLC and energy meter on " + opt_.ip + ":" + std::to_string(port_) +
           ", up to " + std::to_string(opt_.max_clients) + " clients, noise seed " +
           std::to_string(opt_.seed) + ", " + fault_.describe());
  std::cout << "pqot-modbus-sim listening on " << opt_.ip << ":" << port_ << std::endl;
  // Last: a script that sees the file can rely on everything above.
  if (!opt_.port_file.empty()) {
    try {
      write_file_atomically(opt_.port_file, std::to_string(port_) + "\n");
    } catch (const std::system_error& e) {
      throw ListenError(std::string("--port-file: ") + e.what());
    }
  }
}

void Server::run() {
  std::vector<pollfd> fds;
  while (!stopping_) {
    const auto now = Clock::now();
    if (!listener_.valid() && listener_retry_at_ && now >= *listener_retry_at_) reopen_listener();

    fds.clear();
    fds.push_back({signals_.fd(), POLLIN, 0});
    const bool accepting = listener_.valid() && !(accept_resume_at_ && now < *accept_resume_at_);
    if (accepting) fds.push_back({listener_.get(), POLLIN, 0});
    const std::size_t first_client = fds.size();
    for (const auto& c : clients_) fds.push_back({c.fd.get(), POLLIN, 0});

    if (::poll(fds.data(), fds.size(), poll_timeout_ms(now)) < 0) {
      if (errno == EINTR) continue;
      throw std::system_error(errno, std::generic_category(), "poll");
    }
    if (fds[0].revents != 0) {
      handle_signals();
      continue;  // the listener or the clients may have changed: poll again
    }
    // One request per client and round (the rest stays in the socket for the next round).
    for (std::size_t i = 0; i < clients_.size() && !stopping_; ++i) {
      auto& c = clients_[i];
      if (fds[first_client + i].revents == 0 || !c.fd.valid()) continue;
      if (!serve_readable(c) && c.fd.valid()) close_client(c, "closed");
    }
    expire_incomplete_requests(Clock::now());
    std::erase_if(clients_, [](const Client& c) { return !c.fd.valid(); });
    if (accepting && !stopping_ && listener_.valid() && fds[1].revents != 0) accept_clients();
    if (accept_resume_at_ && Clock::now() >= *accept_resume_at_) accept_resume_at_.reset();
  }
  if (!clients_.empty()) {
    log_info("closing " + std::to_string(live_clients()) + " client connection(s)");
  }
  clients_.clear();
  listener_.reset();
}

void Server::handle_signals() {
  for (const int sig : signals_.drain()) {
    if (sig == SIGUSR1) {
      toggle_fault();
    } else if (!stopping_) {
      log_info(std::string("signal ") + (sig == SIGINT ? "SIGINT" : "SIGTERM") + ": shutting down");
      stopping_ = true;
    }
  }
}

void Server::toggle_fault() {
  if (fault_.kind == FaultKind::none) {
    log_info("SIGUSR1: no --fault configured, nothing to toggle");
    return;
  }
  fault_.on = !fault_.on;
  if (fault_.kind == FaultKind::refuse) {
    if (fault_.on) {
      listener_.reset();
      listener_retry_at_.reset();
      for (auto& c : clients_) {
        if (c.fd.valid()) close_client(c, "fault refuse on");
      }
    } else {
      reopen_listener();
    }
  }
  // Logged after the change took effect: a test that sees the line can rely on it.
  log_info("SIGUSR1: " + fault_.describe());
}

void Server::reopen_listener() {
  listener_retry_at_.reset();
  try {
    listener_.reset(open_listener(opt_.ip, port_, kBacklog));
    log_info("listening again on " + opt_.ip + ":" + std::to_string(port_));
  } catch (const std::system_error& e) {
    log_warn(std::string("cannot reopen the listener: ") + e.what() + "; retrying in 1 s");
    listener_retry_at_ = Clock::now() + kListenerRetry;
  }
}

void Server::accept_clients() {
  for (int n = 0; n < kMaxAcceptsPerRound; ++n) {
    sockaddr_in addr{};
    socklen_t len = sizeof addr;
    const int raw = ::accept4(listener_.get(), reinterpret_cast<sockaddr*>(&addr), &len,
                              SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (raw < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        // The pending connection stays queued; pause rather than spin on a readable listener.
        log_warn("accept: " + errno_text(errno) + "; pausing accepts for 100 ms");
        accept_resume_at_ = Clock::now() + kAcceptPause;
      }
      return;  // EAGAIN: nothing more to accept
    }
    Fd fd(raw);
    const std::string peer = address_text(addr);
    if (live_clients() >= static_cast<std::size_t>(opt_.max_clients)) {
      log_warn("client " + peer + " rejected: already " + std::to_string(opt_.max_clients) +
               " clients (--max-clients)");
      continue;  // closed by Fd
    }
    // Answers are small and each one is awaited by its client: send them without Nagle's delay.
    const int one = 1;
    setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    clients_.push_back(Client{std::move(fd), peer, AduReader{}, {}});
    log_info("client " + peer + " connected (" + std::to_string(live_clients()) + " of " +
             std::to_string(opt_.max_clients) + ")");
  }
}

bool Server::serve_readable(Client& c) {
  // At most two successful reads: the MBAP header, then the length it announces.
  for (;;) {
    if (!c.reader.in_progress()) c.request_started = Clock::now();
    const auto chunk = c.reader.next_chunk();
    const ssize_t n = ::recv(c.fd.get(), chunk.data(), chunk.size(), 0);
    if (n == 0) {
      close_client(c, c.reader.in_progress() ? "closed by the peer in the middle of a request"
                                             : "closed by the peer");
      return false;
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
      close_client(c, errno_text(errno));
      return false;
    }
    switch (c.reader.advance(static_cast<std::size_t>(n))) {
      case AduReader::Status::incomplete:
        continue;
      case AduReader::Status::bad_header:
        close_client(c, "bad request: " + c.reader.error());
        return false;
      case AduReader::Status::complete: {
        const bool keep = answer(c);
        c.reader.reset();
        return keep;
      }
    }
  }
}

bool Server::answer(Client& c) {
  std::array<std::uint8_t, kMaxAduLength> req{};
  std::copy_n(c.reader.padded(), req.size(), req.begin());
  const auto length = c.reader.adu().size();
  const auto pdu =
      std::span<const std::uint8_t>(req).subspan(kMbapHeaderLength, length - kMbapHeaderLength);
  const std::string what = "request FC" + std::to_string(pdu[0]) + " from " + c.peer;

  if (fault_.active(FaultKind::drop)) {
    log_debug("fault drop: " + what + " read, connection closed unanswered");
    close_client(c, "dropped (fault drop)");
    return false;
  }
  if (fault_.active(FaultKind::slow)) {
    log_debug("fault slow: " + what + ", answering in " + std::to_string(fault_.delay.count()) +
              " ms");
    if (!wait_for(fault_.delay)) {
      close_client(c, "shutting down");
      return false;
    }
  }
  if (fault_.active(FaultKind::wrong_tid)) {
    log_debug("fault wrong-tid: " + what + " answered with transaction id + 1");
    bump_transaction_id(req);  // modbus_reply() copies the request's id into the answer
  }

  model_.update(Clock::now());
  modbus_set_socket(ctx_, c.fd.get());
  int rc = 0;
  if (fault_.active(FaultKind::exception)) {
    log_debug("fault exception: " + what + " answered with exception " +
              std::to_string(fault_.exception_code));
    rc = modbus_reply_exception(ctx_, req.data(), static_cast<unsigned>(fault_.exception_code));
  } else if (ProcessModel::writes_read_only(pdu)) {
    log_debug(what + " writes holding registers 3..99: ILLEGAL DATA ADDRESS");
    rc = modbus_reply_exception(ctx_, req.data(), MODBUS_EXCEPTION_ILLEGAL_DATA_ADDRESS);
  } else {
    rc = modbus_reply(ctx_, req.data(), static_cast<int>(length), model_.mapping());
  }
  const int send_errno = errno;
  modbus_set_socket(ctx_, -1);
  model_.after_request();
  if (rc < 0) {
    close_client(c, "cannot answer: " + errno_text(send_errno));
    return false;
  }
  return true;
}

bool Server::wait_for(std::chrono::milliseconds delay) {
  const auto deadline = Clock::now() + delay;
  while (!stopping_) {
    const auto now = Clock::now();
    if (now >= deadline) return true;
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - now);
    pollfd p{signals_.fd(), POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) > 0) handle_signals();
  }
  return false;
}

void Server::close_client(Client& c, const std::string& reason) {
  log_info("client " + c.peer + " disconnected: " + reason);
  c.fd.reset();
}

void Server::expire_incomplete_requests(Clock::time_point now) {
  for (auto& c : clients_) {
    if (c.fd.valid() && c.reader.in_progress() && now - c.request_started >= kRequestTimeout) {
      close_client(c, "incomplete request for " + std::to_string(kRequestTimeout.count()) + " ms");
    }
  }
}

int Server::poll_timeout_ms(Clock::time_point now) const {
  std::optional<Clock::time_point> next = listener_retry_at_;
  const auto earliest = [&next](Clock::time_point t) {
    if (!next || t < *next) next = t;
  };
  if (accept_resume_at_) earliest(*accept_resume_at_);
  for (const auto& c : clients_) {
    if (c.reader.in_progress()) earliest(c.request_started + kRequestTimeout);
  }
  if (!next) return -1;
  if (*next <= now) return 0;
  return static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(*next - now).count());
}

std::size_t Server::live_clients() const {
  return static_cast<std::size_t>(std::count_if(clients_.begin(), clients_.end(),
                                                [](const Client& c) { return c.fd.valid(); }));
}

}  // namespace pqot::modbus_sim
