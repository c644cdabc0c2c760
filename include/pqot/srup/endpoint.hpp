// One SRUP-PQ peer's message handling, the part the C2 server and the device agent share
// (docs/srup-pq.md sections 6 and 7; docs/srup-mqtt.md): making envelopes in the mode their type
// fixes, with sequence numbers from the durable counters, and the whole receive order for the
// signed and sealed modes: steps 1-9 (open_protected), step 10 (the replay window, or the command
// journal for commands) and step 11 (the body). No I/O but the state store; the caller moves the
// bytes (MQTT) and acts on what it receives.
//
// Used from one thread at a time (the StateStore's rule).
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <unordered_map>
#include <string_view>

#include "pqot/srup/body.hpp"
#include "pqot/srup/protect.hpp"
#include "pqot/srup/state.hpp"

namespace pqot::srup {

struct EndpointOptions {
  /// The lifetime written into every envelope this endpoint makes (section 2.1: 1 .. 7 days).
  std::uint32_t lifetime_ms = 60'000;
  /// The lifetime of commands (a C2's, section 7.3: it retransmits them until answered or this has
  /// passed); 0: lifetime_ms.
  std::uint32_t command_lifetime_ms = 0;
  /// Whether this peer is the C2: Data it sends is a command, Data it receives is not (section 2.4).
  bool is_c2 = false;
  /// Milliseconds since the Unix epoch; the system clock if empty.
  std::function<std::uint64_t()> now_ms;
};

/// What receive() made of an authenticated envelope.
struct Inbound {
  enum class Kind {
    /// A new command, admitted in the journal: act, then answer() (or abandon()).
    execute,
    /// Not a command (a Response, device Data, a join request, ...): accepted by the replay
    /// window; nothing to answer unless the application's flow says so.
    message,
    /// The endpoint answered by itself: send `reply` (a retry of a done command gets its stored
    /// answer again; a command accepted before a crash gets 0x90 INTERRUPTED; an authenticated
    /// command whose body does not decode gets 0x92 BAD_REQUEST).
    reply,
    /// A duplicate of a command still running here: drop it, the answer comes.
    in_progress,
  };
  Kind kind = Kind::message;
  Header header;
  Body body;   ///< execute and message
  Bytes reply;  ///< reply
};

class Endpoint {
 public:
  /// `store` must outlive the endpoint. Throws std::invalid_argument for a lifetime the wire
  /// refuses (0 or over 7 days).
  Endpoint(Identity self, StateStore& store, EndpointOptions options = {});

  std::uint64_t id() const noexcept { return self_.id; }
  Suite suite() const noexcept { return self_.suite; }
  const Identity& identity() const noexcept { return self_; }

  // ---- peers: the application decides whom it enrols (its registry, its C2) ---------------------
  /// The public keys of at most this many peers are held prepared (PeerKeys::verifier and
  /// encapsulator), those sent to or heard from most recently: about 43 KB each for
  /// ML-DSA-65/ML-KEM-768, so at most about 11 MB. A peer whose keys are not prepared gets them
  /// prepared when it is next used (the same results either way).
  static constexpr std::size_t kMaxPreparedPeers = 256;

  void enrol(std::uint64_t peer, PeerKeys keys);
  void remove(std::uint64_t peer);
  const PeerKeys* peer(std::uint64_t peer) const;
  /// The enrolled peer with its keys prepared (the least recently used peer's prepared keys are
  /// dropped past kMaxPreparedPeers), or nullptr: the lookup for sealing to `peer` and verifying
  /// what it signed.
  const PeerKeys* prepared_peer(std::uint64_t peer);
  std::size_t peer_count() const noexcept { return peers_.size(); }

  // ---- sending ------------------------------------------------------------------------------------
  /// An envelope of `type` to `peer` on `topic`, in the mode section 2.4 fixes (signed or sealed),
  /// with the next sequence number of (self, peer) and `token`. Throws std::invalid_argument for
  /// an unknown peer (sealed types need its keys), a body that is not the type's, or a token over
  /// 64 bytes; StateError when the counter cannot be reserved.
  Bytes make(std::uint64_t peer, MessageType type, const Body& body, std::string_view topic,
             ByteView token = {});

  // ---- receiving ----------------------------------------------------------------------------------
  /// Steps 1-11 for an envelope received on `topic`; a reply the endpoint makes by itself goes on
  /// `reply_topic` (the sender's topic for our messages). Throws Refused with the first failing step's
  /// reason (nothing stored then, except for step 11 of a non-command, whose number the window has
  /// taken: the same bytes again are a replay). Modes 2 and 3 are refused (MALFORMED): sessions and
  /// telemetry groups have their own objects (session.hpp, telemetry.hpp).
  Inbound receive(ByteView wire, std::string_view topic, std::string_view reply_topic);
  /// As receive(), but a message that is not a command (Kind::message) is only checked against its
  /// replay window, not recorded in it: the caller first stores durably what the message means
  /// (the C2 an answer in its outbox), then calls record(). A crash in between leaves the number
  /// free, so the same envelope again (the peer's journal answering a retransmission) is accepted
  /// once more, and the caller must take a second copy as harmless. A body that does not decode
  /// (step 11) is recorded before Refused is thrown, as by receive().
  Inbound receive_unrecorded(ByteView wire, std::string_view topic, std::string_view reply_topic);
  /// Records the number of a message receive_unrecorded() returned in its replay window (committed
  /// before it returns). Throws Refused{replay} when the window took the number meanwhile, and
  /// StateError when it cannot be written.
  void record(const Header& message);

  /// The Response to a command received as Kind::execute: sealed to its sender, carrying its
  /// token, on `topic`, valid at least as long as the command (section 7.3); stored in the journal before it is returned (a retry gets the same bytes).
  /// Throws StateError when the journal cannot be written (the command stays in flight: call again).
  Bytes answer(const Header& command, std::uint8_t status, std::string_view detail,
               std::string_view topic);
  /// As answer(), with another answer type: Data for an ID Request or a data request (section
  /// 2.4 of docs/srup-mqtt.md).
  Bytes answer_with(const Header& command, MessageType type, const Body& body, std::string_view topic);
  /// A command received as Kind::execute that cannot be answered (section 7.3): its next retry is
  /// answered 0x90 INTERRUPTED, and it is never run again.
  void abandon(const Header& command);

 private:
  std::uint64_t now() const;
  Inbound receive_impl(ByteView wire, std::string_view topic, std::string_view reply_topic, bool record_now);
  // make() with a lifetime reaching at least `valid_until_ms` (0: the configured lifetime).
  Bytes make_until(std::uint64_t peer, MessageType type, const Body& body, std::string_view topic,
                   ByteView token, std::uint64_t valid_until_ms);
  Bytes answer_envelope(const Header& command, MessageType type, const Body& body,
                        std::string_view topic);

  Identity self_;
  StateStore& store_;
  EndpointOptions options_;
  std::map<std::uint64_t, PeerKeys> peers_;
  std::list<std::uint64_t> prepared_lru_;  // most recent first
  std::unordered_map<std::uint64_t, std::list<std::uint64_t>::iterator> prepared_at_;
};

}  // namespace pqot::srup
