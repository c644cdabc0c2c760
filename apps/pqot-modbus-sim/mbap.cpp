#include "mbap.hpp"

#include <stdexcept>

namespace pqot::modbus_sim {

std::span<std::uint8_t> AduReader::next_chunk() {
  return std::span<std::uint8_t>(buf_).subspan(have_, need_ - have_);
}

AduReader::Status AduReader::advance(std::size_t received) {
  if (received > need_ - have_) throw std::logic_error("AduReader: more bytes than asked for");
  have_ += received;
  if (have_ < need_) return Status::incomplete;
  if (need_ == kMbapHeaderLength) {
    const unsigned protocol = (buf_[2] << 8) | buf_[3];
    const std::size_t length = static_cast<std::size_t>((buf_[4] << 8) | buf_[5]);
    if (protocol != 0) {
      error_ = "protocol id " + std::to_string(protocol) + " in the MBAP header (not Modbus)";
      return Status::bad_header;
    }
    if (length < kMinMbapLength || length > kMaxMbapLength) {
      error_ = "MBAP length " + std::to_string(length) + " outside " +
               std::to_string(kMinMbapLength) + ".." + std::to_string(kMaxMbapLength);
      return Status::bad_header;
    }
    // The unit id is part of both the header and the length.
    need_ = kMbapHeaderLength - 1 + length;
    if (have_ < need_) return Status::incomplete;
  }
  return Status::complete;
}

void AduReader::reset() {
  buf_.fill(0);
  have_ = 0;
  need_ = kMbapHeaderLength;
  error_.clear();
}

}  // namespace pqot::modbus_sim
