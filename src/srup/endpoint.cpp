// One peer's message handling: envelopes out, the receive order in (docs/srup-pq.md 6 and 7).
#include "pqot/srup/endpoint.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "pqot/common/clock.hpp"
#include "pqot/crypto/error.hpp"
#include "pqot/srup/status.hpp"

namespace pqot::srup {

Endpoint::Endpoint(Identity self, StateStore& store, EndpointOptions options)
    : self_(std::move(self)), store_(store), options_(std::move(options)) {
  if (options_.lifetime_ms == 0 || options_.lifetime_ms > kMaxLifetimeMs ||
      options_.command_lifetime_ms > kMaxLifetimeMs) {
    throw std::invalid_argument("SRUP-PQ endpoint: lifetime must be 1 ms .. 7 days");
  }
}

void Endpoint::enrol(std::uint64_t peer, PeerKeys keys) {
  PeerKeys& slot = peers_[peer];
  slot = std::move(keys);
  // New keys replace the prepared ones: they are prepared again when the peer is next used.
  slot.verifier = {};
  slot.encapsulator = {};
}

void Endpoint::remove(std::uint64_t peer) {
  peers_.erase(peer);
  if (const auto at = prepared_at_.find(peer); at != prepared_at_.end()) {
    prepared_lru_.erase(at->second);
    prepared_at_.erase(at);
  }
}

const PeerKeys* Endpoint::prepared_peer(std::uint64_t id) {
  const auto it = peers_.find(id);
  if (it == peers_.end()) return nullptr;
  PeerKeys& keys = it->second;
  if (const auto at = prepared_at_.find(id); at != prepared_at_.end()) {
    prepared_lru_.splice(prepared_lru_.begin(), prepared_lru_, at->second);
  } else {
    if (prepared_lru_.size() >= kMaxPreparedPeers) {
      const std::uint64_t oldest = prepared_lru_.back();
      prepared_lru_.pop_back();
      prepared_at_.erase(oldest);
      if (const auto o = peers_.find(oldest); o != peers_.end()) {
        o->second.verifier = {};
        o->second.encapsulator = {};
      }
    }
    prepared_lru_.push_front(id);
    prepared_at_[id] = prepared_lru_.begin();
  }
  if (!keys.verifier) {
    try {
      prepare_keys(keys);
    } catch (const crypto::Error&) {
      // Keys the suite refuses stay unprepared: verifying or sealing with their bytes refuses them.
      keys.verifier = {};
      keys.encapsulator = {};
    }
  }
  return &keys;
}

const PeerKeys* Endpoint::peer(std::uint64_t peer) const {
  const auto it = peers_.find(peer);
  return it == peers_.end() ? nullptr : &it->second;
}

std::uint64_t Endpoint::now() const {
  return options_.now_ms ? options_.now_ms() : common::unix_time_ms();
}

Bytes Endpoint::make(std::uint64_t peer_id, MessageType type, const Body& body,
                     std::string_view topic, ByteView token) {
  return make_until(peer_id, type, body, topic, token, 0);
}

Bytes Endpoint::make_until(std::uint64_t peer_id, MessageType type, const Body& body,
                           std::string_view topic, ByteView token, std::uint64_t valid_until_ms) {
  const Mode mode = required_mode(type);
  if (mode != Mode::signed_clear && mode != Mode::sealed) {
    throw std::invalid_argument("SRUP-PQ endpoint: " + std::string(to_string(type)) +
                                " is sent by a session or telemetry object, not make()");
  }
  const PeerKeys* recipient = prepared_peer(peer_id);
  if (recipient == nullptr) {
    throw std::invalid_argument("SRUP-PQ endpoint: the recipient is not enrolled");
  }
  if (token.size() > kMaxToken) throw std::invalid_argument("SRUP-PQ endpoint: token over 64 bytes");
  const Bytes plain = encode_body(type, self_.suite, body);  // before a number is used
  Header h;
  h.type = type;
  h.suite = self_.suite;
  h.mode = mode;
  h.sender = self_.id;
  h.recipient = peer_id;
  h.sequence = store_.next_sequence(self_.id, peer_id);
  h.timestamp_ms = now();
  h.lifetime_ms = options_.lifetime_ms;
  if (options_.command_lifetime_ms != 0 && is_command(type, options_.is_c2)) {
    h.lifetime_ms = options_.command_lifetime_ms;
  }
  if (valid_until_ms > h.timestamp_ms + h.lifetime_ms) {
    h.lifetime_ms = static_cast<std::uint32_t>(
        std::min<std::uint64_t>(valid_until_ms - h.timestamp_ms, kMaxLifetimeMs));
  }
  h.topic = topic_tag(topic);
  h.token.assign(token.begin(), token.end());
  return protect(h, plain, self_, mode == Mode::sealed ? recipient : nullptr);
}

Bytes Endpoint::answer_envelope(const Header& command, MessageType type, const Body& body,
                                std::string_view topic) {
  // Section 7.3: a cached answer must outlive every retry of its command, so its lifetime reaches
  // at least the command's end (plus the 5 minutes a command's clock may run ahead of ours).
  const std::uint64_t command_end = command.timestamp_ms + command.lifetime_ms + 5 * 60 * 1000;
  return make_until(command.sender, type, body, topic, command.token, command_end);
}

Inbound Endpoint::receive(ByteView wire, std::string_view topic, std::string_view reply_topic) {
  return receive_impl(wire, topic, reply_topic, true);
}

Inbound Endpoint::receive_unrecorded(ByteView wire, std::string_view topic, std::string_view reply_topic) {
  return receive_impl(wire, topic, reply_topic, false);
}

void Endpoint::record(const Header& message) {
  if (!store_.accept({message.sender, message.recipient}, message.sequence)) {
    throw Refused(Refusal::replay, "sequence already seen");
  }
}

Inbound Endpoint::receive_impl(ByteView wire, std::string_view topic, std::string_view reply_topic,
                               bool record_now) {
  Opened opened = open_protected(wire, topic, now(), self_, [this](std::uint64_t id) {
    return prepared_peer(id);
  });  // steps 1-9
  Inbound in;
  in.header = std::move(opened.header);
  const Header& h = in.header;
  // A Checkpoint (recipient 0) belongs to the telemetry reader; here only what is addressed to us.
  if (h.recipient != self_.id) throw Refused(Refusal::wrong_recipient, "not addressed to us");
  // Commands go from the C2 to devices only (section 2.4): one sent to the C2 is refused before
  // it touches the window or the journal.
  if (options_.is_c2 && is_command(h.type, false)) {
    throw Refused(Refusal::bad_request, "a command type sent to the C2");
  }
  const StreamKey stream{h.sender, h.recipient};
  if (!is_command(h.type, !options_.is_c2)) {
    const bool fresh = record_now ? store_.accept(stream, h.sequence) : store_.would_accept(stream, h.sequence);
    if (!fresh) throw Refused(Refusal::replay, "sequence already seen");  // 10
    in.kind = Inbound::Kind::message;
    try {
      in.body = decode_body(h.type, h.suite, opened.body);  // 11: Refused{bad_request}
    } catch (const Refused&) {
      if (!record_now) store_.accept(stream, h.sequence);  // its number is spent, as in receive()
      throw;
    }
    return in;
  }
  const StateStore::Admission admission = store_.admit_command(stream, h.sequence, h.token, h.type);
  switch (admission.verdict) {
    case StateStore::Verdict::replay:
      throw Refused(Refusal::replay, "sequence already seen and not a retry of a journalled command");
    case StateStore::Verdict::in_progress:
      in.kind = Inbound::Kind::in_progress;
      return in;
    case StateStore::Verdict::answer_cached:
      in.kind = Inbound::Kind::reply;
      in.reply = admission.response;
      return in;
    case StateStore::Verdict::interrupted:
      in.kind = Inbound::Kind::reply;
      in.reply = answer(h, static_cast<std::uint8_t>(Status::interrupted),
                        "accepted before a restart; not run again", reply_topic);
      return in;
    case StateStore::Verdict::execute:
      break;
  }
  try {
    in.body = decode_body(h.type, h.suite, opened.body);  // step 11
  } catch (const Refused& r) {
    in.kind = Inbound::Kind::reply;
    // The detail is ASCII (Refused names the field, never quotes bytes); a Response holds 256.
    const std::string_view why(r.what());
    in.reply = answer(h, static_cast<std::uint8_t>(Status::bad_request), why.substr(0, kMaxDetail),
                      reply_topic);
    return in;
  }
  in.kind = Inbound::Kind::execute;
  return in;
}

Bytes Endpoint::answer(const Header& command, std::uint8_t status, std::string_view detail,
                       std::string_view topic) {
  return answer_with(command, MessageType::response, Response{status, std::string(detail)}, topic);
}

Bytes Endpoint::answer_with(const Header& command, MessageType type, const Body& body,
                            std::string_view topic) {
  const Bytes rsp = answer_envelope(command, type, body, topic);
  store_.complete_command({command.sender, command.recipient}, command.sequence, rsp);
  return rsp;
}

void Endpoint::abandon(const Header& command) {
  store_.abandon_command({command.sender, command.recipient}, command.sequence);
}

}  // namespace pqot::srup
