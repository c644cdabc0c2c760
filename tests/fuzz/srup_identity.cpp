// libFuzzer target: SRUP-PQ identity files (docs/srup-pq.md section 1.1). The first byte picks the
// file kind (even: identity.pub, odd: identity.key); the rest is the record inside the PEM, which
// the target armours so that the record parser is what the fuzzer explores. Only crypto::Error may
// escape a decode; a public identity that decodes must re-encode to exactly its input, and a key
// file's public half must decode back to itself.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "pqot/crypto/error.hpp"
#include "pqot/crypto/pem.hpp"
#include "pqot/srup/identity.hpp"

using namespace pqot;

namespace {

crypto::ByteView bytes_of(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

void check_public(const srup::PublicIdentity& pub, const std::string& pem) {
  if (srup::encode_public_identity(pub) != pem) std::abort();  // two spellings of one identity
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const bool key_file = (data[0] & 1) != 0;
  const crypto::ByteView record(data + 1, size - 1);
  if (key_file) {
    const auto pem = crypto::pem::encode<crypto::SecretString>(srup::kIdentityKeyLabel, record);
    srup::LoadedIdentity id;
    try {
      id = srup::decode_identity_key(bytes_of(std::string(pem.data(), pem.size())));
    } catch (const crypto::Error&) {
      return 0;
    }
    const std::string pub = srup::encode_public_identity(id.pub);
    check_public(srup::decode_public_identity(bytes_of(pub)), pub);
  } else {
    const std::string pem = crypto::pem::encode<std::string>(srup::kPublicIdentityLabel, record);
    srup::PublicIdentity pub;
    try {
      pub = srup::decode_public_identity(bytes_of(pem));
    } catch (const crypto::Error&) {
      return 0;
    }
    check_public(pub, pem);
  }
  return 0;
}
