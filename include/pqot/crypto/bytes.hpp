// Byte containers and hex conversion shared by every pqot component.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pqot::crypto {

using Bytes = std::vector<std::uint8_t>;
using ByteView = std::span<const std::uint8_t>;
using MutableByteView = std::span<std::uint8_t>;

/// Lower-case hex of `data`.
std::string to_hex(ByteView data);

/// Parses hex (upper or lower case, even length, no prefix or separators).
/// Throws pqot::crypto::Error{ErrorCode::invalid_encoding} naming the offending position.
Bytes from_hex(std::string_view hex);

/// View of a string's characters as bytes (no copy).
inline ByteView as_bytes(std::string_view s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

}  // namespace pqot::crypto
