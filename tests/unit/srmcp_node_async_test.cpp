// Node backends that wait (a remote device): READ/WRITE complete later, from the backend's thread,
// without blocking the caller; the plain forms wait for them (docs/srmcp-api.md, "Backends").
#include <gtest/gtest.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "../support/wait.hpp"
#include "pqot/srmcp/node.hpp"
#include "srmcp/request_scratch.hpp"

namespace pqot::srmcp {
namespace {

const Principal kAnyone{"client1", {}};

// A backend that answers from its own thread, in order, when told to (or at once if `inline_`).
class FakeDevice {
 public:
  ~FakeDevice() { stop(); }
  void start() {
    worker_ = std::thread([this] {
      std::unique_lock lock(mu_);
      for (;;) {
        cv_.wait(lock, [&] { return stop_ || (!jobs_.empty() && released_ > 0); });
        if (jobs_.empty() || released_ == 0) return;
        auto job = std::move(jobs_.front());
        jobs_.pop_front();
        --released_;
        lock.unlock();
        job();
        lock.lock();
      }
    });
  }
  void stop() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (worker_.joinable()) worker_.join();
  }
  void release(int n) {
    {
      std::lock_guard lock(mu_);
      released_ += n;
    }
    cv_.notify_all();
  }
  std::size_t queued() {
    std::lock_guard lock(mu_);
    return jobs_.size();
  }

  NodeSpec node(std::string id, ValueType type, Json value, bool writable = false) {
    NodeSpec s;
    s.id = std::move(id);
    s.type = type;
    if (writable) s.writers = {"*"};
    auto stored = std::make_shared<Json>(std::move(value));
    s.read_async = [this, stored](ReadDone done) {
      enqueue([stored, done = std::move(done)] { done(ReadResult{Status::ok, *stored}); });
    };
    s.write_async = [this, stored](const Json& v, WriteDone done) {
      enqueue([stored, v, done = std::move(done)] {
        *stored = v;
        done(WriteResult{Status::ok, v});
      });
    };
    return s;
  }

