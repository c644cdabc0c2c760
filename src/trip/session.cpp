// One TRIP session's datagram side (docs/trip.md §2, §6, §7).
#include "pqot/trip/session.hpp"

#include <bit>
#include <stdexcept>

namespace pqot::trip {

namespace {

EpochPolicy policy_of(const ServerHello& p) {
  return {p.key_update_datagrams, std::chrono::seconds(p.key_update_seconds)};
}

}  // namespace

const char* drop_reason_name(DropReason r) noexcept {
  switch (r) {
    case DropReason::malformed: return "malformed";
    case DropReason::unknown_session: return "unknown_session";
    case DropReason::unknown_flow: return "unknown_flow";
    case DropReason::auth: return "auth";
  }
  return "?";
}

Session::Session(SessionRole role, const SessionAgreement& a, Clock::time_point now)
    : role_(role),
      number_(a.session),
      peer_boot_(role == SessionRole::client ? a.server_boot : a.client_boot),
      client_path_(a.client_path),
      keepalive_(a.params.keepalive_ms),
      dead_after_(a.params.dead_after_ms),
      tx_(role == SessionRole::client ? a.keys.c2s : a.keys.s2c, policy_of(a.params), now),
      rx_(role == SessionRole::client ? a.keys.s2c : a.keys.c2s),
      last_alive_(now) {
  for (const SessionFlow& f : a.flows) {
    const bool client_reflects = f.dir == FlowDirection::client_reflects;
    const bool this_side_reflects = client_reflects == (role == SessionRole::client);
    (this_side_reflects ? reflects_ : filters_).insert(f.flow);
  }
}

std::size_t Session::seal_data(std::uint16_t flow, std::uint64_t label, crypto::ByteView payload, crypto::MutableByteView out,
                               Clock::time_point now) {
  if (!reflects(flow)) throw std::invalid_argument("TRIP session: flow " + std::to_string(flow) + " is not reflected here");
  const auto use = tx_.next(now);
  seal_datagram(use.aead, Header{DatagramType::data, use.epoch_low, number_, flow, label}, payload,
                out.first(payload.size() + kOverhead));
  return payload.size() + kOverhead;
}

std::size_t Session::seal_keepalive(crypto::MutableByteView out, Clock::time_point now) {
  const std::uint64_t counter = next_keepalive_++;
  KeepaliveBody body;
  if (highest_keepalive_ != 0) {
    body.echo = highest_keepalive_;
    const auto held = std::chrono::duration_cast<std::chrono::microseconds>(now - highest_keepalive_at_).count();
    body.held_us = held < 0 ? 0 : held > UINT32_MAX ? UINT32_MAX : static_cast<std::uint32_t>(held);
  }
  const auto use = tx_.next(now);
  seal_datagram(use.aead, Header{DatagramType::keepalive, use.epoch_low, number_, 0, counter}, encode_keepalive(body),
                out.first(kKeepaliveSize));
  sent_at_[counter % sent_at_.size()] = now;
  return kKeepaliveSize;
}

std::optional<Session::Opened> Session::open(const Header& h, crypto::ByteView datagram, crypto::MutableByteView out,
                                             Clock::time_point now, DropReason& why) {
  if (h.session != number_) {
    why = DropReason::unknown_session;
    return std::nullopt;
  }
  if (h.type == DatagramType::data && !filters(h.flow)) {
    why = DropReason::unknown_flow;
    return std::nullopt;
  }
  const std::size_t size = datagram.size() - kOverhead;
  if (!rx_.open(h, datagram, out.first(size), now)) {
    why = DropReason::auth;
    return std::nullopt;
  }
  return Opened{h.type, h.flow, h.counter, size};
}

bool Session::on_keepalive(std::uint64_t counter, const KeepaliveBody& body, Clock::time_point now) {
  bool fresh = false;
  if (counter > highest_keepalive_) {
    const std::uint64_t shift = counter - highest_keepalive_;
    keepalive_bits_ = shift >= 64 ? 0 : keepalive_bits_ << shift;
    keepalive_bits_ |= 1;
    highest_keepalive_ = counter;
    highest_keepalive_at_ = now;
    last_alive_ = now;
    ++keepalives_received_;
    fresh = true;
  } else if (highest_keepalive_ - counter < 64 && !((keepalive_bits_ >> (highest_keepalive_ - counter)) & 1)) {
    keepalive_bits_ |= std::uint64_t{1} << (highest_keepalive_ - counter);  // late, not replayed
    ++keepalives_received_;
  }
  // The echo must name a keepalive this session sent among its last 64.
  if (fresh && body.echo != 0 && body.echo < next_keepalive_ && next_keepalive_ - body.echo <= sent_at_.size()) {
    const auto since = std::chrono::duration_cast<std::chrono::microseconds>(now - sent_at_[body.echo % sent_at_.size()]);
    const auto rtt = since - std::chrono::microseconds(body.held_us);
    if (rtt.count() >= 0) {
      last_rtt_ = rtt;
      srtt_ = srtt_ ? std::chrono::microseconds((7 * srtt_->count() + rtt.count()) / 8) : rtt;
    }
  }
  return fresh;
}

unsigned Session::keepalives_missing() const noexcept {
  if (highest_keepalive_ == 0) return 0;
  const std::uint64_t span = highest_keepalive_ < 64 ? highest_keepalive_ : 64;
  const std::uint64_t mask = span == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << span) - 1;
  return static_cast<unsigned>(span - static_cast<unsigned>(std::popcount(keepalive_bits_ & mask)));
}

}  // namespace pqot::trip
