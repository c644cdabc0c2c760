// Fixed SRUP-PQ peers for tests that run a receiver in another process (the exactly-once test
// and its driver): a C2 (ID 0xc2) and a device (ID 0xa1) of suite 0x06, Ed25519/X-Wing (fast),
// with keys from fixed seeds, so both processes derive the same keys without key files.
#pragma once

#include <string>

#include "pqot/crypto/kem.hpp"
#include "pqot/crypto/signature.hpp"
#include "pqot/srup/protect.hpp"

namespace pqot::test {

struct SrupPeer {
  srup::Identity identity;
  srup::PeerKeys keys;
};

inline SrupPeer srup_peer(std::uint64_t id, std::uint8_t seed_byte) {
  constexpr srup::Suite suite = srup::Suite::ed25519_xwing;
  const srup::SuiteInfo info = srup::suite_info(suite);
  const auto& sig = crypto::signature_by_name(info.signature);
  const auto& kem = crypto::kem_by_name(info.kem);
  const auto sk = sig.keygen(crypto::Bytes(sig.seed_size(), seed_byte));
  const auto kk = kem.generate_keypair(crypto::Bytes(kem.keygen_seed_size(), seed_byte));
  SrupPeer p;
  p.identity = {id, suite, sk.secret_key, kk.secret_key, kk.public_key};
  p.keys = {suite, sk.public_key, kk.public_key};
  return p;
}

inline SrupPeer srup_c2() { return srup_peer(0xc2, 0x11); }
inline SrupPeer srup_device() { return srup_peer(0xa1, 0x22); }
inline const std::string kSrupCommandTopic = "srup/d/00000000000000a1/cmd";
inline const std::string kSrupResponseTopic = "srup/c2/00000000000000c2/rsp";

}  // namespace pqot::test
