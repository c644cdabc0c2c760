// The buffers a server session reuses request after request, so that a READ answered at once
// allocates nothing: the ids of the READ being served and the body of the reply being written.
//
// What a peer can make them hold is bounded: after each request, release_excess() frees a buffer
// that grew past its bound (kMaxKeptIds ids; kMaxKeptBytes of body, or of id characters, since a
// JSON id is bounded only by the message size), so between requests they hold at most about
// 34 KiB. A reply that carried a secret (LINK_REQUEST's bind token) is wiped and freed instead.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "pqot/crypto/secure.hpp"

namespace pqot::srmcp {

struct RequestScratch {
  static constexpr std::size_t kMaxKeptIds = 64;
  static constexpr std::size_t kMaxKeptBytes = 16 * 1024;

  std::vector<std::string> read_ids;
  std::string reply_body;

  // The heap the ids' characters hold.
  std::size_t id_bytes() const noexcept {
    std::size_t n = 0;
    for (const auto& id : read_ids) n += id.capacity();
    return n;
  }

  // Run after every request, failed ones included.
  void release_excess(bool reply_held_a_secret) noexcept {
    if (reply_held_a_secret) {
      crypto::secure_wipe(reply_body.data(), reply_body.size());
      std::string().swap(reply_body);
    }
    if (reply_body.capacity() > kMaxKeptBytes) std::string().swap(reply_body);
    if (read_ids.capacity() > kMaxKeptIds || id_bytes() > kMaxKeptBytes)
      std::vector<std::string>().swap(read_ids);
  }
};

}  // namespace pqot::srmcp
