// srup-device's update fetcher over HTTP (docs/srup-device.md, "Updates"), against a small HTTP
// server in the test: good and wrong digests, error statuses, size bounds announced and streamed,
// deadlines, Content-Length that lies, chunked coding, redirects, refused codings.
#include <gtest/gtest.h>

#include <asio.hpp>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "../support/http_test_server.hpp"
#include "../support/refused_port.hpp"
#include "../support/temp_dir.hpp"
#include "../support/wait.hpp"
#include "pqot/crypto/hash.hpp"
#include "srup-device/http_get.hpp"
#include "srup-device/update_fetch.hpp"

namespace {

using namespace pqot::srup_device;
using pqot::srup::Status;
namespace fs = std::filesystem;
using asio::ip::tcp;

using pqot::test::DevhttpReply;
using pqot::test::DevhttpServer;
using pqot::test::devhttp_ok;

pqot::srup::Digest devhttp_digest(const std::string& content) {
  return pqot::crypto::sha256(pqot::crypto::as_bytes(std::string_view(content)));
}

const std::string kDevhttpFile = "new firmware image, version 2.0\n";

class SrupDeviceHttp : public ::testing::Test {
 protected:
  SrupDeviceHttp() {
    config_.dir = (dir_.path() / "updates").string();
    config_.max_bytes = 1000;
    config_.io_timeout_ms = 500;
    config_.timeout_ms = 20'000;
  }
  UpdateResult fetch(const std::string& url, const std::string& expected = kDevhttpFile) {
    UpdateFetcher f(config_, runner_);
    std::mutex mu;
    std::optional<UpdateResult> result;
    const auto now = f.initiate(pqot::crypto::Bytes{1}, url, devhttp_digest(expected), [&](UpdateResult r) {
      std::lock_guard lock(mu);
      result = std::move(r);
    });
    if (now) return *now;
    EXPECT_TRUE(pqot::test::eventually([&] {
      std::lock_guard lock(mu);
      return result.has_value();
    }));
    std::lock_guard lock(mu);
    const auto r = result.value_or(UpdateResult{});
    // A failed download leaves no file behind; a good one exactly one.
    std::size_t files = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(config_.dir)) ++files;
    EXPECT_EQ(files, r.status == Status::update_success ? 1u : 0u);
    if (r.status == Status::update_success) {
      std::ifstream in(r.path, std::ios::binary);
      EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), expected);
    }
    return r;
  }

  pqot::test::TempDir dir_{"srup-device-http"};
  UpdateSection config_;
  ActionRunner runner_{{}, 4};
};

TEST_F(SrupDeviceHttp, GoodFileIsReadyWrongDigestIsRefused) {
  DevhttpServer server({{"/fw.bin", {devhttp_ok(kDevhttpFile)}}, {"/evil.bin", {devhttp_ok("evil")}}});
  auto r = fetch(server.url("/fw.bin"));
  EXPECT_EQ(r.status, Status::update_success) << r.detail;
  r = fetch(server.url("/evil.bin"));
  EXPECT_EQ(r.status, Status::update_digest_mismatch) << r.detail;
}

TEST_F(SrupDeviceHttp, ErrorStatusesAreHttpErrors) {
  DevhttpServer server({{"/gone", {"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n"}}});
  auto r = fetch(server.url("/missing"));
  EXPECT_EQ(r.status, Status::update_http_error);
  EXPECT_EQ(r.detail, "HTTP 404 Not Found");
  r = fetch(server.url("/gone"));
  EXPECT_EQ(r.status, Status::update_http_error);
  EXPECT_EQ(r.detail, "HTTP 500 Internal Server Error");
}

