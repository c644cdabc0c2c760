// TRIP's handshake without I/O (docs/trip.md §4, §5).
#include "pqot/trip/handshake.hpp"

#include <openssl/crypto.h>

#include <algorithm>

#include "pqot/crypto/error.hpp"
#include "pqot/crypto/kem.hpp"
#include "pqot/crypto/random.hpp"

namespace pqot::trip {

namespace {

const crypto::Kem& kem_of(std::uint16_t id) {
  const auto name = kem_name(id);
  if (!name) throw std::invalid_argument("unknown KEM id " + std::to_string(id));
  return crypto::kem_by_name(*name);
}

// What the server has that the client lacks, and the reverse, in words (docs/trip.md §4.3).
std::string server_only_text(const SessionFlow& f) {
  return f.dir == FlowDirection::client_reflects ? "this side filters it on this path, the client does not reflect it here"
                                                 : "this side reflects it on this path, the client does not filter it here";
}

std::string client_only_text(const SessionFlow& f) {
  return f.dir == FlowDirection::client_reflects ? "the client reflects it on this path, this side does not filter it here"
                                                 : "the client filters it on this path, this side does not reflect it here";
}

}  // namespace

std::optional<std::string> kem_name(std::uint16_t kem) {
  switch (static_cast<KemId>(kem)) {
    case KemId::ml_kem_768: return "ML-KEM-768";
    case KemId::ml_kem_1024: return "ML-KEM-1024";
    case KemId::x_wing: return "X-Wing";
  }
  return std::nullopt;
}

ClientHandshake::ClientHandshake(KemId kem, std::uint64_t boot, std::uint8_t path, std::vector<SessionFlow> flows) {
  const crypto::Kem& k = kem_of(static_cast<std::uint16_t>(kem));
  crypto::SecretBytes seed(k.keygen_seed_size());
  crypto::random_bytes(seed);
  crypto::KemKeyPair kp = k.generate_keypair(seed);
  hello_.kem = static_cast<std::uint16_t>(kem);
  hello_.ek = std::move(kp.public_key);
  crypto::random_bytes(hello_.random);
  hello_.boot = boot;
  hello_.path = path;
  hello_.flows = std::move(flows);
  hello_body_ = encode(hello_);  // checks boot and flows
  secret_key_ = std::move(kp.secret_key);
}

SessionAgreement ClientHandshake::finish(crypto::ByteView server_hello_body, crypto::ByteView exporter) {
  crypto::SecretBytes secret = std::move(secret_key_);
  ServerHello sh;
  try {
    sh = decode_server_hello(server_hello_body);
  } catch (const ControlError& e) {
    throw HandshakeError(CloseCode::protocol, e.what());
  }
  if (sh.version != kVersion) throw HandshakeError(CloseCode::protocol, "SERVER_HELLO: version " + std::to_string(sh.version));
  if (sh.kem != hello_.kem) throw HandshakeError(CloseCode::protocol, "SERVER_HELLO: a KEM other than the one offered");
  const crypto::Kem& k = kem_of(sh.kem);
  if (sh.ct.size() != k.ciphertext_size()) throw HandshakeError(CloseCode::protocol, "SERVER_HELLO: ciphertext of the wrong length");
  const crypto::SecretBytes ss = k.decapsulate(secret, sh.ct);
  SessionAgreement a;
  a.keys = derive_session_keys(exporter, ss, channel::transcript_hash({hello_body_, server_hello_body}));
  a.client_boot = hello_.boot;
  a.server_boot = sh.boot;
  a.session = sh.session;
  a.client_path = hello_.path;
  a.flows = hello_.flows;
  a.params = std::move(sh);
  return a;
}

std::string flow_mismatch(const std::vector<SessionFlow>& expected, const std::vector<SessionFlow>& got) {
  // Both lists are strictly increasing: walk them together to the first difference.
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < expected.size() || j < got.size()) {
    if (j == got.size() || (i < expected.size() && expected[i] < got[j])) {
      const SessionFlow& e = expected[i];
      return "flow " + std::to_string(e.flow) + ": " + server_only_text(e);
    }
    if (i == expected.size() || got[j] < expected[i]) {
      const SessionFlow& g = got[j];
      return "flow " + std::to_string(g.flow) + ": " + client_only_text(g);
    }
    ++i;
    ++j;
  }
  return "";
}

ServerAnswer answer_client_hello(crypto::ByteView client_hello_body, crypto::ByteView exporter, const ServerOffer& offer,
                                 const std::vector<SessionFlow>& expected, std::uint64_t boot, std::uint8_t session) {
  ClientHello ch;
  try {
    ch = decode_client_hello(client_hello_body);
  } catch (const ControlError& e) {
    throw HandshakeError(CloseCode::protocol, e.what());
  }
  if (ch.version != kVersion) throw HandshakeError(CloseCode::version, "version " + std::to_string(ch.version) + " (this side: 1)");
  const auto accepted = std::find(offer.accept_kems.begin(), offer.accept_kems.end(), static_cast<KemId>(ch.kem));
  if (accepted == offer.accept_kems.end() || !kem_name(ch.kem)) {
    throw HandshakeError(CloseCode::kem, "KEM " + kem_name(ch.kem).value_or("id " + std::to_string(ch.kem)) + " is not accepted here");
  }
  const std::string mismatch = flow_mismatch(expected, ch.flows);
  if (!mismatch.empty()) throw HandshakeError(CloseCode::flows, mismatch);
  const crypto::Kem& k = kem_of(ch.kem);
  try {
    k.check_public_key(ch.ek);
  } catch (const crypto::Error& e) {
    throw HandshakeError(CloseCode::kem, std::string("the encapsulation key fails its check: ") + e.what());
  }
  crypto::SecretBytes seed(k.encaps_seed_size());
  crypto::random_bytes(seed);
  crypto::KemEncapsulation enc = k.encapsulate(ch.ek, seed);
  ServerHello sh;
  sh.kem = ch.kem;
  sh.ct = std::move(enc.ciphertext);
  crypto::random_bytes(sh.random);
  sh.boot = boot;
  sh.session = session;
  sh.key_update_datagrams = offer.key_update_datagrams;
  sh.key_update_seconds = offer.key_update_seconds;
  sh.keepalive_ms = offer.keepalive_ms;
  sh.dead_after_ms = offer.dead_after_ms;
  ServerAnswer out;
  out.body = encode(sh);
  out.agreement.keys = derive_session_keys(exporter, enc.shared_secret, channel::transcript_hash({client_hello_body, out.body}));
  out.agreement.client_boot = ch.boot;
  out.agreement.server_boot = boot;
  out.agreement.session = session;
  out.agreement.client_path = ch.path;
  out.agreement.flows = std::move(ch.flows);
  out.agreement.params = std::move(sh);
  return out;
}

channel::Digest ready_body(const SessionKeys& keys) { return keys.ready; }

bool ready_matches(const SessionKeys& keys, crypto::ByteView body) {
  return body.size() == keys.ready.size() && CRYPTO_memcmp(body.data(), keys.ready.data(), body.size()) == 0;
}

}  // namespace pqot::trip
