// A budget of items and bytes shared by many keys (devices), with a fair share per key: an item is
// admitted only if its key stays within `per_key_items` and `per_key_bytes` and all keys together
// within `total_items` and `total_bytes`. One key that floods then holds at most its share, and it
// takes total / per_key keys together to fill the whole. Protocol-neutral (keys are 64-bit IDs);
// the SRUP-PQ C2 bounds its queue of broker messages and its provisional readings with it
// (docs/srup-c2.md). Thread-safe: admit() on one thread and release() on another is the intended
// use. Admission of connections and handshakes: admission.hpp.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

namespace pqot::common {

struct ShareLimits {
  std::size_t total_items = 0;
  std::size_t total_bytes = 0;
  std::size_t per_key_items = 0;
  std::size_t per_key_bytes = 0;
};

class ShareBudget {
 public:
  /// Why an item was not admitted (the first bound it would cross, in this order).
  enum class Verdict { admitted, key_items, key_bytes, total_items, total_bytes };

  struct Usage {
    std::size_t items = 0;
    std::size_t bytes = 0;
  };

  explicit ShareBudget(ShareLimits limits) : limits_(limits) {}

  /// Takes `bytes` for one item of `key` if every bound allows it (then `admitted`); otherwise
  /// changes nothing and names the bound.
  Verdict admit(std::uint64_t key, std::size_t bytes) {
    std::lock_guard lock(mutex_);
    const auto it = by_key_.find(key);
    const Usage mine = it == by_key_.end() ? Usage{} : it->second;
    if (mine.items + 1 > limits_.per_key_items) return Verdict::key_items;
    if (bytes > limits_.per_key_bytes || mine.bytes > limits_.per_key_bytes - bytes) return Verdict::key_bytes;
    if (total_.items + 1 > limits_.total_items) return Verdict::total_items;
    if (bytes > limits_.total_bytes || total_.bytes > limits_.total_bytes - bytes) return Verdict::total_bytes;
    Usage& u = it == by_key_.end() ? by_key_[key] : it->second;
    ++u.items;
    u.bytes += bytes;
    ++total_.items;
    total_.bytes += bytes;
    peak_.items = std::max(peak_.items, total_.items);
    peak_.bytes = std::max(peak_.bytes, total_.bytes);
    peak_key_.items = std::max(peak_key_.items, u.items);
    peak_key_.bytes = std::max(peak_key_.bytes, u.bytes);
    return Verdict::admitted;
  }

  /// Gives back one admitted item of `key` with the `bytes` it was admitted with.
  void release(std::uint64_t key, std::size_t bytes) noexcept {
    std::lock_guard lock(mutex_);
    const auto it = by_key_.find(key);
    if (it == by_key_.end() || it->second.items == 0) return;  // never admitted: a caller's bug
    const std::size_t b = std::min(bytes, it->second.bytes);
    --it->second.items;
    it->second.bytes -= b;
    --total_.items;
    total_.bytes -= b;
    if (it->second.items == 0) by_key_.erase(it);  // only keys holding something are kept
  }

  Usage total() const {
    std::lock_guard lock(mutex_);
    return total_;
  }
  Usage of(std::uint64_t key) const {
    std::lock_guard lock(mutex_);
    const auto it = by_key_.find(key);
    return it == by_key_.end() ? Usage{} : it->second;
  }
  /// The most ever held at once (items and bytes, each its own maximum).
  Usage peak() const {
    std::lock_guard lock(mutex_);
    return peak_;
  }
  /// The most one key ever held at once (items and bytes, each its own maximum over all keys).
  Usage peak_per_key() const {
    std::lock_guard lock(mutex_);
    return peak_key_;
  }
  /// Keys holding at least one item.
  std::size_t keys() const {
    std::lock_guard lock(mutex_);
    return by_key_.size();
  }
  const ShareLimits& limits() const noexcept { return limits_; }

 private:
  const ShareLimits limits_;
  mutable std::mutex mutex_;
  std::map<std::uint64_t, Usage> by_key_;
  Usage total_;
  Usage peak_;
  Usage peak_key_;
};

}  // namespace pqot::common
