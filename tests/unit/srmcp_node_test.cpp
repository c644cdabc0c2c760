// SRMCP node store: READ/WRITE/BROWSE bodies and per-node statuses (docs/srmcp.md §9, §11), ACLs,
// backends and simulated signals (docs/srmcpd.md).
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <thread>

#include "../support/wait.hpp"
#include "pqot/srmcp/node.hpp"
#include "pqot/srmcp/signal.hpp"

namespace pqot::srmcp {
namespace {

int code(Status s) {
  return static_cast<int>(s);
}

const Principal kAnon{"nobody", {}};
const Principal kClient1{"client1", {}};
const Principal kOperator{"alice", {"operator"}};

NodeSpec folder(std::string id, std::vector<std::string> parents = {}) {
  NodeSpec s;
  s.id = std::move(id);
  s.name = s.id;
  s.parents = std::move(parents);
  return s;
}

NodeSpec value_node(std::string id, ValueType type, Json initial, Acl writers = {"*"},
                    std::vector<std::string> parents = {}) {
  NodeSpec s;
  s.id = std::move(id);
  s.name = s.id;
  s.type = type;
  s.initial = std::move(initial);
  s.writers = std::move(writers);
  s.parents = std::move(parents);
  return s;
}

// One node of each type, plus folders and ACL variants.
void fill(NodeStore& store) {
  store.add(folder("f"));
  store.add(value_node("b", ValueType::boolean, true, {"*"}, {"f"}));
  store.add(value_node("i", ValueType::int64, 7, {"*"}, {"f"}));
  store.add(value_node("d", ValueType::float64, 1.5, {"*"}, {"f"}));
  store.add(value_node("s", ValueType::string, "hello", {"*"}, {"f"}));
  store.add(value_node("j", ValueType::json, Json{{"a", 1}}, {"*"}, {"f"}));
  store.add(value_node("ro", ValueType::int64, 1, {}));
  store.add(value_node("only_client1", ValueType::int64, 2, {"client1"}));
  store.add(value_node("only_operators", ValueType::int64, 3, {"role:operator"}));
  NodeSpec secret = value_node("secret", ValueType::string, "s3", {"role:operator"});
  secret.readers = {"role:operator"};
  store.add(secret);
  NodeSpec mine = value_node("mine", ValueType::string, "m", {});
  mine.readers = {"client1"};
  store.add(mine);
}

Json read1(const NodeStore& store, const std::string& id, const Principal& who = kAnon) {
  return store.read({id}, who)["values"][0];
}
Json write1(NodeStore& store, const std::string& id, Json v, const Principal& who = kAnon) {
  return store.write({{id, std::move(v)}}, who)["values"][0];
}

TEST(SrmcpNode, TypeNamesRoundTrip) {
  for (ValueType t : {ValueType::folder, ValueType::boolean, ValueType::int64, ValueType::float64,
                      ValueType::string, ValueType::json}) {
    EXPECT_EQ(parse_type_name(type_name(t)), t);
  }
  EXPECT_EQ(type_name(ValueType::float64), "double");
  EXPECT_EQ(type_name(ValueType::boolean), "bool");
  EXPECT_FALSE(parse_type_name("float"));
  EXPECT_FALSE(parse_type_name(""));
}

TEST(SrmcpNode, ValueMatchesEachType_S9) {
  EXPECT_TRUE(value_matches(ValueType::boolean, true));
  EXPECT_FALSE(value_matches(ValueType::boolean, 1));
  EXPECT_TRUE(value_matches(ValueType::int64, -5));
  EXPECT_TRUE(value_matches(ValueType::int64, Json::parse("9223372036854775807")));
  EXPECT_FALSE(value_matches(ValueType::int64, Json::parse("9223372036854775808")));
  EXPECT_FALSE(value_matches(ValueType::int64, 1.5));
  EXPECT_FALSE(value_matches(ValueType::int64, Json::parse("2.0")));
  EXPECT_FALSE(value_matches(ValueType::int64, "1"));
  EXPECT_TRUE(value_matches(ValueType::float64, 1.5));
  EXPECT_TRUE(value_matches(ValueType::float64, 2));
  EXPECT_FALSE(value_matches(ValueType::float64, std::nan("")));
  EXPECT_FALSE(value_matches(ValueType::float64, HUGE_VAL));
  EXPECT_FALSE(value_matches(ValueType::float64, true));
  EXPECT_TRUE(value_matches(ValueType::string, ""));
  EXPECT_FALSE(value_matches(ValueType::string, 1));
  EXPECT_TRUE(value_matches(ValueType::json, Json::object()));
  EXPECT_TRUE(value_matches(ValueType::json, Json::array()));
  EXPECT_FALSE(value_matches(ValueType::json, "{}"));
  EXPECT_FALSE(value_matches(ValueType::json, 3));
  EXPECT_FALSE(value_matches(ValueType::json, nullptr));
  EXPECT_FALSE(value_matches(ValueType::folder, Json::object()));
}

TEST(SrmcpNode, AclEntries) {
  EXPECT_TRUE(acl_allows({"*"}, kAnon));
  EXPECT_TRUE(acl_allows({"x", "client1"}, kClient1));
  EXPECT_FALSE(acl_allows({"client1"}, kAnon));
  EXPECT_TRUE(acl_allows({"role:operator"}, kOperator));
  EXPECT_FALSE(
      acl_allows({"role:operator"}, Principal{"operator", {}}));  // an identity is not a role
  EXPECT_FALSE(acl_allows({"operator"}, kOperator));              // and a role not an identity
  EXPECT_FALSE(acl_allows({}, kOperator));
  EXPECT_FALSE(acl_allows({""}, Principal{}));
}

TEST(SrmcpNode, NodeIdRules) {
  EXPECT_TRUE(valid_node_id("a"));
  EXPECT_TRUE(valid_node_id("plant.line1/temp#1"));
  EXPECT_TRUE(valid_node_id(std::string(128, 'x')));
  EXPECT_FALSE(valid_node_id(""));
  EXPECT_FALSE(valid_node_id(std::string(129, 'x')));
  EXPECT_FALSE(valid_node_id("a b"));
  EXPECT_FALSE(valid_node_id("a\tb"));
  EXPECT_FALSE(valid_node_id("caf\xc3\xa9"));
  EXPECT_FALSE(valid_node_id(std::string("a\0b", 3)));
}

TEST(SrmcpNode, AddRejectsMalformedSpecs) {
  NodeStore store;
  store.add(folder("f"));
  store.add(value_node("v", ValueType::int64, 1));
  EXPECT_THROW(store.add(folder("f")), std::invalid_argument);                    // duplicate
  EXPECT_THROW(store.add(folder("a b")), std::invalid_argument);                  // space
  EXPECT_THROW(store.add(folder("")), std::invalid_argument);                     // empty
  EXPECT_THROW(store.add(folder(std::string(129, 'x'))), std::invalid_argument);  // too long
  EXPECT_THROW(store.add(folder("c", {"missing"})), std::invalid_argument);       // unknown parent
  EXPECT_THROW(store.add(folder("c", {"v"})), std::invalid_argument);       // parent not a folder
  EXPECT_THROW(store.add(folder("c", {"f", "f"})), std::invalid_argument);  // parent twice
  EXPECT_THROW(store.add(value_node("c", ValueType::int64, 1.5)), std::invalid_argument);
  EXPECT_THROW(store.add(value_node("c", ValueType::json, "x")), std::invalid_argument);
  NodeSpec long_name = folder("c");
  long_name.name.assign(257, 'n');
  EXPECT_THROW(store.add(long_name), std::invalid_argument);
  NodeSpec read_only_backend = value_node("c", ValueType::int64, nullptr);
  read_only_backend.read = [] { return ReadResult{Status::ok, 1}; };
  EXPECT_THROW(store.add(read_only_backend), std::invalid_argument);  // writes would vanish
  EXPECT_EQ(store.size(), 2u);
  EXPECT_FALSE(store.contains("c"));
  EXPECT_TRUE(store.contains("v"));
}

TEST(SrmcpNode, ReadReturnsValueTypeTimestampStatus_S9) {
  NodeStore store;
  fill(store);
  const auto before = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  const Json r = store.read({"b", "i", "d", "s", "j"}, kAnon)["values"];
  ASSERT_EQ(r.size(), 5u);
  EXPECT_EQ(r[0], (Json{{"id", "b"},
                        {"value", true},
                        {"type", "bool"},
                        {"ts_ms", r[0]["ts_ms"]},
                        {"status", 0}}));
  EXPECT_EQ(r[1]["value"], 7);
  EXPECT_EQ(r[1]["type"], "int64");
  EXPECT_EQ(r[2]["value"], 1.5);
  EXPECT_EQ(r[2]["type"], "double");
  EXPECT_EQ(r[3]["value"], "hello");
  EXPECT_EQ(r[4]["value"], (Json{{"a", 1}}));
  EXPECT_EQ(r[4]["type"], "json");
  for (const auto& e : r) {
    EXPECT_EQ(e["status"], 0);
    // Milliseconds since 1970: the store was filled a moment before `before` was taken.
    EXPECT_GT(e["ts_ms"].get<std::int64_t>(), before - 60'000);
    EXPECT_LT(e["ts_ms"].get<std::int64_t>(), before + 60'000);
  }
}

// The server sends READ results as text written directly (read_text); it must say exactly what
// read() says, for every status and value type. The memory nodes keep their timestamps, so the
// two calls agree on ts_ms too; only the unknown id's timestamp is "now" and may differ by a tick.
TEST(SrmcpNode, ReadTextEqualsRead_S9) {
  NodeStore store;
  fill(store);
  const std::vector<std::string> ids = {"b", "i", "d", "s", "j", "f", "nope", "secret", "mine", "ro"};
  for (const Principal& who : {kAnon, kClient1, kOperator}) {
    const Json expected = store.read(ids, who);
    std::string text;
    store.read_text(ids, who, text);
    Json got = Json::parse(text);
    ASSERT_EQ(got["values"].size(), ids.size());
    // Entries without a value are stamped with the time of the read: the two calls may differ.
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if (got["values"][i]["status"] != 0) got["values"][i]["ts_ms"] = expected["values"][i]["ts_ms"];
    }
    EXPECT_EQ(got, expected) << text;
  }
}

TEST(SrmcpNode, ReadStatuses_S11) {
  NodeStore store;
  fill(store);
  EXPECT_EQ(read1(store, "nope")["status"], code(Status::unknown_node));
  EXPECT_EQ(read1(store, "f")["status"], code(Status::not_readable));
  // A node the caller may neither read nor write is not revealed (§11): UNKNOWN_NODE.
  EXPECT_EQ(read1(store, "secret")["status"], code(Status::unknown_node));  // role missing
  EXPECT_EQ(read1(store, "secret", kClient1)["status"], code(Status::unknown_node));
  EXPECT_EQ(read1(store, "secret", kOperator)["value"], "s3");                        // by role
  EXPECT_EQ(read1(store, "mine", kOperator)["status"], code(Status::unknown_node));  // by identity
  EXPECT_EQ(read1(store, "mine", kClient1)["value"], "m");
  // Failures carry no value.
  for (const char* id : {"nope", "f", "secret"})
    EXPECT_FALSE(read1(store, id).contains("value")) << id;
  EXPECT_EQ(read1(store, "nope")["id"], "nope");
}

TEST(SrmcpNode, ReadKeepsRequestOrderAndAnswersDuplicates_S9) {
  NodeStore store;
  fill(store);
  const Json r = store.read({"s", "nope", "b", "s", "f", "b"}, kAnon)["values"];
  ASSERT_EQ(r.size(), 6u);
  const std::vector<std::string> ids = {"s", "nope", "b", "s", "f", "b"};
  for (std::size_t k = 0; k < ids.size(); ++k) EXPECT_EQ(r[k]["id"], ids[k]);
  EXPECT_EQ(r[0]["value"], "hello");
  EXPECT_EQ(r[3]["value"], "hello");
  EXPECT_EQ(r[1]["status"], code(Status::unknown_node));  // one bad id does not fail the others
  EXPECT_EQ(r[4]["status"], code(Status::not_readable));
  EXPECT_EQ(store.read({}, kAnon), (Json{{"values", Json::array()}}));
}

TEST(SrmcpNode, WriteStatuses_S11) {
  NodeStore store;
  fill(store);
  EXPECT_EQ(write1(store, "nope", 1)["status"], code(Status::unknown_node));
  EXPECT_EQ(write1(store, "f", 1)["status"], code(Status::not_writable));
  EXPECT_EQ(write1(store, "ro", 1)["status"], code(Status::not_writable));
  EXPECT_EQ(write1(store, "ro", 1, kOperator)["status"], code(Status::not_writable));
  EXPECT_EQ(write1(store, "only_client1", 5)["status"], code(Status::access_denied));
  EXPECT_EQ(write1(store, "only_client1", 5, kOperator)["status"], code(Status::access_denied));
  EXPECT_EQ(write1(store, "only_client1", 5, kClient1)["status"], 0);
  EXPECT_EQ(write1(store, "only_operators", 5, kClient1)["status"], code(Status::access_denied));
  EXPECT_EQ(write1(store, "only_operators", 5, kOperator)["status"], 0);
  EXPECT_EQ(write1(store, "secret", "x", kClient1)["status"], code(Status::unknown_node)) << "not revealed (§11)";
  EXPECT_EQ(write1(store, "mine", "x", kOperator)["status"], code(Status::unknown_node));
  // Denied writes change nothing and echo nothing.
  const Json denied = write1(store, "only_client1", 9, kAnon);
  EXPECT_FALSE(denied.contains("value"));
  EXPECT_EQ(read1(store, "only_client1")["value"], 5);
  EXPECT_EQ(read1(store, "ro")["value"], 1);
}

TEST(SrmcpNode, WriteTypeMismatchForEveryType_S11) {
  NodeStore store;
  fill(store);
  const std::vector<std::pair<std::string, Json>> bad = {{"b", 1},
                                                         {"b", "true"},
                                                         {"b", nullptr},
                                                         {"i", 1.5},
                                                         {"i", "7"},
                                                         {"i", true},
                                                         {"i", Json::parse("1e3")},
                                                         {"d", "1.5"},
                                                         {"d", true},
                                                         {"d", Json::array()},
                                                         {"s", 5},
                                                         {"s", Json::object()},
                                                         {"j", "{}"},
                                                         {"j", 42},
                                                         {"j", nullptr},
                                                         {"j", false}};
  const Json r = store.write(bad, kAnon)["values"];
  ASSERT_EQ(r.size(), bad.size());
  for (std::size_t k = 0; k < bad.size(); ++k) {
    EXPECT_EQ(r[k]["status"], code(Status::type_mismatch))
        << bad[k].first << " = " << bad[k].second;
    EXPECT_FALSE(r[k].contains("value"));
  }
  const Json after = store.read({"b", "i", "d", "s", "j"}, kAnon)["values"];
  EXPECT_EQ(after[0]["value"], true);
  EXPECT_EQ(after[1]["value"], 7);
  EXPECT_EQ(after[2]["value"], 1.5);
  EXPECT_EQ(after[3]["value"], "hello");
  EXPECT_EQ(after[4]["value"], (Json{{"a", 1}}));
}

TEST(SrmcpNode, WriteEchoesStoredValueAndReadsItBack_S9) {
  NodeStore store;
  fill(store);
  const Json values = Json::parse(R"([1, 2])");
  const Json r = store.write({{"b", false}, {"i", -42}, {"d", 21}, {"s", "world"}, {"j", values}},
                             kAnon)["values"];
  ASSERT_EQ(r.size(), 5u);
  EXPECT_EQ(r[0], (Json{{"id", "b"}, {"value", false}, {"status", 0}}));
  EXPECT_EQ(r[1]["value"], -42);
  // A double node stores a double: 21 comes back as 21.0.
  EXPECT_TRUE(r[2]["value"].is_number_float());
  EXPECT_EQ(r[2]["value"].dump(), "21.0");
  EXPECT_EQ(r[3]["value"], "world");
  EXPECT_EQ(r[4]["value"], values);
  const Json back = store.read({"b", "i", "d", "s", "j"}, kAnon)["values"];
  for (std::size_t k = 0; k < 5; ++k) EXPECT_EQ(back[k]["value"], r[k]["value"]);
  EXPECT_TRUE(back[2]["value"].is_number_float());
}

TEST(SrmcpNode, WriteKeepsOrderAndAppliesDuplicatesInTurn_S9) {
  NodeStore store;
  fill(store);
  const Json r =
      store.write({{"i", 1}, {"nope", 1}, {"i", 2}, {"s", 3}, {"i", 3}}, kAnon)["values"];
  ASSERT_EQ(r.size(), 5u);
  EXPECT_EQ(r[0]["value"], 1);
  EXPECT_EQ(r[1]["status"], code(Status::unknown_node));
  EXPECT_EQ(r[2]["value"], 2);
  EXPECT_EQ(r[3]["status"], code(Status::type_mismatch));
  EXPECT_EQ(r[4]["value"], 3);
  EXPECT_EQ(r[4]["id"], "i");
  EXPECT_EQ(read1(store, "i")["value"], 3);  // the last write wins
}

TEST(SrmcpNode, DefaultInitialValues) {
  NodeStore store;
  store.add(value_node("b", ValueType::boolean, nullptr));
  store.add(value_node("i", ValueType::int64, nullptr));
  store.add(value_node("d", ValueType::float64, nullptr));
  store.add(value_node("s", ValueType::string, nullptr));
  store.add(value_node("j", ValueType::json, nullptr));
  store.add(value_node("d2", ValueType::float64, 3));
  const Json r = store.read({"b", "i", "d", "s", "j", "d2"}, kAnon)["values"];
  EXPECT_EQ(r[0]["value"], false);
  EXPECT_EQ(r[1]["value"], 0);
  EXPECT_EQ(r[2]["value"], 0.0);
  EXPECT_EQ(r[3]["value"], "");
  EXPECT_EQ(r[4]["value"], Json::object());
  EXPECT_EQ(r[5]["value"].dump(), "3.0");
}

TEST(SrmcpNode, ApplicationReadCallable) {
  NodeStore store;
  int calls = 0;
  NodeSpec spec = value_node("counter", ValueType::int64, nullptr, {});
  spec.read = [&calls] { return ReadResult{Status::ok, ++calls}; };
  store.add(spec);
  EXPECT_EQ(read1(store, "counter")["value"], 1);
  EXPECT_EQ(read1(store, "counter")["value"], 2);
  const Json r = store.read({"counter", "counter"}, kAnon)["values"];
  EXPECT_EQ(r[0]["value"], 3);  // duplicates are answered each time, in order
  EXPECT_EQ(r[1]["value"], 4);
  const auto one = store.read_one("counter", kAnon);
  ASSERT_TRUE(one);
  EXPECT_EQ(one->value, 5);
  EXPECT_EQ(write1(store, "counter", 0)["status"], code(Status::not_writable));
  EXPECT_EQ(calls, 5);
}

TEST(SrmcpNode, ApplicationWriteCallableAndEcho) {
  NodeStore store;
  std::vector<Json> seen;
  NodeSpec spec = value_node("dev", ValueType::float64, 0.0, {"*"});
  // The device clamps to 100 and reports what it stored.
  spec.write = [&seen](const Json& v) {
    seen.push_back(v);
    return WriteResult{Status::ok, std::min(v.get<double>(), 100.0)};
  };
  store.add(spec);
  EXPECT_EQ(write1(store, "dev", 250)["value"], 100.0);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_TRUE(seen[0].is_number_float());          // the callable sees the normalized value
  EXPECT_EQ(read1(store, "dev")["value"], 100.0);  // memory reads return what the device stored
  EXPECT_EQ(write1(store, "dev", "x")["status"], code(Status::type_mismatch));
  EXPECT_EQ(seen.size(), 1u);  // type-checked before the backend is called

  NodeSpec refusing = value_node("refusing", ValueType::int64, 0);
  refusing.write = [](const Json&) { return WriteResult{Status::not_writable, nullptr}; };
  store.add(refusing);
  const Json r = write1(store, "refusing", 5);
  EXPECT_EQ(r["status"], code(Status::not_writable));
  EXPECT_FALSE(r.contains("value"));
  EXPECT_EQ(read1(store, "refusing")["value"], 0);

  NodeSpec lying = value_node("lying", ValueType::int64, 0);
  lying.write = [](const Json&) { return WriteResult{Status::ok, "not a number"}; };
  store.add(lying);
  EXPECT_EQ(write1(store, "lying", 5)["status"], code(Status::backend_error));
  EXPECT_EQ(read1(store, "lying")["value"], 0);
}

TEST(SrmcpNode, BackendErrorsStayPerNode_S11) {
  NodeStore store;
  fill(store);
  NodeSpec bad_read = value_node("bad_read", ValueType::float64, nullptr, {});
  bad_read.read = []() -> ReadResult { throw std::runtime_error("device down"); };
  store.add(bad_read);
  NodeSpec bad_write = value_node("bad_write", ValueType::float64, 1.0);
  bad_write.write = [](const Json&) -> WriteResult { throw std::runtime_error("device down"); };
  store.add(bad_write);
  NodeSpec wrong_type = value_node("wrong_type", ValueType::int64, nullptr, {});
  wrong_type.read = [] { return ReadResult{Status::ok, "seven"}; };
  store.add(wrong_type);
  NodeSpec timeout = value_node("timeout", ValueType::int64, nullptr, {});
  timeout.read = [] { return ReadResult{Status::timeout, 1}; };
  store.add(timeout);

  const Json r = store.read({"i", "bad_read", "s", "wrong_type", "timeout"}, kAnon)["values"];
  EXPECT_EQ(r[0]["value"], 7);
  EXPECT_EQ(r[1]["status"], code(Status::backend_error));
  EXPECT_FALSE(r[1].contains("value"));
  EXPECT_EQ(r[2]["value"], "hello");
  EXPECT_EQ(r[3]["status"], code(Status::backend_error));
  EXPECT_EQ(r[4]["status"], code(Status::timeout));
  EXPECT_FALSE(r[4].contains("value"));

  const Json w = store.write({{"i", 8}, {"bad_write", 2.0}, {"s", "x"}}, kAnon)["values"];
  EXPECT_EQ(w[0]["status"], 0);
  EXPECT_EQ(w[1]["status"], code(Status::backend_error));
  EXPECT_FALSE(w[1].contains("value"));
  EXPECT_EQ(w[2]["status"], 0);
  EXPECT_EQ(read1(store, "bad_write")["value"], 1.0);  // the failed write left the value alone

  const auto one = store.read_one("bad_read", kAnon);
  ASSERT_TRUE(one);
  EXPECT_EQ(one->status, Status::backend_error);
}

TEST(SrmcpNode, ReadOne) {
  NodeStore store;
  fill(store);
  EXPECT_FALSE(store.read_one("nope", kAnon));
  EXPECT_FALSE(store.read_one("f", kAnon));
  EXPECT_FALSE(store.read_one("secret", kAnon));
  const auto r = store.read_one("secret", kOperator);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, Status::ok);
  EXPECT_EQ(r->value, "s3");
}

// plant > {line1 > {temp, setpoint, secret}, line2 > {speed}}, plus "dash" showing temp again.
void fill_tree(NodeStore& store) {
  store.add(folder("plant"));
  store.add(folder("dash"));
  store.add(folder("line1", {"plant"}));
  store.add(folder("line2", {"plant"}));
  store.add(value_node("temp", ValueType::float64, 20.0, {}, {"line1", "dash"}));
  store.add(value_node("setpoint", ValueType::float64, 20.0, {"role:operator"}, {"line1"}));
  NodeSpec secret = value_node("secret", ValueType::string, "", {}, {"line1"});
  secret.readers = {"client1"};
  store.add(secret);
  store.add(value_node("speed", ValueType::int64, 0, {}, {"line2"}));
}

std::vector<std::string> ids_of(const Json& browse) {
  std::vector<std::string> out;
  for (const auto& n : browse["nodes"]) out.push_back(n["id"]);
  return out;
}

TEST(SrmcpNode, BrowseDepthAndRoot_S9) {
  NodeStore store;
  fill_tree(store);
  using V = std::vector<std::string>;
  EXPECT_EQ(ids_of(store.browse("", 0, kAnon)), (V{"plant", "dash"}));
  EXPECT_EQ(ids_of(store.browse("", 1, kAnon)), (V{"plant", "dash", "line1", "line2", "temp"}));
  // temp is under line1 and dash: listed once, at its shallowest depth.
  EXPECT_EQ(ids_of(store.browse("", -1, kAnon)),
            (V{"plant", "dash", "line1", "line2", "temp", "setpoint", "speed"}));
  EXPECT_EQ(ids_of(store.browse("", 100, kAnon)), ids_of(store.browse("", -1, kAnon)));
  EXPECT_EQ(ids_of(store.browse("line1", 0, kAnon)), (V{"line1"}));
  EXPECT_EQ(ids_of(store.browse("line1", 1, kAnon)), (V{"line1", "temp", "setpoint"}));
  EXPECT_EQ(ids_of(store.browse("temp", 5, kAnon)), (V{"temp"}));
  try {
    (void)store.browse("nope", 1, kAnon);
    ADD_FAILURE() << "no ProtocolError";
  } catch (const ProtocolError& e) {
    EXPECT_EQ(e.status(), Status::unknown_node);
    EXPECT_EQ(e.action(), Action::reply);
  }
}

TEST(SrmcpNode, BrowseDescribesNodesForThePrincipal_S9) {
  NodeStore store;
  fill_tree(store);
  const Json anon = store.browse("line1", 1, kAnon)["nodes"];
  ASSERT_EQ(anon.size(), 3u);
  EXPECT_EQ(anon[0], (Json{{"id", "line1"},
                           {"name", "line1"},
                           {"type", "folder"},
                           {"parents", {"plant"}},
                           {"children", {"temp", "setpoint"}},  // "secret" is hidden from anon
                           {"description", ""},
                           {"unit", ""},
                           {"readable", false},
                           {"writable", false}}));
  EXPECT_EQ(anon[1]["parents"], (Json{"line1", "dash"}));
  EXPECT_EQ(anon[1]["readable"], true);
  EXPECT_EQ(anon[1]["writable"], false);
  EXPECT_EQ(anon[2]["id"], "setpoint");
  EXPECT_EQ(anon[2]["writable"], false);

  const Json op = store.browse("line1", 1, kOperator)["nodes"];
  EXPECT_EQ(op[2]["id"], "setpoint");
  EXPECT_EQ(op[2]["writable"], true);

  // client1 can read "secret"; it appears, in insertion order.
  const Json c1 = store.browse("line1", 1, kClient1)["nodes"];
  EXPECT_EQ(c1[0]["children"], (Json{"temp", "setpoint", "secret"}));
  ASSERT_EQ(c1.size(), 4u);
  EXPECT_EQ(c1[3]["id"], "secret");
  EXPECT_EQ(c1[3]["readable"], true);
  // Invisible as a root: as if it did not exist (§11), like an unknown root.
  try {
    (void)store.browse("secret", 0, kAnon);
    ADD_FAILURE() << "browse of an invisible root answered";
  } catch (const ProtocolError& e) {
    EXPECT_EQ(e.status(), Status::unknown_node);
  }
}

TEST(SrmcpNode, BrowseOutputIsBoundedByTheStore) {
  // A diamond lattice: every node of layer k+1 sits under both nodes of layer k, so paths double
  // per layer while the store stays small.
  NodeStore store;
  std::vector<std::string> prev;
  for (int layer = 0; layer < 40; ++layer) {
    std::vector<std::string> cur;
    for (int k = 0; k < 2; ++k) {
      std::string id = "n";  // appended: "n" + to_string(...) trips GCC 12's -Wrestrict
      id += std::to_string(layer);
      id += '_';
      id += std::to_string(k);
      store.add(folder(id, prev));
      cur.push_back(id);
    }
    prev = cur;
  }
  const Json all = store.browse("", -1, kAnon)["nodes"];
  EXPECT_EQ(all.size(), store.size());
  EXPECT_EQ(store.browse("", 3, kAnon)["nodes"].size(), 2u * 4u);  // top level = layer 0 only
}

TEST(SrmcpNode, ConcurrentReadsAndWrites) {
  NodeStore store;
  fill(store);
  int calls = 0;  // unguarded on purpose: the store serializes calls into one node's callables
  NodeSpec counted = value_node("counted", ValueType::int64, nullptr, {});
  counted.read = [&calls] { return ReadResult{Status::ok, ++calls}; };
  store.add(counted);
  constexpr int kThreads = 4;
  constexpr int kRounds = 2000;
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < kRounds; ++k) {
        const Json w = store.write({{"i", t * kRounds + k},
                                    {"s", std::string(16 + t, 'a' + t)},
                                    {"j", Json{{"t", t}, {"k", k}}}},
                                   kAnon)["values"];
        const Json r = store.read({"i", "s", "j", "counted"}, kAnon)["values"];
        if (w[0]["status"] != 0 || r[0]["status"] != 0 || !r[0]["value"].is_number_integer()) ++bad;
        const auto& s = r[1]["value"].get_ref<const std::string&>();
        if (s.size() < 16 || s != std::string(s.size(), s[0])) ++bad;  // never a torn string
        if (!r[2]["value"].contains("k")) ++bad;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(calls, kThreads * kRounds);
}

// ---- simulated signals
// ---------------------------------------------------------------------------

double sample(const ReadFn& f) {
  const ReadResult r = f();
  EXPECT_EQ(r.status, Status::ok);
  return r.value.get<double>();
}

TEST(SrmcpSignal, SineShape) {
  double t = 0;
  const auto f = make_signal({SignalSpec::Kind::sine, 2.0, 21.0, 60.0, 0.0}, [&t] { return t; });
  EXPECT_NEAR(sample(f), 21.0, 1e-9);
  t = 15;
  EXPECT_NEAR(sample(f), 23.0, 1e-9);
  t = 30;
  EXPECT_NEAR(sample(f), 21.0, 1e-9);
  t = 45;
  EXPECT_NEAR(sample(f), 19.0, 1e-9);
  t = 75;
  EXPECT_NEAR(sample(f), 23.0, 1e-9);  // periodic
}

TEST(SrmcpSignal, RampSquareCounterShapes) {
  double t = 0;
  const auto clock = [&t] { return t; };
  const auto ramp = make_signal({SignalSpec::Kind::ramp, 10.0, 100.0, 4.0, 0.0}, clock);
  const auto square = make_signal({SignalSpec::Kind::square, 1.0, 5.0, 4.0, 0.0}, clock);
  const auto counter = make_signal({SignalSpec::Kind::counter, 1.0, 10.0, 4.0, 0.5}, clock);
  const std::vector<std::tuple<double, double, double, std::int64_t>> expect = {
      {0, 100.0, 6.0, 10}, {1, 102.5, 6.0, 10}, {2, 105.0, 4.0, 10},
      {3, 107.5, 4.0, 10}, {4, 100.0, 6.0, 11}, {9, 102.5, 6.0, 12}};
  for (const auto& [at, r, s, c] : expect) {
    t = at;
    EXPECT_NEAR(sample(ramp), r, 1e-9) << "t=" << at;
    EXPECT_NEAR(sample(square), s, 1e-9) << "t=" << at;
    const ReadResult cr = counter();
    EXPECT_TRUE(cr.value.is_number_integer());  // noise does not apply to counters
    EXPECT_EQ(cr.value.get<std::int64_t>(), c) << "t=" << at;
  }
}

TEST(SrmcpSignal, RandomWalkStaysInBoundsAndMoves) {
  const auto f = make_signal({SignalSpec::Kind::random_walk, 3.0, 50.0, 10.0, 0.0});
  double lo = 1e9;
  double hi = -1e9;
  for (int k = 0; k < 20000; ++k) {
    const double v = sample(f);
    ASSERT_GE(v, 47.0);
    ASSERT_LE(v, 53.0);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  EXPECT_GT(hi - lo, 0.5);  // it does wander
}

TEST(SrmcpSignal, NoiseIsBounded) {
  const auto f = make_signal({SignalSpec::Kind::sine, 2.0, 21.0, 0.01, 0.05});  // real clock
  bool varied = false;
  double first = sample(f);
  for (int k = 0; k < 5000; ++k) {
    const double v = sample(f);
    ASSERT_GE(v, 21.0 - 2.05);
    ASSERT_LE(v, 21.0 + 2.05);
    varied = varied || v != first;
  }
  EXPECT_TRUE(varied);
  double t = 0;
  const auto flat = make_signal({SignalSpec::Kind::sine, 0.0, 5.0, 1.0, 0.25}, [&t] { return t; });
  for (int k = 0; k < 1000; ++k) {
    const double v = sample(flat);
    ASSERT_GE(v, 4.75);
    ASSERT_LE(v, 5.25);
  }
}

TEST(SrmcpSignal, CounterIncreasesWithRealClock) {
  const auto f = make_signal({SignalSpec::Kind::counter, 1.0, 0.0, 0.001, 0.0});
  const auto a = f().value.get<std::int64_t>();
  // A period is 1 ms: the counter moves on by several as wall time passes.
  EXPECT_TRUE(pqot::test::eventually([&] { return f().value.get<std::int64_t>() - a >= 4; }))
      << "the counter stayed at " << f().value.get<std::int64_t>() << " (started at " << a << ")";
}

TEST(SrmcpSignal, SharedAcrossThreads) {
  // The store serializes calls per node, but a signal may also be shared by an application.
  const auto f = make_signal({SignalSpec::Kind::random_walk, 1.0, 0.0, 1.0, 0.1});
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int k = 0; k < 5000; ++k) {
        const double v = f().value.get<double>();
        if (v < -1.1 || v > 1.1) ++bad;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
}

TEST(SrmcpSignal, SignalNodeInStore) {
  NodeStore store;
  double t = 15;
  NodeSpec spec = value_node("sig", ValueType::float64, nullptr, {});
  spec.read = make_signal({SignalSpec::Kind::sine, 2.0, 21.0, 60.0, 0.0}, [&t] { return t; });
  store.add(spec);
  EXPECT_NEAR(read1(store, "sig")["value"].get<double>(), 23.0, 1e-9);
  EXPECT_EQ(write1(store, "sig", 1.0)["status"], code(Status::not_writable));
  NodeSpec c = value_node("count", ValueType::float64, nullptr, {});
  c.read = make_signal({SignalSpec::Kind::counter, 1.0, 3.0, 1.0, 0.0}, [&t] { return t; });
  store.add(c);
  // A counter on a double node reads as a double.
  EXPECT_EQ(read1(store, "count")["value"].dump(), "18.0");
}

}  // namespace
}  // namespace pqot::srmcp
