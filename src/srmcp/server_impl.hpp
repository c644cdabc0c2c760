// Internal to the SRMCP server (not installed): the server-wide state (Server::Impl) and one
// client session (ServerSession). The session's work is split by concern, in the open62541 way:
//   server.cpp                accepting, admission (handshake slots, session limits), stats
//   server_session.cpp        a session's life: handshake, read loops, backpressure, close
//   server_services.cpp       request services: dispatch of BROWSE, READ, WRITE, PING, ...
//   server_links.cpp          data links: offers, LINK_BIND, LINK_CLOSE (§7)
//   server_subscriptions.cpp  SUBSCRIBE and notifications
#pragma once

#include <spdlog/spdlog.h>

#include <array>
#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>

#include "endpoint.hpp"
#include "pqot/channel/tls.hpp"
#include "pqot/channel/tls_resumption.hpp"
#include "pqot/common/admission.hpp"
#include "pqot/common/log_limiter.hpp"
#include "pqot/common/printable.hpp"
#include "pqot/srmcp/server.hpp"
#include "request_scratch.hpp"

namespace pqot::srmcp {

using Clock = std::chrono::steady_clock;

inline constexpr auto kServerReassemblyAge = std::chrono::seconds(5);  // §8.2
// §7 resumption: a session holds at most this many data-link tickets (a new one is issued when the
// newest is half its lifetime old, so the older one has expired by the time a third is issued).
inline constexpr std::size_t kLinkTicketsHeld = 2;

// Request types with their own counters and latency histograms (ServerStats::by_type).
inline constexpr std::array<std::pair<MessageType, const char*>, 9> kCountedTypes = {{
    {MessageType::read, "read"},
    {MessageType::write, "write"},
    {MessageType::browse, "browse"},
    {MessageType::subscribe, "subscribe"},
    {MessageType::unsubscribe, "unsubscribe"},
    {MessageType::ping, "ping"},
    {MessageType::close, "close"},
    {MessageType::link_request, "link_request"},
    {MessageType::link_close, "link_close"},
}};
inline constexpr std::size_t kTypeSlots = kCountedTypes.size() + 1;  // + "other"

std::string hex64(std::uint64_t v);
/// The key that per-source limits count by: an IPv4 address, or an IPv6 address's /64.
std::string source_key(const asio::ip::address& a);

class ServerSession;

struct Server::Impl : std::enable_shared_from_this<Server::Impl> {
  Impl(asio::io_context& io_, ServerConfig config_, std::shared_ptr<NodeStore> nodes_,
       std::vector<asio::io_context*> contexts_);

  // The node store, replaced as a whole by a reload (set_nodes). Sessions keep their copy and
  // look at the generation before each request, so the hot path takes no lock.
  std::shared_ptr<NodeStore> nodes();
  void set_nodes(std::shared_ptr<NodeStore> n);
  std::atomic<std::uint64_t> nodes_generation{0};

  asio::io_context& io;
  std::vector<asio::io_context*> contexts;  // sessions are spread over these, round robin
  std::size_t next_context = 0;             // used only by accept_loop
  ServerConfig config;
  std::optional<asio::ssl::context> tls;
  Tcp::acceptor acceptor;
  std::atomic<bool> stopping{false};

  std::mutex mutex;  // guards sessions and used_ports
  std::set<std::shared_ptr<ServerSession>> sessions;
  std::set<std::uint16_t> used_ports;

  // Admission (docs/srmcpd.md, "Limits and denial of service").
  std::shared_ptr<common::HandshakeSlots> handshakes;
  std::atomic<std::uint32_t> established{0};
  common::KeyedCounter sessions_by_identity;
  common::KeyedCounter offers_by_identity;
  std::shared_ptr<ReassemblyBudget> partial_budget;
  std::mutex identity_budgets_mutex;
  std::map<std::string, std::weak_ptr<ReassemblyBudget>> identity_budgets;  // live while a session uses it
  /// The partial-message budget of `identity`'s sessions, inside the server-wide one.
  std::shared_ptr<ReassemblyBudget> partial_budget_for(const std::string& identity);
  // One log budget per refusal reason, so that a flood of one kind (garbage handshakes) cannot hide
  // the lines of another (accept errors); and one for session open/close lines.
  std::array<common::LogLimiter, kRefusalKinds> refusal_logs;
  common::LogLimiter session_log;

