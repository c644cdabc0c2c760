// TRIP's key schedule and epochs (docs/trip.md §5, §6).
#include "pqot/trip/session_keys.hpp"

namespace pqot::trip {

namespace {

const channel::KeySchedule& schedule() {
  static const channel::KeySchedule s(kLabelPrefix);
  return s;
}

}  // namespace

SessionKeys derive_session_keys(crypto::ByteView exporter, crypto::ByteView kem_secret, const channel::Digest& th) {
  const channel::Key prk = channel::KeySchedule::extract(exporter, kem_secret);
  SessionKeys k;
  k.c2s = schedule().expand(prk, "c2s data", th);
  k.s2c = schedule().expand(prk, "s2c data", th);
  const channel::Key confirm = schedule().expand(prk, "ready", th);
  k.ready = schedule().mac(confirm, "ready", {th});
  return k;
}

SendKeys::SendKeys(const channel::Key& first, EpochPolicy policy, Clock::time_point now)
    : key_(first), aead_(key_.span()), policy_(policy), started_(now) {
  if (policy_.datagrams == 0 || policy_.age.count() <= 0) {
    throw std::invalid_argument("TRIP epoch policy: datagrams and age must be positive");
  }
}

SendKeys::Use SendKeys::next(Clock::time_point now) {
  const bool due = used_ >= policy_.datagrams || now - started_ >= policy_.age;
  if (due && epoch_ != UINT32_MAX) {
    key_ = schedule().next_epoch(key_);  // the old value is overwritten in place
    aead_ = crypto::Aes256Gcm(key_.span());
    ++epoch_;
    used_ = 0;
    started_ = now;
  }
  if (used_ != UINT32_MAX) ++used_;
  return {aead_, static_cast<std::uint8_t>(epoch_ & 0x3f)};
}

ReceiveKeys::State ReceiveKeys::make_state(const channel::Key& k) { return State{k, crypto::Aes256Gcm(k.span())}; }

ReceiveKeys::ReceiveKeys(const channel::Key& first) : window_(make_state(first), kKeptEpochs, kEpochGrace) {}

bool ReceiveKeys::open(const Header& h, crypto::ByteView datagram, crypto::MutableByteView out, Clock::time_point now) {
  // The epochs held are current - kKeptEpochs .. current + 1: five consecutive numbers, so the
  // low six bits name at most one of them.
  const std::uint32_t current = window_.current();
  const std::uint32_t low = current >= kKeptEpochs ? current - static_cast<std::uint32_t>(kKeptEpochs) : 0;
  const std::uint32_t high = current == UINT32_MAX ? current : current + 1;
  std::optional<std::uint32_t> number;
  for (std::uint32_t n = low;; ++n) {
    if ((n & 0x3f) == h.epoch_low) number = n;
    if (n == high) break;
  }
  if (!number) return false;
  std::optional<channel::EpochWindow<State>::Epoch> candidate;
  auto* epoch = window_.find(*number, candidate, [](const State& s) { return make_state(schedule().next_epoch(s.key)); }, now);
  if (epoch == nullptr) return false;
  if (!open_datagram(epoch->state.aead, h, datagram, out)) return false;
  window_.commit(candidate, now);
  return true;
}

}  // namespace pqot::trip
