// Coefficient-wise arithmetic, encodings and compression (FIPS 203 section 4.2.1, Algorithms 4-6).
// Every loop runs over all coefficients with no branch on their values.
#include <cstring>

#include "poly.hpp"
#include "reduce.hpp"

namespace pqot::crypto::mlkem {

void poly_reduce(Poly& a) noexcept {
  for (auto& x : a.c) x = barrett_reduce(x);
}

void poly_tomont(Poly& a) noexcept {
  constexpr std::int16_t kMont2 = static_cast<std::int16_t>(
      static_cast<std::int64_t>(kMont) * kMont % kQ);  // 2^32 mod q
  for (auto& x : a.c) x = fqmul(x, kMont2);
}

void poly_add(Poly& r, const Poly& a) noexcept {
  for (std::size_t i = 0; i < kN; ++i) r.c[i] = static_cast<std::int16_t>(r.c[i] + a.c[i]);
}

void poly_sub(Poly& r, const Poly& a, const Poly& b) noexcept {
  for (std::size_t i = 0; i < kN; ++i) r.c[i] = static_cast<std::int16_t>(a.c[i] - b.c[i]);
}

void poly_to_bytes(std::uint8_t out[kPolyBytes], const Poly& a) noexcept {
  for (std::size_t i = 0; i < kN / 2; ++i) {
    const std::uint16_t t0 = to_unsigned(a.c[2 * i]);
    const std::uint16_t t1 = to_unsigned(a.c[2 * i + 1]);
    out[3 * i] = static_cast<std::uint8_t>(t0);
    out[3 * i + 1] = static_cast<std::uint8_t>((t0 >> 8) | (t1 << 4));
    out[3 * i + 2] = static_cast<std::uint8_t>(t1 >> 4);
  }
}

void poly_from_bytes(Poly& r, const std::uint8_t in[kPolyBytes]) noexcept {
  for (std::size_t i = 0; i < kN / 2; ++i) {
    const std::uint16_t b0 = in[3 * i], b1 = in[3 * i + 1], b2 = in[3 * i + 2];
    r.c[2 * i] = static_cast<std::int16_t>((b0 | (b1 << 8)) & 0xfff);
    r.c[2 * i + 1] = static_cast<std::int16_t>((b1 >> 4) | (b2 << 4));
  }
}

bool poly_bytes_are_reduced(const std::uint8_t in[kPolyBytes]) noexcept {
  // Runs on the public encapsulation key only, so an early exit would be harmless; the single
  // accumulated flag is simply shorter.
  unsigned bad = 0;
  for (std::size_t i = 0; i < kN / 2; ++i) {
    const unsigned b0 = in[3 * i], b1 = in[3 * i + 1], b2 = in[3 * i + 2];
    const unsigned t0 = (b0 | (b1 << 8)) & 0xfff;
    const unsigned t1 = (b1 >> 4) | (b2 << 4);
    bad |= static_cast<unsigned>(t0 >= kQ) | static_cast<unsigned>(t1 >= kQ);
  }
  return bad == 0;
}

namespace {

// Compress_d(x) = round(2^d * x / q) mod 2^d for x in [0, q), computed as
// floor((2^(d+1) x + q) / 2q). The divisor is a constant, so compilers emit a multiply and shift,
// not a variable-time division (the "KyberSlash" pitfall).
inline std::uint32_t compress(std::int16_t coefficient, int d) noexcept {
  const std::uint32_t x = to_unsigned(barrett_reduce(coefficient));
  return (((x << (d + 1)) + kQ) / (2 * kQ)) & ((1u << d) - 1);
}

// Decompress_d(y) = round(q * y / 2^d).
inline std::int16_t decompress(std::uint32_t y, int d) noexcept {
  return static_cast<std::int16_t>((y * kQ + (1u << (d - 1))) >> d);
}

}  // namespace

// ByteEncode_d: value i of the polynomial occupies bits d*i .. d*i+d-1, little-endian.
void poly_compress(std::uint8_t* out, const Poly& a, int d) noexcept {
  std::uint64_t acc = 0;
  int bits = 0;
  for (std::size_t i = 0; i < kN; ++i) {
    acc |= static_cast<std::uint64_t>(compress(a.c[i], d)) << bits;
    bits += d;
    while (bits >= 8) {
      *out++ = static_cast<std::uint8_t>(acc);
      acc >>= 8;
      bits -= 8;
    }
  }
}

void poly_decompress(Poly& r, const std::uint8_t* in, int d) noexcept {
  std::uint64_t acc = 0;
  int bits = 0;
  const std::uint32_t mask = (1u << d) - 1;
  for (std::size_t i = 0; i < kN; ++i) {
    while (bits < d) {
      acc |= static_cast<std::uint64_t>(*in++) << bits;
      bits += 8;
    }
    r.c[i] = decompress(static_cast<std::uint32_t>(acc) & mask, d);
    acc >>= d;
    bits -= d;
  }
}

void poly_from_msg(Poly& r, const std::uint8_t msg[kSymBytes]) noexcept {
  for (std::size_t i = 0; i < kSymBytes; ++i) {
    for (std::size_t j = 0; j < 8; ++j) {
      const auto bit = static_cast<std::int16_t>((msg[i] >> j) & 1);
      r.c[8 * i + j] = static_cast<std::int16_t>(-bit & ((kQ + 1) / 2));
    }
  }
}

void poly_to_msg(std::uint8_t msg[kSymBytes], const Poly& a) noexcept {
  for (std::size_t i = 0; i < kSymBytes; ++i) {
    std::uint8_t byte = 0;
    for (std::size_t j = 0; j < 8; ++j) {
      byte |= static_cast<std::uint8_t>(compress(a.c[8 * i + j], 1) << j);
    }
    msg[i] = byte;
  }
}

}  // namespace pqot::crypto::mlkem
