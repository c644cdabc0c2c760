// The client's transaction deadline (docs/srmcp.md §8.1): a request the server does not answer in
// time ends with TIMEOUT, from the session's one deadline sweep; requests answered around it are
// not disturbed, a response that comes after the deadline is dropped, and the session carries on
// (the sweep stops when nothing waits and starts again with the next request).
#include <future>
#include <mutex>

#include "srmcp_fixture.hpp"

namespace pqot::srmcp::client_deadline_tests {
namespace {

using namespace std::chrono_literals;

// Reads of "plant.hang" are answered only when the test releases them.
struct HeldReads {
  std::mutex mutex;
  std::vector<ReadDone> held;

  NodeSpec spec() {
    NodeSpec n = node("plant.hang", ValueType::int64, Json());
    n.read_async = [this](ReadDone done) {
      const std::lock_guard lock(mutex);
      held.push_back(std::move(done));
    };
    return n;
  }
  std::size_t count() {
    const std::lock_guard lock(mutex);
    return held.size();
  }
  // Answers every held read (after the client's deadline: late responses).
  void release() {
    std::vector<ReadDone> now;
    {
      const std::lock_guard lock(mutex);
      now.swap(held);
    }
    for (auto& done : now) done(ReadResult{Status::ok, 42, std::chrono::system_clock::now()});
  }
};

class SrmcpClientDeadline : public SrmcpEndToEnd {
 protected:
  void SetUp() override {
    SrmcpEndToEnd::SetUp();
    auto nodes = make_nodes();
    nodes->add(held_.spec());
    slow_ = std::make_unique<Server>(io_, base_config(), nodes);
    slow_->start();
  }
  void TearDown() override {
    held_.release();
    slow_->stop();
    expect_sessions_closed(*slow_);
    SrmcpEndToEnd::TearDown();
  }
  ClientOptions slow_options(std::chrono::milliseconds deadline) const {
    ClientOptions o = options(1, 1);
    o.port = slow_->port();
    o.deadline = deadline;
    return o;
  }

  HeldReads held_;
  std::unique_ptr<Server> slow_;
};

// A request that never ends would hang the test: each wait is bounded (generously, not a timing
// check).
Status finished(std::future<Status>& f) {
  if (f.wait_for(60s) != std::future_status::ready) {
    ADD_FAILURE() << "the request never ended";
    std::abort();  // the blocked thread would hang the test binary at exit
  }
  return f.get();
}

Status status_of_read(Client& c, const std::string& id) {
  try {
    c.read_values({id});
    return Status::ok;
  } catch (const ClientError& e) {
    return e.status();
  }
}

TEST_F(SrmcpClientDeadline, AnUnansweredRequestTimesOutWhileOthersAreAnswered_S8_1) {
  Client c(slow_options(400ms));
  c.connect();
  auto hanging = std::async(std::launch::async, [&] { return status_of_read(c, "plant.hang"); });
  ASSERT_TRUE(pqot::test::eventually([&] { return held_.count() == 1; }))
      << "the server never got the read";
  // While it waits, other requests come and go (each is answered, none takes its deadline).
  for (int i = 0; i < 50; ++i)
    ASSERT_EQ(status_of_read(c, "plant.t" + std::to_string(i % 10)), Status::ok) << i;
  EXPECT_EQ(finished(hanging), Status::timeout);

  // The server answers now: the client drops the late response, and the session carries on.
  held_.release();
  EXPECT_EQ(std::get<double>(c.read_values({"plant.t3"}).at(0).value), 23.0);
  // Nothing waited for a while, so the sweep had stopped; the next request starts it again.
  std::this_thread::sleep_for(500ms);
  EXPECT_EQ(status_of_read(c, "plant.hang"), Status::timeout);
  EXPECT_EQ(status_of_read(c, "plant.t0"), Status::ok);
}

TEST_F(SrmcpClientDeadline, ManyUnansweredRequestsAllTimeOutAndTheirEntriesAreReused_S8_1) {
  Client c(slow_options(300ms));
  c.connect();
  // More requests at once than the client keeps spare entries for (64), then as many again: each
  // one ends, whether answered or timed out.
  for (int round = 0; round < 2; ++round) {
    std::vector<std::future<Status>> waits;
    for (int i = 0; i < 80; ++i) {
      waits.push_back(std::async(std::launch::async, [&, i] {
        return status_of_read(c, i % 2 == 0 ? "plant.hang" : "plant.t1");
      }));
    }
    for (int i = 0; i < 80; ++i) {
      EXPECT_EQ(finished(waits[i]), i % 2 == 0 ? Status::timeout : Status::ok)
          << "round " << round << ", request " << i;
    }
    held_.release();
  }
}

TEST_F(SrmcpClientDeadline, ClosingEndsTheWaitingRequestsAtOnce_S8_1) {
  auto c = std::make_unique<Client>(slow_options(60000ms));
  c->connect();
  auto hanging = std::async(std::launch::async, [&] { return status_of_read(*c, "plant.hang"); });
  ASSERT_TRUE(pqot::test::eventually([&] { return held_.count() == 1; }));
  c->close();
  // Not TIMEOUT after a minute: the close fails it (INTERNAL, "connection closed").
  EXPECT_EQ(finished(hanging), Status::internal);
}

}  // namespace
}  // namespace pqot::srmcp::client_deadline_tests
