// TRIP's datagram layer (docs/trip.md §2).
#include "pqot/trip/datagram.hpp"

#include <stdexcept>

namespace pqot::trip {

namespace {

void put_be(std::uint8_t* p, std::uint64_t v, int bytes) noexcept {
  for (int i = bytes - 1; i >= 0; --i, v >>= 8) p[i] = static_cast<std::uint8_t>(v);
}

std::uint64_t get_be(const std::uint8_t* p, int bytes) noexcept {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | p[i];
  return v;
}

bool header_consistent(DatagramType type, std::uint16_t flow) noexcept {
  return type == DatagramType::data ? flow != 0 : flow == 0;
}

}  // namespace

std::optional<Header> parse_header(std::span<const std::uint8_t> datagram) noexcept {
  if (datagram.size() < kOverhead) return std::nullopt;
  const std::uint8_t kind = datagram[0];
  const unsigned type = kind >> 6;
  if (type > 1) return std::nullopt;
  Header h;
  h.type = static_cast<DatagramType>(type);
  if (h.type == DatagramType::keepalive && datagram.size() != kKeepaliveSize) return std::nullopt;
  h.epoch_low = kind & 0x3f;
  h.session = datagram[1];
  h.flow = static_cast<std::uint16_t>(get_be(datagram.data() + 2, 2));
  h.counter = get_be(datagram.data() + 4, 8);
  if (!header_consistent(h.type, h.flow)) return std::nullopt;
  return h;
}

void write_header(const Header& h, std::span<std::uint8_t, kHeaderSize> out) {
  if (h.epoch_low > 63) throw std::invalid_argument("TRIP header: epoch_low must be 0..63");
  if (h.type != DatagramType::data && h.type != DatagramType::keepalive) {
    throw std::invalid_argument("TRIP header: unknown type");
  }
  if (!header_consistent(h.type, h.flow)) {
    throw std::invalid_argument("TRIP header: data needs a flow 1..65535, a keepalive flow 0");
  }
  out[0] = static_cast<std::uint8_t>((static_cast<unsigned>(h.type) << 6) | h.epoch_low);
  out[1] = h.session;
  put_be(out.data() + 2, h.flow, 2);
  put_be(out.data() + 4, h.counter, 8);
}

crypto::Nonce datagram_nonce(const Header& h) noexcept {
  crypto::Nonce n{};
  n[0] = static_cast<std::uint8_t>(h.type);
  n[1] = 0;
  put_be(n.data() + 2, h.flow, 2);
  put_be(n.data() + 4, h.counter, 8);
  return n;
}

void seal_datagram(crypto::Aes256Gcm& key, const Header& h, crypto::ByteView payload, crypto::MutableByteView out) {
  if (payload.size() > kMaxPayload) throw std::invalid_argument("TRIP datagram: payload too large");
  if (h.type == DatagramType::keepalive && payload.size() != kKeepaliveBodySize) {
    throw std::invalid_argument("TRIP datagram: a keepalive body is 12 bytes");
  }
  if (out.size() != kOverhead + payload.size()) throw std::invalid_argument("TRIP datagram: wrong output size");
  const auto* o = out.data();
  if (!payload.empty() && o < payload.data() + payload.size() && payload.data() < o + out.size()) {
    throw std::invalid_argument("TRIP datagram: output overlaps the payload");
  }
  const auto header = out.first<kHeaderSize>();
  write_header(h, header);
  key.seal_into(datagram_nonce(h), header, payload, out.subspan(kHeaderSize));
}

crypto::Bytes seal_datagram(crypto::Aes256Gcm& key, const Header& h, crypto::ByteView payload) {
  crypto::Bytes out(kOverhead + payload.size());
  seal_datagram(key, h, payload, out);
  return out;
}

bool open_datagram(crypto::Aes256Gcm& key, const Header& h, crypto::ByteView datagram, crypto::MutableByteView out) {
  if (datagram.size() < kOverhead || out.size() != datagram.size() - kOverhead) {
    throw std::invalid_argument("TRIP datagram: wrong sizes to open");
  }
  return key.try_open_into(datagram_nonce(h), datagram.first(kHeaderSize), datagram.subspan(kHeaderSize), out);
}

std::array<std::uint8_t, kKeepaliveBodySize> encode_keepalive(const KeepaliveBody& b) noexcept {
  std::array<std::uint8_t, kKeepaliveBodySize> out{};
  put_be(out.data(), b.echo, 8);
  put_be(out.data() + 8, b.held_us, 4);
  return out;
}

std::optional<KeepaliveBody> decode_keepalive(std::span<const std::uint8_t> body) noexcept {
  if (body.size() != kKeepaliveBodySize) return std::nullopt;
  return KeepaliveBody{get_be(body.data(), 8), static_cast<std::uint32_t>(get_be(body.data() + 8, 4))};
}

}  // namespace pqot::trip
