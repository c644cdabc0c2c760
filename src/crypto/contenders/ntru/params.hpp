// NTRU's parameter sets and the sizes derived from them (round-3 specification, the parameter
// sets and their table; the byte sizes are those of the reference implementation's params.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ntru_kem.hpp"

namespace pqot::crypto::ntru {

/// Largest n of the four sets, and the coefficient array length (a multiple of 16 for the vector
/// loops).
inline constexpr std::size_t kMaxN = 821;
inline constexpr std::size_t kPolyLength = 832;

inline constexpr std::size_t kPrfKeyBytes = 32;
inline constexpr std::size_t kSharedKeyBytes = 32;

struct Params {
  std::string_view name;
  std::size_t n;
  unsigned logq;
  bool hrss;           ///< NTRU-HRSS; otherwise NTRU-HPS
  std::size_t weight;  ///< HPS: the number of non-zero coefficients of m and g (q/8 - 2)

  constexpr std::uint16_t q() const { return static_cast<std::uint16_t>(1u << logq); }
  /// Coefficients written to the wire: n-1 (the last one is implied: Rq_sum_zero).
  constexpr std::size_t pack_deg() const { return n - 1; }
  constexpr std::size_t trinary_bytes() const { return (pack_deg() + 4) / 5; }
  constexpr std::size_t iid_bytes() const { return n - 1; }
  constexpr std::size_t fixed_type_bytes() const { return (30 * (n - 1) + 7) / 8; }
  /// Sample_fg and Sample_rm take the same number of bytes in every set.
  constexpr std::size_t sample_bytes() const {
    return hrss ? 2 * iid_bytes() : iid_bytes() + fixed_type_bytes();
  }
  constexpr std::size_t owcpa_msg_bytes() const { return 2 * trinary_bytes(); }
  constexpr std::size_t packed_q_bytes() const { return (logq * pack_deg() + 7) / 8; }
  constexpr std::size_t public_key_bytes() const { return packed_q_bytes(); }
  constexpr std::size_t owcpa_secret_key_bytes() const {
    return 2 * trinary_bytes() + packed_q_bytes();
  }
  constexpr std::size_t secret_key_bytes() const { return owcpa_secret_key_bytes() + kPrfKeyBytes; }
  constexpr std::size_t ciphertext_bytes() const { return packed_q_bytes(); }
};

inline constexpr Params kHps2048509{"NTRU-HPS-2048-509", 509, 11, false, 2048 / 8 - 2};
inline constexpr Params kHps2048677{"NTRU-HPS-2048-677", 677, 11, false, 2048 / 8 - 2};
inline constexpr Params kHps4096821{"NTRU-HPS-4096-821", 821, 12, false, 4096 / 8 - 2};
inline constexpr Params kHrss701{"NTRU-HRSS-701", 701, 13, true, 0};

static_assert(kHps2048509.public_key_bytes() == 699 && kHps2048509.secret_key_bytes() == 935);
static_assert(kHps2048677.public_key_bytes() == 930 && kHps2048677.secret_key_bytes() == 1234);
static_assert(kHps4096821.public_key_bytes() == 1230 && kHps4096821.secret_key_bytes() == 1590);
static_assert(kHrss701.public_key_bytes() == 1138 && kHrss701.secret_key_bytes() == 1450);
static_assert(kMaxN <= kPolyLength);

}  // namespace pqot::crypto::ntru
