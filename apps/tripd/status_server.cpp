// tripd's status socket (status_server.hpp).
#include "status_server.hpp"

#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "daemon.hpp"

namespace pqot::tripd {

using asio::local::stream_protocol;

StatusServer::StatusServer(asio::io_context& io, std::filesystem::path socket, std::function<std::string()> render)
    : io_(io), path_(std::move(socket)), render_(std::move(render)), acceptor_(io) {}

StatusServer::~StatusServer() { stop(); }

void StatusServer::start() {
  if (path_.native().size() >= sizeof(sockaddr_un{}.sun_path)) {
    throw std::runtime_error("status socket " + path_.string() + ": path too long");
  }
  struct stat st {};
  if (::lstat(path_.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) throw std::runtime_error("status socket " + path_.string() + " exists and is not a socket");
    stream_protocol::socket probe(io_);
    std::error_code ec;
    probe.connect(stream_protocol::endpoint(path_.string()), ec);
    if (!ec) throw std::runtime_error("status socket " + path_.string() + " is in use: another tripd runs with it");
    ::unlink(path_.c_str());  // left by a process that is gone
  }
  const mode_t old_mask = ::umask(0177);  // owner-only from the start
  std::error_code ec;
  acceptor_.open(stream_protocol(), ec);
  if (!ec) acceptor_.bind(stream_protocol::endpoint(path_.string()), ec);
  ::umask(old_mask);
  if (!ec) acceptor_.listen(static_cast<int>(kMaxClients), ec);
  if (ec) throw std::runtime_error("status socket " + path_.string() + ": " + ec.message());
  started_ = true;
  accept_next();
}

void StatusServer::stop() {
  if (!started_) return;
  started_ = false;
  std::error_code ec;
  acceptor_.close(ec);
  ::unlink(path_.c_str());
}

void StatusServer::accept_next() {
  acceptor_.async_accept([this](std::error_code ec, stream_protocol::socket socket) {
    if (ec) {
      if (ec != asio::error::operation_aborted && started_) accept_next();
      return;
    }
    ucred peer{};
    socklen_t len = sizeof(peer);
    const bool known = ::getsockopt(socket.native_handle(), SOL_SOCKET, SO_PEERCRED, &peer, &len) == 0;
    if (!known || (peer.uid != ::geteuid() && peer.uid != 0) || *clients_ >= kMaxClients) {
      std::error_code ignored;
      socket.close(ignored);  // another user (the file mode keeps them out already), or too many
      accept_next();
      return;
    }
    auto s = std::make_shared<stream_protocol::socket>(std::move(socket));
    auto doc = std::make_shared<std::string>(render_());
    auto timer = std::make_shared<asio::steady_timer>(io_, std::chrono::seconds(5));
    ++*clients_;
    timer->async_wait([s](std::error_code e) {
      std::error_code ignored;
      if (!e) s->close(ignored);  // it did not take its answer
    });
    asio::async_write(*s, asio::buffer(*doc), [s, doc, timer, clients = clients_](std::error_code, std::size_t) {
      --*clients;
      timer->cancel();
      std::error_code ignored;
      s->shutdown(stream_protocol::socket::shutdown_both, ignored);
      s->close(ignored);
    });
    accept_next();
  });
}

std::string status_json(const Daemon& d) {
  nlohmann::json j;
  char boot[17];
  std::snprintf(boot, sizeof boot, "%016llx", static_cast<unsigned long long>(d.boot()));
  j["boot"] = boot;
  j["paths"] = nlohmann::json::array();
  for (const PathStatus& p : d.paths()) {
    nlohmann::json e{{"name", p.name},
                     {"side", p.client ? "client" : "server"},
                     {"up", p.up},
                     {"session", p.session},
                     {"keepalives_missing", p.keepalives_missing},
                     {"sent", p.counters.sent},
                     {"received", p.counters.received},
                     {"won", p.counters.won},
                     {"duplicates", p.counters.duplicates},
                     {"dropped", p.counters.malformed + p.counters.unknown_session + p.counters.unknown_flow + p.counters.auth_failures},
                     {"auth_failures", p.counters.auth_failures},
                     {"sessions", p.counters.sessions},
                     {"handshake_failures", p.counters.handshake_failures}};
    e["rtt_us"] = p.rtt ? nlohmann::json(p.rtt->count()) : nlohmann::json(nullptr);
    e["srtt_us"] = p.srtt ? nlohmann::json(p.srtt->count()) : nlohmann::json(nullptr);
    e["data_loss"] = p.data_loss ? nlohmann::json(*p.data_loss) : nlohmann::json(nullptr);
    j["paths"].push_back(std::move(e));
  }
  j["flows"] = nlohmann::json::array();
  for (const FlowStatus& f : d.flows()) {
    nlohmann::json e{{"id", f.id}, {"name", f.name}, {"role", f.reflects ? "reflect" : "filter"}};
    if (f.reflects) {
      e["taken"] = f.counters.taken;
      e["next_label"] = f.next_label;
      e["no_path"] = f.counters.no_path;
    } else {
      e["delivered"] = f.counters.delivered;
      e["late"] = f.counters.late;
      e["duplicates"] = f.counters.duplicates;
      e["replayed"] = f.counters.too_old + f.counters.stale_boot;
    }
    j["flows"].push_back(std::move(e));
  }
  return j.dump() + "\n";
}

}  // namespace pqot::tripd
