// A deliberately simple, synchronous SRMCP v2 client for tests: it performs the handshake with the
// public wire and crypto pieces, then builds every request frame byte by byte, so that tests can
// send what a correct client never would (bad tags, replays, stale timestamps, foreign tokens).
// Namespace pqot::srmcp::raw, so that test:: inside pqot::srmcp still names the shared helpers
// of tests/support (pqot::test).
#pragma once

#include <sys/socket.h>

#include <asio.hpp>
#include <asio/ssl.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>

#include "pqot/channel/tls.hpp"
#include "pqot/common/byte_io.hpp"
#include "pqot/crypto/kem.hpp"
#include "pqot/crypto/random.hpp"
#include "pqot/srmcp/framed_stream.hpp"
#include "pqot/srmcp/node.hpp"
#include "pqot/srmcp/reassembly.hpp"
#include "pqot/srmcp/session_crypto.hpp"

namespace pqot::srmcp::raw {

/// One read from a TLS stream that gives up at `deadline` (ec = timed_out). asio's blocking reads
/// retry with an unbounded poll, so a socket receive timeout would never fire; this runs the
/// asynchronous read on `io` for at most the time left instead.
inline std::size_t read_some_until(asio::io_context& io, TlsStream& stream, std::span<std::uint8_t> buf,
                                   std::chrono::steady_clock::time_point deadline, asio::error_code& ec) {
  std::size_t n = 0;
  bool done = false;
  stream.async_read_some(asio::buffer(buf.data(), buf.size()), [&](const asio::error_code& e, std::size_t k) {
    ec = e;
    n = k;
    done = true;
  });
  io.restart();
  io.run_until(deadline);
  if (!done) {
    asio::error_code ignored;
    stream.lowest_layer().cancel(ignored);
    io.restart();
    io.run();  // let the cancelled read finish before `buf` goes away
    ec = asio::error::timed_out;
    return 0;
  }
  return n;
}

/// Reads exactly buf.size() bytes before the deadline; false on timeout, close or error.
inline bool read_exactly(asio::io_context& io, TlsStream& stream, std::span<std::uint8_t> buf,
                         std::chrono::steady_clock::time_point deadline) {
  std::size_t got = 0;
  while (got < buf.size()) {
    asio::error_code ec;
    got += read_some_until(io, stream, buf.subspan(got), deadline, ec);
    if (ec) return false;
  }
  return true;
}

/// Runs on a connection's TLS stream just before its handshake (to offer or watch tickets, §7).
using BeforeHandshake = std::function<void(TlsStream&)>;

class RawLink {
 public:
  /// Connects from 127.0.0.1 (or `source`, e.g. "127.0.0.2", to test per-source limits).
  RawLink(std::uint16_t port, const TlsFiles& files, const std::string& source = "",
          const BeforeHandshake& before_handshake = {})
      : ctx_(channel::make_client_tls(files)), stream_(io_, ctx_) {
    auto& sock = stream_.lowest_layer();
    sock.open(Tcp::v4());
    if (!source.empty()) sock.bind(Tcp::endpoint(asio::ip::make_address(source), 0));
    sock.connect(Tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
    channel::set_server_identity(stream_, "127.0.0.1");
    if (before_handshake) before_handshake(stream_);
    stream_.handshake(asio::ssl::stream_base::client);
  }
  /// How long read_frame() waits for a frame.
  void set_timeout(std::chrono::milliseconds t) { timeout_ = t; }
  void send(const Bytes& b) { asio::write(stream_, asio::buffer(b)); }
  /// The next frame, or nullopt if the server closed the connection or nothing came in time. Bytes
  /// of a frame that is not complete yet stay buffered for the next call.
  std::optional<std::pair<FrameHeader, std::pair<Bytes, Bytes>>> read_frame() {
    const auto deadline = std::chrono::steady_clock::now() + timeout_;
    constexpr std::size_t kAad = kPreHeaderSize + kFrameHeaderSize;
    for (;;) {
      if (buffer_.size() >= kAad) {
        const auto pre = parse_pre_header(std::span<const std::uint8_t, 8>(buffer_.data(), 8), Limits{});
        if (buffer_.size() >= kAad + pre.body_len) {
          const auto header = parse_frame_header(std::span<const std::uint8_t, 32>(buffer_.data() + 8, 32));
          Bytes aad(buffer_.begin(), buffer_.begin() + kAad);
          Bytes body(buffer_.begin() + kAad, buffer_.begin() + kAad + pre.body_len);
          buffer_.erase(buffer_.begin(), buffer_.begin() + kAad + pre.body_len);
          return std::make_pair(header, std::make_pair(std::move(aad), std::move(body)));
        }
      }
      std::array<std::uint8_t, 16384> chunk{};
      asio::error_code ec;
      const std::size_t n = read_some_until(io_, stream_, chunk, deadline, ec);
      if (ec) {
        if (ec != asio::error::timed_out) closed_ = true;
        return std::nullopt;
      }
      buffer_.insert(buffer_.end(), chunk.begin(), chunk.begin() + n);
    }
  }
  /// True once the server closed the connection (seen by read_frame).
  bool closed() const { return closed_; }
  TlsStream& tls() { return stream_; }

 private:
  asio::io_context io_;
  asio::ssl::context ctx_;
  TlsStream stream_;
  std::chrono::milliseconds timeout_{3000};
  Bytes buffer_;
  bool closed_ = false;
};

struct Reply {
  MessageHeader header;
  Json body;        ///< the body as JSON (null when it is not JSON: a compact body, §9.2)
  std::string raw;  ///< the body's bytes

