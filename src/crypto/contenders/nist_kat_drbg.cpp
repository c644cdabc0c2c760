// The NIST PQC known-answer DRBG (include/pqot/crypto/nist_kat_drbg.hpp): AES-256 in counter mode
// over a 128-bit big-endian V, as NIST's rng.c for PQCgenKAT_kem. AES comes from OpenSSL.
#include "pqot/crypto/nist_kat_drbg.hpp"

#include <openssl/evp.h>

#include <algorithm>

#include "../openssl_util.hpp"
#include "../size_check.hpp"

namespace pqot::crypto {

namespace {

using CipherCtx = ossl::Ptr<EVP_CIPHER_CTX, EVP_CIPHER_CTX_free>;

// V = V + 1, V a 128-bit big-endian integer.
void increment(std::array<std::uint8_t, 16>& v) {
  for (std::size_t i = v.size(); i-- > 0;) {
    if (++v[i] != 0) break;
  }
}

}  // namespace

NistKatDrbg::NistKatDrbg(ByteView entropy) {
  require_size(entropy, seed_size, "DRBG seed", "NIST KAT DRBG");
  update(entropy.data());
}

NistKatDrbg::~NistKatDrbg() {
  secure_wipe(key_);
  secure_wipe(v_);
}

void NistKatDrbg::next_block(std::uint8_t out[16]) {
  increment(v_);
  CipherCtx ctx(EVP_CIPHER_CTX_new());
  if (!ctx) ossl::throw_error("EVP_CIPHER_CTX_new");
  ossl::check(EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_ecb(), nullptr, key_.data(), nullptr),
              "EVP_EncryptInit_ex(aes-256-ecb)");
  EVP_CIPHER_CTX_set_padding(ctx.get(), 0);
  int len = 0;
  ossl::check(EVP_EncryptUpdate(ctx.get(), out, &len, v_.data(), 16), "EVP_EncryptUpdate");
}

void NistKatDrbg::update(const std::uint8_t* data) {
  std::array<std::uint8_t, 48> temp{};
  for (std::size_t i = 0; i < 3; ++i) next_block(temp.data() + 16 * i);
  if (data != nullptr) {
    for (std::size_t i = 0; i < temp.size(); ++i) temp[i] ^= data[i];
  }
  std::copy_n(temp.begin(), 32, key_.begin());
  std::copy_n(temp.begin() + 32, 16, v_.begin());
  secure_wipe(temp);
}

void NistKatDrbg::randombytes(MutableByteView out) {
  std::array<std::uint8_t, 16> block{};
  for (std::size_t done = 0; done < out.size(); done += 16) {
    next_block(block.data());
    std::copy_n(block.begin(), std::min<std::size_t>(16, out.size() - done), out.begin() + done);
  }
  secure_wipe(block);
  update(nullptr);
}

SecretBytes NistKatDrbg::randombytes(std::size_t n) {
  SecretBytes out(n);
  randombytes(out);
  return out;
}

SecretBytes draw_keygen_seed(const Kem& kem, NistKatDrbg& drbg) {
  SecretBytes seed;
  seed.reserve(kem.keygen_seed_size());
  for (std::size_t n : kem.keygen_randombytes_calls()) {
    const SecretBytes part = drbg.randombytes(n);
    seed.insert(seed.end(), part.begin(), part.end());
  }
  return seed;
}

}  // namespace pqot::crypto
