// Sliding replay window over 64-bit sequence numbers (docs/channel.md, "Replay window"), in the
// style of RFC 6479: a ring of 64-bit words, so that accepting a new highest number costs
// O(words skipped) and checking costs O(1). Its state can be saved and restored, so that a receiver
// that restarts (SRUP-PQ's devices and C2 server) keeps refusing what it accepted before.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <stdexcept>

namespace pqot::channel {

class ReplayWindow {
 public:
  static constexpr std::uint64_t kWindowBits = 1024;

  /// True if `seq` is new (and records it); false if it was seen or is older than the window: the
  /// window is exactly the kWindowBits numbers highest-1023 .. highest.
  bool accept(std::uint64_t seq) noexcept {
    if (!any_ || seq > highest_) {
      advance_to(seq);
      set(seq);
      return true;
    }
    if (highest_ - seq >= kWindowBits) return false;  // older than the window
    if (test(seq)) return false;
    set(seq);
    return true;
  }

  /// Whether `seq` would be accepted, without recording it.
  bool would_accept(std::uint64_t seq) const noexcept {
    if (!any_ || seq > highest_) return true;
    return highest_ - seq < kWindowBits && !test(seq);
  }

  std::uint64_t highest() const noexcept { return highest_; }
  /// False until the first number is accepted.
  bool empty() const noexcept { return !any_; }

  // ---- persistence (docs/channel.md, "Replay window state") --------------------------------------
  static constexpr std::uint8_t kStateVersion = 1;
  static constexpr std::size_t kWords = kWindowBits / 64 + 1;
  /// version (1) || flags (1: bit 0 = any number seen) || highest (u64 BE) || kWords ring words
  /// (u64 BE each, ring order): 146 bytes.
  static constexpr std::size_t kStateSize = 2 + 8 + 8 * kWords;
  using State = std::array<std::uint8_t, kStateSize>;

  /// The window's state, to be written to durable storage.
  State save() const noexcept {
    State out{};
    out[0] = kStateVersion;
    out[1] = any_ ? 1 : 0;
    put_u64(out.data() + 2, highest_);
    for (std::size_t i = 0; i < kWords; ++i) put_u64(out.data() + 10 + 8 * i, bits_[i]);
    return out;
  }

  /// A window from saved state. Throws std::invalid_argument for a wrong size or version, unknown
  /// flags, or bits no window could hold (numbers above `highest`, or any bit in an empty window):
  /// a corrupted file is refused rather than trusted.
  static ReplayWindow restore(std::span<const std::uint8_t> state) {
    if (state.size() != kStateSize) throw std::invalid_argument("replay window state: wrong size");
    if (state[0] != kStateVersion) throw std::invalid_argument("replay window state: unknown version");
    if ((state[1] & ~1u) != 0) throw std::invalid_argument("replay window state: unknown flags");
    ReplayWindow w;
    w.any_ = state[1] == 1;
    w.highest_ = get_u64(state.data() + 2);
    for (std::size_t i = 0; i < kWords; ++i) w.bits_[i] = get_u64(state.data() + 10 + 8 * i);
    if (!w.any_) {
      if (w.highest_ != 0) throw std::invalid_argument("replay window state: empty window with a highest number");
      for (std::uint64_t word : w.bits_) {
        if (word != 0) throw std::invalid_argument("replay window state: empty window with bits set");
      }
      return w;
    }
    // The highest number itself is always recorded; nothing above it can be.
    if (!w.test(w.highest_)) throw std::invalid_argument("replay window state: highest number not recorded");
    const unsigned top = static_cast<unsigned>(w.highest_ % kBitsPerWord);
    const std::uint64_t above = top == 63 ? 0 : ~std::uint64_t{0} << (top + 1);
    if ((w.bits_[word_of(w.highest_)] & above) != 0) {
      throw std::invalid_argument("replay window state: numbers above the highest recorded");
    }
    return w;
  }

  friend bool operator==(const ReplayWindow&, const ReplayWindow&) = default;

 private:
  static constexpr std::uint64_t kBitsPerWord = 64;
  // kWords is one word more than the window needs: 1,024 numbers that do not start on a word
  // boundary span 17 words, and the window must hold all of them (exactly the last kWindowBits).

  static std::size_t word_of(std::uint64_t seq) noexcept { return (seq / kBitsPerWord) % kWords; }
  bool test(std::uint64_t seq) const noexcept { return (bits_[word_of(seq)] >> (seq % 64)) & 1u; }
  void set(std::uint64_t seq) noexcept { bits_[word_of(seq)] |= std::uint64_t{1} << (seq % 64); }

  // Clears the words between the old highest and `seq` (they hold numbers that left the window).
  void advance_to(std::uint64_t seq) noexcept {
    if (!any_) {
      bits_.fill(0);
    } else {
      const std::uint64_t from = highest_ / kBitsPerWord;
      const std::uint64_t to = seq / kBitsPerWord;
      const std::uint64_t steps = to - from;
      if (steps >= kWords) {
        bits_.fill(0);
      } else {
        for (std::uint64_t w = from + 1; w <= to; ++w) bits_[w % kWords] = 0;
      }
    }
    highest_ = seq;
    any_ = true;
  }

  static void put_u64(std::uint8_t* p, std::uint64_t v) noexcept {
    for (int i = 7; i >= 0; --i, v >>= 8) p[i] = static_cast<std::uint8_t>(v);
  }
  static std::uint64_t get_u64(const std::uint8_t* p) noexcept {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = (v << 8) | p[i];
    return v;
  }

  std::array<std::uint64_t, kWords> bits_{};
  std::uint64_t highest_ = 0;
  bool any_ = false;
};

}  // namespace pqot::channel