  static Reply of(const MessageHeader& h, const Bytes& body) {
    Json j = Json::parse(body.begin(), body.end(), nullptr, false);
    if (j.is_discarded()) j = nullptr;
    return Reply{h, std::move(j), std::string(body.begin(), body.end())};
  }
};

class RawSession {
 public:
  /// `versions`: the protocol versions offered (§4; 2: JSON bodies, 3: compact bodies).
  RawSession(std::uint16_t port, const TlsFiles& files, const std::string& source = "",
             const BeforeHandshake& before_handshake = {}, std::vector<std::uint8_t> versions = {kVersion})
      : files_(files), control_(port, files, source, before_handshake) {
    const crypto::Kem& kem = crypto::kem_by_name("ML-KEM-768");
    const auto kp = kem.generate_keypair();
    ClientHello hello;
    hello.versions = std::move(versions);
    hello.ek = kp.public_key;
    const Bytes hello_body = encode(hello);
    control_.send(plain_frame(FrameType::client_hello, hello_body));
    auto sh_frame = control_.read_frame();
    if (!sh_frame || sh_frame->first.type != FrameType::server_hello) throw std::runtime_error("no SERVER_HELLO");
    const Bytes& sh_body = sh_frame->second.second;
    const ServerHello sh = parse_server_hello(sh_body);
    session_id_ = sh.session_id;
    const auto ss = kem.decapsulate(kp.secret_key, sh.ct);
    const Bytes exporter = channel::tls_exporter(control_.tls(), "EXPORTER-SRMCP-v2");
    keys_ = derive_session_keys(exporter, ss, transcript_hash(hello_body, sh_body));
    frame_key_.emplace(keys_.c2s.frame.span());
    message_key_.emplace(keys_.c2s.message.span());
    receive_.emplace(keys_.s2c, Direction::server_to_client);
    const auto ready = receive(control_);
    if (!ready || ready->header.type != MessageType::session_ready) throw std::runtime_error("no SESSION_READY");
    identity_ = ready->body.value("identity", "");
  }

