// Assembles Modbus TCP requests (ADUs) from a non-blocking socket, bounded by the MBAP header
// (Modbus Messaging on TCP/IP Implementation Guide V1.0b, 3.1.3):
//   transaction id (2) | protocol id (2, = 0) | length (2, unit id + PDU) | unit id (1) | PDU
// The reader asks for exactly the bytes the current step still misses (the header, then the
// length it announces), so it never reads into the next request: the rest stays in the kernel
// and poll() reports the socket again.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace pqot::modbus_sim {

inline constexpr std::size_t kMbapHeaderLength = 7;
inline constexpr std::size_t kMaxAduLength = 260;  // = MODBUS_TCP_MAX_ADU_LENGTH
inline constexpr std::size_t kMinMbapLength = 2;   // unit id + function code
inline constexpr std::size_t kMaxMbapLength = kMaxAduLength - 6;

class AduReader {
 public:
  enum class Status { incomplete, complete, bad_header };

  AduReader() { reset(); }

  /// Where the next recv() writes: the bytes still missing for the current step; never empty
  /// while the request is incomplete.
  std::span<std::uint8_t> next_chunk();
  /// Accounts for `received` bytes written into next_chunk() (at most its size).
  Status advance(std::size_t received);

  /// The complete request (valid after advance() returned `complete`, until reset()).
  std::span<const std::uint8_t> adu() const { return {buf_.data(), have_}; }
  /// The request followed by zeros up to kMaxAduLength bytes. modbus_reply() (libmodbus 3.1)
  /// takes the request length but reads fields at offsets it computes from the request itself
  /// (e.g. the values of a short FC16), always below 260: here those bytes exist and are zero.
  const std::uint8_t* padded() const { return buf_.data(); }

  /// Some bytes of a request have arrived but not all of it.
  bool in_progress() const { return have_ > 0 && have_ < need_; }
  /// Why advance() returned bad_header.
  const std::string& error() const { return error_; }
  void reset();

 private:
  std::array<std::uint8_t, kMaxAduLength> buf_{};
  std::size_t have_ = 0;
  std::size_t need_ = kMbapHeaderLength;  // the header, then header + the announced length
  std::string error_;
};

}  // namespace pqot::modbus_sim
