// tripd's reload in process (docs/tripd.md, "Reloading"): two daemons with paths carrying a flow;
// a path added comes up and carries copies; a path removed ends on both sides while a numbered
// stream goes on with nothing lost or delivered twice; an unchanged path keeps its session and
// counters; a reload that cannot be applied changes nothing.
#include <map>
#include <set>

#include "trip_pair.hpp"
#include "tripd/relay_set.hpp"

namespace pqot::tripd {
namespace {

using namespace trip_test;

// Fixed ports, so that each side's configuration can name the far side's before a reload.
std::map<std::string, std::uint16_t> reload_ports(std::initializer_list<const char*> names) {
  std::map<std::string, std::uint16_t> out;
  std::set<std::uint16_t> taken;
  for (const char* n : names) {
    std::uint16_t p = test::free_trip_port();
    while (!taken.insert(p).second) p = test::free_trip_port();
    out[n] = p;
  }
  return out;
}

std::string reload_server(const std::map<std::string, std::uint16_t>& ports, const std::vector<std::string>& paths,
                          std::uint16_t deliver) {
  std::string s;
  for (const std::string& n : paths) {
    s += "[[path]]\nname = \"" + n + "\"\nnumber = " + n.substr(1) + "\nlisten = \"127.0.0.1:" + std::to_string(ports.at(n)) +
         "\"\npeers = [\"client1\"]\n";
  }
  return s + "[[flow]]\nid = 1\ndeliver = \"127.0.0.1:" + std::to_string(deliver) + "\"\n";
}

std::string reload_client(const std::map<std::string, std::uint16_t>& ports, const std::vector<std::string>& paths,
                          std::uint16_t reflect) {
  std::string s;
  for (const std::string& n : paths) {
    s += "[[path]]\nname = \"" + n + "\"\nnumber = " + n.substr(1) + "\nconnect = \"127.0.0.1:" + std::to_string(ports.at(n)) + "\"\n";
  }
  return s + "[limits]\nreconnect_min_ms = 50\nreconnect_max_ms = 200\n[[flow]]\nid = 1\nreflect = \"127.0.0.1:" +
         std::to_string(reflect) + "\"\n";
}

std::string reload_server_side(TripPair& pair, const std::string& toml) {
  return pair.on_io([&] { return pair.server().reload(parse_config(pair.identity("server") + toml, "b.toml", "")); });
}

std::string reload_client_side(TripPair& pair, const std::string& toml) {
  return pair.on_io([&] { return pair.client().reload(parse_config(pair.identity("client1") + toml, "a.toml", "")); });
}

const PathStatus* reload_find(const std::vector<PathStatus>& v, const std::string& name) {
  for (const PathStatus& p : v) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

// Each number of [from, to) exactly once.
void reload_expect_each_once(std::vector<int> got, int from, int to) {
  std::sort(got.begin(), got.end());
  ASSERT_EQ(got.size(), static_cast<std::size_t>(to - from));
  for (int i = from; i < to; ++i) ASSERT_EQ(got[static_cast<std::size_t>(i - from)], i);
}

TEST(TripReload, APathAddedCarriesCopiesAndOneRemovedEndsWithoutLossOnTheOthers) {
  TripReceiver receiver;
  const std::uint16_t reflect_port = test::free_trip_port();
  const auto ports = reload_ports({"p1", "p2", "p3"});
  TripPair pair(reload_server(ports, {"p1", "p2"}, receiver.port()));
  pair.start_client("client1", reload_client(ports, {"p1", "p2"}, reflect_port));
  ASSERT_TRUE(trip_eventually([&] { return trip_all_up(pair); }));
  const PathStatus server_p1 = pair.server_paths()[0];
  const PathStatus client_p1 = pair.client_paths()[0];

  // A third path on both sides: it comes up and brings its copy of each datagram.
  EXPECT_EQ(reload_server_side(pair, reload_server(ports, {"p1", "p2", "p3"}, receiver.port())), "paths added: p3; removed: -; restarted: -");
  EXPECT_EQ(reload_client_side(pair, reload_client(ports, {"p1", "p2", "p3"}, reflect_port)), "paths added: p3; removed: -; restarted: -");
  ASSERT_TRUE(trip_eventually([&] { return pair.client_paths().size() == 3 && pair.server_paths().size() == 3 && trip_all_up(pair); }));
  trip_send_numbered(reflect_port, 0, 100);
  reload_expect_each_once(receiver.drain(), 0, 100);
  EXPECT_TRUE(trip_eventually([&] { return pair.server_paths()[2].counters.received == 100; })) << pair.server_paths()[2].counters.received;

  // p2 removed while a numbered stream runs: first on the server, whose CLOSE ends the client's
  // session too, then on the client.
  const auto before = pair.server_paths();
  std::thread sender([&] { trip_send_numbered(reflect_port, 100, 1100); });
  EXPECT_TRUE(trip_eventually([&] { return pair.server_flows()[0].counters.delivered >= 300; }));
  EXPECT_EQ(reload_server_side(pair, reload_server(ports, {"p1", "p3"}, receiver.port())), "paths added: -; removed: p2; restarted: -");
  ASSERT_NE(reload_find(pair.client_paths(), "p2"), nullptr);
  EXPECT_TRUE(trip_eventually([&] { return !reload_find(pair.client_paths(), "p2")->up; }));
  EXPECT_EQ(reload_find(pair.client_paths(), "p2")->counters.sessions_dead, 0u);  // ended by the CLOSE, not by silence
  EXPECT_EQ(reload_client_side(pair, reload_client(ports, {"p1", "p3"}, reflect_port)), "paths added: -; removed: p2; restarted: -");
  sender.join();
  reload_expect_each_once(receiver.drain(), 100, 1100);
  // No copy lost on the paths that stayed: each brought all 1000.
  EXPECT_TRUE(trip_eventually([&] {
    const auto now = pair.server_paths();
    return now.size() == 2 && now[0].counters.received == before[0].counters.received + 1000 &&
           now[1].counters.received == before[2].counters.received + 1000;
  })) << pair.server_paths()[0].counters.received - before[0].counters.received << " "
      << pair.server_paths()[1].counters.received - before[2].counters.received;
  EXPECT_EQ(pair.server_flows()[0].counters.delivered, 1100u);
  // The reflected flow's labels went on across both reloads: none reused.
  EXPECT_EQ(pair.on_io([&] { return pair.client().flows()[0].next_label; }), 1100u);

  // p1, unchanged, kept its session and counters on both sides.
  const PathStatus server_after = pair.server_paths()[0];
  const PathStatus client_after = pair.client_paths()[0];
  EXPECT_EQ(server_after.name, "p1");
  EXPECT_TRUE(server_after.up);
  EXPECT_EQ(server_after.session, server_p1.session);
  EXPECT_EQ(server_after.counters.sessions, server_p1.counters.sessions);
  EXPECT_EQ(client_after.session, client_p1.session);
  EXPECT_EQ(client_after.counters.sessions, 1u);
  EXPECT_EQ(client_after.counters.sent, client_p1.counters.sent + 1100);
  EXPECT_EQ(server_after.counters.auth_failures, 0u);
  // The removed paths' coroutines ended and their memory went.
  EXPECT_TRUE(trip_eventually([&] { return pair.on_io([&] { return pair.server().paths_retiring() + pair.client().paths_retiring(); }) == 0; }));
}

// A flow moved off a path: the path's flows changed, so it re-handshakes on both sides; the flow's
// window and labels go on, and its copies now travel on the one path left.
TEST(TripReload, AFlowMovedOffAPathRestartsThatPathAndKeepsItsWindow) {
  TripReceiver receiver;
  const std::uint16_t reflect_port = test::free_trip_port();
  const auto ports = reload_ports({"p1", "p2"});
  TripPair pair(reload_server(ports, {"p1", "p2"}, receiver.port()));
  pair.start_client("client1", reload_client(ports, {"p1", "p2"}, reflect_port));
  ASSERT_TRUE(trip_eventually([&] { return trip_all_up(pair); }));
  trip_send_numbered(reflect_port, 0, 50);
  reload_expect_each_once(receiver.drain(), 0, 50);

  const std::string only_p1 = "paths = [\"p1\"]\n";
  EXPECT_EQ(reload_server_side(pair, reload_server(ports, {"p1", "p2"}, receiver.port()) + only_p1), "paths added: -; removed: -; restarted: p2; changed: flow 1");
  EXPECT_EQ(reload_client_side(pair, reload_client(ports, {"p1", "p2"}, reflect_port) + only_p1), "paths added: -; removed: -; restarted: p2; changed: flow 1");
  ASSERT_TRUE(trip_eventually([&] { return trip_all_up(pair) && pair.server_paths()[1].counters.sessions >= 2; }));
  const std::uint64_t p2_before = pair.server_paths()[1].counters.received;
  trip_send_numbered(reflect_port, 50, 100);
  reload_expect_each_once(receiver.drain(), 50, 100);
  EXPECT_EQ(pair.server_paths()[1].counters.received, p2_before);  // p2 carries the flow no more
  EXPECT_EQ(pair.server_paths()[0].session, 0u);                  // p1 untouched
  EXPECT_EQ(pair.on_io([&] { return pair.client().flows()[0].next_label; }), 100u);
  EXPECT_EQ(pair.server_flows()[0].counters.delivered, 100u);
}

// A reload that asks for what needs a restart, or whose new parts cannot be loaded or bound,
// changes nothing: the session, its number and counters, and the flow stay.
TEST(TripReload, AReloadThatCannotBeAppliedChangesNothing) {
  TripReceiver receiver;
  const std::uint16_t reflect_port = test::free_trip_port();
  const auto ports = reload_ports({"p1", "p2"});
  TripPair pair(reload_server(ports, {"p1"}, receiver.port()));
  pair.start_client("client1", reload_client(ports, {"p1"}, reflect_port));
  ASSERT_TRUE(trip_eventually([&] { return trip_all_up(pair); }));
  const PathStatus before = pair.server_paths()[0];
  const std::string good = reload_server(ports, {"p1"}, receiver.port());

  // A flow added, a flow's address changed: a restart's job.
  EXPECT_THROW(reload_server_side(pair, good + "[[flow]]\nid = 2\ndeliver = \"127.0.0.1:9\"\n"), ReloadRefused);
  EXPECT_THROW(reload_server_side(pair, reload_server(ports, {"p1"}, static_cast<std::uint16_t>(receiver.port() == 9 ? 10 : 9))), ReloadRefused);
  // A path added on an address in use.
  {
    asio::io_context io;
    asio::ip::tcp::acceptor holder(io, asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), ports.at("p2")));
    EXPECT_THROW(reload_server_side(pair, reload_server(ports, {"p1", "p2"}, receiver.port())), std::runtime_error);
    // A running path moved to an address in use: bound before the path is stopped, so refused
    // (before, p1 was stopped first and then stayed down).
    auto moved = ports;
    moved["p1"] = ports.at("p2");
    EXPECT_THROW(reload_server_side(pair, reload_server(moved, {"p1"}, receiver.port())), std::runtime_error);
  }
  // An identity whose files do not load.
  const std::string no_identity = "[identity]\nca = \"/nonexistent/ca.crt\"\ncert = \"/nonexistent/x.crt\"\nkey = \"/nonexistent/x.key\"\n";
  const TripdConfig unloadable = parse_config(no_identity + good, "b.toml", "");  // the parser does not open files
  EXPECT_ANY_THROW(pair.on_io([&] { return pair.server().reload(unloadable); }));
  // A file that does not parse never reaches the daemon: parse_config throws first.
  EXPECT_THROW(parse_config("[[path]]\nname = \"bad name!\"\n", "b.toml", ""), ConfigError);

