// docs/srup-pq.md section 2.7: which body each type carries, and the bodies without key fields
// (the others are in body_keys.cpp).
#include "pqot/srup/body.hpp"

#include <array>
#include <string>
#include <type_traits>

#include "body_io.hpp"

namespace pqot::srup {

using body_io::BodyReader;
using body_io::BodyWriter;
using body_io::expect;

namespace {

template <class T, class... Ts>
constexpr std::size_t index_in(const std::variant<Ts...>*) {
  constexpr std::array<bool, sizeof...(Ts)> same = {std::is_same_v<T, Ts>...};
  for (std::size_t i = 0; i < same.size(); ++i) {
    if (same[i]) return i;
  }
  return same.size();
}

template <class T>
constexpr std::size_t index_of() {
  return index_in<T>(static_cast<const Body*>(nullptr));
}

// Reading (section 5.3): channels strictly ascending (one spelling per reading, no channel
// twice), every value typed (not none).
void check_channels(const std::vector<ChannelValue>& channels, bool decoding) {
  const auto fail = [decoding](const std::string& what) {
    if (decoding) body_io::refuse(what);
    body_io::sender_bug(what);
  };
  if (channels.empty() || channels.size() > kMaxChannels) fail("reading needs 1..64 channels");
  for (std::size_t i = 0; i < channels.size(); ++i) {
    if (i > 0 && channels[i].channel <= channels[i - 1].channel) {
      fail("reading channels not in strictly ascending order");
    }
    if (type_of(channels[i].value) == ValueType::none) fail("reading channel without a value");
  }
}

// Checkpoint (section 5.2): a non-empty run of sequences that does not wrap.
bool checkpoint_valid(const Checkpoint& c) {
  return c.first_sequence >= 1 && c.count >= 1 && c.count <= kMaxCheckpointMessages &&
         c.first_sequence - 1 <= body_io::kAllOnes - c.count;
}

Body decode_plain_body(MessageType type, BodyReader& r) {
  switch (type) {
    case MessageType::update_initiate: {
      UpdateInitiate b;
      b.url = r.text(2, 1, kMaxUrl, "url");
      b.digest = r.array<32>("digest");
      return b;
    }
    case MessageType::response: {
      Response b;
      b.status = r.u8("status");  // unknown codes pass: a newer peer may send one (section 2.5)
      b.detail = r.text(2, 0, kMaxDetail, "detail");
      return b;
    }
    case MessageType::action: {
      Action b;
      b.action_id = r.u8("action ID");
      b.argument = r.value();
      return b;
    }
    case MessageType::data: {
      Data b;
      b.data_id = r.text(1, 1, kMaxDataId, "data ID");
      b.value = r.value();
      return b;
    }
    case MessageType::human_join_response:
    case MessageType::observed_join_response:
      return OneTimeCode{r.array<16>("one-time code")};
    case MessageType::observation_request: {
      ObservationRequest b;
      b.device = r.peer_id("joining device ID");
      b.code = r.array<16>("one-time code");
      return b;
    }
    case MessageType::telemetry: {
      Reading b;
      b.timestamp_ms = r.u64("timestamp");
      const std::size_t count = r.u8("channel count");
      if (count == 0 || count > kMaxChannels) body_io::refuse("reading needs 1..64 channels");
      b.channels.reserve(count);
      for (std::size_t i = 0; i < count; ++i) {
        ChannelValue c;
        c.channel = r.u16("channel");
        c.value = r.value();
        b.channels.push_back(std::move(c));
      }
      check_channels(b.channels, true);
      return b;
    }
    case MessageType::checkpoint: {
      Checkpoint b;
      b.epoch = r.u32("key epoch");
      b.first_sequence = r.u64("first sequence");
      b.count = r.u16("count");
      b.digest = r.array<32>("digest");
      if (!checkpoint_valid(b)) body_io::refuse("checkpoint range out of bounds");
      return b;
    }
    default:
      return Empty{};  // the types without a body; the key bodies never reach here
  }
}

void encode_plain_body(MessageType type, const Body& body, BodyWriter& w) {
  switch (type) {
    case MessageType::update_initiate: {
      const auto& b = expect<UpdateInitiate>(body, type);
      w.text(b.url, 2, 1, kMaxUrl, "url");
      w.bytes(b.digest);
      return;
    }
    case MessageType::response: {
      const auto& b = expect<Response>(body, type);
      w.u8(b.status);
      w.text(b.detail, 2, 0, kMaxDetail, "detail");
      return;
    }
    case MessageType::action: {
      const auto& b = expect<Action>(body, type);
      w.u8(b.action_id);
      w.value(b.argument);
      return;
    }
    case MessageType::data: {
      const auto& b = expect<Data>(body, type);
      w.text(b.data_id, 1, 1, kMaxDataId, "data ID");
      w.value(b.value);
      return;
    }
    case MessageType::human_join_response:
    case MessageType::observed_join_response:
      w.bytes(expect<OneTimeCode>(body, type).code);
      return;
    case MessageType::observation_request: {
      const auto& b = expect<ObservationRequest>(body, type);
      w.peer_id(b.device, "joining device ID");
      w.bytes(b.code);
      return;
    }
    case MessageType::telemetry: {
      const auto& b = expect<Reading>(body, type);
      check_channels(b.channels, false);
      w.u64(b.timestamp_ms);
      w.u8(static_cast<std::uint8_t>(b.channels.size()));
      for (const ChannelValue& c : b.channels) {
        w.u16(c.channel);
        w.value(c.value);
      }
      return;
    }
    case MessageType::checkpoint: {
      const auto& b = expect<Checkpoint>(body, type);
      if (!checkpoint_valid(b)) body_io::sender_bug("checkpoint range out of bounds");
      w.u32(b.epoch);
      w.u64(b.first_sequence);
      w.u16(b.count);
      w.bytes(b.digest);
      return;
    }
    default:
      (void)expect<Empty>(body, type);
      return;
  }
}

}  // namespace

std::size_t body_index(MessageType type) noexcept {
  switch (type) {
    case MessageType::update_initiate:
      return index_of<UpdateInitiate>();
    case MessageType::response:
      return index_of<Response>();
    case MessageType::action:
      return index_of<Action>();
    case MessageType::data:
      return index_of<Data>();
    case MessageType::join_request:
    case MessageType::human_join_request:
      return index_of<JoinRequest>();
    case MessageType::observed_join_request:
      return index_of<ObservedJoinRequest>();
    case MessageType::join_command:
      return index_of<JoinCommand>();
    case MessageType::human_join_response:
    case MessageType::observed_join_response:
      return index_of<OneTimeCode>();
    case MessageType::observation_request:
      return index_of<ObservationRequest>();
    case MessageType::telemetry:
      return index_of<Reading>();
    case MessageType::session_offer:
      return index_of<SessionOffer>();
    case MessageType::session_accept:
      return index_of<SessionAccept>();
    case MessageType::telemetry_key:
      return index_of<TelemetryKey>();
    case MessageType::reader_set:
      return index_of<ReaderSet>();
    case MessageType::checkpoint:
      return index_of<Checkpoint>();
    case MessageType::key_rotation:
      return index_of<KeyRotation>();
    case MessageType::update_activate:
    case MessageType::id_request:
    case MessageType::resign_request:
    case MessageType::terminate_command:
    case MessageType::deregister_request:
    case MessageType::deregister_command:
      break;
  }
  return index_of<Empty>();
}

namespace {

bool has_key_fields(MessageType type) {
  switch (type) {
    case MessageType::join_request:
    case MessageType::human_join_request:
    case MessageType::observed_join_request:
    case MessageType::join_command:
    case MessageType::session_offer:
    case MessageType::session_accept:
    case MessageType::telemetry_key:
    case MessageType::reader_set:
    case MessageType::key_rotation:
      return true;
    default:
      return false;
  }
}

}  // namespace

Bytes encode_body(MessageType type, Suite suite, const Body& body) {
  if (body.valueless_by_exception()) body_io::sender_bug("valueless body");
  Bytes out;
  if (type == MessageType::telemetry_key) {
    // The key must not be left in a buffer the vector gives back while growing.
    out.reserve(4 + kTelemetryKeySize + 2 + 2);
  }
  BodyWriter w(out);
  if (has_key_fields(type)) {
    body_io::encode_key_body(type, suite, body, w);
  } else {
    encode_plain_body(type, body, w);
  }
  return out;
}

Body decode_body(MessageType type, Suite suite, ByteView plain) {
  BodyReader r(plain);
  Body body =
      has_key_fields(type) ? body_io::decode_key_body(type, suite, r) : decode_plain_body(type, r);
  r.finish();
  return body;
}

}  // namespace pqot::srup
