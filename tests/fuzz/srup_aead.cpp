// libFuzzer target: the receive paths of SRUP-PQ's AEAD modes (docs/srup-pq.md sections 4-6):
// Session::open (mode 2), TelemetryReader::open (mode 3) and TelemetryReader::checkpoint, over a
// session and a telemetry key set up once exactly as in Appendix A.3/A.4, so that the appendix's
// envelopes (the seed corpus) open. The first input byte picks the path (0 session, 1 telemetry,
// 2 checkpoint), the rest is the payload. Only srup::Refused may escape.
#include <cstdint>
#include <map>
#include <memory>

#include "pqot/crypto/kem.hpp"
#include "pqot/crypto/signature.hpp"
#include "pqot/srup/session.hpp"
#include "pqot/srup/telemetry.hpp"

using namespace pqot;
using namespace pqot::srup;

namespace {

constexpr std::uint64_t kNow = 1'790'000'000'000;
constexpr std::string_view kUp = "srup/c2/00000000000000c2/session";
constexpr std::string_view kDown = "srup/d/00000000000000a1/session";
constexpr std::string_view kTelemetry = "srup/t/00000000000000a1";
constexpr std::string_view kKeys = "srup/k/00000000000000c2";

Header fuzz_header(MessageType type, std::uint64_t to, std::uint64_t seq, std::string_view topic) {
  Header h;
  h.type = type;
  h.suite = Suite::ed25519_xwing;
  h.recipient = to;
  h.sequence = seq;
  h.timestamp_ms = kNow;
  h.lifetime_ms = 60'000;
  h.topic = topic_tag(topic);
  h.token = {'t', 'o', 'k'};
  return h;
}

struct World {
  Identity device;
  Identity c2;
  PeerKeys device_keys;
  std::unique_ptr<Session> session;  // the C2's side
  std::unique_ptr<TelemetryReader> reader;

  World() {
    const auto& ed = crypto::signature_by_name("Ed25519");
    const auto& xw = crypto::kem_by_name("X-Wing");
    const auto dsig = ed.keygen(Bytes(32, 0x04));
    const auto csig = ed.keygen(Bytes(32, 0x05));
    const auto ckem = xw.generate_keypair(Bytes(32, 0x0a));
    device = {0xa1, Suite::ed25519_xwing, dsig.secret_key, {}, {}};
    c2 = {0xc2, Suite::ed25519_xwing, csig.secret_key, ckem.secret_key, ckem.public_key};
    device_keys = {Suite::ed25519_xwing, dsig.public_key, {}};
    const PeerKeys c2_keys{Suite::ed25519_xwing, csig.public_key, ckem.public_key};
    const PeerLookup lookup = [this](std::uint64_t id) {
      return id == 0xa1 ? &device_keys : nullptr;
    };
    const Bytes eph(32, 0x07), sid(8, 0x08), enc(64, 0x09);
    SessionInitiator init(fuzz_header(MessageType::session_offer, 0xc2, 1, kUp), device, c2_keys,
                          {}, {eph, sid, {}, {}});
    const auto offer = SessionResponder::verify(init.offer(), kUp, kNow, c2, lookup);
    auto accepted = SessionResponder::accept(
        offer, fuzz_header(MessageType::session_accept, 0xa1, 1, kDown), c2, kNow, {},
        {{}, {}, enc, {}});
    session = std::make_unique<Session>(std::move(accepted.session));
    reader = std::make_unique<TelemetryReader>(0xc2, lookup);
    std::map<std::uint64_t, std::uint64_t> counter;
    TelemetrySender sender(
        device, 1,
        [&](MessageType type, std::uint64_t to) {
          return fuzz_header(type, to, ++counter[to], to == 0 ? kTelemetry : kKeys);
        },
        {}, {Bytes(32, 0x0c), Bytes(64, 0x0b), {}});
    ReaderSet set;
    set.readers.push_back({0xc2, Suite::ed25519_xwing, ckem.public_key});
    const auto keys = sender.set_readers(set, kNow);
    reader->add_key(open_protected(keys.at(0).wire, kKeys, kNow, c2, lookup), kNow);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static World world;
  if (size == 0) return 0;
  const ByteView wire(data + 1, size - 1);
  try {
    switch (data[0] % 3) {
      case 0:
        (void)world.session->open(wire, kUp, kNow);
        break;
      case 1:
        (void)world.reader->open(wire, kTelemetry, kNow);
        break;
      default:
        (void)world.reader->checkpoint(wire, kTelemetry, kNow);
    }
  } catch (const Refused&) {
  }
  return 0;
}