  std::atomic<std::uint64_t> sessions_total{0};
  std::atomic<std::uint64_t> sessions_compact{0};
  std::atomic<std::uint64_t> sessions_json{0};
  std::atomic<std::uint64_t> links_active{0};
  std::atomic<std::uint64_t> requests{0};
  std::atomic<std::uint64_t> errors{0};
  std::atomic<std::uint64_t> closed_on_error{0};
  std::atomic<std::uint32_t> pending_offers{0};
  std::atomic<std::uint64_t> link_handshakes_resumed{0};  // §7: data-link TLS handshakes, by kind
  std::atomic<std::uint64_t> link_handshakes_full{0};
  std::atomic<std::uint64_t> link_tickets_refused{0};     // ... of which a ticket was offered in vain
  std::array<std::atomic<std::uint64_t>, kStatusSlots> responses_by_status{};
  std::array<std::atomic<std::uint64_t>, kTypeSlots> requests_by_type{};
  std::array<metrics::LatencyHistogram, kTypeSlots> latency_by_type;
  std::array<std::atomic<std::uint64_t>, kRefusalKinds> refusals{};

  void count_response(Status s);
  void count_request(MessageType t, Clock::time_point arrived);
  /// Counts a refusal and logs `what` (about `peer`) within the refusal log's rate.
  void refuse(Refusal r, std::string_view peer, std::string_view what);
  /// A session slot for `identity` (max_sessions, max_sessions_per_identity), or the refusal.
  std::optional<Refusal> try_establish(const std::string& identity);
  void release_established(const std::string& identity);

  asio::awaitable<void> accept_loop();
  void admit(Tcp::socket socket, asio::strand<asio::io_context::executor_type> strand);
  void forget(const std::shared_ptr<ServerSession>& s);
  std::optional<std::uint16_t> reserve_port(std::mt19937_64& rng);
  void release_port(std::uint16_t port);

 private:
  std::mutex nodes_mutex_;
  std::shared_ptr<NodeStore> nodes_;
};

// One client session (§1): the control connection, its data links, subscriptions. Every member is
// used only from `strand`.
class ServerSession : public std::enable_shared_from_this<ServerSession> {
 public:
  ServerSession(std::shared_ptr<Server::Impl> server, asio::strand<asio::io_context::executor_type> strand,
                std::string peer, std::string source);

  asio::awaitable<void> run(Tcp::socket socket);
  /// Ends the session from any thread (stop).
  void shutdown();
  /// Ends the session from any thread if it is still in its handshake (an eviction that raced with
  /// the handshake completing leaves an open session alone).
  void evict();
  void hold(common::HandshakeSlots::Ticket ticket) { handshake_ticket_ = std::move(ticket); }
  /// Called on the strand when the session's coroutine has ended, however it ended.
  void finished() { close(); }

 private:
  struct Subscription {
    std::vector<std::string> ids;
    std::chrono::milliseconds interval;
    bool on_change = false;
    std::map<std::string, Json> last;
    std::shared_ptr<asio::steady_timer> timer;
  };
  struct Offer {
    std::uint32_t link_id = 0;
    std::uint16_t port = 0;
    crypto::SecretBytes token;
    std::shared_ptr<Tcp::acceptor> acceptor;
    Clock::time_point expires;
    std::vector<std::weak_ptr<FramedStream>> attempts;  // connections in TLS or LINK_BIND
    bool bound = false;
  };

