// The NIST PQC known-answer DRBG (include/pqot/crypto/nist_kat_drbg.hpp): AES-256 in counter mode
// over a 128-bit big-endian V, as NIST's rng.c for PQCgenKAT_kem. AES comes from OpenSSL.
#include "pqot/crypto/nist_kat_drbg.hpp"

#include <openssl/evp.h>

#include <algorithm>

#include "../openssl_util.hpp"
#include "../size_check.hpp"

namespace pqot::crypto::kat {

namespace {

using CipherCtx = ossl::Ptr<EVP_CIPHER_CTX, EVP_CIPHER_CTX_free>;

// V = V + 1, V a 128-bit big-endian integer (carries without a branch).
void increment(std::array<std::uint8_t, 16>& v) {
  unsigned carry = 1;
  for (std::size_t i = v.size(); i-- > 0;) {
    const unsigned sum = v[i] + carry;
    v[i] = static_cast<std::uint8_t>(sum);
    carry = sum >> 8;
  }
}

}  // namespace

NistDrbg::NistDrbg(ByteView entropy) {
  require_size(entropy, seed_size, "DRBG seed", "NIST KAT DRBG");
  update(entropy.data());
}

NistDrbg::~NistDrbg() {
  secure_wipe(key_);
  secure_wipe(v_);
}

void NistDrbg::counter_blocks(std::uint8_t* out, std::size_t count) {
  CipherCtx ctx(EVP_CIPHER_CTX_new());
  if (!ctx) ossl::throw_error("EVP_CIPHER_CTX_new");
  ossl::check(EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_ecb(), nullptr, key_.data(), nullptr),
              "EVP_EncryptInit_ex(aes-256-ecb)");
  EVP_CIPHER_CTX_set_padding(ctx.get(), 0);
  for (std::size_t i = 0; i < count; ++i) {
    increment(v_);
    int len = 0;
    ossl::check(EVP_EncryptUpdate(ctx.get(), out + 16 * i, &len, v_.data(), 16),
                "EVP_EncryptUpdate");
  }
}

void NistDrbg::update(const std::uint8_t* data) {
  std::array<std::uint8_t, 48> temp{};
  counter_blocks(temp.data(), 3);
  if (data != nullptr) {
    for (std::size_t i = 0; i < temp.size(); ++i) temp[i] ^= data[i];
  }
  std::copy_n(temp.begin(), 32, key_.begin());
  std::copy_n(temp.begin() + 32, 16, v_.begin());
  secure_wipe(temp);
}

void NistDrbg::draw(MutableByteView out) {
  SecretBytes blocks((out.size() + 15) / 16 * 16);
  counter_blocks(blocks.data(), blocks.size() / 16);
  std::copy_n(blocks.begin(), out.size(), out.begin());
  update(nullptr);
}

SecretBytes NistDrbg::draw(std::size_t n) {
  SecretBytes out(n);
  draw(out);
  return out;
}

SecretBytes keygen_draws(const Kem& kem, NistDrbg& drbg) {
  SecretBytes seed;
  seed.reserve(kem.keygen_seed_size());
  for (std::size_t n : kem.keygen_randombytes_calls()) {
    const SecretBytes part = drbg.draw(n);
    seed.insert(seed.end(), part.begin(), part.end());
  }
  return seed;
}

}  // namespace pqot::crypto::kat
