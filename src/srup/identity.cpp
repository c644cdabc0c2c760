// docs/srup-pq.md section 1.1: identity files. Both are PEM around the same small binary record;
// the key file holds seeds, from which both key pairs are generated again when it is read.
#include "pqot/srup/identity.hpp"

#include <sys/stat.h>

#include <cstring>
#include <stdexcept>
#include <system_error>

#include "pqot/common/byte_io.hpp"
#include "pqot/common/files.hpp"
#include "pqot/crypto/error.hpp"
#include "pqot/crypto/kem.hpp"
#include "pqot/crypto/pem.hpp"
#include "pqot/crypto/random.hpp"
#include "pqot/crypto/signature.hpp"

namespace pqot::srup {

namespace {

constexpr std::uint8_t kRecordVersion = 1;
constexpr std::uint8_t kKindKey = 'K';
constexpr std::uint8_t kKindPublic = 'P';
// magic (4) + version (1) + kind (1) + ID (8) + suite (1) + two u16 lengths.
constexpr std::size_t kRecordFixed = 4 + 1 + 1 + 8 + 1 + 2 + 2;

struct Algorithms {
  const crypto::Signature& signature;
  const crypto::Kem& kem;
};

Algorithms algorithms_of(Suite suite) {
  const SuiteInfo info = suite_info(suite);
  if (info.legacy) {
    throw std::invalid_argument("the legacy RSA suite has no identity files: pqot makes no new legacy identities");
  }
  return {crypto::signature_by_name(info.signature), crypto::kem_by_name(info.kem)};
}

void check_id(std::uint64_t id) {
  if (id == 0 || id == ~std::uint64_t{0}) {
    throw std::invalid_argument("identity: the IDs 0 and ffffffffffffffff are reserved");
  }
}

// The record of section 1.1, written into `out` (sized by the caller).
template <class Out>
void put_record(Out& out, std::uint8_t kind, std::uint64_t id, Suite suite, crypto::ByteView a,
                crypto::ByteView b) {
  out.resize(kRecordFixed + a.size() + b.size());
  std::uint8_t* p = out.data();
  std::memcpy(p, kMagic.data(), kMagic.size());
  p[4] = kRecordVersion;
  p[5] = kind;
  common::store_u32(p + 6, static_cast<std::uint32_t>(id >> 32));
  common::store_u32(p + 10, static_cast<std::uint32_t>(id));
  p[14] = static_cast<std::uint8_t>(suite);
  p[15] = static_cast<std::uint8_t>(a.size() >> 8);
  p[16] = static_cast<std::uint8_t>(a.size());
  if (!a.empty()) std::memcpy(p + 17, a.data(), a.size());
  p += 17 + a.size();
  p[0] = static_cast<std::uint8_t>(b.size() >> 8);
  p[1] = static_cast<std::uint8_t>(b.size());
  if (!b.empty()) std::memcpy(p + 2, b.data(), b.size());
}

struct Record {
  std::uint64_t id = 0;
  Suite suite = kDefaultSuite;
  crypto::ByteView a;
  crypto::ByteView b;
};

[[noreturn]] void malformed(const std::string& why) {
  throw crypto::Error(crypto::ErrorCode::invalid_encoding, "identity file: " + why);
}

// Parses the record; `a_size` and `b_size` give the lengths the suite fixes, checked before the
// fields are looked at.
template <class Sizes>
Record get_record(crypto::ByteView der, std::uint8_t kind, Sizes&& sizes) {
  try {
    common::ByteReader r(der);
    const auto magic = r.bytes(4);
    if (!std::equal(magic.begin(), magic.end(), kMagic.begin())) malformed("not a SRUP-PQ identity");
    if (r.u8() != kRecordVersion) malformed("unknown version");
    if (r.u8() != kind) malformed(kind == kKindKey ? "not an identity key" : "not a public identity");
    Record rec;
    rec.id = r.u64();
    if (rec.id == 0 || rec.id == ~std::uint64_t{0}) malformed("reserved ID");
    const auto info = suite_info(r.u8());
    if (!info || info->legacy) malformed("unknown or legacy suite");
    rec.suite = info->suite;
    const auto [a_size, b_size] = sizes(rec.suite);
    if (r.u16() != a_size) malformed("wrong signature key length for the suite");
    rec.a = r.bytes(a_size);
    if (r.u16() != b_size) malformed("wrong KEM key length for the suite");
    rec.b = r.bytes(b_size);
    if (!r.empty()) malformed("trailing bytes");
    return rec;
  } catch (const common::Underflow&) {
    malformed("truncated");
  }
}

}  // namespace

IdentitySeeds random_seeds(Suite suite) {
  const Algorithms alg = algorithms_of(suite);
  IdentitySeeds seeds{crypto::SecretBytes(alg.signature.seed_size()),
                      crypto::SecretBytes(alg.kem.keygen_seed_size())};
  crypto::random_bytes(seeds.signature);
  crypto::random_bytes(seeds.kem);
  return seeds;
}

LoadedIdentity make_identity(std::uint64_t id, Suite suite, const IdentitySeeds& seeds) {
  check_id(id);
  const Algorithms alg = algorithms_of(suite);
  if (seeds.signature.size() != alg.signature.seed_size() ||
      seeds.kem.size() != alg.kem.keygen_seed_size()) {
    throw std::invalid_argument("identity: seeds of the wrong size for the suite");
  }
  crypto::SignatureKeyPair sig = alg.signature.keygen(seeds.signature);
  crypto::KemKeyPair kem = alg.kem.generate_keypair(seeds.kem);
  LoadedIdentity out;
  out.self.id = id;
  out.self.suite = suite;
  out.self.signature_secret = std::move(sig.secret_key);
  out.self.kem_secret = std::move(kem.secret_key);
  out.self.kem_public = kem.public_key;
  prepare_keys(out.self);
  out.pub.id = id;
  out.pub.keys = PeerKeys{suite, std::move(sig.public_key), std::move(kem.public_key)};
  return out;
}

crypto::SecretString encode_identity_key(std::uint64_t id, Suite suite, const IdentitySeeds& seeds) {
  (void)make_identity(id, suite, seeds);  // the same checks as reading it back will make
  crypto::SecretBytes record;
  put_record(record, kKindKey, id, suite, seeds.signature, seeds.kem);
  return crypto::pem::encode<crypto::SecretString>(kIdentityKeyLabel, record);
}

std::string encode_public_identity(const PublicIdentity& pub) {
  check_id(pub.id);
  const Algorithms alg = algorithms_of(pub.keys.suite);
  if (pub.keys.signature_public.size() != alg.signature.public_key_size() ||
      pub.keys.kem_public.size() != alg.kem.public_key_size()) {
    throw std::invalid_argument("public identity: keys of the wrong size for the suite");
  }
  Bytes record;
  put_record(record, kKindPublic, pub.id, pub.keys.suite, pub.keys.signature_public,
             pub.keys.kem_public);
  return crypto::pem::encode<std::string>(kPublicIdentityLabel, record);
}

LoadedIdentity decode_identity_key(crypto::ByteView pem) {
  const crypto::SecretBytes der = crypto::pem::decode(pem, kIdentityKeyLabel);
  const Record rec = get_record(der, kKindKey, [](Suite s) {
    const Algorithms alg = algorithms_of(s);
    return std::pair{alg.signature.seed_size(), alg.kem.keygen_seed_size()};
  });
  IdentitySeeds seeds{crypto::SecretBytes(rec.a.begin(), rec.a.end()),
                      crypto::SecretBytes(rec.b.begin(), rec.b.end())};
  return make_identity(rec.id, rec.suite, seeds);
}

PublicIdentity decode_public_identity(crypto::ByteView pem) {
  const crypto::SecretBytes der = crypto::pem::decode(pem, kPublicIdentityLabel);
  const Record rec = get_record(der, kKindPublic, [](Suite s) {
    const Algorithms alg = algorithms_of(s);
    return std::pair{alg.signature.public_key_size(), alg.kem.public_key_size()};
  });
  const Algorithms alg = algorithms_of(rec.suite);
  alg.signature.check_public_key(rec.a);
  alg.kem.check_public_key(rec.b);
  return PublicIdentity{rec.id, PeerKeys{rec.suite, Bytes(rec.a.begin(), rec.a.end()),
                                         Bytes(rec.b.begin(), rec.b.end())}};
}

void write_identity(const std::filesystem::path& dir, std::uint64_t id, Suite suite,
                    const IdentitySeeds& seeds) {
  const crypto::SecretString key = encode_identity_key(id, suite, seeds);
  const std::string pub = encode_public_identity(make_identity(id, suite, seeds).pub);
  const std::string key_path = (dir / kIdentityKeyFile).string();
  // The key first: if it cannot be written, no public identity without a key is left behind.
  common::write_new_file(key_path, key, 0600);
  try {
    common::write_new_file((dir / kPublicIdentityFile).string(), pub, 0644);
  } catch (...) {
    ::unlink(key_path.c_str());
    throw;
  }
  common::sync_directory(dir.string());
}

LoadedIdentity load_identity(const std::filesystem::path& dir) {
  const std::string path = (dir / kIdentityKeyFile).string();
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    throw std::system_error(errno, std::generic_category(), "cannot read '" + path + "'");
  }
  if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    throw std::runtime_error("'" + path + "' may be read by group or others: chmod 600 it");
  }
  const auto text = common::read_bounded_file<crypto::SecretBytes>(path, crypto::kMaxKeyFileSize);
  return decode_identity_key(text);
}

PublicIdentity load_public_identity(const std::filesystem::path& file) {
  const auto text = common::read_bounded_file<Bytes>(file.string(), crypto::kMaxKeyFileSize);
  return decode_public_identity(text);
}

}  // namespace pqot::srup
