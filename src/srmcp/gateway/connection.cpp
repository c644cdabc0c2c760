// One Modbus TCP connection on Asio: connect with backoff, framed requests with a deadline, the
// bounded answer reader, error classes (docs/srmcpd-modbus.md, "Failures").
#include "connection.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace pqot::srmcp::gateway {

namespace {

using asio::use_awaitable;
using Tcp = asio::ip::tcp;

long long ms(std::chrono::steady_clock::duration d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

}  // namespace

Connection::Connection(const ModbusDeviceConfig& cfg, std::string label, const Strand& strand)
    : cfg_(cfg), label_(std::move(label)), socket_(strand), resolver_(strand), deadline_(strand) {}

// The deadline closes the socket (and cancels a resolve): whatever waits on it then completes
// with an error, and timed_out_ tells that error from the device's own. One timer serves every
// request of the connection without being set again per request (a timer change is a system
// call): when it fires it compares the time with the deadline of the operation under way, if
// any, and waits again for a later one.
void Connection::arm(std::chrono::milliseconds limit) {
  timed_out_ = false;
  deadline_at_ = Clock::now() + limit;
  // Set again only for an earlier deadline (a request after a longer connect timeout).
  if (!deadline_waiting_ || deadline_at_ < deadline_.expiry()) wait_for_deadline();
}

void Connection::disarm() { deadline_at_ = Clock::time_point::max(); }

void Connection::wait_for_deadline() {
  deadline_waiting_ = true;
  deadline_.expires_at(deadline_at_);
  deadline_.async_wait([this](const asio::error_code& ec) {
    if (ec) return;  // cancelled by shut_down(), or the connection is gone: touch nothing
    deadline_waiting_ = false;
    if (deadline_at_ == Clock::time_point::max()) return;  // nothing under way: rest
    if (Clock::now() < deadline_at_) {
      wait_for_deadline();  // a later operation's deadline
      return;
    }
    timed_out_ = true;
    deadline_at_ = Clock::time_point::max();
    asio::error_code ignored;
    socket_.close(ignored);
    resolver_.cancel();
  });
}

asio::awaitable<bool> Connection::ensure_connected() {
  if (connected_) co_return true;
  if (shut_down_ || Clock::now() < next_attempt_) co_return false;
  asio::error_code ec;
  std::vector<Tcp::endpoint> endpoints;
  arm(cfg_.connect_timeout);
  if (const auto address = asio::ip::make_address(cfg_.host, ec); !ec) {
    endpoints.emplace_back(address, cfg_.port);
  } else {
    ec = {};  // a name: resolved at each connect (Asio resolves off the event loop)
    const auto results = co_await resolver_.async_resolve(cfg_.host, std::to_string(cfg_.port),
                                                          asio::redirect_error(use_awaitable, ec));
    for (const auto& r : results) endpoints.push_back(r.endpoint());
  }
  if (!ec && !timed_out_ && !shut_down_) {
    co_await asio::async_connect(socket_, endpoints, asio::redirect_error(use_awaitable, ec));
  }
  const bool timed_out = timed_out_;
  disarm();
  if (shut_down_) {
    asio::error_code ignored;
    socket_.close(ignored);
    co_return false;
  }
  if (ec || timed_out) {
    asio::error_code ignored;
    socket_.close(ignored);
    ++connect_failures_;
    const bool first = !was_down_;
    schedule_retry(timed_out ? Status::timeout : Status::backend_error);
    const std::string why = timed_out ? "timed out" : ec.message();
    if (first) {
      spdlog::warn("device {} ({}): cannot connect: {}; retrying in {} ms", cfg_.name, label_, why, ms(backoff_));
    } else {
      spdlog::debug("device {}: reconnect failed: {}; next in {} ms", cfg_.name, why, ms(backoff_));
    }
    was_down_ = true;
    co_return false;
  }
  // Requests are small and one at a time: Nagle would hold each one for the previous ACK.
  socket_.set_option(Tcp::no_delay(true), ec);
  connected_ = true;
  connected_flag_ = true;
  ++connects_;
  spdlog::info("device {} ({}): connected", cfg_.name, label_);
  was_down_ = false;
  co_return true;
}

void Connection::shut_down() {
  shut_down_ = true;
  last_failure_ = Status::shutting_down;
  asio::error_code ignored;
  socket_.close(ignored);
  resolver_.cancel();
  disarm();
  deadline_.cancel();
  connected_ = false;
  connected_flag_ = false;
}

asio::awaitable<Connection::Reply> Connection::transact(std::span<const std::uint8_t> pdu) {
  const auto t0 = Clock::now();
  const std::uint16_t tid = ++next_tid_;
  const auto request = modbus::frame_request(tid, static_cast<std::uint8_t>(cfg_.unit), pdu);
  ++transactions_;
  arm(cfg_.timeout);
  asio::error_code ec;
  co_await asio::async_write(socket_, asio::buffer(request), asio::redirect_error(use_awaitable, ec));
  if (!ec) ec = co_await read_answer(tid);
  const bool timed_out = timed_out_;
  disarm();
  latency_.observe(Clock::now() - t0);
  Reply reply;
  if (shut_down_) {
    reply.status = Status::shutting_down;
  } else if (timed_out) {
    ++timeouts_;
    // A late answer could still arrive and be taken for the next request's: start afresh.
    disconnect(Status::timeout, "request timed out");
    reply.status = Status::timeout;
  } else if (ec) {
    ++comm_errors_;
    disconnect(Status::backend_error, "request failed: " + (framing_error_.empty() ? ec.message() : framing_error_));
  } else {
    backoff_ = Clock::duration::zero();  // the device works: the next failure starts afresh
    reply.status = Status::ok;
    reply.pdu = std::span<const std::uint8_t>(pdu_).first(pdu_size_);
  }
  co_return reply;
}

// Reads one answer: the header first, checked before the PDU it announces is read into a buffer
// of the largest PDU, so that no length from the device sizes anything. An answer to another
// transaction or unit is a protocol error (with one request outstanding there is no other).
asio::awaitable<asio::error_code> Connection::read_answer(std::uint16_t tid) {
  framing_error_.clear();
  pdu_size_ = 0;
  asio::error_code ec;
  co_await asio::async_read(socket_, asio::buffer(header_), asio::redirect_error(use_awaitable, ec));
  if (ec) co_return ec;
  const auto h = modbus::parse_mbap_header(header_);
  if (!h) {
    framing_error_ = "malformed answer header";
  } else if (h->transaction_id != tid || h->unit != static_cast<std::uint8_t>(cfg_.unit)) {
    framing_error_ = "answer for transaction " + std::to_string(h->transaction_id) + " unit " +
                     std::to_string(h->unit) + ", expected " + std::to_string(tid) + " unit " +
                     std::to_string(cfg_.unit);
  }
  if (!framing_error_.empty()) co_return asio::error::make_error_code(asio::error::invalid_argument);
  co_await asio::async_read(socket_, asio::buffer(pdu_.data(), h->pdu_size), asio::redirect_error(use_awaitable, ec));
  if (!ec) pdu_size_ = h->pdu_size;
  co_return ec;
}

void Connection::on_exception(const modbus::Answer& a, const char* what) {
  ++exceptions_;
  spdlog::debug("device {}: {} answered with exception {}", cfg_.name, what, a.exception_code);
}

Status Connection::on_malformed(const modbus::Answer& a, const char* what) {
  ++comm_errors_;
  disconnect(Status::backend_error, std::string(what) + ": malformed answer: " + a.why);
  return Status::backend_error;
}

void Connection::disconnect(Status why, const std::string& what) {
  asio::error_code ignored;
  socket_.close(ignored);
  connected_ = false;
  connected_flag_ = false;
  schedule_retry(why);
  if (!was_down_) {
    spdlog::warn("device {} ({}): {}; reconnecting in {} ms", cfg_.name, label_, what, ms(backoff_));
  }
  was_down_ = true;
}

void Connection::schedule_retry(Status why) {
  last_failure_ = why;
  backoff_ = backoff_ == Clock::duration::zero() ? Clock::duration(cfg_.backoff_min)
                                                 : std::min<Clock::duration>(backoff_ * 2, cfg_.backoff_max);
  next_attempt_ = Clock::now() + backoff_;
}

void Connection::add_stats(DeviceStats& s) const {
  s.connected = connected_flag_.load();
  s.transactions = transactions_.load();
  s.comm_errors = comm_errors_.load();
  s.timeouts = timeouts_.load();
  s.exceptions = exceptions_.load();
  s.connects = connects_.load();
  s.connect_failures = connect_failures_.load();
  s.latency = latency_.snapshot();
}

}  // namespace pqot::srmcp::gateway
