// PEM armour (RFC 7468): "-----BEGIN <label>-----", base64 (RFC 4648 section 4) in lines of 64
// characters, "-----END <label>-----". Key files (key_file.hpp) and SRUP-PQ identity files use it.
#pragma once

#include <string>
#include <string_view>

#include "pqot/crypto/bytes.hpp"
#include "pqot/crypto/key_file.hpp"
#include "pqot/crypto/secure.hpp"

namespace pqot::crypto::pem {

/// True when `data` starts with "-----BEGIN" (key files are PEM then, DER otherwise).
bool looks_like_pem(ByteView data) noexcept;

/// Armours `der` under `label`, every line (the last included) ending in "\n". String is
/// std::string or, for private keys, SecretString.
template <class String>
String encode(std::string_view label, ByteView der);

/// The DER inside a PEM text whose label must be `label`. Strict (RFC 7468 section 3, the
/// "strict" grammar, with CRLF or LF line ends, the last one optional): no text before BEGIN,
/// base64 lines of at most 64 characters with canonical padding, nothing but line ends after END.
/// The result is wiping storage because private keys pass through here. Errors:
/// Error{invalid_encoding}.
SecretBytes decode(ByteView text, std::string_view label);

}  // namespace pqot::crypto::pem