  /// A sealed message (header || ct || tag) with the given fields.
  Bytes seal_message(MessageType type, const std::string& body, std::uint32_t tid, std::uint32_t timestamp_s,
                     std::optional<std::uint64_t> msg_seq = std::nullopt) {
    MessageHeader h{type, false, Status::ok, tid, msg_seq.value_or(next_msg_seq_++), 0, timestamp_s};
    Bytes out(kMessageHeaderSize + body.size() + kTagSize);
    encode_message_header(h, std::span<std::uint8_t, kMessageHeaderSize>(out.data(), kMessageHeaderSize));
    message_key_->seal_into(crypto::make_nonce(message_prefix(Direction::client_to_server), h.msg_seq),
                            ByteView(out.data(), kMessageHeaderSize), crypto::as_bytes(body),
                            crypto::MutableByteView(out.data() + kMessageHeaderSize, body.size() + kTagSize));
    return out;
  }
  /// A sealed frame on the control link carrying `sealed_message` as one segment.
  Bytes frame(const Bytes& sealed_message, std::uint32_t tid) { return frame_on(0, sealed_message, tid); }
  /// The same on link `link_id` (0: the control connection; else a link from open_link()).
  Bytes frame_on(std::uint32_t link_id, const Bytes& sealed_message, std::uint32_t tid) {
    Bytes plain;
    encode_segment_header(SegmentHeader{tid, common::load_u32(sealed_message.data() + 12) |
                                                 (std::uint64_t{common::load_u32(sealed_message.data() + 8)} << 32),
                                        0, 1, static_cast<std::uint32_t>(sealed_message.size()), 0},
                          plain);
    plain.insert(plain.end(), sealed_message.begin(), sealed_message.end());
    std::uint64_t& seq = link_id == 0 ? frame_seq_ : links_.at(link_id).send_seq;
    return seal_frame(*frame_key_, Direction::client_to_server, FrameHeader{FrameType::sealed, link_id, seq++, 0},
                      plain);
  }
  /// A sealed frame on `link_id` carrying one segment as given (tests of §8.2 reassembly).
  Bytes segment_frame(std::uint32_t link_id, const SegmentHeader& h, ByteView data) {
    Bytes plain;
    encode_segment_header(h, plain);
    plain.insert(plain.end(), data.begin(), data.end());
    std::uint64_t& seq = link_id == 0 ? frame_seq_ : links_.at(link_id).send_seq;
    return seal_frame(*frame_key_, Direction::client_to_server, FrameHeader{FrameType::sealed, link_id, seq++, 0},
                      plain);
  }
  Bytes request(MessageType type, const std::string& body, std::uint32_t tid) {
    return frame(seal_message(type, body, tid, unix_now()), tid);
  }
  static std::uint32_t unix_now() {
    return static_cast<std::uint32_t>(std::chrono::duration_cast<std::chrono::seconds>(
                                          std::chrono::system_clock::now().time_since_epoch())
                                          .count());
  }

  void send(const Bytes& b) { control_.send(b); }
  void send_on(std::uint32_t link_id, const Bytes& b) { link_id == 0 ? control_.send(b) : links_.at(link_id).link->send(b); }
  std::uint32_t next_tid() { return next_tid_++; }

