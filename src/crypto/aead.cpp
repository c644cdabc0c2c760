// AES-GCM (NIST SP 800-38D) over OpenSSL's EVP interface, plus the counter-nonce bookkeeping.
#include "pqot/crypto/aead.hpp"

#include "openssl_util.hpp"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/modes.h>

#include <algorithm>
#include <array>
#include <functional>
#include <memory>
#include <string>

#include "pqot/crypto/error.hpp"
#include "pqot/crypto/secure.hpp"

namespace pqot::crypto {

namespace {

using CipherCtx = ossl::Ptr<EVP_CIPHER_CTX, EVP_CIPHER_CTX_free>;
using Gcm128Ctx = ossl::Ptr<GCM128_CONTEXT, CRYPTO_gcm128_release>;
using ossl::throw_error;

// OpenSSL 3.0's provider GCM refuses IVs longer than this (GCM_IV_MAX_SIZE); see LongIvGcm.
constexpr std::size_t kEvpMaxIv = 128;
// SP 800-38D section 5.2.1.1: at most 2^39 - 256 bits of plaintext per message.
constexpr std::uint64_t kMaxMessage = (std::uint64_t{1} << 36) - 32;
// EVP takes int lengths: feed long inputs in pieces well below INT_MAX.
constexpr std::size_t kChunk = std::size_t{1} << 30;

using ossl::check;

// Fetched once: a fetch per call costs a provider lookup under a lock. A failed fetch throws, so
// the function-local static stays uninitialised and the next call tries again.
const EVP_CIPHER* fetch_cipher(const char* name) {
  const EVP_CIPHER* c = EVP_CIPHER_fetch(nullptr, name, nullptr);
  if (c == nullptr) throw_error(name);
  return c;
}

const EVP_CIPHER* aes_gcm(std::size_t key_size) {
  switch (key_size) {
    case 16: {
      static const EVP_CIPHER* c = fetch_cipher("AES-128-GCM");
      return c;
    }
    case 24: {
      static const EVP_CIPHER* c = fetch_cipher("AES-192-GCM");
      return c;
    }
    case 32: {
      static const EVP_CIPHER* c = fetch_cipher("AES-256-GCM");
      return c;
    }
    default:
      throw Error(ErrorCode::invalid_length,
                  "AES key must be 16, 24 or 32 bytes, got " + std::to_string(key_size));
  }
}

const EVP_CIPHER* aes_ecb(std::size_t key_size) {
  switch (key_size) {
    case 16: {
      static const EVP_CIPHER* c = fetch_cipher("AES-128-ECB");
      return c;
    }
    case 24: {
      static const EVP_CIPHER* c = fetch_cipher("AES-192-ECB");
      return c;
    }
    default: {
      static const EVP_CIPHER* c = fetch_cipher("AES-256-ECB");
      return c;
    }
  }
}

CipherCtx new_ctx() {
  CipherCtx ctx(EVP_CIPHER_CTX_new());
  if (!ctx) throw_error("EVP_CIPHER_CTX_new");
  return ctx;
}

bool overlaps(ByteView a, MutableByteView b) noexcept {
  if (a.empty() || b.empty()) return false;
  const std::less<const std::uint8_t*> lt;
  return lt(a.data(), b.data() + b.size()) && lt(b.data(), a.data() + a.size());
}

void update(EVP_CIPHER_CTX* ctx, ByteView in, std::uint8_t* out) {
  for (std::size_t done = 0; done < in.size();) {
    const std::size_t n = std::min(in.size() - done, kChunk);
    int written = 0;
    check(EVP_CipherUpdate(ctx, out == nullptr ? nullptr : out + done, &written, in.data() + done,
                           static_cast<int>(n)),
          "EVP_CipherUpdate");
    if (out != nullptr && static_cast<std::size_t>(written) != n) throw_error("GCM short write");
    done += n;
  }
}

// `ctx` holds key and IV for encryption. out = ciphertext || tag.
void gcm_seal(EVP_CIPHER_CTX* ctx, ByteView aad, ByteView plaintext, MutableByteView out) {
  update(ctx, aad, nullptr);
  update(ctx, plaintext, out.data());
  std::uint8_t unused[16];
  int n = 0;
  check(EVP_CipherFinal_ex(ctx, unused, &n), "EVP_CipherFinal_ex");
  check(
      EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, kAesGcmTagSize, out.data() + plaintext.size()),
      "EVP_CTRL_GCM_GET_TAG");
}

// `ctx` holds key and IV for decryption. GCM releases plaintext before the tag is checked, so
// `out` is wiped on every failure.
// False (and `out` wiped) if the tag does not verify.
bool gcm_open(EVP_CIPHER_CTX* ctx, ByteView aad, ByteView sealed, MutableByteView out) {
  const ByteView ct = sealed.first(sealed.size() - kAesGcmTagSize);
  std::array<std::uint8_t, kAesGcmTagSize> tag{};
  std::copy(sealed.end() - kAesGcmTagSize, sealed.end(), tag.begin());
  bool ok = false;
  try {
    update(ctx, aad, nullptr);
    update(ctx, ct, out.data());
    check(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, kAesGcmTagSize, tag.data()),
          "EVP_CTRL_GCM_SET_TAG");
    std::uint8_t unused[16];
    int n = 0;
    ok = EVP_CipherFinal_ex(ctx, unused, &n) == 1;
  } catch (...) {
    secure_wipe(out);
    throw;
  }
  if (!ok) {
    secure_wipe(out);
    ERR_clear_error();
  }
  return ok;
}

