// A TRIP session's keys (docs/trip.md §5, §6): what the handshake derives from the TLS exporter,
// the KEM shared secret and the transcript; the sending side of one direction, which moves to the
// next epoch after a count of datagrams or a time; and the receiving side, which finds the epoch a
// datagram names by its low six bits and adopts a new one only after it authenticated.
#pragma once

#include <chrono>
#include <cstdint>

#include "pqot/channel/epochs.hpp"
#include "pqot/channel/key_schedule.hpp"
#include "pqot/crypto/aead.hpp"
#include "pqot/trip/datagram.hpp"

namespace pqot::trip {

using Clock = std::chrono::steady_clock;

/// The label prefix of TRIP v1's key schedule (docs/channel.md, "Key schedule").
inline constexpr const char* kLabelPrefix = "trip1";
/// TLS exporter label of the control connection.
inline constexpr const char* kExporterLabel = "EXPORTER-TRIP-v1";

/// docs/trip.md §5. `exporter` and `kem_secret` are wiped by the caller; the keys here wipe
/// themselves.
struct SessionKeys {
  channel::Key c2s;         ///< the client's sending key, epoch 0
  channel::Key s2c;         ///< the server's sending key, epoch 0
  channel::Digest ready{};  ///< the READY frame's body
};
SessionKeys derive_session_keys(crypto::ByteView exporter, crypto::ByteView kem_secret, const channel::Digest& th);

/// When a sender moves to its next epoch (docs/trip.md §6; from SERVER_HELLO).
struct EpochPolicy {
  std::uint32_t datagrams = 1u << 24;        ///< datagrams (data and keepalives) per epoch
  std::chrono::seconds age{3600};            ///< age of an epoch
};

/// The sending side of one session and direction.
class SendKeys {
 public:
  SendKeys(const channel::Key& first, EpochPolicy policy, Clock::time_point now);

  /// The key for the next datagram and the epoch to put in its header, after moving to the next
  /// epoch if this one is due (its old key wiped). Counts the datagram.
  struct Use {
    crypto::Aes256Gcm& aead;
    std::uint8_t epoch_low;
  };
  Use next(Clock::time_point now);
  std::uint32_t epoch() const noexcept { return epoch_; }

 private:
  channel::Key key_;
  crypto::Aes256Gcm aead_;
  EpochPolicy policy_;
  std::uint32_t epoch_ = 0;
  std::uint32_t used_ = 0;
  Clock::time_point started_;
};

/// The receiving side of one session and direction: the current epoch, the next one on demand,
/// up to `kept` previous ones for `grace` (docs/channel.md, "Epochs").
class ReceiveKeys {
 public:
  static constexpr std::size_t kKeptEpochs = 3;
  static constexpr Clock::duration kEpochGrace = std::chrono::seconds(10);

  explicit ReceiveKeys(const channel::Key& first);

  /// Opens `datagram` (header `h` parsed from it) into `out` (datagram.size() - kOverhead bytes)
  /// with the epoch `h.epoch_low` names. False if no held epoch has those low bits or the tag does
  /// not verify; an epoch that authenticated for the first time becomes current.
  bool open(const Header& h, crypto::ByteView datagram, crypto::MutableByteView out, Clock::time_point now);
  std::uint32_t epoch() const noexcept { return window_.current(); }

 private:
  struct State {
    channel::Key key;
    crypto::Aes256Gcm aead;
  };
  static State make_state(const channel::Key& k);
  channel::EpochWindow<State> window_;
};

}  // namespace pqot::trip
