// Sliding replay window over 64-bit sequence numbers (docs/srmcp.md §10), in the style of
// RFC 6479: a ring of 64-bit words, so that accepting a new highest number costs O(words skipped)
// and checking costs O(1).
#pragma once

#include <array>
#include <cstdint>

namespace pqot::srmcp {

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

  std::uint64_t highest() const noexcept { return highest_; }

 private:
  static constexpr std::uint64_t kBitsPerWord = 64;
  // One word more than the window needs: 1,024 numbers that do not start on a word boundary span
  // 17 words, and the window must hold all of them (exactly the last kWindowBits numbers).
  static constexpr std::uint64_t kWords = kWindowBits / kBitsPerWord + 1;

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

  std::array<std::uint64_t, kWords> bits_{};
  std::uint64_t highest_ = 0;
  bool any_ = false;
};

}  // namespace pqot::srmcp