  // server_session.cpp
  asio::awaitable<void> handshake(Link& control);
  [[noreturn]] void refuse_hello(FramedStream& control, HelloRefused::Reason reason, const ClientHello& hello);
  asio::awaitable<void> read_loop(std::shared_ptr<Link> link);
  asio::awaitable<bool> wait_for_room();
  bool room() const;
  void wake_readers();
  void watch_partial();
  void add_link(std::shared_ptr<Link> link);
  void close();
  void log_session_event(const std::string& what) const;
  /// CLOSE (§9): the links close once their queued frames (the CLOSE response) are written.
  void close_gracefully();
  // server_services.cpp
  void handle(Link& link, const Message& m);
  // Writes the response body into `out` (in the session's encoding for READ and WRITE, else JSON
  // text) and returns true, or returns false when a backend answers later (deferred_reply).
  bool dispatch(Link& link, const MessageHeader& h, ByteView body, Clock::time_point arrived, std::string& out);
  NodeStore::TextDone deferred_reply(std::uint32_t tid, MessageType type, Clock::time_point arrived,
                                     std::size_t ops);
  NodeStore& nodes();
  void reply_error(std::uint32_t tid, Status status, std::string_view message);
  void reply_text(std::uint32_t tid, MessageType type, Status status, std::string_view text);
  // server_links.cpp
  Json open_link_offer(std::uint32_t tid);
  asio::awaitable<void> serve_offer(std::shared_ptr<Offer> offer);
  asio::awaitable<void> bind_attempt(std::shared_ptr<Offer> offer, Tcp::socket socket);
  void finish_offer(const std::shared_ptr<Offer>& offer);
  void issue_link_ticket();
  void count_link_handshake(channel::ResumptionScope::Handshake h);
  Json close_link(Link& arrived_on, std::uint32_t link_id, std::uint32_t tid);
  // server_subscriptions.cpp
  Json subscribe(const SubscribeRequest& request);
  void unsubscribe(std::uint64_t id, std::uint32_t tid);
  asio::awaitable<void> run_subscription(std::uint64_t id);
  std::string notification_body(std::uint64_t subscription, const std::vector<std::string>& ids,
                                const std::vector<ReadResult>& results, const std::vector<std::size_t>& changed) const;

  std::shared_ptr<Server::Impl> server_;
  asio::strand<asio::io_context::executor_type> strand_;
  std::string peer_;    // "address:port", for logs
  std::string source_;  // source_key() of the peer
  common::HandshakeSlots::Ticket handshake_ticket_;
  std::shared_ptr<FramedStream> control_;
  Principal principal_;
  bool established_ = false;  // holds a session slot (try_establish)
  bool opened_ = false;       // handshake complete: no longer evictable
  bool closing_ = false;      // CLOSE received: no further requests
  std::uint64_t session_id_ = 0;
  BodyEncoding encoding_ = BodyEncoding::json;  // chosen in the hello (§4)
  bool hello_refused_ = false;                  // HELLO_REFUSED queued: close after writing it
  std::optional<Endpoint> endpoint_;
  std::optional<Key> link_key_;
  std::shared_ptr<channel::ResumptionScope> resumption_;  // §7: this session's data-link tickets
  std::uint32_t next_link_id_ = 1;
  std::map<std::uint32_t, std::shared_ptr<Offer>> offers_;  // pending, by link id
  std::shared_ptr<NodeStore> nodes_;
  std::uint64_t nodes_generation_ = ~std::uint64_t{0};
  std::map<std::uint64_t, Subscription> subscriptions_;
  std::size_t subscribed_ids_ = 0;
  std::uint64_t next_subscription_ = 1;
  std::size_t backend_ops_ = 0;  // node operations waiting for devices (READ, WRITE, samples)
  RequestScratch scratch_;  // the READ ids and reply body, reused request after request
  std::vector<std::shared_ptr<asio::steady_timer>> room_waiters_;
  std::shared_ptr<asio::steady_timer> partial_timer_;
  bool closed_ = false;
};

}  // namespace pqot::srmcp