 private:
  void enqueue(std::function<void()> job) {
    {
      std::lock_guard lock(mu_);
      jobs_.push_back(std::move(job));
    }
    cv_.notify_all();
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  int released_ = 0;
  bool stop_ = false;
  std::thread worker_;
};

// Waits for a completion delivered on another thread.
struct Inbox {
  std::mutex mu;
  std::condition_variable cv;
  std::optional<std::string> text;
  NodeStore::TextDone sink() {
    return [this](std::string t) {
      std::lock_guard lock(mu);
      text = std::move(t);
      cv.notify_all();
    };
  }
  /// The completion, or "" (and a test failure) if none came within the test's patience.
  std::string wait() {
    std::unique_lock lock(mu);
    if (!cv.wait_for(lock, pqot::test::kPatience, [&] { return text.has_value(); })) {
      ADD_FAILURE() << "no completion from the backend";
      return "";
    }
    return *text;
  }
};

TEST(SrmcpNodeAsync, ReadCompletesLaterWithTheSameBodyAsTheSyncForm_S9) {
  FakeDevice dev;
  NodeStore store;
  NodeSpec mem;
  mem.id = "mem";
  mem.type = ValueType::int64;
  mem.initial = 5;
  store.add(mem);
  store.add(dev.node("dev.a", ValueType::float64, 1.5));
  store.add(dev.node("dev.b", ValueType::string, "x"));
  dev.start();

  Inbox inbox;
  std::string out;
  const std::vector<std::string> ids{"dev.a", "mem", "nope", "dev.b"};
  EXPECT_FALSE(store.read_text(ids, kAnyone, out, inbox.sink()));
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(dev.queued(), 2u);  // the caller did not wait for the device
  dev.release(2);
  const Json got = Json::parse(inbox.wait());
  ASSERT_EQ(got["values"].size(), 4u);
  EXPECT_EQ(got["values"][0]["value"], 1.5);
  EXPECT_EQ(got["values"][1]["value"], 5);
  EXPECT_EQ(got["values"][2]["status"], static_cast<int>(Status::unknown_node));
  EXPECT_EQ(got["values"][3]["value"], "x");

  // The plain form waits for the device and gives the same values.
  std::thread releaser([&] { dev.release(2); });
  const Json sync = store.read(ids, kAnyone);
  releaser.join();
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(sync["values"][i].value("value", Json()), got["values"][i].value("value", Json()));
    EXPECT_EQ(sync["values"][i]["status"], got["values"][i]["status"]);
  }
}

TEST(SrmcpNodeAsync, WithoutWaitingBackendsEverythingCompletesAtOnce) {
  NodeStore store;
  NodeSpec mem;
  mem.id = "m";
  mem.type = ValueType::boolean;
  mem.writers = {"*"};
  store.add(mem);
  // A backend that answers before returning (a cached value) also counts as "at once".
  NodeSpec cached;
  cached.id = "c";
  cached.type = ValueType::int64;
  cached.read_async = [](ReadDone done) { done(ReadResult{Status::ok, 9}); };
  store.add(cached);
  std::string out;
  bool called = false;
  EXPECT_TRUE(store.read_text({"m", "c"}, kAnyone, out, [&](std::string) { called = true; }));
  EXPECT_FALSE(called);
  EXPECT_EQ(Json::parse(out)["values"][1]["value"], 9);
  out.clear();
  EXPECT_TRUE(store.write_text({{"m", true}}, kAnyone, out, [&](std::string) { called = true; }));
  EXPECT_FALSE(called);
  EXPECT_EQ(Json::parse(out), Json::parse(R"({"values":[{"id":"m","status":0,"value":true}]})"));
}

// The completion is made only for a READ or WRITE that has to wait: one whose nodes all answer at
// once is written in one pass, and its caller (the server) builds no deferred reply.
TEST(SrmcpNodeAsync, TheCompletionIsMadeOnlyWhenABackendMustBeWaitedFor) {
  FakeDevice dev;
  NodeStore store;
  NodeSpec mem;
  mem.id = "m";
  mem.type = ValueType::int64;
  mem.writers = {"*"};
  store.add(mem);
  NodeSpec folder;
  folder.id = "f";
  store.add(folder);
  store.add(dev.node("dev.a", ValueType::float64, 1.5, true));
  dev.start();
  Inbox inbox;
  int made = 0;
  const auto make = [&] {
    ++made;
    return inbox.sink();
  };
  std::string out;
  EXPECT_TRUE(store.read_body({"m", "f", "nope"}, kAnyone, BodyEncoding::compact, out, make));
  EXPECT_TRUE(store.write_body({{"m", 3}, {"f", 1}}, kAnyone, BodyEncoding::json, out, make));
  EXPECT_EQ(made, 0);
  out.clear();
  EXPECT_FALSE(store.read_body({"m", "dev.a"}, kAnyone, BodyEncoding::json, out, make));
  EXPECT_EQ(made, 1);
  EXPECT_TRUE(out.empty());
  dev.release(1);
  const Json got = Json::parse(inbox.wait());
  EXPECT_EQ(got["values"][0]["value"], 3);  // the write above
  EXPECT_EQ(got["values"][1]["value"], 1.5);
  inbox.text.reset();
  EXPECT_FALSE(store.write_body({{"dev.a", 2.5}}, kAnyone, BodyEncoding::json, out, make));
  EXPECT_EQ(made, 2);
  dev.release(1);
  EXPECT_EQ(Json::parse(inbox.wait()), Json::parse(R"({"values":[{"id":"dev.a","status":0,"value":2.5}]})"));
}

// The one-pass READ (up to 64 ids, none waiting) and the form that keeps its state until every
// backend answered write the same body.
TEST(SrmcpNodeAsync, TheOnePassReadWritesWhatTheWaitingFormWrites) {
  NodeStore store;
  NodeSpec folder;
  folder.id = "f";
  store.add(folder);
  for (int i = 0; i < 3; ++i) {
    NodeSpec n;
    n.id = "n" + std::to_string(i);
    n.type = i == 0 ? ValueType::string : ValueType::float64;
    n.initial = i == 0 ? Json("t\"x") : Json(0.5 * i);
    n.parents = {"f"};
    store.add(n);
  }
  NodeSpec hidden;  // neither readable nor writable by kAnyone: not revealed
  hidden.id = "hidden";
  hidden.type = ValueType::int64;
  hidden.readers = {"role:admin"};
  store.add(hidden);
  NodeSpec write_only;  // visible, but ACCESS_DENIED to read
  write_only.id = "wo";
  write_only.type = ValueType::int64;
  write_only.readers = {};
  write_only.writers = {"*"};
  store.add(write_only);
  std::vector<std::string> ids{"n0", "f", "n1", "hidden", "wo", "nope", "n2", "n1"};
  const auto without_refusal_times = [](Json body) {
    for (auto& e : body["values"]) {
      if (e["status"] != 0) e.erase("ts_ms");  // the time of the refusal
    }
    return body;
  };
  std::string one_pass;
  ASSERT_TRUE(store.read_body(ids, kAnyone, BodyEncoding::json, one_pass, [] { return NodeStore::TextDone(); }));
  std::string waiting;
  store.read_text(ids, kAnyone, waiting);  // always through the state the waiting form keeps
  EXPECT_EQ(without_refusal_times(Json::parse(one_pass)), without_refusal_times(Json::parse(waiting)));
  EXPECT_EQ(Json::parse(one_pass)["values"][3]["status"], static_cast<int>(Status::unknown_node));
  EXPECT_EQ(Json::parse(one_pass)["values"][4]["status"], static_cast<int>(Status::access_denied));
  // Past 64 ids the READ takes the waiting form's path: the same entries.
  std::vector<std::string> many;
  for (int i = 0; i < 66; ++i) many.push_back("n" + std::to_string(i % 3));
  std::string long_body;
  ASSERT_TRUE(store.read_body(many, kAnyone, BodyEncoding::json, long_body, [] { return NodeStore::TextDone(); }));
  const Json entries = Json::parse(long_body)["values"];
  ASSERT_EQ(entries.size(), 66u);
  EXPECT_EQ(entries[65], Json::parse(one_pass)["values"][6]);  // n2
}

TEST(SrmcpNodeAsync, WriteGoesThroughAndEchoes_S9) {
  FakeDevice dev;
  NodeStore store;
  store.add(dev.node("sp", ValueType::float64, 1.0, true));
  store.add(dev.node("ro", ValueType::float64, 1.0, false));
  dev.start();
  Inbox inbox;
  std::string out;
  EXPECT_FALSE(store.write_text({{"sp", 42}, {"ro", 1.0}, {"sp", "text"}}, kAnyone, out, inbox.sink()));
  dev.release(1);
  const Json got = Json::parse(inbox.wait());
  EXPECT_EQ(got["values"][0]["value"], 42.0);  // normalised to the node type before the backend
  EXPECT_EQ(got["values"][1]["status"], static_cast<int>(Status::not_writable));
  EXPECT_EQ(got["values"][2]["status"], static_cast<int>(Status::type_mismatch));
  std::thread releaser([&] { dev.release(1); });
  EXPECT_EQ(store.read({"sp"}, kAnyone)["values"][0]["value"], 42.0);
  releaser.join();
}

TEST(SrmcpNodeAsync, BrokenBackendsGiveBackendErrorPerNode_S11) {
  NodeStore store;
  NodeSpec wrong;
  wrong.id = "wrong";
  wrong.type = ValueType::int64;
  wrong.read_async = [](ReadDone done) { done(ReadResult{Status::ok, "not a number"}); };
  store.add(wrong);
  NodeSpec throws;
  throws.id = "throws";
  throws.type = ValueType::int64;
  throws.read_async = [](ReadDone) { throw std::runtime_error("device gone"); };
  store.add(throws);
  NodeSpec timeout;
  timeout.id = "slow";
  timeout.type = ValueType::int64;
  timeout.read_async = [](ReadDone done) { done(ReadResult{Status::timeout, nullptr}); };
  store.add(timeout);
  const Json r = store.read({"wrong", "throws", "slow"}, kAnyone);
  EXPECT_EQ(r["values"][0]["status"], static_cast<int>(Status::backend_error));
  EXPECT_EQ(r["values"][1]["status"], static_cast<int>(Status::backend_error));
  EXPECT_EQ(r["values"][2]["status"], static_cast<int>(Status::timeout));
  EXPECT_FALSE(r["values"][2].contains("value"));
}

TEST(SrmcpNodeAsync, ReadResultsAndCheckReadable) {
  FakeDevice dev;
  NodeStore store;
  store.add(dev.node("a", ValueType::int64, 3));
  NodeSpec hidden;
  hidden.id = "hidden";
  hidden.type = ValueType::int64;
  hidden.readers = {"someone-else"};
  store.add(hidden);
  dev.start();
  EXPECT_EQ(store.check_readable({"a"}, kAnyone), std::nullopt);
  EXPECT_EQ(store.check_readable({"a", "hidden"}, kAnyone), (std::pair<std::string, Status>{"hidden", Status::unknown_node}))
      << "a node the caller may not see is not revealed (§11)";
  EXPECT_EQ(store.check_readable({"zz"}, kAnyone), (std::pair<std::string, Status>{"zz", Status::unknown_node}));
  EXPECT_EQ(dev.queued(), 0u);  // checking calls no backend

  std::mutex mu;
  std::condition_variable cv;
  std::optional<std::vector<ReadResult>> got;
  std::vector<ReadResult> now;
  EXPECT_FALSE(store.read_results({"a", "hidden"}, kAnyone, now, [&](std::vector<ReadResult> r) {
    std::lock_guard lock(mu);
    got = std::move(r);
    cv.notify_all();
  }));
  dev.release(1);
  std::unique_lock lock(mu);
  ASSERT_TRUE(cv.wait_for(lock, pqot::test::kPatience, [&] { return got.has_value(); })) << "no completion from the backend";
  ASSERT_EQ(got->size(), 2u);
  EXPECT_EQ((*got)[0].value, 3);
  EXPECT_EQ((*got)[1].status, Status::unknown_node);
}

TEST(SrmcpNodeAsync, AddRejectsInconsistentCallables) {
  NodeStore store;
  NodeSpec both;
  both.id = "both";
  both.type = ValueType::int64;
  both.read = [] { return ReadResult{}; };
  both.read_async = [](ReadDone) {};
  EXPECT_THROW(store.add(both), std::invalid_argument);
  NodeSpec write_only;
  write_only.id = "w";
  write_only.type = ValueType::int64;
  write_only.writers = {"*"};
  write_only.write_async = [](const Json&, WriteDone) {};
  EXPECT_THROW(store.add(write_only), std::invalid_argument);
  NodeSpec read_only_with_writers;
  read_only_with_writers.id = "r";
  read_only_with_writers.type = ValueType::int64;
  read_only_with_writers.writers = {"*"};
  read_only_with_writers.read_async = [](ReadDone) {};
  EXPECT_THROW(store.add(read_only_with_writers), std::invalid_argument);
}

// The buffers a session reuses between requests (request_scratch.hpp): what a hostile request
// makes them grow to is released after it, whether by count, by size or by one long JSON id.
TEST(SrmcpRequestScratch, KeepsOnlyItsBoundsAndWipesASecretReply) {
  RequestScratch s;
  s.read_ids.assign(10, std::string(20, 'a'));
  s.reply_body.assign(1000, 'x');
  s.release_excess(false);
  EXPECT_EQ(s.read_ids.size(), 10u);  // the usual request: kept for the next one
  EXPECT_GE(s.reply_body.capacity(), 1000u);

  s.read_ids.assign(RequestScratch::kMaxKeptIds + 1, "id");
  s.release_excess(false);
  EXPECT_EQ(s.read_ids.capacity(), 0u);

  // One id of a megabyte (a JSON READ may carry it: only the message size bounds it).
  s.read_ids.assign(1, std::string(1 << 20, 'a'));
  s.release_excess(false);
  EXPECT_EQ(s.read_ids.capacity(), 0u);
  // 64 JSON ids of 300 bytes each are within the count but over the byte bound.
  s.read_ids.assign(RequestScratch::kMaxKeptIds, std::string(300, 'a'));
  EXPECT_GT(s.id_bytes(), RequestScratch::kMaxKeptBytes);
  s.release_excess(false);
  EXPECT_EQ(s.read_ids.capacity(), 0u);

  s.reply_body.assign(RequestScratch::kMaxKeptBytes + 1, 'x');
  s.release_excess(false);
  EXPECT_EQ(s.reply_body.capacity(), std::string().capacity());

  s.reply_body = "{\"token\":\"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\"}";
  s.release_excess(true);
  EXPECT_TRUE(s.reply_body.empty());
  EXPECT_EQ(s.reply_body.capacity(), std::string().capacity());
}

}  // namespace
}  // namespace pqot::srmcp
