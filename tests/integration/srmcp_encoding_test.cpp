// SRMCP body encodings end to end (docs/srmcp.md §4, §9.2): compact bodies by default, JSON peers
// of before them still served during a rolling upgrade, a clear refusal on both sides when there
// is no common encoding, and hostile compact bodies answered while the session carries on.
#include <gtest/gtest.h>

#include "pqot/srmcp/compact.hpp"
#include "raw_session.hpp"
#include "srmcp_fixture.hpp"

namespace pqot::srmcp {
namespace {

using SrmcpEncodings = SrmcpEndToEnd;

// A second server on the fixture's event loop, with its own body encodings.
struct OtherServer {
  OtherServer(asio::io_context& io, std::vector<BodyEncoding> encodings) {
    ServerConfig cfg = SrmcpEndToEnd::base_config();
    cfg.data_port_min = 43000;
    cfg.data_port_max = 43999;
    cfg.body_encodings = std::move(encodings);
    server = std::make_unique<Server>(io, cfg, make_nodes());
    server->start();
  }
  ~OtherServer() { server->stop(); }
  std::unique_ptr<Server> server;
};

std::uint64_t hello_refusals(const Server& s) {
  return s.stats().refusals[static_cast<std::size_t>(Refusal::hello_failed)];
}

TEST_F(SrmcpEncodings, ADefaultSessionUsesCompactBodiesThroughBothApis_S4_S9_2) {
  Client c(options());
  c.connect();
  EXPECT_EQ(c.info().encoding, BodyEncoding::compact);
  // The typed API.
  const auto values = c.read_values({"plant.t0", "plant.recipe", "plant.nope", "plant.secret"});
  ASSERT_EQ(values.size(), 4u);
  EXPECT_EQ(values[0].id, "plant.t0");
  EXPECT_EQ(std::get<double>(values[0].value), 20.0);
  EXPECT_EQ(values[0].type, ValueType::float64);
  EXPECT_EQ(std::get<std::string>(values[1].value), "A");
  EXPECT_EQ(values[2].status, Status::unknown_node);
  EXPECT_EQ(values[3].status, Status::unknown_node) << "client1 may not see plant.secret";
  const auto written = c.write_values({{"plant.setpoint", std::int64_t{61}}, {"plant.count", 2.5}});
  EXPECT_EQ(std::get<double>(written[0].stored), 61.0);
  EXPECT_EQ(written[1].status, Status::type_mismatch);
  // The JSON API gives the JSON of §9.1, converted from the compact records.
  const Json r = c.read({"plant.setpoint", "plant.count"});
  EXPECT_EQ(r["values"][0]["value"], 61.0);
  EXPECT_EQ(r["values"][0]["type"], "double");
  EXPECT_EQ(r["values"][1]["value"], 0);
  const Json w = c.write({{"plant.recipe", "C"}});
  EXPECT_EQ(w["values"][0]["value"], "C");
  // A JSON body that does not follow §9.1 is refused here, before anything is sent.
  EXPECT_EQ(c.request(MessageType::read, Json{{"ids", 5}}).status, Status::bad_request);
  // Notifications, typed and as JSON.
  std::mutex mu;
  std::vector<Notification> typed;
  std::vector<Json> as_json;
  c.on_notification_values([&](const Notification& n) {
    std::lock_guard g(mu);
    typed.push_back(n);
  });
  c.on_notification([&](const Json& j) {
    std::lock_guard g(mu);
    as_json.push_back(j);
  });
  const auto sub = c.subscribe({"plant.count"}, std::chrono::milliseconds(0));
  c.write_values({{"plant.count", std::int64_t{9}}});
  EXPECT_TRUE(test::eventually([&] {
    std::lock_guard g(mu);
    return !typed.empty() && std::get<std::int64_t>(typed.back().values.at(0).value) == 9 && !as_json.empty() &&
           as_json.back()["values"][0]["value"] == 9;
  }));
  {
    std::lock_guard g(mu);
    EXPECT_EQ(typed.back().subscription, sub);
    EXPECT_EQ(typed.back().values.at(0).id, "plant.count");
  }
  c.close();
}

TEST_F(SrmcpEncodings, JsonPeersOfBeforeCompactBodiesStillTalk_S4) {
  // A client that offers only JSON (as clients before compact bodies do) to a new server.
  ClientOptions json_only = options();
  json_only.encodings = {BodyEncoding::json};
  Client old_client(json_only);
  old_client.connect();
  EXPECT_EQ(old_client.info().encoding, BodyEncoding::json);
  EXPECT_EQ(old_client.read({"plant.t1"})["values"][0]["value"], 21.0);
  EXPECT_EQ(std::get<double>(old_client.read_values({"plant.t1"}).at(0).value), 21.0) << "typed API over JSON";
  EXPECT_EQ(std::get<std::int64_t>(old_client.write_values({{"plant.count", std::int64_t{4}}}).at(0).stored), 4);
  old_client.close();
  // A raw client whose hello is byte for byte that of version 2.
  RawSession raw(server_->port(), pki_->client(1));
  const auto reply = raw.call(MessageType::read, R"({"ids":["plant.t2"]})");
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->body["values"][0]["value"], 22.0);

