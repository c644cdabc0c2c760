// Admission control for servers that face unauthenticated peers (docs/srmcpd.md, "Limits and
// denial of service"). Protocol-neutral: keys are strings (a source address, an identity).
//
// - HandshakeSlots bounds the handshakes in progress, in total and per source. When the total is
//   reached, the newcomer takes the place of the oldest handshake of the busiest source, if that
//   source holds at least two more than the newcomer's own: a peer that holds many idle
//   connections cannot keep a peer with few of them out (fair share between sources, like a SYN
//   cache). If no source is that much busier (many sources with one each), the oldest handshake
//   of all gives way, provided it has run for `min_age` already: a real handshake takes
//   milliseconds, so what is old is idle.
// - KeyedCounter bounds how many of something one key may hold (sessions per identity, pending
//   offers per identity).
//
// Both are thread-safe; callbacks run outside their lock.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

namespace pqot::common {

class HandshakeSlots : public std::enable_shared_from_this<HandshakeSlots> {
 public:
  enum class Verdict { admitted, admitted_by_eviction, source_full, total_full };

  /// A held slot; released when the last copy is destroyed, or by release().
  class Ticket {
   public:
    Ticket() = default;
    Ticket(const Ticket&) = delete;
    Ticket& operator=(const Ticket&) = delete;
    Ticket(Ticket&& o) noexcept : owner_(std::move(o.owner_)), id_(o.id_) { o.id_ = 0; }
    Ticket& operator=(Ticket&& o) noexcept {
      if (this != &o) {
        release();
        owner_ = std::move(o.owner_);
        id_ = o.id_;
        o.id_ = 0;
      }
      return *this;
    }
    ~Ticket() { release(); }
    void release() noexcept {
      if (auto o = owner_.lock(); o && id_ != 0) o->release(id_);
      owner_.reset();
      id_ = 0;
    }
    explicit operator bool() const noexcept { return id_ != 0; }

   private:
    friend class HandshakeSlots;
    Ticket(std::weak_ptr<HandshakeSlots> owner, std::uint64_t id) : owner_(std::move(owner)), id_(id) {}
    std::weak_ptr<HandshakeSlots> owner_;
    std::uint64_t id_ = 0;
  };

  using Clock = std::chrono::steady_clock;

  /// Create with std::make_shared (tickets refer back to the object).
  HandshakeSlots(std::uint32_t total, std::uint32_t per_source,
                 Clock::duration min_age = std::chrono::seconds(1))
      : total_(total), per_source_(per_source), min_age_(min_age) {}

  /// Asks for a slot for a handshake from `source`. `evict` is called (once, outside the lock) if
  /// this handshake later has to give way to another; it should end the handshake. The ticket is
  /// empty unless the verdict is admitted or admitted_by_eviction.
  std::pair<Verdict, Ticket> admit(const std::string& source, std::function<void()> evict,
                                   Clock::time_point now = Clock::now()) {
    std::function<void()> victim;
    Verdict verdict = Verdict::admitted;
    std::uint64_t id = 0;
    {
      std::lock_guard lock(mutex_);
      auto& mine = by_source_[source];
      if (mine.size() >= per_source_) {
        if (mine.empty()) by_source_.erase(source);
        return {Verdict::source_full, Ticket{}};
      }
      if (count_ >= total_) {
        // The busiest source, if it holds more than this one, gives up its oldest handshake.
        auto busiest = by_source_.end();
        for (auto it = by_source_.begin(); it != by_source_.end(); ++it) {
          if (busiest == by_source_.end() || it->second.size() > busiest->second.size()) busiest = it;
        }
        auto from = busiest;
        if (busiest == by_source_.end() || busiest->second.size() <= mine.size() + 1) {
          // No source is busier by two: the oldest handshake of all, if it is old enough.
          from = by_source_.end();
          for (auto it = by_source_.begin(); it != by_source_.end(); ++it) {
            if (it->second.empty()) continue;
            if (from == by_source_.end() || it->second.front().started < from->second.front().started) from = it;
          }
          if (from == by_source_.end() || now - from->second.front().started < min_age_) {
            if (mine.empty()) by_source_.erase(source);
            return {Verdict::total_full, Ticket{}};
          }
        }
        Slot oldest = std::move(from->second.front());
        from->second.pop_front();
        index_.erase(oldest.id);
        if (from->second.empty() && from->first != source) by_source_.erase(from);
        --count_;
        victim = std::move(oldest.evict);
        verdict = Verdict::admitted_by_eviction;
      }
      id = ++next_id_;
      auto& list = by_source_[source];  // (re-looked up: an erase above may have touched the map)
      list.push_back(Slot{id, std::move(evict), now});
      index_.emplace(id, std::make_pair(source, std::prev(list.end())));
      ++count_;
    }
    if (victim) victim();
    return {verdict, Ticket(weak_from_this(), id)};
  }

  std::uint32_t in_progress() const {
    std::lock_guard lock(mutex_);
    return count_;
  }
  std::uint32_t in_progress(const std::string& source) const {
    std::lock_guard lock(mutex_);
    auto it = by_source_.find(source);
    return it == by_source_.end() ? 0 : static_cast<std::uint32_t>(it->second.size());
  }

 private:
  struct Slot {
    std::uint64_t id;
    std::function<void()> evict;
    Clock::time_point started;
  };

  void release(std::uint64_t id) noexcept {
    std::lock_guard lock(mutex_);
    auto it = index_.find(id);
    if (it == index_.end()) return;  // evicted earlier
    auto src = by_source_.find(it->second.first);
    if (src != by_source_.end()) {
      src->second.erase(it->second.second);
      if (src->second.empty()) by_source_.erase(src);
    }
    index_.erase(it);
    --count_;
  }

  const std::uint32_t total_;
  const std::uint32_t per_source_;
  const Clock::duration min_age_;
  mutable std::mutex mutex_;
  std::map<std::string, std::list<Slot>> by_source_;  // oldest first
  std::map<std::uint64_t, std::pair<std::string, std::list<Slot>::iterator>> index_;
  std::uint32_t count_ = 0;
  std::uint64_t next_id_ = 0;
};

/// At most `limit` of something per key.
class KeyedCounter {
 public:
  bool try_acquire(const std::string& key, std::uint32_t limit) {
    std::lock_guard lock(mutex_);
    auto& n = counts_[key];
    if (n >= limit) {
      if (n == 0) counts_.erase(key);
      return false;
    }
    ++n;
    return true;
  }
  void release(const std::string& key) noexcept {
    std::lock_guard lock(mutex_);
    auto it = counts_.find(key);
    if (it == counts_.end()) return;
    if (--it->second == 0) counts_.erase(it);
  }
  std::uint32_t count(const std::string& key) const {
    std::lock_guard lock(mutex_);
    auto it = counts_.find(key);
    return it == counts_.end() ? 0 : it->second;
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::uint32_t> counts_;
};

}  // namespace pqot::common
