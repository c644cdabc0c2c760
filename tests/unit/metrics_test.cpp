// Prometheus metrics (include/pqot/metrics/, docs/metrics.md): the latency histogram, the text
// exposition writer, and the scrape endpoint driven by a raw TCP client on loopback.
#include "pqot/metrics/histogram.hpp"
#include "pqot/metrics/http_server.hpp"
#include "pqot/metrics/writer.hpp"

#include <gtest/gtest.h>

#include <asio.hpp>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <thread>

#include "../support/wait.hpp"

namespace pqot::metrics {
namespace {

using Tcp = asio::ip::tcp;
using std::chrono::nanoseconds;
using namespace std::string_literals;

// ---- values -------------------------------------------------------------------------------------

TEST(MetricsValue, IntegersPrintAsIntegers) {
  EXPECT_EQ(format_metric_value(std::uint64_t{0}), "0");
  EXPECT_EQ(format_metric_value(std::numeric_limits<std::uint64_t>::max()), "18446744073709551615");
  EXPECT_EQ(format_metric_value(std::numeric_limits<std::int64_t>::min()), "-9223372036854775808");
  EXPECT_EQ(format_metric_value(1.0), "1");
  EXPECT_EQ(format_metric_value(-42.0), "-42");
  EXPECT_EQ(format_metric_value(9007199254740992.0), "9007199254740992");
  EXPECT_EQ(format_metric_value(1e20), "100000000000000000000");
}

TEST(MetricsValue, DoublesAreShortestAndSpelledLikeTheGoClient) {
  EXPECT_EQ(format_metric_value(0.0), "0");
  EXPECT_EQ(format_metric_value(0.1), "0.1");
  EXPECT_EQ(format_metric_value(21.5), "21.5");
  EXPECT_EQ(format_metric_value(1.0 / 3.0), "0.3333333333333333");
  EXPECT_EQ(format_metric_value(0.0001), "0.0001");
  EXPECT_EQ(format_metric_value(0.00005), "5e-05");
  EXPECT_EQ(format_metric_value(1e21), "1e+21");
  EXPECT_EQ(format_metric_value(-1.5e-300), "-1.5e-300");
  EXPECT_EQ(format_metric_value(std::numeric_limits<double>::quiet_NaN()), "NaN");
  EXPECT_EQ(format_metric_value(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(format_metric_value(-std::numeric_limits<double>::infinity()), "-Inf");
}

TEST(MetricsValue, DoublesRoundTrip) {
  std::mt19937_64 rng(7);
  int checked = 0;
  while (checked < 20000) {
    const auto bits = rng();
    double d;
    std::memcpy(&d, &bits, sizeof(d));
    if (!std::isfinite(d)) continue;
    const std::string text = format_metric_value(d);
    EXPECT_EQ(std::strtod(text.c_str(), nullptr), d) << text;
    ++checked;
  }
  for (double d : {std::numeric_limits<double>::min(), std::numeric_limits<double>::max(),
                   std::numeric_limits<double>::denorm_min(), 123456.789e-9, 0.1 + 0.2}) {
    EXPECT_EQ(std::strtod(format_metric_value(d).c_str(), nullptr), d) << format_metric_value(d);
  }
}

// ---- writer -------------------------------------------------------------------------------------

TEST(MetricsWriter, FamiliesLabelsAndEscaping) {
  MetricsWriter w;
  w.family("pqot_requests_total", "Requests \"answered\".\nBy type \\ status.",
           MetricType::counter);
  w.sample("pqot_requests_total", {{"type", "read"}}, 42);
  w.sample("pqot_requests_total", {{"type", "write"}, {"node", "a\"b\\c\nd"}},
           std::numeric_limits<std::uint64_t>::max());
  w.family("pqot_temperature_celsius", "A gauge.", MetricType::gauge);
  w.sample("pqot_temperature_celsius", {}, 21.5);
  w.sample("pqot_temperature_celsius", {{"x", ""}}, -3);
  w.sample("pqot_temperature_celsius", {{"x", "y"}}, 2.0);
  w.sample("pqot_temperature_celsius", {{"x", "nan"}}, std::numeric_limits<double>::quiet_NaN());
  w.family("pqot:ratio", "", MetricType::untyped);
  w.sample("pqot:ratio", {}, 0.25);
  EXPECT_EQ(w.text(),
            "# HELP pqot_requests_total Requests \"answered\".\\nBy type \\\\ status.\n"
            "# TYPE pqot_requests_total counter\n"
            "pqot_requests_total{type=\"read\"} 42\n"
            "pqot_requests_total{type=\"write\",node=\"a\\\"b\\\\c\\nd\"} 18446744073709551615\n"
            "# HELP pqot_temperature_celsius A gauge.\n"
            "# TYPE pqot_temperature_celsius gauge\n"
            "pqot_temperature_celsius 21.5\n"
            "pqot_temperature_celsius{x=\"\"} -3\n"
            "pqot_temperature_celsius{x=\"y\"} 2\n"
            "pqot_temperature_celsius{x=\"nan\"} NaN\n"
            "# HELP pqot:ratio \n"
            "# TYPE pqot:ratio untyped\n"
            "pqot:ratio 0.25\n");
  const std::string copy = w.text();
  EXPECT_EQ(w.take(), copy);
}

TEST(MetricsWriter, HistogramLinesAreCumulative) {
  LatencyHistogram h;
  h.observe(nanoseconds(50'000));         // == 0.00005: first bucket (le is inclusive)
  h.observe(nanoseconds(0));              // first bucket
  h.observe(nanoseconds(-1));             // counts as 0
  h.observe(nanoseconds(100'001));        // just above 0.0001: 0.00025
  h.observe(nanoseconds(5'000'000'000));  // == 5
  h.observe(nanoseconds(6'000'000'000));  // +Inf only
  MetricsWriter w;
  w.family("pqot_request_duration_seconds", "Request latency.", MetricType::histogram);
  w.histogram("pqot_request_duration_seconds", {{"type", "read"}}, h.snapshot());
  w.histogram("pqot_request_duration_seconds", {}, LatencyHistogram().snapshot());
  EXPECT_EQ(w.text(), R"(# HELP pqot_request_duration_seconds Request latency.
# TYPE pqot_request_duration_seconds histogram
pqot_request_duration_seconds_bucket{type="read",le="5e-05"} 3
pqot_request_duration_seconds_bucket{type="read",le="0.0001"} 3
pqot_request_duration_seconds_bucket{type="read",le="0.00025"} 4
pqot_request_duration_seconds_bucket{type="read",le="0.0005"} 4
pqot_request_duration_seconds_bucket{type="read",le="0.001"} 4
pqot_request_duration_seconds_bucket{type="read",le="0.0025"} 4
pqot_request_duration_seconds_bucket{type="read",le="0.005"} 4
pqot_request_duration_seconds_bucket{type="read",le="0.01"} 4
pqot_request_duration_seconds_bucket{type="read",le="0.025"} 4
pqot_request_duration_seconds_bucket{type="read",le="0.05"} 4
pqot_request_duration_seconds_bucket{type="read",le="0.1"} 4
pqot_request_duration_seconds_bucket{type="read",le="0.25"} 4
pqot_request_duration_seconds_bucket{type="read",le="0.5"} 4
pqot_request_duration_seconds_bucket{type="read",le="1"} 4
pqot_request_duration_seconds_bucket{type="read",le="2.5"} 4
pqot_request_duration_seconds_bucket{type="read",le="5"} 5
pqot_request_duration_seconds_bucket{type="read",le="+Inf"} 6
pqot_request_duration_seconds_sum{type="read"} 11.000150001
pqot_request_duration_seconds_count{type="read"} 6
pqot_request_duration_seconds_bucket{le="5e-05"} 0
pqot_request_duration_seconds_bucket{le="0.0001"} 0
pqot_request_duration_seconds_bucket{le="0.00025"} 0
pqot_request_duration_seconds_bucket{le="0.0005"} 0
pqot_request_duration_seconds_bucket{le="0.001"} 0
pqot_request_duration_seconds_bucket{le="0.0025"} 0
pqot_request_duration_seconds_bucket{le="0.005"} 0
pqot_request_duration_seconds_bucket{le="0.01"} 0
pqot_request_duration_seconds_bucket{le="0.025"} 0
pqot_request_duration_seconds_bucket{le="0.05"} 0
pqot_request_duration_seconds_bucket{le="0.1"} 0
pqot_request_duration_seconds_bucket{le="0.25"} 0
pqot_request_duration_seconds_bucket{le="0.5"} 0
pqot_request_duration_seconds_bucket{le="1"} 0
pqot_request_duration_seconds_bucket{le="2.5"} 0
pqot_request_duration_seconds_bucket{le="5"} 0
pqot_request_duration_seconds_bucket{le="+Inf"} 0
pqot_request_duration_seconds_sum 0
pqot_request_duration_seconds_count 0
)");
}

TEST(MetricsWriter, RefusesBadNamesAndMisplacedSamples) {
  for (const char* bad : {"", "1abc", "a-b", "a b", "caf\xc3\xa9"}) {
    MetricsWriter w;
    EXPECT_THROW(w.family(bad, "", MetricType::gauge), std::logic_error) << bad;
  }
  for (const char* bad : {"", "1a", "a:b", "a-b", "__reserved"}) {
    MetricsWriter w;
    w.family("g", "", MetricType::gauge);
    EXPECT_THROW(w.sample("g", {{bad, "v"}}, 1), std::logic_error) << bad;
  }
  MetricsWriter w;
  EXPECT_THROW(w.sample("g", {}, 1), std::logic_error);  // no family yet
  w.family("g", "", MetricType::gauge);
  EXPECT_THROW(w.sample("other", {}, 1), std::logic_error);
  EXPECT_THROW(w.sample("g", {{"a", "1"}, {"a", "2"}}, 1), std::logic_error);
  EXPECT_THROW(w.histogram("g", {}, LatencyHistogram().snapshot()), std::logic_error);
  EXPECT_THROW(w.family("g", "", MetricType::counter), std::logic_error);  // twice
  w.family("h", "", MetricType::histogram);
  EXPECT_THROW(w.sample("h", {}, 1), std::logic_error);
  EXPECT_THROW(w.histogram("h", {{"le", "1"}}, LatencyHistogram().snapshot()), std::logic_error);
  EXPECT_THROW(w.sample("g", {}, 1.5), std::logic_error);  // g is no longer the current family
}

// ---- histogram ----------------------------------------------------------------------------------

TEST(MetricsHistogram, BoundsAreInclusive) {
  const auto& bounds = LatencyHistogram::kBoundsNs;
  for (std::size_t i = 0; i < bounds.size(); ++i) {
    EXPECT_EQ(static_cast<double>(bounds[i]) / 1e9, LatencyHistogram::kBoundsSeconds[i]);
    LatencyHistogram h;
    h.observe(nanoseconds(bounds[i]));      // in bucket i
    h.observe(nanoseconds(bounds[i] + 1));  // in bucket i + 1 (+Inf after the last bound)
    const auto s = h.snapshot();
    for (std::size_t j = 0; j < LatencyHistogram::kBucketCount; ++j) {
      const std::uint64_t expected = j < i ? 0 : j == i ? 1 : 2;
      EXPECT_EQ(s.cumulative[j], expected) << "bound " << i << " bucket " << j;
    }
    EXPECT_EQ(s.count, 2u);
    EXPECT_EQ(s.sum_seconds, static_cast<double>(2 * bounds[i] + 1) / 1e9);
  }
}

TEST(MetricsHistogram, ObserveFromFourThreadsAddsUp) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 100'000;
  LatencyHistogram h;
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&h, t] {
      for (int i = 0; i < kPerThread; ++i) {
        // Thread t observes 10^(t+4) ns + 1..3 (just over 10 µs, 100 µs, 1 ms, 10 ms).
        std::int64_t ns = 1;
        for (int k = 0; k < t + 4; ++k) ns *= 10;
        h.observe(nanoseconds(ns + 1 + i % 3));
      }
    });
  }
  for (auto& th : threads) th.join();
  const auto s = h.snapshot();
  const std::uint64_t n = kPerThread;
  EXPECT_EQ(s.count, kThreads * n);
  EXPECT_EQ(s.cumulative.back(), s.count);
  EXPECT_EQ(s.cumulative[0], n);      // 10 µs + x <= 50 µs
  EXPECT_EQ(s.cumulative[1], n);      // 100 µs + x > 100 µs
  EXPECT_EQ(s.cumulative[2], 2 * n);  // <= 250 µs
  EXPECT_EQ(s.cumulative[4], 2 * n);  // 1 ms + x > 1 ms
  EXPECT_EQ(s.cumulative[5], 3 * n);  // <= 2.5 ms
  EXPECT_EQ(s.cumulative[7], 3 * n);  // 10 ms + x > 10 ms
  EXPECT_EQ(s.cumulative[8], 4 * n);  // <= 25 ms
  // Sum in ns: n * (10^4 + 10^5 + 10^6 + 10^7) + kThreads * (sum of 1 + i % 3).
  std::uint64_t extra = 0;
  for (int i = 0; i < kPerThread; ++i) extra += static_cast<std::uint64_t>(1 + i % 3);
  const std::uint64_t sum_ns = n * 11'110'000 + kThreads * extra;
  EXPECT_EQ(s.sum_seconds, static_cast<double>(sum_ns) / 1e9);
}

// ---- HTTP endpoint ------------------------------------------------------------------------------

// Guards against a hang if the server never answers; not a timing assertion.
constexpr auto kWatchdog = std::chrono::seconds(60);

struct Reply {
  std::string raw;
  bool closed = false;  // the server closed the connection (EOF or reset)
  int status = 0;
  std::map<std::string, std::string> headers;
  std::string body;
  bool has_head = false;
};

Reply parse_reply(std::string raw, bool closed) {
  Reply r;
  r.raw = std::move(raw);
  r.closed = closed;
  const std::size_t end = r.raw.find("\r\n\r\n");
  if (end == std::string::npos || !r.raw.starts_with("HTTP/1.1 ") || r.raw.size() < 12) return r;
  r.has_head = true;
  std::from_chars(r.raw.data() + 9, r.raw.data() + 12, r.status);
  std::size_t pos = r.raw.find("\r\n") + 2;
  while (pos < end) {
    const std::size_t eol = r.raw.find("\r\n", pos);
    const std::string line = r.raw.substr(pos, eol - pos);
    const std::size_t colon = line.find(": ");
    if (colon != std::string::npos) r.headers[line.substr(0, colon)] = line.substr(colon + 2);
    pos = eol + 2;
  }
  r.body = r.raw.substr(end + 4);
  return r;
}

// A raw TCP client with its own io_context.
class Client {
 public:
  explicit Client(std::uint16_t port) {
    socket_.connect(Tcp::endpoint(asio::ip::address_v4::loopback(), port));
  }
  void send(std::string_view text) {
    asio::error_code ec;  // the server may have closed already: that is for the reply to show
    asio::write(socket_, asio::buffer(text), ec);
  }
  /// Everything until the server closes the connection.
  Reply read_to_close() {
    std::string raw;
    asio::error_code result;
    bool done = false;
    asio::async_read(socket_, asio::dynamic_buffer(raw), [&](asio::error_code ec, std::size_t) {
      result = ec;
      done = true;
    });
    io_.restart();
    io_.run_for(kWatchdog);
    if (!done) {
      ADD_FAILURE() << "the server did not close the connection";
      socket_.cancel();
      io_.restart();
      io_.run();
      return parse_reply(std::move(raw), false);
    }
    return parse_reply(std::move(raw),
                       result == asio::error::eof || result == asio::error::connection_reset);
  }
  void close() { socket_.close(); }

 private:
  asio::io_context io_;
  Tcp::socket socket_{io_};
};

constexpr std::string_view kPage =
    "# HELP pqot_up Whether the daemon runs.\n# TYPE pqot_up gauge\npqot_up 1\n";

class MetricsHttp : public ::testing::Test {
 protected:
  void start(MetricsHttpOptions options = {}) {
    server_ = std::make_unique<MetricsHttpServer>(
        io_, "127.0.0.1", 0,
        [this] {
          ++renders_;
          return std::string(kPage);
        },
        [this] { return healthy_.load(); }, options);
    server_->start();
    ASSERT_NE(server_->port(), 0);
    thread_ = std::thread([this] { io_.run(); });
  }
  void TearDown() override {
    if (server_) server_->stop();
    if (thread_.joinable()) thread_.join();  // returns only if stop() left no work behind
    server_.reset();
  }
  Reply request(std::string_view text) {
    Client c(server_->port());
    c.send(text);
    return c.read_to_close();
  }

  asio::io_context io_;
  std::unique_ptr<MetricsHttpServer> server_;
  std::thread thread_;
  std::atomic<int> renders_{0};
  std::atomic<bool> healthy_{true};
};

TEST_F(MetricsHttp, MetricsBodyIsTheRenderedPage) {
  start();
  for (const char* target : {"/metrics", "/metrics?x=1", "http://127.0.0.1/metrics"}) {
    const Reply r = request(std::string("GET ") + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    EXPECT_TRUE(r.closed);
    ASSERT_TRUE(r.has_head) << r.raw;
    EXPECT_EQ(r.status, 200);
    EXPECT_TRUE(r.raw.starts_with("HTTP/1.1 200 OK\r\n")) << r.raw;
    EXPECT_EQ(r.headers.at("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
    EXPECT_EQ(r.headers.at("Content-Length"), std::to_string(kPage.size()));
    EXPECT_EQ(r.headers.at("Connection"), "close");
    EXPECT_EQ(r.body, kPage);
  }
  EXPECT_EQ(renders_.load(), 3);
  // HTTP/1.0 and bare LF line ends are accepted too.
  EXPECT_EQ(request("GET /metrics HTTP/1.0\n\n").body, kPage);
}

TEST_F(MetricsHttp, HeadHasHeadersButNoBody) {
  start();
  const Reply r = request("HEAD /metrics HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(r.closed);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.headers.at("Content-Length"), std::to_string(kPage.size()));
  EXPECT_EQ(r.body, "");
  EXPECT_TRUE(r.raw.ends_with("\r\n\r\n"));
}

TEST_F(MetricsHttp, HealthzFollowsHealthy) {
  start();
  Reply r = request("GET /healthz HTTP/1.1\r\n\r\n");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.headers.at("Content-Type"), "text/plain; charset=utf-8");
  EXPECT_EQ(r.body, "ok\n");
  healthy_ = false;
  r = request("GET /healthz HTTP/1.1\r\n\r\n");
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.body, "unhealthy\n");
  EXPECT_EQ(r.headers.at("Connection"), "close");
  EXPECT_EQ(renders_.load(), 0);
}

TEST_F(MetricsHttp, UnknownPathIs404) {
  start();
  for (const char* target : {"/", "/metricsx", "/metrics/", "/healthz/x", "/Metrics"}) {
    const Reply r = request(std::string("GET ") + target + " HTTP/1.1\r\n\r\n");
    EXPECT_TRUE(r.closed);
    EXPECT_EQ(r.status, 404) << target;
    EXPECT_EQ(r.body, "not found\n");
  }
  EXPECT_EQ(request("HEAD /nothing HTTP/1.1\r\n\r\n").body, "");
}

TEST_F(MetricsHttp, OtherMethodsAre405) {
  start();
  for (const char* method : {"POST", "PUT", "DELETE", "OPTIONS", "get"}) {
    const Reply r =
        request(std::string(method) + " /metrics HTTP/1.1\r\nContent-Length: 3\r\n\r\nx=1");
    EXPECT_TRUE(r.closed);
    EXPECT_EQ(r.status, 405) << method;
    EXPECT_EQ(r.headers.at("Allow"), "GET, HEAD");
    EXPECT_EQ(r.headers.at("Connection"), "close");
  }
  EXPECT_EQ(renders_.load(), 0);
}

TEST_F(MetricsHttp, MalformedRequestsAre400) {
  start();
  const std::string bad[] = {
      "garbage\r\n\r\n",
      "GET /metrics\r\n\r\n",
      "GET  /metrics HTTP/1.1\r\n\r\n",
      "GET /metrics HTTP/1.1 extra\r\n\r\n",
      "GET /metrics HTTP/2.0\r\n\r\n",
      "GET /metrics http/1.1\r\n\r\n",
      "GET metrics HTTP/1.1\r\n\r\n",
      "GET /met\x01rics HTTP/1.1\r\n\r\n",
      "G(T /metrics HTTP/1.1\r\n\r\n",
      "GET /metrics HTTP/1.1\r\nno colon here\r\n\r\n",
      "GET /metrics HTTP/1.1\r\n: empty name\r\n\r\n",
      "\r\n\r\n",
      "\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03\n\n"s,  // a TLS hello, say
  };
  for (const std::string& text : bad) {
    const Reply r = request(text);
    EXPECT_TRUE(r.closed);
    EXPECT_EQ(r.status, 400) << text;
    EXPECT_EQ(r.body, "bad request\n");
  }
  EXPECT_EQ(renders_.load(), 0);
}

TEST_F(MetricsHttp, OversizedHeadIs431) {
  start();
  const std::string text =
      "GET /metrics HTTP/1.1\r\nX-Big: " + std::string(9216, 'a') /* 9 KiB */ + "\r\n\r\n";
  const Reply r = request(text);
  EXPECT_TRUE(r.closed);
  EXPECT_EQ(r.status, 431) << r.raw.substr(0, 200);
  EXPECT_EQ(r.headers.at("Connection"), "close");
  EXPECT_EQ(renders_.load(), 0);
  // A head just under the limit is served.
  const std::string fits = "GET /metrics HTTP/1.1\r\nX-Big: " + std::string(8000, 'a') + "\r\n\r\n";
  EXPECT_EQ(request(fits).status, 200);
}

TEST_F(MetricsHttp, SilentAndSlowClientsAreClosedAfterTheDeadline) {
  MetricsHttpOptions options;
  options.deadline = std::chrono::milliseconds(200);
  start(options);
  Client silent(server_->port());
  Client slow(server_->port());
  slow.send("GET /metr");
  const Reply a = silent.read_to_close();
  EXPECT_TRUE(a.closed);
  EXPECT_EQ(a.raw, "");
  const Reply b = slow.read_to_close();
  EXPECT_TRUE(b.closed);
  EXPECT_EQ(b.raw, "");
  EXPECT_EQ(renders_.load(), 0);
}

TEST_F(MetricsHttp, SeventeenthConcurrentConnectionIsClosed) {
  MetricsHttpOptions options;
  options.deadline = std::chrono::minutes(10);  // the 16 idle clients must outlive the test
  start(options);
  // Accepted in connection order: the first 16 hold every slot when the 17th is accepted.
  std::vector<std::unique_ptr<Client>> clients;
  clients.reserve(16);
  for (int i = 0; i < 16; ++i) clients.push_back(std::make_unique<Client>(server_->port()));
  Client extra(server_->port());
  const Reply refused = extra.read_to_close();
  EXPECT_TRUE(refused.closed);
  EXPECT_EQ(refused.raw, "");
  // The 16 are still open and each is served.
  for (auto& c : clients) {
    c->send("GET /metrics HTTP/1.1\r\n\r\n");
    const Reply r = c->read_to_close();
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, kPage);
  }
  EXPECT_EQ(renders_.load(), 16);
  // Once they are closed, their slots are free again (the server notices asynchronously).
  for (auto& c : clients) c->close();
  EXPECT_TRUE(pqot::test::eventually([&] { return request("GET /healthz HTTP/1.1\r\n\r\n").status == 200; },
                                      std::chrono::seconds(30)))
      << "no slot became free after the 16 clients closed";
}

TEST_F(MetricsHttp, StopClosesConnectedClients) {
  start();
  Client idle(server_->port());
  Client partial(server_->port());
  partial.send("GET /metrics HTTP/1.1\r\nHost: x\r\n");
  // Connections are accepted in order: once this one is answered, the two above are open.
  EXPECT_EQ(request("GET /healthz HTTP/1.1\r\n\r\n").status, 200);
  server_->stop();
  const Reply a = idle.read_to_close();
  EXPECT_TRUE(a.closed);
  EXPECT_EQ(a.raw, "");
  const Reply b = partial.read_to_close();
  EXPECT_TRUE(b.closed);
  EXPECT_EQ(b.raw, "");
  thread_.join();   // nothing of the server is left on the io_context
  server_->stop();  // idempotent
  asio::io_context client_io;
  Tcp::socket s(client_io);
  asio::error_code ec;
  s.connect(Tcp::endpoint(asio::ip::address_v4::loopback(), server_->port()), ec);
  EXPECT_EQ(ec, asio::error::connection_refused);
  EXPECT_THROW(server_->start(), std::logic_error);
}

TEST_F(MetricsHttp, RenderFailureIs500) {
  server_ = std::make_unique<MetricsHttpServer>(
      io_, "127.0.0.1", 0, []() -> std::string { throw std::runtime_error("no page"); });
  server_->start();
  thread_ = std::thread([this] { io_.run(); });
  const Reply r = request("GET /metrics HTTP/1.1\r\n\r\n");
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(request("GET /healthz HTTP/1.1\r\n\r\n").status, 200);  // no healthy(): healthy
}

TEST(MetricsHttpServer, StartFailuresNameTheAddress) {
  asio::io_context io;
  MetricsHttpServer first(io, "127.0.0.1", 0, [] { return std::string(); });
  first.start();
  const std::string where = "127.0.0.1:" + std::to_string(first.port());
  MetricsHttpServer second(io, "127.0.0.1", first.port(), [] { return std::string(); });
  try {
    second.start();
    ADD_FAILURE() << "bound a port in use";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(where), std::string::npos) << e.what();
  }
  MetricsHttpServer bad(io, "metrics.example", 9100, [] { return std::string(); });
  try {
    bad.start();
    ADD_FAILURE() << "listened on a host name";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("metrics.example:9100"), std::string::npos) << e.what();
  }
  // A failed start may be retried.
  const std::uint16_t port = first.port();
  first.stop();
  io.run();  // closes the listener; returns when nothing is left
  EXPECT_NO_THROW(second.start());
  EXPECT_EQ(second.port(), port);
}

// srmcpd's shutdown order: the io threads stop first, then the server and the io_context are
// destroyed with coroutines still suspended. Nothing may dangle (the sanitizer build checks).
TEST(MetricsHttpServer, DestroyedWithPendingConnectionsAfterIoStopped) {
  auto io = std::make_unique<asio::io_context>();
  auto server =
      std::make_unique<MetricsHttpServer>(*io, "127.0.0.1", 0, [] { return std::string(kPage); });
  server->start();
  std::thread thread([&io] { io->run(); });
  Client idle(server->port());
  {
    Client c(server->port());
    c.send("GET /metrics HTTP/1.1\r\n\r\n");
    EXPECT_EQ(c.read_to_close().body, kPage);
  }
  io->stop();
  thread.join();
  server->stop();
  server.reset();
  io.reset();
  EXPECT_TRUE(idle.read_to_close().closed);
}

}  // namespace
}  // namespace pqot::metrics