void check_message(std::size_t size) {
  if (size > kMaxMessage) {
    throw Error(ErrorCode::invalid_length, "AES-GCM message longer than 2^36 - 32 bytes");
  }
}

void check_sealed(ByteView sealed) {
  if (sealed.size() < kAesGcmTagSize) {
    throw Error(ErrorCode::invalid_length, "AES-GCM input is shorter than the 16-byte tag");
  }
  check_message(sealed.size() - kAesGcmTagSize);
}

// ---- IVs longer than OpenSSL's provider accepts -----------------------------------------------
// SP 800-38D allows any IV length (a non-96-bit IV is GHASHed into J0), but OpenSSL 3.0's EVP GCM
// caps it at 128 bytes. Longer IVs run OpenSSL's generic GCM mode (CRYPTO_gcm128_*, which GHASHes
// any IV) over an EVP AES-ECB block function, so the AES itself is still the EVP implementation.

struct EcbBlock {
  EVP_CIPHER_CTX* ctx;
  mutable bool failed = false;  // block128_f cannot report errors; checked after each step
};

void ecb_block(const unsigned char in[16], unsigned char out[16], const void* key) {
  const auto* b = static_cast<const EcbBlock*>(key);
  int n = 0;
  if (EVP_EncryptUpdate(b->ctx, out, &n, in, 16) != 1 || n != 16) b->failed = true;
}

class LongIvGcm {
 public:
  LongIvGcm(ByteView key, ByteView iv) : ecb_ctx_(new_ctx()), block_{ecb_ctx_.get()} {
    check(EVP_EncryptInit_ex2(ecb_ctx_.get(), aes_ecb(key.size()), key.data(), nullptr, nullptr),
          "EVP_EncryptInit_ex2");
    check(EVP_CIPHER_CTX_set_padding(ecb_ctx_.get(), 0), "EVP_CIPHER_CTX_set_padding");
    gcm_.reset(CRYPTO_gcm128_new(&block_, ecb_block));
    if (!gcm_) throw_error("CRYPTO_gcm128_new");
    CRYPTO_gcm128_setiv(gcm_.get(), iv.data(), iv.size());
    verify_blocks();
  }

  void aad(ByteView aad) {
    if (!aad.empty() && CRYPTO_gcm128_aad(gcm_.get(), aad.data(), aad.size()) != 0) {
      throw_error("CRYPTO_gcm128_aad");
    }
  }
  void encrypt(ByteView in, std::uint8_t* out) {
    if (!in.empty() && CRYPTO_gcm128_encrypt(gcm_.get(), in.data(), out, in.size()) != 0) {
      throw_error("CRYPTO_gcm128_encrypt");
    }
    verify_blocks();
  }
  void decrypt(ByteView in, std::uint8_t* out) {
    if (!in.empty() && CRYPTO_gcm128_decrypt(gcm_.get(), in.data(), out, in.size()) != 0) {
      throw_error("CRYPTO_gcm128_decrypt");
    }
    verify_blocks();
  }
  void tag(std::uint8_t* out) {
    CRYPTO_gcm128_tag(gcm_.get(), out, kAesGcmTagSize);
    verify_blocks();
  }
  // Constant-time compare inside OpenSSL (CRYPTO_memcmp).
  bool finish(const std::uint8_t* expected) {
    const bool ok = CRYPTO_gcm128_finish(gcm_.get(), expected, kAesGcmTagSize) == 0;
    verify_blocks();
    return ok;
  }

