// The link-independent half of an SRMCP session, shared by client and server: per-link frame
// sequence checks, frame and message crypto, reassembly, and segmenting outgoing messages over
// random links (docs/srmcp.md §3, §8, §9, §10). Everything runs on the session's strand.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <random>

#include "pqot/srmcp/framed_stream.hpp"
#include "pqot/srmcp/reassembly.hpp"
#include "pqot/srmcp/requests.hpp"
#include "pqot/srmcp/session_crypto.hpp"

namespace pqot::srmcp {

struct Link {
  std::uint32_t id = 0;
  std::shared_ptr<FramedStream> stream;
  std::uint64_t recv_seq = 0;  ///< next expected frame seq from the peer (§3)
  std::uint64_t send_seq = 0;  ///< next frame seq to send
  bool draining = false;       ///< being closed (§7 rotation): no new frames are sent on it
  std::chrono::steady_clock::time_point attached = std::chrono::steady_clock::now();
};

struct Message {
  MessageHeader header;
  Bytes body;
};

class Endpoint {
 public:
  /// `self` is the direction this side sends in.
  /// `max_partial_bytes` and `budget` bound reassembly memory (Reassembler).
  Endpoint(const SessionKeys& keys, Direction self, const Limits& limits,
           std::uint32_t key_update_messages, std::chrono::seconds key_update_after,
           std::size_t max_partial_bytes = 0, std::shared_ptr<ReassemblyBudget> budget = nullptr);

  void add_link(std::shared_ptr<Link> link);
  void remove_link(std::uint32_t id);
  std::shared_ptr<Link> link(std::uint32_t id) const;
  std::size_t link_count() const noexcept { return links_.size(); }
  /// Links new frames may use (not draining).
  std::size_t usable_links() const noexcept;
  const std::map<std::uint32_t, std::shared_ptr<Link>>& links() const noexcept { return links_; }

  /// Processes one frame received on `link`. Returns a complete authenticated message, if this
  /// frame completed one. Throws ProtocolError: close (the link must be closed), drop (ignore),
  /// reply.
  std::optional<Message> on_frame(Link& link, const RawFrame& frame);
  /// Hands back the body of a message on_frame() returned, once it has been handled: the next
  /// message is opened into it, so a steady stream of requests allocates nothing for bodies.
  void recycle(Bytes body) noexcept;

  /// Seals `body` as one message and sends it: `max_segments` > 1 splits it into a random number of
  /// segments (1..min(links, max_segments)) on random links (§8.2). `tid` 0 for notifications.
  /// Returns the msg_seq used.
  std::uint64_t send(MessageHeader header, ByteView body, std::uint16_t max_segments = 1);
  /// Sends a one-segment message on a specific link (SESSION_READY on the control connection).
  std::uint64_t send_on(Link& link, MessageHeader header, ByteView body);
  /// Seals a frame of `type` carrying `plaintext` directly (LINK_READY, §7) on `link`.
  Bytes seal_frame_on(Link& link, FrameType type, ByteView plaintext);
  /// Checks and opens such a frame (type, link id, sequence) and returns its plaintext.
  Bytes open_frame_on(Link& link, const RawFrame& frame, FrameType type);

  /// Drops partial messages older than `age` (§8.2); returns how many.
  std::size_t expire_partial(std::chrono::steady_clock::duration age);
  /// When the oldest partial message started, if any (for an expiry timer).
  std::optional<std::chrono::steady_clock::time_point> oldest_partial() const {
    return reassembler_.oldest();
  }

  /// Bytes waiting to be written on all links.
  std::size_t queued_bytes() const noexcept;
  /// A link whose queue holds more than this gets no new frames while another link has room.
  void set_link_queue_cap(std::size_t bytes) noexcept { link_queue_cap_ = bytes; }
  /// Closes every link.
  void close_all() noexcept;

  std::mt19937_64& rng() noexcept { return rng_; }
  const Limits& limits() const noexcept { return limits_; }

 private:
  Link& random_link();
  void send_segment(Link& link, const SegmentHeader& h, ByteView data);
  void trim_send_buffers() noexcept;

  Limits limits_;
  SendState send_;
  ReceiveState receive_;
  Reassembler reassembler_;
  // on_frame()'s plaintext, reused frame after frame (inner-layer ciphertext, no secret); past
  // kKeptFrameCapacity it is released after the frame.
  static constexpr std::size_t kKeptFrameCapacity = 16 * 1024;
  Bytes frame_plain_;
  // send()'s sealed message, segment plaintext and sealed frame, reused message after message
  // (ciphertext and segment headers, no secret); released past kKeptFrameCapacity likewise.
  Bytes sealed_;
  Bytes spare_body_;  // see recycle()
  Bytes segment_plain_;
  Bytes frame_out_;
  std::map<std::uint32_t, std::shared_ptr<Link>> links_;
  std::mt19937_64 rng_;
  std::size_t link_queue_cap_ = 0;  // 0 = none
};

/// §10: how far `timestamp_s` (a message header's) is from this clock, in whole seconds.
std::uint32_t clock_skew_s(std::uint32_t timestamp_s);
/// §10: whether such a skew is outside a window of `window_ms` (whole seconds: ceil(window_ms /
/// 1000)).
inline bool outside_window(std::uint32_t skew_s, std::uint32_t window_ms) {
  return skew_s > (window_ms + 999) / 1000;
}

}  // namespace pqot::srmcp
