#include "pqot/srmcp/framed_stream.hpp"

#include <algorithm>
#include <cstring>

namespace pqot::srmcp {

namespace {
constexpr std::size_t kReadChunk = 16 * 1024;
}

FramedStream::FramedStream(TlsStream stream, const Limits& limits, std::chrono::milliseconds frame_deadline)
    : stream_(std::move(stream)),
      limits_(limits),
      frame_deadline_(frame_deadline),
      timer_(stream_.get_executor()) {
  timer_.expires_at(std::chrono::steady_clock::time_point::max());
}

FramedStream::~FramedStream() = default;

void FramedStream::arm(std::chrono::steady_clock::duration deadline) {
  outer_deadline_ = std::chrono::steady_clock::now() + deadline;
  reschedule();
}

void FramedStream::disarm() {
  outer_deadline_ = std::chrono::steady_clock::time_point::max();
  reschedule();
}

void FramedStream::set_frame_deadline(bool on) {
  frame_deadline_at_ =
      on ? std::chrono::steady_clock::now() + frame_deadline_ : std::chrono::steady_clock::time_point::max();
  reschedule();
}

void FramedStream::reschedule() { timer_.expires_at(std::min(outer_deadline_, frame_deadline_at_)); }

void FramedStream::start_watchdog() {
  asio::co_spawn(stream_.get_executor(), [self = shared_from_this()] { return self->watchdog(); },
                 asio::detached);
}

// The watchdog pattern: the timer is re-armed by arm()/disarm(); waking up with the expiry in the
// past means the deadline really passed.
asio::awaitable<void> FramedStream::watchdog() {
  while (!closed_) {
    asio::error_code ec;
    co_await timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (closed_) break;
    if (timer_.expiry() <= std::chrono::steady_clock::now()) {
      deadline_passed_ = true;
      close();
      break;
    }
  }
}

void FramedStream::close() noexcept {
  if (closed_) return;
  closed_ = true;
  asio::error_code ec;
  stream_.lowest_layer().shutdown(Tcp::socket::shutdown_both, ec);
  stream_.lowest_layer().close(ec);
  timer_.cancel();
  queue_.clear();
  queued_bytes_ = 0;
  if (on_written_) {
    // The queue is gone for good: wake a paused reader, then let go of the callback (it may hold
    // the session).
    auto fn = std::move(on_written_);
    on_written_ = nullptr;
    fn();
  }
}

void FramedStream::close_after_flush(std::chrono::steady_clock::duration deadline) noexcept {
  if (!writing_) {
    close();
  } else {
    close_when_flushed_ = true;
    arm(deadline);  // the watchdog closes it if the peer does not take the rest in time
  }
}

asio::awaitable<void> FramedStream::fill(std::size_t n) {
  while (in_end_ - in_begin_ < n) {
    if (in_.size() - in_begin_ < n || in_end_ == in_.size()) {
      // Move what is unread to the front; grow only if the frame needs more room.
      if (in_end_ > in_begin_) std::memmove(in_.data(), in_.data() + in_begin_, in_end_ - in_begin_);
      in_end_ -= in_begin_;
      in_begin_ = 0;
      if (in_.size() < std::max(n, kReadChunk)) in_.resize(std::max(n, kReadChunk));
    }
    in_end_ += co_await stream_.async_read_some(asio::buffer(in_.data() + in_end_, in_.size() - in_end_),
                                                asio::use_awaitable);
  }
}

asio::awaitable<RawFrame> FramedStream::read_frame() {
  // No deadline while the link is idle; once a frame has started, waiting for the rest of it is
  // bounded (§12). A frame that is already buffered needs no timer at all.
  if (in_end_ == in_begin_) co_await fill(1);
  bool waited = false;
  auto buffered = [this](std::size_t n) { return in_end_ - in_begin_ >= n; };
  constexpr std::size_t kAad = kPreHeaderSize + kFrameHeaderSize;
  if (!buffered(kAad)) {
    set_frame_deadline(true);
    waited = true;
    co_await fill(kPreHeaderSize);
  }
  RawFrame f;
  const auto pre = parse_pre_header(
      std::span<const std::uint8_t, kPreHeaderSize>(in_.data() + in_begin_, kPreHeaderSize), limits_);
  // body_len was bounded by parse_pre_header before anything is sized from it.
  const std::size_t total = kAad + pre.body_len;
  if (!buffered(total)) {
    if (!waited) set_frame_deadline(true);
    waited = true;
    co_await fill(kAad);
  }
  std::memcpy(f.aad.data(), in_.data() + in_begin_, f.aad.size());
  f.header = parse_frame_header(std::span<const std::uint8_t, kFrameHeaderSize>(f.aad.data() + kPreHeaderSize,
                                                                                kFrameHeaderSize));
  co_await fill(total);
  const auto* body = in_.data() + in_begin_ + kAad;
  f.body.assign(body, body + pre.body_len);
  in_begin_ += total;
  if (in_begin_ == in_end_) in_begin_ = in_end_ = 0;
  if (waited) set_frame_deadline(false);
  co_return f;
}

void FramedStream::send(Bytes frame) {
  if (closed_) return;
  queued_bytes_ += frame.size();
  queue_.push_back(std::move(frame));
  if (writing_) return;
  writing_ = true;
  asio::co_spawn(stream_.get_executor(), [self = shared_from_this()] { return self->write_loop(); },
                 asio::detached);
}

asio::awaitable<void> FramedStream::write_loop() {
  // Frames queued while a write is in flight go out together in the next write. They are joined
  // into one buffer: asio's TLS stream would otherwise make one record (and one syscall) per frame.
  Bytes out;
  while (!queue_.empty() && !closed_) {
    out = std::move(queue_.front());
    queue_.pop_front();
    while (!queue_.empty() && out.size() < 256 * 1024) {
      out.insert(out.end(), queue_.front().begin(), queue_.front().end());
      queue_.pop_front();
    }
    asio::error_code ec;
    co_await asio::async_write(stream_, asio::buffer(out), asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      close();
      break;
    }
    if (closed_) break;
    queued_bytes_ -= std::min(queued_bytes_, out.size());
    if (on_written_) on_written_();
  }
  writing_ = false;
  if (close_when_flushed_) close();
}

}  // namespace pqot::srmcp