 private:
  void verify_blocks() const {
    if (block_.failed) throw_error("AES-ECB block");
  }

  CipherCtx ecb_ctx_;
  EcbBlock block_;
  Gcm128Ctx gcm_;  // holds H and the GHASH table; released (and cleansed) before ecb_ctx_
};

Bytes long_iv_encrypt(ByteView key, ByteView iv, ByteView aad, ByteView plaintext) {
  LongIvGcm gcm(key, iv);
  Bytes out(plaintext.size() + kAesGcmTagSize);
  gcm.aad(aad);
  gcm.encrypt(plaintext, out.data());
  gcm.tag(out.data() + plaintext.size());
  return out;
}

Bytes long_iv_decrypt(ByteView key, ByteView iv, ByteView aad, ByteView sealed) {
  LongIvGcm gcm(key, iv);
  Bytes out(sealed.size() - kAesGcmTagSize);
  try {
    gcm.aad(aad);
    gcm.decrypt(sealed.first(out.size()), out.data());
    if (gcm.finish(sealed.data() + out.size())) return out;
  } catch (...) {
    secure_wipe(out);
    throw;
  }
  secure_wipe(out);
  throw Error(ErrorCode::auth_failed, "AES-GCM tag does not verify");
}

// Key and IV of any supported size into a fresh context, direction `enc`.
CipherCtx init_any(ByteView key, ByteView iv, int enc) {
  CipherCtx ctx = new_ctx();
  check(EVP_CipherInit_ex2(ctx.get(), aes_gcm(key.size()), nullptr, nullptr, enc, nullptr),
        "EVP_CipherInit_ex2");
  // Must be checked: on failure OpenSSL silently keeps the 12-byte default and reads only
  // part of the IV.
  check(
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(iv.size()), nullptr),
      "EVP_CTRL_GCM_SET_IVLEN");
  check(EVP_CipherInit_ex2(ctx.get(), nullptr, key.data(), iv.data(), enc, nullptr),
        "EVP_CipherInit_ex2");
  return ctx;
}

// Re-init with cipher and key NULL keeps the key schedule and only sets nonce and direction.
EVP_CIPHER_CTX* start(EVP_CIPHER_CTX* ctx, const Nonce& nonce, int enc) {
  if (ctx == nullptr) throw Error(ErrorCode::invalid_argument, "Aes256Gcm used after move");
  check(EVP_CipherInit_ex2(ctx, nullptr, nullptr, nonce.data(), enc, nullptr),
        "EVP_CipherInit_ex2");
  return ctx;
}

void check_key_iv(ByteView key, ByteView iv) {
  aes_gcm(key.size());  // throws invalid_length for other key sizes
  if (iv.empty()) throw Error(ErrorCode::invalid_length, "AES-GCM IV must not be empty");
}

}  // namespace

Nonce make_nonce(const NoncePrefix& prefix, std::uint64_t counter) noexcept {
  Nonce n{};
  std::copy(prefix.begin(), prefix.end(), n.begin());
  for (std::size_t i = 0; i < 8; ++i) {
    n[4 + i] = static_cast<std::uint8_t>(counter >> (56 - 8 * i));
  }
  return n;
}

// ---- Aes256Gcm ---------------------------------------------------------------------------------

struct Aes256Gcm::Impl {
  CipherCtx ctx = new_ctx();  // key schedule set once; EVP_CIPHER_CTX_free cleanses it
};

Aes256Gcm::Aes256Gcm(ByteView key) {
  if (key.size() != kAes256KeySize) {
    throw Error(ErrorCode::invalid_length,
                "AES-256-GCM key must be 32 bytes, got " + std::to_string(key.size()));
  }
  auto impl = std::make_unique<Impl>();
  check(
      EVP_CipherInit_ex2(impl->ctx.get(), aes_gcm(kAes256KeySize), key.data(), nullptr, 1, nullptr),
      "EVP_CipherInit_ex2");
  impl_ = std::move(impl);
}

