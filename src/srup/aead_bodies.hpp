// The five bodies sessions and telemetry groups exchange (docs/srup-pq.md section 2.4: Session
// Offer, Session Accept, Telemetry Key, Checkpoint), in the layouts of that table. Private to
// session.cpp and telemetry.cpp until the typed bodies of body.hpp take over; decoders throw
// Refused{bad_request} (step 11) for a body of the wrong length or out-of-range fields.
#pragma once

#include <array>
#include <cstdint>

#include "pqot/crypto/secure.hpp"
#include "pqot/srup/envelope.hpp"

namespace pqot::srup::detail {

struct OfferBody {  // 0x31: ephemeral KEM public key (the suite's size) ‖ session ID ‖ limits
  Bytes ephemeral_public;
  std::array<std::uint8_t, 8> session_id{};
  std::uint32_t max_messages = 0;
  std::uint32_t max_epoch_seconds = 0;
};
struct AcceptBody {  // 0x32: session ID ‖ KEM ciphertext (the suite's size) ‖ SHA-256(offer)
  std::array<std::uint8_t, 8> session_id{};
  Bytes kem_ciphertext;
  std::array<std::uint8_t, 32> offer_hash{};
};
struct TelemetryKeyBody {  // 0x33: key epoch ‖ key (32) ‖ checkpoint messages ‖ checkpoint seconds
  std::uint32_t epoch = 0;
  crypto::SecretBytes key;
  std::uint16_t checkpoint_messages = 64;
  std::uint16_t checkpoint_seconds = 60;
};
struct CheckpointBody {  // 0x35: key epoch ‖ first sequence ‖ count ‖ digest (32)
  std::uint32_t epoch = 0;
  std::uint64_t first_sequence = 0;
  std::uint16_t count = 0;
  std::array<std::uint8_t, 32> digest{};
};

Bytes encode_offer(const OfferBody& b);
OfferBody decode_offer(Suite suite, ByteView body);
Bytes encode_accept(const AcceptBody& b);
AcceptBody decode_accept(Suite suite, ByteView body);
crypto::SecretBytes encode_telemetry_key(const TelemetryKeyBody& b);
TelemetryKeyBody decode_telemetry_key(ByteView body);
Bytes encode_checkpoint(const CheckpointBody& b);
CheckpointBody decode_checkpoint(ByteView body);

/// The size of the suite's KEM public key and ciphertext (sessions refuse the legacy suite).
std::size_t session_kem_public_size(Suite suite);
std::size_t session_kem_ciphertext_size(Suite suite);

}  // namespace pqot::srup::detail
