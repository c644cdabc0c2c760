#include "pqot/srmcp/framed_stream.hpp"

#include <algorithm>
#include <cstring>

namespace pqot::srmcp {

namespace {
constexpr std::size_t kReadChunk = 16 * 1024;
}

FramedStream::FramedStream(TlsSocket stream, const Limits& limits,
                           std::chrono::milliseconds frame_deadline)
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
  frame_deadline_at_ = on ? std::chrono::steady_clock::now() + frame_deadline_
                          : std::chrono::steady_clock::time_point::max();
  reschedule();
}

void FramedStream::reschedule() {
  timer_.expires_at(std::min(outer_deadline_, frame_deadline_at_));
}

void FramedStream::start_watchdog() {
  asio::co_spawn(
      stream_.get_executor(), [self = shared_from_this()] { return self->watchdog(); },
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
  out_.clear();
  out_done_ = 0;
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
      if (in_end_ > in_begin_)
        std::memmove(in_.data(), in_.data() + in_begin_, in_end_ - in_begin_);
      in_end_ -= in_begin_;
      in_begin_ = 0;
      if (in_.size() < std::max(n, kReadChunk)) in_.resize(std::max(n, kReadChunk));
    }
    // What TLS has (or the kernel) is taken at once; only when there is nothing does the read wait.
    if (closed_) throw std::system_error(asio::error::operation_aborted);
    const std::size_t k = stream_.read_now(std::span(in_.data() + in_end_, in_.size() - in_end_));
    if (k == 0) {
      co_await stream_.wait_for_read();
      continue;
    }
    in_end_ += k;
  }
}

asio::awaitable<RawFrame> FramedStream::read_frame() {
  RawFrame f;
  co_await read_frame(f);
  co_return f;
}

asio::awaitable<void> FramedStream::read_frame(RawFrame& f) {
  // Keep the body's capacity for frames of usual size, not for the largest ever seen.
  if (f.body.capacity() > kKeptBodyCapacity) Bytes().swap(f.body);
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
  const auto pre = parse_pre_header(
      std::span<const std::uint8_t, kPreHeaderSize>(in_.data() + in_begin_, kPreHeaderSize),
      limits_);
  // body_len was bounded by parse_pre_header before anything is sized from it.
  const std::size_t total = kAad + pre.body_len;
  if (!buffered(total)) {
    if (!waited) set_frame_deadline(true);
    waited = true;
    co_await fill(kAad);
  }
  std::memcpy(f.aad.data(), in_.data() + in_begin_, f.aad.size());
  f.header = parse_frame_header(std::span<const std::uint8_t, kFrameHeaderSize>(
      f.aad.data() + kPreHeaderSize, kFrameHeaderSize));
  co_await fill(total);
  const auto* body = in_.data() + in_begin_ + kAad;
  f.body.assign(body, body + pre.body_len);
  in_begin_ += total;
  if (in_begin_ == in_end_) in_begin_ = in_end_ = 0;
  if (waited) set_frame_deadline(false);
}

void FramedStream::send(Bytes frame) {
  send(ByteView(frame), &frame);
}

void FramedStream::send(ByteView frame) {
  send(frame, nullptr);
}

// `owned`, when given, holds `frame` and may be taken rather than copied.
void FramedStream::send(ByteView frame, Bytes* owned) {
  if (closed_) return;
  if (!writing_) {
    // Nothing queued: straight to the socket, and done here when it takes the whole frame.
    std::size_t done = 0;
    try {
      for (std::size_t k = 1; done < frame.size() && k > 0; done += k) {
        k = stream_.write_now(frame.subspan(done));
      }
    } catch (const std::system_error&) {
      close();
      return;
    }
    if (done == frame.size()) return;
    if (owned != nullptr) {
      out_ = std::move(*owned);
    } else {
      out_.assign(frame.begin(), frame.end());
    }
    out_done_ = done;
    queued_bytes_ += out_.size() - done;
    writing_ = true;
    asio::co_spawn(
        stream_.get_executor(), [self = shared_from_this()] { return self->write_loop(); },
        asio::detached);
    return;
  }
  queued_bytes_ += frame.size();
  if (owned != nullptr) {
    queue_.push_back(std::move(*owned));
  } else {
    queue_.emplace_back(frame.begin(), frame.end());
  }
}

asio::awaitable<void> FramedStream::write_loop() {
  // Frames queued while a write waits go out together: they are joined into one buffer, so that
  // TLS makes few records (and few syscalls) of them.
  while (!closed_) {
    if (out_done_ == out_.size()) {
      if (queue_.empty()) break;
      out_ = std::move(queue_.front());
      queue_.pop_front();
      while (!queue_.empty() && out_.size() < 256 * 1024) {
        out_.insert(out_.end(), queue_.front().begin(), queue_.front().end());
        queue_.pop_front();
      }
      out_done_ = 0;
    }
    try {
      const std::size_t k = stream_.write_now(std::span(out_).subspan(out_done_));
      if (k == 0) {
        co_await stream_.wait_for_write();
        continue;
      }
      out_done_ += k;
      queued_bytes_ -= std::min(queued_bytes_, k);
    } catch (const std::system_error&) {
      close();
      break;
    }
    if (closed_) break;
    if (out_done_ == out_.size() && on_written_) on_written_();
  }
  writing_ = false;
  if (close_when_flushed_) close();
}

}  // namespace pqot::srmcp
