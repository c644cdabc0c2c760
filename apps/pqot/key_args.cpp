#include "key_args.hpp"

#include <unistd.h>

#include <cctype>

#include "cli_common.hpp"
#include "pqot/crypto/error.hpp"
#include "pqot/crypto/key_file.hpp"

namespace pqot::app {

namespace {

constexpr std::string_view kPemStart = "-----BEGIN";

// The content of @file when it is a PEM document (leading whitespace dropped); nothing otherwise
// (hex, read by the hex readers). Wiping storage, since it may be a private key.
crypto::SecretBytes pem_file_content(std::string_view value, std::string_view what) {
  if (value.empty() || value.front() != '@') return {};
  crypto::SecretBytes content = read_file_arg(value.substr(1), what);
  std::size_t start = 0;
  while (start < content.size() && std::isspace(content[start])) ++start;
  const std::string_view text(reinterpret_cast<const char*>(content.data()) + start,
                              content.size() - start);
  if (text.substr(0, kPemStart.size()) != kPemStart) return {};
  content.erase(content.begin(), content.begin() + static_cast<std::ptrdiff_t>(start));
  return content;
}

// A key file of the wrong algorithm or shape is the user's mistake: exit 2 with the file named.
template <class F>
auto decoding(std::string_view what, F&& f) {
  try {
    return f();
  } catch (const crypto::Error& e) {
    if (e.code() == crypto::ErrorCode::internal) throw;
    throw UsageError(std::string(what) + ": " + e.what());
  }
}

}  // namespace

crypto::Bytes read_public_key_arg(const crypto::Signature& alg, std::string_view value,
                                  std::string_view what) {
  const crypto::SecretBytes pem = pem_file_content(value, what);
  if (pem.empty()) return read_hex_arg(value, what);
  return decoding(what, [&] { return crypto::decode_public_key(pem, &alg).public_key; });
}

crypto::SecretBytes read_secret_key_arg(const crypto::Signature& alg, std::string_view value,
                                        std::string_view what) {
  const crypto::SecretBytes pem = pem_file_content(value, what);
  if (pem.empty()) return read_secret_hex_arg(value, what);
  return decoding(what,
                  [&] { return std::move(crypto::decode_private_key(pem, &alg).keys.secret_key); });
}

KeyFiles write_key_files(const std::string& dir, const crypto::Signature& alg,
                         const crypto::SignatureKeyPair& keys, crypto::ByteView seed) {
  const crypto::ByteView material = alg.seed_size() > 0 ? seed : crypto::ByteView(keys.secret_key);
  const crypto::SecretString private_pem = crypto::encode_private_key_pem(alg, material);
  const std::string public_pem = crypto::encode_public_key_pem(alg, keys.public_key);
  KeyFiles files{dir + "/public.pem", dir + "/private.pem"};
  // The private key first: if it cannot be written, no orphan public key is left behind.
  write_new_output("--out-dir", files.private_key, private_pem, 0600);
  try {
    write_new_output("--out-dir", files.public_key, public_pem, 0644);
  } catch (...) {
    ::unlink(files.private_key.c_str());
    throw;
  }
  return files;
}

}  // namespace pqot::app