TEST_F(SrupDeviceHttp, SizeBoundIsCheckedAgainstContentLengthAndWhileStreaming) {
  const std::string big(1001, 'b');
  DevhttpServer server({{"/announced", {devhttp_ok(big)}},
                        {"/streamed", {"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + big}},
                        {"/chunked-big", {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n200\r\n" +
                                          std::string(512, 'c') + "\r\n200\r\n" + std::string(512, 'c') + "\r\n0\r\n\r\n"}}});
  auto r = fetch(server.url("/announced"), big);
  EXPECT_EQ(r.status, Status::update_file_error);
  EXPECT_EQ(r.detail, "Content-Length 1001 exceeds the limit of 1000 bytes");
  r = fetch(server.url("/streamed"), big);
  EXPECT_EQ(r.status, Status::update_file_error);
  EXPECT_EQ(r.detail, "body exceeds the limit of 1000 bytes");
  r = fetch(server.url("/chunked-big"), std::string(1024, 'c'));
  EXPECT_EQ(r.status, Status::update_file_error);
}

TEST_F(SrupDeviceHttp, ServerThatStallsHitsTheReadDeadline) {
  DevhttpServer server({{"/slow", {"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial", true}},
                        {"/silent", {"", true}}});
  auto r = fetch(server.url("/slow"));
  EXPECT_EQ(r.status, Status::update_server_error);
  EXPECT_EQ(r.detail, "reading the response: no progress for 500 ms");
  r = fetch(server.url("/silent"));
  EXPECT_EQ(r.status, Status::update_server_error);
}

TEST_F(SrupDeviceHttp, TotalDeadlineBoundsTheWholeTransfer) {
  config_.timeout_ms = 300;
  config_.io_timeout_ms = 10'000;
  DevhttpServer server({{"/slow", {"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial", true}}});
  const auto r = fetch(server.url("/slow"));
  EXPECT_EQ(r.status, Status::update_server_error);
  EXPECT_EQ(r.detail, "reading the response: the download took longer than 300 ms");
}

TEST_F(SrupDeviceHttp, ContentLengthThatLies) {
  DevhttpServer server({
      // Fewer bytes than announced, then the connection closes.
      {"/short", {"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + kDevhttpFile}},
      // More bytes than announced: only Content-Length bytes are the body; the digest decides.
      {"/long", {"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n" + kDevhttpFile}},
      {"/long-but-right", {"HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(kDevhttpFile.size()) + "\r\n\r\n" +
                           kDevhttpFile + "trailing junk"}},
      {"/two", {"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nabcdef"}},
      {"/both", {"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"}},
  });
  auto r = fetch(server.url("/short"));
  EXPECT_EQ(r.status, Status::update_server_error);
  EXPECT_EQ(r.detail, "connection closed after " + std::to_string(kDevhttpFile.size()) + " of 100 bytes");
  r = fetch(server.url("/long"));
  EXPECT_EQ(r.status, Status::update_digest_mismatch);
  r = fetch(server.url("/long-but-right"));
  EXPECT_EQ(r.status, Status::update_success) << r.detail;
  r = fetch(server.url("/two"));
  EXPECT_EQ(r.status, Status::update_http_error);
  EXPECT_EQ(r.detail, "two different Content-Length headers");
  r = fetch(server.url("/both"));
  EXPECT_EQ(r.status, Status::update_http_error);
}

TEST_F(SrupDeviceHttp, ChunkedCodingIsDecoded) {
  const std::string a = kDevhttpFile.substr(0, 10), b = kDevhttpFile.substr(10);
  char size_b[16];
  std::snprintf(size_b, sizeof size_b, "%zx", b.size());
  DevhttpServer server({
      {"/chunked", {"HTTP/1.1 200 OK\r\ntransfer-encoding: Chunked\r\n\r\na;ext=1\r\n" + a + "\r\n" + size_b + "\r\n" + b +
                    "\r\n0\r\nX-Trailer: 1\r\n\r\n"}},
      {"/bad-size", {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n"}},
      {"/cut", {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nabc"}},
      {"/gzip", {"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n"}},
  });
  auto r = fetch(server.url("/chunked"));
  EXPECT_EQ(r.status, Status::update_success) << r.detail;
  r = fetch(server.url("/bad-size"));
  EXPECT_EQ(r.status, Status::update_http_error);
  r = fetch(server.url("/cut"));
  EXPECT_EQ(r.status, Status::update_server_error);
  r = fetch(server.url("/gzip"));
  EXPECT_EQ(r.status, Status::update_http_error);
  EXPECT_EQ(r.detail, "transfer coding gzip is not supported (only chunked)");
}

TEST_F(SrupDeviceHttp, RedirectsAreBoundedAndStayOnHttp) {
  DevhttpServer server({
      {"/fw.bin", {devhttp_ok(kDevhttpFile)}},
      {"/r1", {"HTTP/1.1 302 Found\r\nLocation: /r2\r\nContent-Length: 0\r\n\r\n"}},
      {"/r2", {"HTTP/1.1 301 Moved\r\nLocation: /fw.bin\r\nContent-Length: 0\r\n\r\n"}},
      {"/loop", {"HTTP/1.1 307 Again\r\nLocation: /loop\r\nContent-Length: 0\r\n\r\n"}},
      {"/tls", {"HTTP/1.1 302 Found\r\nLocation: https://127.0.0.1/fw.bin\r\nContent-Length: 0\r\n\r\n"}},
  });
  auto r = fetch(server.url("/r1"));
  EXPECT_EQ(r.status, Status::update_success) << r.detail;
  const int before = server.requests();
  r = fetch(server.url("/loop"));
  EXPECT_EQ(r.status, Status::update_http_error);
  EXPECT_EQ(r.detail, "more than 3 redirects");
  EXPECT_EQ(server.requests() - before, 4);  // the first request and three redirects
  r = fetch(server.url("/tls"));
  EXPECT_EQ(r.status, Status::update_http_error);
}

// A redirect is the download server's word, not the C2's: by default (update.redirects =
// "same-origin") it may only move within the server the C2 named; "public" lets it go to another
// server only if every address of that server is public (never loopback, the LAN, link-local);
// "none" follows no redirect at all.
TEST_F(SrupDeviceHttp, RedirectsStayOnTheServerTheC2NamedUnlessConfigured) {
  DevhttpServer other({{"/fw.bin", {devhttp_ok(kDevhttpFile)}}});
  DevhttpServer server({
      {"/fw.bin", {devhttp_ok(kDevhttpFile)}},
      {"/away", {"HTTP/1.1 302 Found\r\nLocation: " + other.url("/fw.bin") + "\r\nContent-Length: 0\r\n\r\n"}},
      {"/by-name", {"HTTP/1.1 302 Found\r\nLocation: http://localhost:" + std::to_string(other.port()) +
                    "/fw.bin\r\nContent-Length: 0\r\n\r\n"}},
      {"/relative", {"HTTP/1.1 301 Moved\r\nLocation: /fw.bin\r\nContent-Length: 0\r\n\r\n"}},
  });
  ASSERT_EQ(config_.redirects, UpdateRedirects::same_origin);  // the default
  auto r = fetch(server.url("/away"));
  EXPECT_EQ(r.status, Status::update_http_error);
  EXPECT_EQ(r.detail, "redirect to another server refused: " + other.url("/fw.bin").substr(0, 64) +
                          " (update.redirects = same-origin)");
  r = fetch(server.url("/by-name"));
  EXPECT_EQ(r.status, Status::update_http_error);
  EXPECT_EQ(other.requests(), 0);
  r = fetch(server.url("/relative"));
  EXPECT_EQ(r.status, Status::update_success) << r.detail;

  // "public": another server, but only at a public address; 127.0.0.1 and localhost are not.
  config_.redirects = UpdateRedirects::public_hosts;
  r = fetch(server.url("/away"));
  EXPECT_EQ(r.status, Status::update_http_error);
  EXPECT_EQ(r.detail, "redirect to 127.0.0.1 refused: it resolves to 127.0.0.1, not a public address");
  r = fetch(server.url("/by-name"));
  EXPECT_EQ(r.status, Status::update_http_error);
  EXPECT_NE(r.detail.find("redirect to localhost refused: it resolves to "), std::string::npos) << r.detail;
  EXPECT_EQ(other.requests(), 0);
  r = fetch(server.url("/relative"));
  EXPECT_EQ(r.status, Status::update_success) << r.detail;

  // "none": not even within the server.
  config_.redirects = UpdateRedirects::none;
  const int before = server.requests();
  r = fetch(server.url("/relative"));
  EXPECT_EQ(r.status, Status::update_http_error);
  EXPECT_EQ(r.detail, "HTTP 301 redirect refused (update.redirects = none)");
  EXPECT_EQ(server.requests() - before, 1);
}

TEST(SrupDeviceHttpUrl, OnlyPublicAddressesArePublic) {
  for (const char* ip : {"8.8.8.8", "1.1.1.1", "172.15.255.255", "172.32.0.1", "100.63.255.255", "100.128.0.1",
                         "169.253.255.255", "192.0.3.1", "223.255.255.255", "2a00:1450:4001:80e::200e",
                         "2001:4860:4860::8888", "::ffff:8.8.8.8", "64:ff9b::808:808"}) {
    EXPECT_TRUE(is_public_address(ip)) << ip;
  }
  for (const char* ip : {"0.0.0.0", "0.1.2.3", "10.0.0.1", "10.255.255.255", "100.64.0.1", "100.127.255.255",
                         "127.0.0.1", "127.255.0.1", "169.254.169.254", "172.16.0.1", "172.31.255.255", "192.0.0.8",
                         "192.0.2.1", "192.168.1.1", "198.18.0.1", "198.19.255.255", "198.51.100.7", "203.0.113.9",
                         "224.0.0.1", "239.255.255.250", "240.0.0.1", "255.255.255.255", "::", "::1",
                         "::ffff:127.0.0.1", "::ffff:169.254.169.254", "64:ff9b::a00:1", "fe80::1", "fc00::1",
                         "fd12:3456::1", "ff02::1", "2001:db8::1", "2002:7f00:1::1", "::127.0.0.1", "1234::1",
                         "not-an-ip", "", "localhost"}) {
    EXPECT_FALSE(is_public_address(ip)) << ip;
  }
}

TEST_F(SrupDeviceHttp, ResponseHeadIsBounded) {
  DevhttpServer server({{"/fat", {"HTTP/1.1 200 OK\r\nX-Pad: " + std::string(20'000, 'p') + "\r\nContent-Length: 1\r\n\r\nx"}},
                        {"/nonsense", {"SSH-2.0-OpenSSH_9.2\r\n\r\n"}}});
  auto r = fetch(server.url("/fat"));
  EXPECT_EQ(r.status, Status::update_http_error);
  EXPECT_EQ(r.detail, "response head over 16 KiB");
  r = fetch(server.url("/nonsense"));
  EXPECT_EQ(r.status, Status::update_http_error);
}

TEST_F(SrupDeviceHttp, DestroyingTheFetcherCancelsADownloadAndDeletesItsFile) {
  config_.io_timeout_ms = 600'000;
  config_.timeout_ms = 600'000;
  DevhttpServer server({{"/slow", {"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial", true}}});
  {
    UpdateFetcher f(config_, runner_);
    bool called = false;
    ASSERT_FALSE(f.initiate(pqot::crypto::Bytes{1}, server.url("/slow"), devhttp_digest(kDevhttpFile),
                            [&](UpdateResult) { called = true; })
                     .has_value());
    ASSERT_TRUE(pqot::test::eventually([&] { return server.requests() == 1; }));
    // A second download while one runs is refused, nothing queued.
    const auto busy = f.initiate(pqot::crypto::Bytes{2}, server.url("/slow"), devhttp_digest(""), [](UpdateResult) {});
    ASSERT_TRUE(busy.has_value());
    EXPECT_EQ(busy->status, Status::busy);
    EXPECT_FALSE(called);
  }  // the destructor returns (the download is cancelled), without calling back
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(config_.dir)) ++files;
  EXPECT_EQ(files, 0u);
}

TEST_F(SrupDeviceHttp, NobodyListeningIsAServerError) {
  const pqot::test::RefusedPort refusing;
  const auto r = fetch("http://127.0.0.1:" + std::to_string(refusing.port()) + "/fw.bin");
  EXPECT_EQ(r.status, Status::update_server_error);
  EXPECT_NE(r.detail.find("cannot connect"), std::string::npos) << r.detail;
}

TEST(SrupDeviceHttpUrl, ParsesOnlyPlainHttpUrls) {
  auto u = parse_http_url("http://example.com:8080/a/b?c=d");
  ASSERT_TRUE(std::holds_alternative<HttpUrl>(u));
  EXPECT_EQ(std::get<HttpUrl>(u).host, "example.com");
  EXPECT_EQ(std::get<HttpUrl>(u).port, 8080);
  EXPECT_EQ(std::get<HttpUrl>(u).target, "/a/b?c=d");
  u = parse_http_url("http://[::1]/x");
  ASSERT_TRUE(std::holds_alternative<HttpUrl>(u));
  EXPECT_EQ(std::get<HttpUrl>(u).host, "::1");
  EXPECT_EQ(std::get<HttpUrl>(u).port, 80);
  EXPECT_EQ(std::get<HttpUrl>(parse_http_url("http://[::1]:8080")).port, 8080);
  EXPECT_EQ(std::get<HttpUrl>(parse_http_url("http://h")).target, "/");
  EXPECT_EQ(std::get<HttpUrl>(parse_http_url("http://h?q")).target, "/?q");
  for (const char* bad : {"https://h/", "http://", "http://user@h/", "http://h:0/", "http://h:99999/", "http://h:/",
                          "http://h/a b", "http://h/#frag", "http://[::1/"}) {
    EXPECT_TRUE(std::holds_alternative<std::string>(parse_http_url(bad))) << bad;
  }
}

}  // namespace
