// HKDF-SHA-256 (RFC 5869) over OpenSSL.
#pragma once

#include "pqot/crypto/bytes.hpp"
#include "pqot/crypto/secure.hpp"

namespace pqot::crypto {

inline constexpr std::size_t kHkdfSha256MaxOutput = std::size_t{255} * 32;

/// Extract-then-expand. Throws Error{invalid_argument} if length is 0 or > 255*32.
SecretBytes hkdf_sha256(ByteView ikm, ByteView salt, ByteView info, std::size_t length);
/// HKDF-Extract: the 32-byte PRK.
SecretBytes hkdf_sha256_extract(ByteView ikm, ByteView salt);
/// HKDF-Expand from a PRK of at least 32 bytes.
SecretBytes hkdf_sha256_expand(ByteView prk, ByteView info, std::size_t length);

}  // namespace pqot::crypto