  // A new client and a server that accepts only JSON (as servers before compact bodies do).
  OtherServer old_server(io_, {BodyEncoding::json});
  ClientOptions to_old = options();
  to_old.port = old_server.server->port();
  Client c(to_old);
  c.connect();
  EXPECT_EQ(c.info().encoding, BodyEncoding::json);
  EXPECT_EQ(std::get<double>(c.read_values({"plant.t3"}).at(0).value), 23.0);
  c.close();
}

TEST_F(SrmcpEncodings, NoCommonEncodingFailsAtTheHelloWithAClearErrorOnBothSides_S4) {
  OtherServer compact_only(io_, {BodyEncoding::compact});
  ClientOptions json_only = options();
  json_only.port = compact_only.server->port();
  json_only.encodings = {BodyEncoding::json};
  Client c(json_only);
  try {
    c.connect();
    ADD_FAILURE() << "connected without a common body encoding";
  } catch (const ClientError& e) {
    EXPECT_NE(std::string(e.what()).find("no common body encoding (this client offers json; the server accepts compact)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(test::eventually([&] { return hello_refusals(*compact_only.server) == 1; }));
  // A client of version 2 gets the HELLO_REFUSED frame (it would close on the unknown type).
  EXPECT_THROW(RawSession(compact_only.server->port(), pki_->client(1)), std::runtime_error);
  EXPECT_TRUE(test::eventually([&] { return hello_refusals(*compact_only.server) == 2; }));
  // The server goes on serving clients it shares an encoding with.
  ClientOptions ok = json_only;
  ok.encodings = {BodyEncoding::compact};
  Client good(ok);
  good.connect();
  EXPECT_EQ(std::get<double>(good.read_values({"plant.t4"}).at(0).value), 24.0);
  good.close();
}

TEST_F(SrmcpEncodings, HostileCompactBodiesAreAnsweredAndTheSessionCarriesOn_S9_2) {
  RawSession raw(server_->port(), pki_->client(1), "", {}, {kVersionCompact});
  const auto bad = [&](const std::string& body) {
    const auto r = raw.call(MessageType::read, body);
    if (!r) return Status::internal;
    EXPECT_EQ(r->header.type, MessageType::error);
    return r->header.status;
  };
  EXPECT_EQ(bad(std::string("\x00\x02\x01\x61", 4)), Status::bad_request) << "count past the body";
  EXPECT_EQ(bad(std::string("\xff\xff", 2)), Status::too_large) << "more ids than max_nodes_per_request";
  // JSON where compact records are due: its first two bytes, `{"`, read as a count of 31,522.
  EXPECT_EQ(bad(R"({"ids":["plant.t0"]})"), Status::too_large) << "JSON where compact records are due";
  EXPECT_EQ(bad(std::string("\x00\x01\x01\x61\x00", 5)), Status::bad_request) << "trailing byte";
  const auto w = raw.call(MessageType::write, std::string("\x00\x01\x0aplant.only\x01\x02", 15));
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->header.status, Status::bad_request) << "a bool of 2";
  // Still served: a good compact READ, decoded as a client decodes it.
  std::string request;
  const std::vector<std::string> ids{"plant.t5"};
  compact::encode_read_request(ids, request);
  const auto r = raw.call(MessageType::read, request);
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->header.status, Status::ok);
  EXPECT_EQ(std::get<double>(compact::decode_read_response(crypto::as_bytes(r->raw), ids, Limits{}).at(0).value), 25.0);
  // Other bodies stay JSON in a compact session.
  const auto ping = raw.call(MessageType::ping, "{}");
  ASSERT_TRUE(ping.has_value());
  EXPECT_TRUE(ping->body.contains("server_time_ms"));
}

}  // namespace
}  // namespace pqot::srmcp
