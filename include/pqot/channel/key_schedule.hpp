// Labelled key derivation for the project's secure channels (docs/channel.md, "Key schedule"):
// a transcript hash, HKDF-SHA-256 with labels that carry a per-protocol prefix ("srmcp2", ...), the
// key update that moves a key to its next epoch, and labelled MACs. One protocol's labels can
// therefore never produce another protocol's keys from the same secrets.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "pqot/crypto/bytes.hpp"
#include "pqot/crypto/secure.hpp"

namespace pqot::channel {

using crypto::ByteView;
using Key = crypto::Secret<32>;
using Digest = std::array<std::uint8_t, 32>;

/// SHA-256 over the concatenation of `parts` (e.g. the two hello bodies of a handshake).
Digest transcript_hash(std::initializer_list<ByteView> parts);

class KeySchedule {
 public:
  /// `prefix` names the protocol and its version; every label below is written `prefix label`
  /// (one space between), e.g. prefix "srmcp2", label "link" -> the ASCII bytes "srmcp2 link".
  explicit KeySchedule(std::string prefix);

  /// PRK = HKDF-Extract(salt, ikm) (RFC 5869).
  static Key extract(ByteView salt, ByteView ikm);
  /// HKDF-Expand(prk, "prefix label" || context, 32).
  Key expand(const Key& prk, std::string_view label, ByteView context = {}) const;
  /// The key of the next epoch: HKDF-Expand(key, "prefix key update", 32).
  Key next_epoch(const Key& key) const;
  /// HMAC-SHA-256(key, "prefix label" || parts...).
  Digest mac(const Key& key, std::string_view label, std::initializer_list<ByteView> parts) const;

  /// "prefix label" as bytes.
  std::string label(std::string_view label) const;
  const std::string& prefix() const noexcept { return prefix_; }

 private:
  std::string prefix_;
};

}  // namespace pqot::channel