Aes256Gcm::~Aes256Gcm() = default;
Aes256Gcm::Aes256Gcm(Aes256Gcm&&) noexcept = default;
Aes256Gcm& Aes256Gcm::operator=(Aes256Gcm&&) noexcept = default;

Bytes Aes256Gcm::seal(const Nonce& nonce, ByteView aad, ByteView plaintext) {
  Bytes out(plaintext.size() + kAesGcmTagSize);
  seal_into(nonce, aad, plaintext, out);
  return out;
}

void Aes256Gcm::seal_into(const Nonce& nonce, ByteView aad, ByteView plaintext,
                          MutableByteView out) {
  if (out.size() != plaintext.size() + kAesGcmTagSize) {
    throw Error(ErrorCode::invalid_length, "AES-GCM output buffer must be plaintext + 16 bytes");
  }
  check_message(plaintext.size());
  if (overlaps(plaintext, out) || overlaps(aad, out)) {
    throw Error(ErrorCode::invalid_argument, "AES-GCM output overlaps an input");
  }
  gcm_seal(start(impl_ ? impl_->ctx.get() : nullptr, nonce, 1), aad, plaintext, out);
}

Bytes Aes256Gcm::open(const Nonce& nonce, ByteView aad, ByteView sealed) {
  check_sealed(sealed);
  Bytes out(sealed.size() - kAesGcmTagSize);
  open_into(nonce, aad, sealed, out);
  return out;
}

void Aes256Gcm::open_into(const Nonce& nonce, ByteView aad, ByteView sealed, MutableByteView out) {
  if (!try_open_into(nonce, aad, sealed, out)) throw Error(ErrorCode::auth_failed, "AES-GCM tag does not verify");
}

bool Aes256Gcm::try_open_into(const Nonce& nonce, ByteView aad, ByteView sealed, MutableByteView out) {
  check_sealed(sealed);
  if (out.size() != sealed.size() - kAesGcmTagSize) {
    throw Error(ErrorCode::invalid_length, "AES-GCM plaintext buffer has the wrong size");
  }
  if (overlaps(sealed, out) || overlaps(aad, out)) {
    throw Error(ErrorCode::invalid_argument, "AES-GCM output overlaps an input");
  }
  return gcm_open(start(impl_ ? impl_->ctx.get() : nullptr, nonce, 0), aad, sealed, out);
}

// ---- NonceSequence -----------------------------------------------------------------------------

std::uint64_t NonceSequence::next_counter() {
  if (exhausted_ || next_ > last_) {
    exhausted_ = true;
    throw Error(ErrorCode::nonce_exhausted, "nonce counter exhausted; the key must be replaced");
  }
  const std::uint64_t counter = next_;
  // Never increment past last_: with last_ == UINT64_MAX that would wrap to 0.
  if (counter == last_) {
    exhausted_ = true;
  } else {
    ++next_;
  }
  return counter;
}

// ---- Low-level AES-GCM -------------------------------------------------------------------------

Bytes aes_gcm_encrypt(ByteView key, ByteView iv, ByteView aad, ByteView plaintext) {
  check_key_iv(key, iv);
  check_message(plaintext.size());
  if (iv.size() > kEvpMaxIv) return long_iv_encrypt(key, iv, aad, plaintext);
  CipherCtx ctx = init_any(key, iv, 1);
  Bytes out(plaintext.size() + kAesGcmTagSize);
  gcm_seal(ctx.get(), aad, plaintext, out);
  return out;
}

Bytes aes_gcm_decrypt(ByteView key, ByteView iv, ByteView aad, ByteView sealed) {
  check_key_iv(key, iv);
  check_sealed(sealed);
  if (iv.size() > kEvpMaxIv) return long_iv_decrypt(key, iv, aad, sealed);
  CipherCtx ctx = init_any(key, iv, 0);
  Bytes out(sealed.size() - kAesGcmTagSize);
  if (!gcm_open(ctx.get(), aad, sealed, out)) throw Error(ErrorCode::auth_failed, "AES-GCM tag does not verify");
  return out;
}

}  // namespace pqot::crypto
