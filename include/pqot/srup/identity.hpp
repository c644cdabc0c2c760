// SRUP-PQ identity files (docs/srup-pq.md, section 1.1): a peer's ID, suite and key seeds in
// `identity.key` (mode 0600), and what its peers enrol — ID, suite, public keys — in `identity.pub`.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "pqot/crypto/key_file.hpp"
#include "pqot/crypto/secure.hpp"
#include "pqot/srup/protect.hpp"

namespace pqot::srup {

/// What a peer enrols for another: its ID with its suite and public keys.
struct PublicIdentity {
  std::uint64_t id = 0;
  PeerKeys keys;
};

/// The seeds both key pairs are generated from (the files hold seeds, as pqot's key files do).
struct IdentitySeeds {
  crypto::SecretBytes signature;  ///< Signature::seed_size() bytes
  crypto::SecretBytes kem;        ///< Kem::keygen_seed_size() bytes
};

/// A peer's own identity with its public half.
struct LoadedIdentity {
  Identity self;
  PublicIdentity pub;
};

inline constexpr std::string_view kIdentityKeyLabel = "SRUP-PQ IDENTITY KEY";
inline constexpr std::string_view kPublicIdentityLabel = "SRUP-PQ PUBLIC IDENTITY";
inline constexpr std::string_view kIdentityKeyFile = "identity.key";
inline constexpr std::string_view kPublicIdentityFile = "identity.pub";

/// Fresh seeds for `suite` from the OS CSPRNG. Throws std::invalid_argument for the legacy suite
/// (its RSA keys have no seeds; pqot makes no new legacy identities).
IdentitySeeds random_seeds(Suite suite);

/// The identity `id` of `suite` with keys generated from `seeds`. Throws std::invalid_argument for
/// a reserved ID (0 or all-ones), the legacy suite, or seeds of the wrong size.
LoadedIdentity make_identity(std::uint64_t id, Suite suite, const IdentitySeeds& seeds);

/// The files' texts (PEM, section 1.1 gives the bytes inside).
crypto::SecretString encode_identity_key(std::uint64_t id, Suite suite, const IdentitySeeds& seeds);
std::string encode_public_identity(const PublicIdentity& pub);

/// Reads them back; a public identity's keys are checked (Signature/Kem::check_public_key).
/// Errors: crypto::Error{invalid_encoding} for malformed PEM or contents (every length is checked
/// against what the suite fixes before anything is copied), crypto::Error{invalid_key} for keys
/// the algorithms refuse.
LoadedIdentity decode_identity_key(crypto::ByteView pem);
PublicIdentity decode_public_identity(crypto::ByteView pem);

/// Writes `dir`/identity.key (0600) and `dir`/identity.pub (0644), never overwriting either
/// (std::system_error, "File exists"), the key first and the directory synced after both.
void write_identity(const std::filesystem::path& dir, std::uint64_t id, Suite suite,
                    const IdentitySeeds& seeds);
/// `dir`/identity.key, refused (std::runtime_error) when group or others may read it.
LoadedIdentity load_identity(const std::filesystem::path& dir);
/// A public identity file (any name).
PublicIdentity load_public_identity(const std::filesystem::path& file);

}  // namespace pqot::srup
