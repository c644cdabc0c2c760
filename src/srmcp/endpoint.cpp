#include "endpoint.hpp"

#include <ranges>

#include "pqot/channel/multipath.hpp"
#include "pqot/common/clock.hpp"
#include "pqot/crypto/random.hpp"

namespace pqot::srmcp {

namespace {
const KeySet& keys_for(const SessionKeys& k, Direction d) {
  return d == Direction::client_to_server ? k.c2s : k.s2c;
}
}  // namespace

std::uint32_t clock_skew_s(std::uint32_t timestamp_s) {
  const std::uint32_t now = common::unix_time_s();
  return timestamp_s > now ? timestamp_s - now : now - timestamp_s;
}

Endpoint::Endpoint(const SessionKeys& keys, Direction self, const Limits& limits,
                   std::uint32_t key_update_messages, std::chrono::seconds key_update_after,
                   std::size_t max_partial_bytes, std::shared_ptr<ReassemblyBudget> budget)
    : limits_(limits),
      send_(keys_for(keys, self), self, key_update_messages, key_update_after),
      receive_(keys_for(keys, channel::reverse(self)), channel::reverse(self)),
      reassembler_(limits, max_partial_bytes, std::move(budget)),
      rng_(crypto::random_u64()) {}

void Endpoint::add_link(std::shared_ptr<Link> link) {
  links_[link->id] = std::move(link);
}

void Endpoint::remove_link(std::uint32_t id) {
  auto it = links_.find(id);
  if (it == links_.end()) return;
  it->second->stream->close();
  links_.erase(it);
}

std::shared_ptr<Link> Endpoint::link(std::uint32_t id) const {
  auto it = links_.find(id);
  return it == links_.end() ? nullptr : it->second;
}

std::optional<Message> Endpoint::on_frame(Link& link, const RawFrame& frame) {
  const FrameHeader& h = frame.header;
  if (h.type != FrameType::sealed) {
    throw ProtocolError(Action::close, Status::wrong_phase,
                        "frame type not allowed on an open link");
  }
  if (h.link_id != link.id)
    throw ProtocolError(Action::close, Status::bad_request, "frame for another link");
  if (h.seq != link.recv_seq) {
    throw ProtocolError(
        Action::close, Status::replay,
        "frame sequence " + std::to_string(h.seq) + ", expected " + std::to_string(link.recv_seq));
  }
  receive_.open_frame_into(h, frame.aad, frame.body, frame_plain_);
  ++link.recv_seq;  // only after authentication
  // Keep the scratch buffer's capacity for frames of usual size, not for the largest ever seen.
  struct Trim {
    Bytes& b;
    ~Trim() {
      if (b.capacity() > kKeptFrameCapacity) Bytes().swap(b);
    }
  } trim{frame_plain_};
  const Segment segment = parse_segment(frame_plain_, limits_);
  // A one-segment message is opened where it lies in the frame; only a part is copied, to wait
  // for the others.
  std::optional<Bytes> reassembled;
  ByteView whole = segment.data;
  if (!Reassembler::is_whole(segment)) {
    reassembled = reassembler_.add(segment);
    if (!reassembled) return std::nullopt;
    whole = *reassembled;
  }
  // A message that fails inside authenticated frames came from a peer holding the frame keys: its
  // transaction (the segments' tid, authenticated with the frames) is answered BAD_REQUEST (§9).
  const auto answer = [&](const ProtocolError& e) {
    if (e.action() == Action::drop && segment.header.tid != 0) {
      throw ProtocolError(Action::reply, e.status(), e.what(), segment.header.tid);
    }
    throw e;
  };
  Message m{{}, std::move(spare_body_)};  // a body handed back by recycle(), if any
  try {
    m.header = receive_.open_message_into(whole, m.body);
  } catch (const ProtocolError& e) {
    answer(e);
  }
  if (m.header.tid != segment.header.tid || m.header.msg_seq != segment.header.msg_seq) {
    answer(ProtocolError(Action::drop, Status::bad_request,
                         "message header disagrees with its segments"));
  }
  return m;
}

void Endpoint::recycle(Bytes body) noexcept {
  if (body.capacity() <= kKeptFrameCapacity) spare_body_ = std::move(body);
}

// Uniformly among the links not being retired (§8.2); links whose queue is over the cap (a peer
// not reading them) are left out while another link has room.
namespace {
bool usable(const Link& l) {
  return !l.draining && !l.stream->closed();
}
}  // namespace

Link& Endpoint::random_link() {
  const auto roomy = [&](const std::shared_ptr<Link>& l) {
    return link_queue_cap_ == 0 || l->stream->queued_bytes() <= link_queue_cap_;
  };
  const auto picked = channel::pick_path(
      std::views::values(links_), [](const std::shared_ptr<Link>& l) { return usable(*l); }, roomy,
      rng_);
  if (!picked) throw ProtocolError(Action::close, Status::internal, "no link to send on");
  return *picked;
}

std::size_t Endpoint::queued_bytes() const noexcept {
  std::size_t n = 0;
  for (const auto& [id, link] : links_) n += link->stream->queued_bytes();
  return n;
}

std::size_t Endpoint::usable_links() const noexcept {
  std::size_t n = 0;
  for (const auto& [id, link] : links_) n += usable(*link) ? 1 : 0;
  return n;
}

void Endpoint::send_segment(Link& link, const SegmentHeader& h, ByteView data) {
  segment_plain_.clear();
  encode_segment_header(h, segment_plain_);
  segment_plain_.insert(segment_plain_.end(), data.begin(), data.end());
  send_.seal_frame_into(FrameType::sealed, link.id, link.send_seq++, segment_plain_, frame_out_);
  link.stream->send(ByteView(frame_out_));  // copied only if it must wait in the link's queue
}

// The send buffers are kept for the next message unless a large one grew them.
void Endpoint::trim_send_buffers() noexcept {
  for (Bytes* b : {&sealed_, &segment_plain_, &frame_out_}) {
    if (b->capacity() > kKeptFrameCapacity) Bytes().swap(*b);
  }
}

std::uint64_t Endpoint::send(MessageHeader header, ByteView body, std::uint16_t max_segments) {
  send_.seal_message_into(header, body, sealed_);
  const ByteView sealed(sealed_);
  const auto total = static_cast<std::uint32_t>(sealed.size());
  // Each segment must also fit in one frame.
  const std::uint32_t frame_room = limits_.max_frame_body - kSegmentHeaderSize - kTagSize;
  const auto segments = channel::fragment_count(total, frame_room, max_segments,
                                                static_cast<std::uint32_t>(usable_links()),
                                                limits_.max_segments, rng_);
  if (!segments)
    throw ProtocolError(Action::reply, Status::too_large, "message too large", header.tid);
  const auto count = static_cast<std::uint16_t>(*segments);
  for (std::uint16_t i = 0; i < count; ++i) {
    const auto [offset, size] = segment_span(total, count, i);
    SegmentHeader sh{header.tid, header.msg_seq, i, count, total, offset};
    send_segment(random_link(), sh, sealed.subspan(offset, size));
  }
  trim_send_buffers();
  return header.msg_seq;
}

std::uint64_t Endpoint::send_on(Link& link, MessageHeader header, ByteView body) {
  send_.seal_message_into(header, body, sealed_);
  const auto total = static_cast<std::uint32_t>(sealed_.size());
  send_segment(link, SegmentHeader{header.tid, header.msg_seq, 0, 1, total, 0}, sealed_);
  trim_send_buffers();
  return header.msg_seq;
}

Bytes Endpoint::seal_frame_on(Link& link, FrameType type, ByteView plaintext) {
  return send_.seal_frame(type, link.id, link.send_seq++, plaintext);
}

Bytes Endpoint::open_frame_on(Link& link, const RawFrame& frame, FrameType type) {
  const FrameHeader& h = frame.header;
  if (h.type != type || h.link_id != link.id || h.seq != link.recv_seq) {
    throw ProtocolError(Action::close, Status::bad_request, "unexpected frame on a new link");
  }
  Bytes plain = receive_.open_frame(h, frame.aad, frame.body);
  ++link.recv_seq;
  return plain;
}

std::size_t Endpoint::expire_partial(std::chrono::steady_clock::duration age) {
  return reassembler_.expire(std::chrono::steady_clock::now() - age);
}

void Endpoint::close_all() noexcept {
  for (auto& [id, link] : links_) link->stream->close();
}

}  // namespace pqot::srmcp
