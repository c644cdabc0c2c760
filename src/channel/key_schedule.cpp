#include "pqot/channel/key_schedule.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "pqot/crypto/hash.hpp"
#include "pqot/crypto/hkdf.hpp"

namespace pqot::channel {

namespace {
Key to_key(const crypto::SecretBytes& okm) {
  Key k;
  std::memcpy(k.data(), okm.data(), k.size());
  return k;
}
}  // namespace

Digest transcript_hash(std::initializer_list<ByteView> parts) { return crypto::sha256(parts); }

KeySchedule::KeySchedule(std::string prefix) : prefix_(std::move(prefix)) {
  // Labels are not length-prefixed: a prefix of lower-case letters and digits only (no space) keeps
  // "prefix label" unambiguous between protocols.
  if (prefix_.empty() || !std::all_of(prefix_.begin(), prefix_.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
      })) {
    throw std::invalid_argument("key schedule: the label prefix must be lower-case letters and digits");
  }
}

std::string KeySchedule::label(std::string_view label) const {
  std::string out;
  out.reserve(prefix_.size() + 1 + label.size());
  out.append(prefix_).append(1, ' ').append(label);
  return out;
}

Key KeySchedule::extract(ByteView salt, ByteView ikm) {
  const auto prk = crypto::hkdf_sha256_extract(ikm, salt);
  return to_key(prk);
}

Key KeySchedule::expand(const Key& prk, std::string_view name, ByteView context) const {
  const std::string l = label(name);
  crypto::Bytes info(l.begin(), l.end());
  info.insert(info.end(), context.begin(), context.end());
  return to_key(crypto::hkdf_sha256_expand(prk.span(), info, Key::size()));
}

Key KeySchedule::next_epoch(const Key& key) const {
  return to_key(crypto::hkdf_sha256_expand(key.span(), crypto::as_bytes(label("key update")), Key::size()));
}

Digest KeySchedule::mac(const Key& key, std::string_view name, std::initializer_list<ByteView> parts) const {
  const std::string l = label(name);
  // HMAC over "prefix label" followed by the parts, without copying them.
  std::vector<ByteView> all;
  all.reserve(parts.size() + 1);
  all.push_back(crypto::as_bytes(l));
  all.insert(all.end(), parts.begin(), parts.end());
  return crypto::hmac_sha256(key.span(), all);
}

}  // namespace pqot::channel
