// TRIP's filter for one flow (docs/trip.md §8).
#include "pqot/trip/filter.hpp"

#include <algorithm>
#include <utility>

namespace pqot::trip {

void FlowFilter::retire(const BootWindow& w) noexcept {
  retired_[retired_next_] = w.boot;
  retired_next_ = (retired_next_ + 1) % retired_.size();
}

bool FlowFilter::boot_retired(std::uint64_t boot) const noexcept {
  return boot != 0 && std::find(retired_.begin(), retired_.end(), boot) != retired_.end();
}

void FlowFilter::start_boot(std::uint64_t boot, Clock::time_point now) {
  if (current_ && current_->boot == boot) return;
  std::optional<BootWindow> back;
  if (previous_ && previous_->boot == boot) back = std::move(previous_);
  if (previous_) retire(*previous_);
  if (current_) {
    current_->retired = now;
    previous_ = std::move(current_);
  } else {
    previous_.reset();
  }
  if (back) {
    current_ = std::move(back);
    current_->retired = {};
  } else {
    current_.emplace(boot);
  }
}

FlowFilter::BootWindow* FlowFilter::find(std::uint64_t boot, Clock::time_point now) {
  if (previous_ && now - previous_->retired > boot_grace_) {
    retire(*previous_);
    previous_.reset();
  }
  if (current_ && current_->boot == boot) return &*current_;
  if (previous_ && previous_->boot == boot) return &*previous_;
  return nullptr;
}

FilterVerdict FlowFilter::accept(std::uint64_t boot, std::uint64_t label, Clock::time_point now) {
  BootWindow* w = find(boot, now);
  if (w == nullptr) return FilterVerdict::stale_boot;
  channel::ReplayWindow& win = w->window;
  if (win.empty() || label > win.highest()) {
    win.accept(label);
    w->highest_at = now;
    return FilterVerdict::deliver;
  }
  if (win.highest() - label >= channel::ReplayWindow::kWindowBits) return FilterVerdict::too_old;
  if (!win.would_accept(label)) return FilterVerdict::duplicate;
  if (max_age_ > Clock::duration::zero() && now - w->highest_at > max_age_) return FilterVerdict::too_old;
  win.accept(label);
  return FilterVerdict::deliver_late;
}

std::optional<std::uint64_t> FlowFilter::current_boot() const noexcept {
  return current_ ? std::optional<std::uint64_t>(current_->boot) : std::nullopt;
}

std::optional<std::uint64_t> FlowFilter::highest() const noexcept {
  if (!current_ || current_->window.empty()) return std::nullopt;
  return current_->window.highest();
}

}  // namespace pqot::trip
