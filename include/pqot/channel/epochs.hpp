// The receiving side of epoch rekeying (docs/channel.md, "Epochs"): the current epoch's state, the
// next one derived on demand but adopted only once something sealed with it authenticates (a
// forgery cannot move the receiver on), and a few previous epochs kept for a grace period for
// paths that lag behind.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <utility>

namespace pqot::channel {

/// `State` is whatever one epoch needs to open data (keys, AEAD contexts); it must be movable.
template <class State>
class EpochWindow {
 public:
  using Clock = std::chrono::steady_clock;

  struct Epoch {
    std::uint32_t number;
    State state;
    Clock::time_point retired{};  // when it stopped being current
  };

  /// `kept`: previous epochs kept; `grace`: how long each stays usable after it was replaced.
  EpochWindow(State first, std::size_t kept, Clock::duration grace)
      : current_{0, std::move(first), {}}, kept_(kept), grace_(grace) {}

  /// The epoch numbered `number`: the current one, a kept previous one, or, for current + 1, the
  /// next one made by `next(current state)` into `candidate`; nullptr if out of range. Call
  /// commit(candidate) once what it opened has authenticated.
  template <class Next>
  Epoch* find(std::uint32_t number, std::optional<Epoch>& candidate, Next&& next, Clock::time_point now = Clock::now()) {
    while (!previous_.empty() && now - previous_.back().retired > grace_) previous_.pop_back();
    if (number == current_.number) return &current_;
    if (number == current_.number + 1 && current_.number != UINT32_MAX) {
      candidate.emplace(Epoch{number, next(current_.state), {}});
      return &*candidate;
    }
    for (Epoch& e : previous_) {
      if (e.number == number) return &e;
    }
    return nullptr;
  }

  /// Adopts `candidate` (if any) as the current epoch; the old current one is kept for the grace period.
  void commit(std::optional<Epoch>& candidate, Clock::time_point now = Clock::now()) {
    if (!candidate) return;
    current_.retired = now;
    previous_.push_front(std::move(current_));
    if (previous_.size() > kept_) previous_.pop_back();
    current_ = std::move(*candidate);
    candidate.reset();
  }

  std::uint32_t current() const noexcept { return current_.number; }
  std::size_t kept() const noexcept { return previous_.size(); }

 private:
  Epoch current_;
  std::deque<Epoch> previous_;  // newest first
  std::size_t kept_;
  Clock::duration grace_;
};

}  // namespace pqot::channel