  /// LINK_REQUEST and LINK_BIND: a data link kept by this session; its id, or 0 if refused.
  std::uint32_t open_link(const BeforeHandshake& before_handshake = {}) {
    const auto offer = call(MessageType::link_request, "{}");
    if (!offer || offer->header.status != Status::ok) return 0;
    const auto id = offer->body.at("link_id").get<std::uint32_t>();
    const auto port = offer->body.at("port").get<std::uint16_t>();
    const Bytes token = crypto::from_hex(offer->body.at("token").get<std::string>());
    auto link = std::make_unique<RawLink>(port, files_, "", before_handshake);
    const Bytes exporter = channel::tls_exporter(link->tls(), "EXPORTER-SRMCP-v2-link");
    crypto::Aes256Gcm bind_key(keys_.link.span());
    LinkBind b{session_id_, link_bind_proof(keys_.link, token, id, exporter)};
    link->send(seal_frame(bind_key, Direction::client_to_server, FrameHeader{FrameType::link_bind, id, 0, 0}, encode(b)));
    auto f = link->read_frame();
    if (!f || f->first.type != FrameType::link_ready) return 0;
    receive_->open_frame(f->first, f->second.first, f->second.second);
    links_.emplace(id, DataLink{std::move(link), 1});
    return id;
  }
  /// The reply to `tid` from any link (control or data); replies to other transactions that come
  /// first are kept for their own call. nullopt if it does not come within `limit`.
  std::optional<Reply> await_reply(std::uint32_t tid, std::chrono::milliseconds limit = std::chrono::seconds(5)) {
    if (auto it = stash_.find(tid); it != stash_.end()) {
      Reply r = std::move(it->second);
      stash_.erase(it);
      return r;
    }
    const auto deadline = std::chrono::steady_clock::now() + limit;
    std::vector<RawLink*> all{&control_};
    for (auto& [id, l] : links_) all.push_back(l.link.get());
    for (auto* l : all) l->set_timeout(std::chrono::milliseconds(20));
    std::optional<Reply> got;
    while (!got && std::chrono::steady_clock::now() < deadline) {
      for (auto* l : all) {
        if (l->closed()) continue;
        auto f = l->read_frame();
        if (!f) continue;
        const Bytes plain = receive_->open_frame(f->first, f->second.first, f->second.second);
        const Segment seg = parse_segment(plain, Limits{});
        if (auto whole = reassembler_.add(seg)) {
          auto [header, body] = receive_->open_message(*whole);
          Reply r = Reply::of(header, body);
          if (header.tid == tid) {
            got = std::move(r);
          } else if (header.tid != 0) {
            stash_[header.tid] = std::move(r);  // another transaction's: kept for its await_reply
          }
        }
      }
    }
    for (auto* l : all) l->set_timeout(std::chrono::milliseconds(3000));
    return got;
  }
  RawLink& link(std::uint32_t id) { return *links_.at(id).link; }
  /// The next complete message on `link`, or nullopt when the server closed it.
  std::optional<Reply> receive(RawLink& link) {
    for (;;) {
      auto f = link.read_frame();
      if (!f) return std::nullopt;
      const Bytes plain = receive_->open_frame(f->first, f->second.first, f->second.second);
      const Segment seg = parse_segment(plain, Limits{});
      if (auto whole = reassembler_.add(seg)) {
        auto [header, body] = receive_->open_message(*whole);
        return Reply::of(header, body);
      }
    }
  }
  std::optional<Reply> receive() { return receive(control_); }
  /// Sends a request and returns its reply (skipping notifications).
  std::optional<Reply> call(MessageType type, const std::string& body) {
    const std::uint32_t tid = next_tid_++;
    send(request(type, body, tid));
    if (!links_.empty()) return await_reply(tid);  // responses come on any link (§8.2)
    for (;;) {
      auto r = receive();
      if (!r || r->header.tid == tid) return r;
    }
  }

  /// Connects a data link for an offer and sends LINK_BIND built with this session's link key.
  /// `resumed`: set to whether the link's TLS handshake resumed a session (§7).
  std::optional<FrameHeader> bind_link(const TlsFiles& files, std::uint16_t port, std::uint32_t link_id,
                                       const Bytes& token, std::uint64_t session_id,
                                       const BeforeHandshake& before_handshake = {}, bool* resumed = nullptr) {
    RawLink link(port, files, "", before_handshake);
    if (resumed != nullptr) *resumed = SSL_session_reused(link.tls().native_handle()) == 1;
    const Bytes exporter = channel::tls_exporter(link.tls(), "EXPORTER-SRMCP-v2-link");
    crypto::Aes256Gcm bind_key(keys_.link.span());
    LinkBind b{session_id, link_bind_proof(keys_.link, token, link_id, exporter)};
    link.send(seal_frame(bind_key, Direction::client_to_server, FrameHeader{FrameType::link_bind, link_id, 0, 0},
                         encode(b)));
    auto f = link.read_frame();
    if (!f) return std::nullopt;
    return f->first;
  }

  std::uint64_t session_id() const { return session_id_; }
  /// The client identity SESSION_READY named.
  const std::string& identity() const { return identity_; }
  RawLink& control() { return control_; }

 private:
  TlsFiles files_;
  RawLink control_;
  SessionKeys keys_;
  std::optional<crypto::Aes256Gcm> frame_key_;
  std::optional<crypto::Aes256Gcm> message_key_;
  std::optional<ReceiveState> receive_;
  Reassembler reassembler_{Limits{}};
  struct DataLink {
    std::unique_ptr<RawLink> link;
    std::uint64_t send_seq = 1;
  };
  std::map<std::uint32_t, DataLink> links_;
  std::map<std::uint32_t, Reply> stash_;
  std::uint64_t session_id_ = 0;
  std::string identity_;
  std::uint64_t frame_seq_ = 0;
  std::uint64_t next_msg_seq_ = 0;
  std::uint32_t next_tid_ = 1;
};

}  // namespace pqot::srmcp::raw
