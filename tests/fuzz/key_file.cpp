// libFuzzer target: key files (docs/crypto.md, "Key files"). Every input is read both as a
// public and as a private key file (DER, or PEM when it starts with "-----BEGIN"). Any outcome but
// a crypto::Error or a result is a bug. Whatever decodes must re-encode to the input DER (the
// ML-DSA `both` form excepted: it re-encodes to the shorter seed form of the same key), and the
// re-encoding must decode to the same key, in DER and in PEM.
#include "pqot/crypto/key_file.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <optional>

#include "pqot/crypto/error.hpp"

using namespace pqot::crypto;

namespace {

bool same(ByteView a, ByteView b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

bool is_pem(ByteView input) {
  return input.size() >= 10 && same(input.first(10), as_bytes("-----BEGIN"));
}

// Only the first decode may refuse (a crypto::Error other than `internal`); everything after it
// works on a key we accepted, so any exception there is a bug and escapes to libFuzzer.
template <class F>
auto decoded(F&& decode) -> std::optional<decltype(decode())> {
  try {
    return decode();
  } catch (const Error& e) {
    if (e.code() == ErrorCode::internal) std::abort();
    return std::nullopt;
  }
}

void check_public(ByteView input) {
  const auto decoded_key = decoded([&] { return decode_public_key(input); });
  if (!decoded_key) return;
  const DecodedPublicKey& d = *decoded_key;
  const Bytes der = encode_public_key_der(*d.alg, d.public_key);
  if (!is_pem(input) && !same(der, input)) std::abort();
  const std::string pem = encode_public_key_pem(*d.alg, d.public_key);
  for (const ByteView again : {ByteView(der), as_bytes(pem)}) {
    const DecodedPublicKey e = decode_public_key(again);
    if (e.alg != d.alg || e.public_key != d.public_key) std::abort();
  }
}

void check_private(ByteView input) {
  const auto decoded_key = decoded([&] { return decode_private_key(input); });
  if (!decoded_key) return;
  const DecodedPrivateKey& d = *decoded_key;
  const SecretBytes der = encode_private_key_der(*d.alg, d.private_material);
  if (!is_pem(input) && !same(der, input)) {
    // Only the ML-DSA `both` form (seed and expanded key) may re-encode differently, and then
    // to something shorter.
    if (!d.alg->name().starts_with("ML-DSA-") ||
        d.alg->name().find('+') != std::string_view::npos || der.size() >= input.size()) {
      std::abort();
    }
  }
  const SecretString pem = encode_private_key_pem(*d.alg, d.private_material);
  for (const ByteView again : {ByteView(der), as_bytes(pem)}) {
    const DecodedPrivateKey e = decode_private_key(again);
    if (e.alg != d.alg || e.keys.public_key != d.keys.public_key ||
        !ct_equal(e.keys.secret_key, d.keys.secret_key) ||
        !ct_equal(e.private_material, d.private_material)) {
      std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const ByteView input(data, size);
  check_public(input);
  check_private(input);
  return 0;
}
