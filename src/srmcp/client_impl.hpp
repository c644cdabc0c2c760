// SRMCP v2 client: the state behind Client (pqot/srmcp/client.hpp), shared by client.cpp (connect,
// handshake, data links, the public API) and client_requests.cpp (transactions, their deadline
// sweep, responses and notifications). Internal: not part of the installed headers.
#pragma once

#include <future>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include "endpoint.hpp"
#include "pqot/channel/tls_resumption.hpp"
#include "pqot/srmcp/client.hpp"

namespace pqot::srmcp {

using asio::awaitable;
using asio::use_awaitable;

struct Client::Impl : std::enable_shared_from_this<Client::Impl> {
  // The client's own io_context in blocking mode. First member, hence destroyed last: the sockets
  // and timers of the other members belong to it.
  std::unique_ptr<asio::io_context> own_io;

  Impl(asio::io_context& io_, ClientOptions options_)
      : io(io_), strand(asio::make_strand(io_)), options(std::move(options_)) {}

  // A response as it arrived: its status and body bytes (compact records or JSON text; an ERROR's
  // and a local failure's body is JSON {"message": ...}).
  struct RawResponse {
    Status status = Status::ok;
    Bytes body;
  };
  // A request waiting for its response. Its deadline is kept here and enforced by the session's
  // one sweep timer (arm_sweep); `wake` is never armed with a time (it waits "forever" and is
  // cancelled by the response, the sweep or the shutdown), so it never becomes the earliest timer
  // and costs no timerfd update. Entries are recycled with their map nodes (spare_pending).
  struct Pending {
    explicit Pending(asio::strand<asio::io_context::executor_type>& s) : wake(s) {}
    asio::steady_timer wake;
    std::chrono::steady_clock::time_point deadline;
    bool expired = false;  // the sweep found it past its deadline
    std::optional<RawResponse> result;
  };
  using PendingMap = std::map<std::uint32_t, std::shared_ptr<Pending>>;
  // Map nodes (each with its Pending) kept for the next requests: a steady stream of requests
  // allocates none. At most kSparePending.
  static constexpr std::size_t kSparePending = 64;

  asio::io_context& io;
  asio::strand<asio::io_context::executor_type> strand;
  ClientOptions options;
  std::shared_ptr<asio::ssl::context> tls;
  std::optional<Endpoint> endpoint;
  std::optional<Key> link_key;
  std::set<std::uint32_t> used_link_ids;  // one entry per link ever offered in this session
  SessionInfo session;                    // written before connect() returns, read-only afterwards
  std::atomic<std::uint64_t> rotations{0};
  std::atomic<std::uint64_t> link_failures{0};
  // §7: the newest ticket of this session's control connection, offered on each data link.
  std::shared_ptr<channel::TicketSlot> tickets = channel::TicketSlot::create();
  std::atomic<std::uint64_t> links_resumed{0};
  std::atomic<std::uint64_t> links_full{0};
  std::uint32_t timestamp_window_ms = 30000;  // from SERVER_HELLO (§10)
  PendingMap pending;
  std::vector<PendingMap::node_type> spare_pending;
  // The session's deadline sweep (§8.1: a request without a response by its deadline ends with
  // TIMEOUT): armed at the earliest deadline of the requests waiting, while there are any.
  std::optional<asio::steady_timer> sweep;
  bool sweep_armed = false;
  std::uint32_t next_tid = 1;
  std::function<void(const Json&)> notification_handler;
  std::function<void(const Notification&)> notification_values_handler;
  BodyEncoding encoding = BodyEncoding::json;  // chosen by the server (§4)
  bool connected = false;
  bool closed = false;

  // Blocking mode only (own_io is declared first, below, so that it is destroyed last).
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::thread thread;
  std::future<void> thread_done;
  std::shared_ptr<asio::steady_timer> rotation_timer;

  // `control`: the session's control connection (watched for tickets, never resumed); otherwise a
  // data link, which offers the ticket held.
  awaitable<std::shared_ptr<FramedStream>> open_tls(std::uint16_t port, bool control);
  awaitable<void> handshake(std::shared_ptr<Link> link0);
  awaitable<void> open_data_link();
  awaitable<void> open_data_links(unsigned count);
  awaitable<void> rotate_links();
  awaitable<void> read_loop(std::shared_ptr<Link> link);
  void deliver(Message m);
  void arm_sweep(std::chrono::steady_clock::time_point at);
  void on_sweep();
  // (owns body: it outlives the caller's). `on`: send on this link rather than a random one.
  awaitable<RawResponse> request_raw(MessageType type, std::string body,
                                     std::shared_ptr<Link> on = nullptr);
  awaitable<Response> request(MessageType type, Json body, std::shared_ptr<Link> on = nullptr);
  awaitable<ReadReply> read_values(std::vector<std::string> ids);
  awaitable<WriteReply> write_values(std::vector<std::pair<std::string, Value>> values);
  template <class Reply, class Decode>
  awaitable<Reply> typed_exchange(MessageType type, std::string text,
                                  const std::vector<std::string>& ids, Decode decode);
  awaitable<void> connect();  // the bodies of the public coroutines, on the strand
  awaitable<void> close();
  void shutdown();

  template <class T>
  T run_blocking(awaitable<T> op) {
    if (!own_io)
      throw std::logic_error("blocking calls need a Client constructed without an io_context");
    return asio::co_spawn(strand, std::move(op), asio::use_future).get();
  }
};

}  // namespace pqot::srmcp
