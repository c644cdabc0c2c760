// One libmodbus TCP connection to a device: connect, backoff, requests, error classification.
#include "connection.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>

namespace pqot::srmcp::gateway {

namespace {

std::string errno_text(int e) { return modbus_strerror(e); }

}  // namespace

Connection::Connection(const ModbusDeviceConfig& cfg, std::string label) : cfg_(cfg), label_(std::move(label)) {}

Connection::~Connection() {
  close();
  if (ctx_) modbus_free(ctx_);
}

bool Connection::is_exception(int e) { return e >= EMBXILFUN && e <= EMBXGTAR; }

bool Connection::ensure_connected() {
  if (connected_) return true;
  const auto now = Clock::now();
  if (now < next_attempt_) return false;
  if (!ctx_) {
    ctx_ = modbus_new_tcp_pi(cfg_.host.c_str(), std::to_string(cfg_.port).c_str());
    if (!ctx_) {
      spdlog::error("device {}: cannot create a Modbus context for {}", cfg_.name, label_);
      schedule_retry(Status::backend_error);
      return false;
    }
    modbus_set_slave(ctx_, cfg_.unit);
  }
  set_timeout(cfg_.connect_timeout);
  if (modbus_connect(ctx_) == -1) {
    const int e = errno;
    ++connect_failures_;
    const bool first = !was_down_;
    schedule_retry(e == ETIMEDOUT ? Status::timeout : Status::backend_error);
    if (first) {
      spdlog::warn("device {} ({}): cannot connect: {}; retrying in {} ms", cfg_.name, label_, errno_text(e),
                   std::chrono::duration_cast<std::chrono::milliseconds>(backoff_).count());
    } else {
      spdlog::debug("device {}: reconnect failed: {}; next in {} ms", cfg_.name, errno_text(e),
                    std::chrono::duration_cast<std::chrono::milliseconds>(backoff_).count());
    }
    was_down_ = true;
    return false;
  }
  set_timeout(cfg_.timeout);
  connected_ = true;
  connected_flag_ = true;
  ++connects_;
  spdlog::info("device {} ({}): connected", cfg_.name, label_);
  was_down_ = false;
  return true;
}

void Connection::close() {
  if (ctx_ && connected_) modbus_close(ctx_);
  connected_ = false;
  connected_flag_ = false;
}

int Connection::read(modbus::Table table, int start, int count, std::span<std::uint8_t> bits,
                     std::span<std::uint16_t> regs) {
  return transact([&] {
    switch (table) {
      case modbus::Table::coil: return modbus_read_bits(ctx_, start, count, bits.data());
      case modbus::Table::discrete_input: return modbus_read_input_bits(ctx_, start, count, bits.data());
      case modbus::Table::holding_register: return modbus_read_registers(ctx_, start, count, regs.data());
      case modbus::Table::input_register: return modbus_read_input_registers(ctx_, start, count, regs.data());
    }
    return -1;
  });
}

int Connection::write(const modbus::Point& p, const std::vector<std::uint16_t>& regs) {
  return transact([&] {
    if (modbus::is_bit_table(p.table)) return modbus_write_bit(ctx_, p.address, regs.at(0) != 0 ? 1 : 0);
    if (p.count == 1) return modbus_write_register(ctx_, p.address, regs.at(0));
    return modbus_write_registers(ctx_, p.address, p.count, regs.data());
  });
}

int Connection::transact(const std::function<int()>& f) {
  const auto t0 = Clock::now();
  const int rc = f();
  const int saved = errno;
  ++transactions_;
  latency_.observe(Clock::now() - t0);
  if (rc >= 0) backoff_ = Clock::duration::zero();  // the device works: the next failure starts afresh
  errno = saved;
  return rc;
}

Status Connection::on_error(int e, const char* what) {
  if (is_exception(e)) {
    ++exceptions_;
    spdlog::debug("device {}: {} answered with exception: {}", cfg_.name, what, errno_text(e));
    return Status::device_exception;
  }
  if (e == ETIMEDOUT) {
    ++timeouts_;
    // A late answer could still arrive and be taken for the next request's: start afresh.
    disconnect(Status::timeout, std::string(what) + " timed out");
    return Status::timeout;
  }
  ++comm_errors_;
  disconnect(Status::backend_error, std::string(what) + " failed: " + errno_text(e));
  return Status::backend_error;
}

void Connection::disconnect(Status why, const std::string& what) {
  if (connected_) modbus_close(ctx_);
  connected_ = false;
  connected_flag_ = false;
  schedule_retry(why);
  if (!was_down_) {
    spdlog::warn("device {} ({}): {}; reconnecting in {} ms", cfg_.name, label_, what,
                 std::chrono::duration_cast<std::chrono::milliseconds>(backoff_).count());
  }
  was_down_ = true;
}

void Connection::schedule_retry(Status why) {
  last_failure_ = why;
  backoff_ = backoff_ == Clock::duration::zero() ? Clock::duration(cfg_.backoff_min)
                                                 : std::min<Clock::duration>(backoff_ * 2, cfg_.backoff_max);
  next_attempt_ = Clock::now() + backoff_;
}

void Connection::set_timeout(std::chrono::milliseconds t) {
  const auto ms = static_cast<std::uint32_t>(t.count());
  modbus_set_response_timeout(ctx_, ms / 1000, (ms % 1000) * 1000);
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
