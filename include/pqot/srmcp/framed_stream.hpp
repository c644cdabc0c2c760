// One SRMCP link's byte stream as frames (docs/srmcp.md §3): reads frames with the length checks
// done before allocation and a deadline for a frame once it has started; writes frames from a queue
// so that writers never overlap. All calls must come from the owning session's strand.
#pragma once

#include <array>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>

#include "pqot/channel/tls.hpp"
#include "pqot/channel/tls_socket.hpp"
#include "pqot/srmcp/wire.hpp"

namespace pqot::srmcp {

// SRMCP links are the channel layer's TLS connections, on OpenSSL directly (tls_socket.hpp).
using channel::Tcp;
using channel::TlsFiles;
using channel::TlsSocket;
using channel::TlsStream;  // asio's, for peers that are not FramedStreams (tests' raw clients)

struct RawFrame {
  FrameHeader header;
  std::array<std::uint8_t, kPreHeaderSize + kFrameHeaderSize> aad{};  ///< pre-header || header
  Bytes body;
};

class FramedStream : public std::enable_shared_from_this<FramedStream> {
 public:
  FramedStream(TlsSocket stream, const Limits& limits, std::chrono::milliseconds frame_deadline);
  ~FramedStream();

  TlsSocket& tls() noexcept { return stream_; }
  /// Replaces the limits frames are read with (the client adopts the server's max_frame_body, §4).
  void set_limits(const Limits& limits) noexcept { limits_ = limits; }

  /// Runs `deadline` from now: if it passes before disarm(), the connection is closed and pending
  /// operations fail (handshake deadline, §2). Independent of the per-frame deadline that
  /// read_frame() keeps while it waits for the rest of a started frame; the earlier one wins.
  void arm(std::chrono::steady_clock::duration deadline);
  void disarm();
  /// Starts the watchdog; call once after construction, from the strand.
  void start_watchdog();

  /// Reads the next frame. Throws ProtocolError{close} for bad lengths or headers, and
  /// std::system_error when the connection ends or the frame deadline passes mid-frame.
  asio::awaitable<RawFrame> read_frame();
  /// The same, into `frame`, whose body's capacity is reused: a loop that keeps one RawFrame
  /// allocates nothing per frame here. A body over kKeptBodyCapacity is released first.
  asio::awaitable<void> read_frame(RawFrame& frame);
  static constexpr std::size_t kKeptBodyCapacity = 16 * 1024;
  /// Sends a complete frame: written at once when nothing is queued and the socket takes it,
  /// else queued behind what is; returns at once either way.
  void send(Bytes frame);
  /// The same for a frame the caller keeps: copied only if it has to wait in the queue.
  void send(ByteView frame);
  /// Closes the connection (idempotent). Pending reads and writes fail.
  void close() noexcept;
  /// Closes once every queued frame has been written (link rotation, §7), or when `deadline` has
  /// passed, whichever comes first: a peer that stops reading cannot keep the link open.
  void close_after_flush(
      std::chrono::steady_clock::duration deadline = std::chrono::seconds(10)) noexcept;
  bool closed() const noexcept { return closed_; }
  /// True once the armed deadline (or a frame deadline) closed the connection.
  bool deadline_passed() const noexcept { return deadline_passed_; }
  std::size_t queued() const noexcept { return queue_.size(); }
  /// Bytes queued and not yet written (including the write in flight).
  std::size_t queued_bytes() const noexcept { return queued_bytes_; }
  /// Called (on the strand) each time a write has completed and the queue shrank, so that a
  /// reader paused for backpressure can go on.
  void on_written(std::function<void()> fn) { on_written_ = std::move(fn); }

 private:
  void send(ByteView frame, Bytes* owned);
  asio::awaitable<void> fill(std::size_t n);
  asio::awaitable<void> write_loop();
  asio::awaitable<void> watchdog();
  void set_frame_deadline(bool on);
  void reschedule();

  TlsSocket stream_;
  Limits limits_;
  std::chrono::milliseconds frame_deadline_;
  asio::steady_timer timer_;  // expires at min(outer_deadline_, frame_deadline_at_)
  std::chrono::steady_clock::time_point outer_deadline_ =
      std::chrono::steady_clock::time_point::max();
  std::chrono::steady_clock::time_point frame_deadline_at_ =
      std::chrono::steady_clock::time_point::max();
  // Received bytes live in in_[in_begin_, in_end_). The buffer is reused, and grows (rarely) only
  // for a frame larger than it; it is never re-zeroed per read.
  Bytes in_;
  std::size_t in_begin_ = 0;
  std::size_t in_end_ = 0;
  // out_[out_done_..] is being written (a write that took part of it goes on with the rest);
  // queue_ waits behind it.
  Bytes out_;
  std::size_t out_done_ = 0;
  std::deque<Bytes> queue_;
  std::size_t queued_bytes_ = 0;
  std::function<void()> on_written_;
  bool deadline_passed_ = false;
  bool writing_ = false;
  bool close_when_flushed_ = false;
  bool closed_ = false;
};

}  // namespace pqot::srmcp