  const auto after = pair.server_paths();
  ASSERT_EQ(after.size(), 1u);
  EXPECT_TRUE(after[0].up);
  EXPECT_EQ(after[0].session, before.session);
  EXPECT_EQ(after[0].counters.sessions, before.counters.sessions);
  EXPECT_EQ(pair.on_io([&] { return pair.server().listen_port("p2"); }), 0);
  trip_send_numbered(reflect_port, 0, 50);
  reload_expect_each_once(receiver.drain(), 0, 50);
  // The same file again is a reload that changes nothing.
  EXPECT_EQ(reload_server_side(pair, good), "paths added: -; removed: -; restarted: -");
  EXPECT_EQ(pair.server_paths()[0].session, before.session);
}

// docs/tripd.md, "Reloading": the identity's files are read again on each reload and serve the
// handshakes from then on, while a session up keeps its keys. Here the server takes a certificate
// the client does not accept for its name: the path added then fails its handshake while p1
// stays up; the right certificate back, it comes up.
TEST(TripReload, ANewIdentityServesNewHandshakesWhileSessionsUpKeepTheirs) {
  TripReceiver receiver;
  const std::uint16_t reflect_port = test::free_trip_port();
  const auto ports = reload_ports({"p1", "p2"});
  TripPair pair(reload_server(ports, {"p1"}, receiver.port()));
  pair.start_client("client1", reload_client(ports, {"p1"}, reflect_port));
  ASSERT_TRUE(trip_eventually([&] { return trip_all_up(pair); }));
  const std::string two = reload_server(ports, {"p1", "p2"}, receiver.port());
  EXPECT_EQ(pair.on_io([&] { return pair.server().reload(parse_config(pair.identity("client1") + two, "b.toml", "")); }),
            "paths added: p2; removed: -; restarted: -");
  EXPECT_EQ(reload_client_side(pair, reload_client(ports, {"p1", "p2"}, reflect_port)), "paths added: p2; removed: -; restarted: -");
  EXPECT_TRUE(trip_eventually([&] { return pair.client_paths()[1].counters.handshake_failures >= 2; }));
  EXPECT_FALSE(pair.client_paths()[1].up);
  EXPECT_TRUE(pair.client_paths()[0].up);
  EXPECT_EQ(pair.client_paths()[0].counters.sessions, 1u);
  trip_send_numbered(reflect_port, 0, 20);
  reload_expect_each_once(receiver.drain(), 0, 20);
  EXPECT_EQ(reload_server_side(pair, two), "paths added: -; removed: -; restarted: -");
  EXPECT_TRUE(trip_eventually([&] { return trip_all_up(pair); }));
  EXPECT_EQ(pair.client_paths()[0].counters.sessions, 1u);
}

// docs/tripd.md, "Reloading": a relay added starts, one removed stops accepting and closes its
// connections, one changed starts again on its address, the others keep their connections; a
// relay that cannot start refuses the reload and changes nothing.
TEST(TripReload, RelaysAddedRemovedAndChanged) {
  using asio::ip::tcp;
  asio::io_context io;
  const auto ports = reload_ports({"r1", "r2", "r3", "f"});
  const auto ep = [&](const char* n) { return tcp::endpoint(asio::ip::make_address("127.0.0.1"), ports.at(n)); };
  tcp::acceptor target(io, ep("f"));  // the far side: the kernel completes the relays' connects
  const auto relay = [&](const char* n) {
    RelayConfig c;
    c.name = n;
    c.listen = {"127.0.0.1", ports.at(n)};
    c.forward = {"127.0.0.1", ports.at("f")};
    return c;
  };
  const auto accepts = [&](const char* n) {
    tcp::socket s(io);
    std::error_code ec;
    s.connect(ep(n), ec);
    return !ec;
  };
  const auto stats_of = [&](RelaySet& set, const std::string& n) {
    for (const auto& [name, st] : set.stats()) {
      if (name == n) return st;
    }
    return RelayStats{};
  };
  RelaySet set(io);
  set.start({relay("r1")});
  tcp::socket held(io);
  held.connect(ep("r1"));
  held.non_blocking(true);
  ASSERT_TRUE(test::eventually([&] {
    io.poll();
    return stats_of(set, "r1").tcp_open == 1 && stats_of(set, "r1").tcp_accepted == 1;
  }));

  EXPECT_EQ(set.commit(set.prepare({relay("r1"), relay("r2")})).line, "relays added: r2; removed: -; restarted: -");
  EXPECT_TRUE(accepts("r2"));
  EXPECT_EQ(stats_of(set, "r1").tcp_open, 1u);  // r1 untouched

  {
    tcp::acceptor busy(io, ep("r3"));
    EXPECT_THROW(set.prepare({relay("r1"), relay("r2"), relay("r3")}), std::runtime_error);
  }
  EXPECT_EQ(set.stats().size(), 2u);
  EXPECT_EQ(stats_of(set, "r1").tcp_open, 1u);

  RelayConfig r2 = relay("r2");
  r2.max_connections = 8;
  EXPECT_EQ(set.commit(set.prepare({r2})).line, "relays added: -; removed: r1; restarted: r2");
  EXPECT_FALSE(accepts("r1"));
  EXPECT_TRUE(accepts("r2"));
  std::array<std::uint8_t, 16> buf{};
  std::error_code ec;
  EXPECT_TRUE(test::eventually([&] {
    io.poll();
    held.read_some(asio::buffer(buf), ec);
    return ec && ec != asio::error::would_block;
  })) << ec.message();
  set.stop();
  io.poll();
}

}  // namespace
}  // namespace pqot::tripd
