// One Modbus TCP connection to a device, on Asio (docs/srmcpd-modbus.md, "Failures"): connecting
// with exponential backoff, one request at a time with a transaction id and a deadline, answers
// read through a bounded MBAP reader, error classes and per-device counters. Confined to its
// device's strand; the counters may be read from any thread.
#pragma once

#include <array>
#include <asio.hpp>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "pqot/metrics/histogram.hpp"
#include "pqot/modbus/pdu.hpp"
#include "pqot/srmcp/config.hpp"
#include "pqot/srmcp/gateway.hpp"

namespace pqot::srmcp::gateway {

using Strand = asio::strand<asio::io_context::executor_type>;

class Connection {
 public:
  using Clock = std::chrono::steady_clock;

  /// What a request came to. `ok`: `pdu` is the answer's PDU, its function not yet checked
  /// (modbus::decode_*); otherwise `status` says what the request's nodes report, and the
  /// connection is already closed and backing off.
  struct Reply {
    Status status = Status::backend_error;
    std::span<const std::uint8_t> pdu;  ///< valid until the next request
  };

  Connection(const ModbusDeviceConfig& cfg, std::string label, const Strand& strand);
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  /// Connects unless connected or still backing off after a failure; true if connected.
  asio::awaitable<bool> ensure_connected();
  /// Closes the socket and cancels what waits on it (stop: nothing reconnects afterwards).
  void shut_down();
  bool connected() const { return connected_; }
  /// The status of the last failure: what requests get while the connection backs off.
  Status last_failure() const { return last_failure_; }

  /// Sends one request PDU and reads its answer within the device's timeout_ms.
  asio::awaitable<Reply> transact(std::span<const std::uint8_t> pdu);

  /// An exception answer: counted; the connection stays.
  void on_exception(const modbus::Answer& a, const char* what);
  /// An answer that does not fit its request: BACKEND_ERROR, the connection is dropped.
  Status on_malformed(const modbus::Answer& a, const char* what);

  /// Adds the connection's counters to `s`.
  void add_stats(DeviceStats& s) const;

 private:
  asio::awaitable<asio::error_code> read_answer(std::uint16_t tid);
  void arm(std::chrono::milliseconds limit);
  void disarm();
  void wait_for_deadline();
  void disconnect(Status why, const std::string& what);
  void schedule_retry(Status why);

  const ModbusDeviceConfig& cfg_;
  const std::string label_;
  asio::ip::tcp::socket socket_;
  asio::ip::tcp::resolver resolver_;
  asio::steady_timer deadline_;  // one per connection: requests are serialised
  Clock::time_point deadline_at_ = Clock::time_point::max();  // of the operation under way
  bool deadline_waiting_ = false;
  bool timed_out_ = false;
  bool shut_down_ = false;
  std::uint16_t next_tid_ = 0;
  std::array<std::uint8_t, modbus::kMbapHeaderSize> header_{};
  std::array<std::uint8_t, modbus::kMaxPduSize> pdu_{};  // an answer's PDU, bounded by the header check
  std::size_t pdu_size_ = 0;
  std::string framing_error_;  // why the last answer's header was refused

  bool connected_ = false;
  bool was_down_ = false;
  Clock::time_point next_attempt_{};
  Clock::duration backoff_{0};
  Status last_failure_ = Status::backend_error;

  std::atomic<bool> connected_flag_{false};
  std::atomic<std::uint64_t> transactions_{0}, comm_errors_{0}, timeouts_{0}, exceptions_{0}, connects_{0},
      connect_failures_{0};
  metrics::LatencyHistogram latency_;
};

}  // namespace pqot::srmcp::gateway
