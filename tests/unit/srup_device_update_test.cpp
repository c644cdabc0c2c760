// srup-device's update fetcher with file:// URLs, and Update Activate's apply command
// (docs/srup-device.md, "Updates"; statuses of docs/srup-pq.md 2.5). HTTP is in
// tests/integration/srup_device_http_test.cpp.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>

#include "../support/temp_dir.hpp"
#include "../support/wait.hpp"
#include "pqot/crypto/hash.hpp"
#include "srup-device/update_fetch.hpp"

namespace {

using namespace pqot::srup_device;
using pqot::srup::Status;
namespace fs = std::filesystem;

struct DevupdOutcome {
  std::mutex mu;
  std::optional<UpdateResult> result;
  UpdateFetcher::Done done() {
    return [this](UpdateResult r) {
      std::lock_guard lock(mu);
      result = std::move(r);
    };
  }
  UpdateResult wait() {
    EXPECT_TRUE(pqot::test::eventually([this] {
      std::lock_guard lock(mu);
      return result.has_value();
    })) << "no completion";
    std::lock_guard lock(mu);
    return result.value_or(UpdateResult{});
  }
};

pqot::srup::Digest devupd_digest(const std::string& content) {
  return pqot::crypto::sha256(pqot::crypto::as_bytes(std::string_view(content)));
}

pqot::crypto::Bytes devupd_token(std::uint8_t n) { return pqot::crypto::Bytes{n, 0xAA, n}; }

/// Files in the update directory.
std::size_t devupd_files(const fs::path& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

class SrupDeviceUpdate : public ::testing::Test {
 protected:
  SrupDeviceUpdate() {
    fs::create_directories(src_);
    config_.dir = (dir_.path() / "updates").string();
    config_.max_bytes = 1000;
    config_.allowed_file_root = src_.string();
  }
  std::string write_source(const std::string& name, const std::string& content) {
    const auto p = src_ / name;
    std::ofstream(p, std::ios::binary) << content;
    return p.string();
  }
  /// Runs Update Initiate to completion.
  UpdateResult fetch(UpdateFetcher& f, const std::string& url, const pqot::srup::Digest& digest, std::uint8_t token = 1) {
    DevupdOutcome o;
    if (auto now = f.initiate(devupd_token(token), url, digest, o.done())) return *now;
    return o.wait();
  }

  pqot::test::TempDir dir_{"srup-device-update"};
  fs::path src_ = dir_.path() / "src";
  UpdateSection config_;
  ActionRunner runner_{{}, 4};
};

TEST_F(SrupDeviceUpdate, FileUrlWithTheRightDigestIsReady) {
  UpdateFetcher f(config_, runner_);
  EXPECT_EQ(fs::status(config_.dir).permissions() & fs::perms::all, fs::perms::owner_all);
  const std::string content = "firmware v2\n";
  const auto r = fetch(f, "file://" + write_source("fw.bin", content), devupd_digest(content));
  EXPECT_EQ(r.status, Status::update_success) << r.detail;
  ASSERT_FALSE(r.path.empty());
  EXPECT_EQ(fs::path(r.path).parent_path(), fs::path(config_.dir));
  std::ifstream in(r.path, std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), content);
  EXPECT_EQ(f.pending(), 1u);
}

TEST_F(SrupDeviceUpdate, WrongDigestMissingFileAndTooBigAreRefusedAndLeaveNoFile) {
  UpdateFetcher f(config_, runner_);
  auto r = fetch(f, "file://" + write_source("fw.bin", "tampered"), devupd_digest("original"));
  EXPECT_EQ(r.status, Status::update_digest_mismatch);
  r = fetch(f, "file://" + (src_ / "absent.bin").string(), devupd_digest(""));
  EXPECT_EQ(r.status, Status::update_file_error);
  EXPECT_NE(r.detail.find("No such file"), std::string::npos) << r.detail;
  const std::string big(1001, 'x');
  r = fetch(f, "file://" + write_source("big.bin", big), devupd_digest(big));
  EXPECT_EQ(r.status, Status::update_file_error);
  EXPECT_NE(r.detail.find("over the limit of 1000"), std::string::npos) << r.detail;
  r = fetch(f, "file://relative/fw.bin", devupd_digest(""));
  EXPECT_EQ(r.status, Status::update_file_error);
  r = fetch(f, "file://" + src_.string(), devupd_digest(""));  // a directory
  EXPECT_EQ(r.status, Status::update_file_error);
  EXPECT_EQ(f.pending(), 0u);
  EXPECT_EQ(devupd_files(config_.dir), 0u);
}

TEST_F(SrupDeviceUpdate, OtherSchemesAreRefusedAtOnce) {
  UpdateFetcher f(config_, runner_);
  DevupdOutcome o;
  auto r = f.initiate(devupd_token(1), "https://example.com/fw.bin", devupd_digest(""), o.done());
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, Status::update_http_error);
  EXPECT_NE(r->detail.find("https:// is not supported"), std::string::npos);
  r = f.initiate(devupd_token(1), "ftp://example.com/fw.bin", devupd_digest(""), o.done());
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, Status::update_http_error);
}

// Without update.allowed_file_root a C2 (or whoever holds its key) cannot make the device read
// its own files: /etc/shadow's digest would tell whether a guess is right, the statuses whether a
// path exists. Outside the root, whether a file exists is not told either.
TEST_F(SrupDeviceUpdate, FileUrlsAreRefusedWithoutAnAllowedRoot) {
  const std::string content = "firmware v2\n";
  const std::string url = "file://" + write_source("fw.bin", content);
  config_.allowed_file_root.clear();
  {
    UpdateFetcher f(config_, runner_);
    const auto r = fetch(f, url, devupd_digest(content));
    EXPECT_EQ(r.status, Status::update_file_error);
    EXPECT_EQ(r.detail, "file:// updates are off: update.allowed_file_root names no directory");
    EXPECT_EQ(devupd_files(config_.dir), 0u);
  }
  config_.allowed_file_root = (dir_.path() / "elsewhere").string();
  fs::create_directories(config_.allowed_file_root);
  UpdateFetcher f(config_, runner_);
  for (const std::string& path : {(src_ / "fw.bin").string(), (src_ / "absent.bin").string(), std::string("/etc/passwd")}) {
    const auto r = fetch(f, "file://" + path, devupd_digest(content));
    EXPECT_EQ(r.status, Status::update_file_error) << path;
    EXPECT_EQ(r.detail, "the file is outside the allowed root") << path;
  }
}

TEST_F(SrupDeviceUpdate, SymlinksOutOfTheAllowedRootAreRefused) {
  UpdateFetcher f(config_, runner_);
  const std::string content = "outside";
  const auto outside = (dir_.path() / "outside.bin").string();
  std::ofstream(outside) << content;
  fs::create_symlink(outside, src_ / "link.bin");
  auto r = fetch(f, "file://" + (src_ / "link.bin").string(), devupd_digest(content));
  EXPECT_EQ(r.status, Status::update_file_error);
  EXPECT_EQ(r.detail, "the file is outside the allowed root");
  r = fetch(f, "file://" + (src_ / ".." / "outside.bin").string(), devupd_digest(content));
  EXPECT_EQ(r.status, Status::update_file_error);
  // Inside the root, through a symlink that stays inside: fine.
  const auto inside = write_source("fw.bin", content);
  fs::create_symlink(inside, src_ / "inner-link.bin");
  r = fetch(f, "file://" + (src_ / "inner-link.bin").string(), devupd_digest(content));
  EXPECT_EQ(r.status, Status::update_success) << r.detail;
}

TEST_F(SrupDeviceUpdate, PendingUpdatesAreBoundedOldestDropped) {
  UpdateFetcher f(config_, runner_);
  std::vector<std::string> paths;
  for (std::uint8_t t = 1; t <= 3; ++t) {
    const std::string content = "v" + std::to_string(t);
    const auto r = fetch(f, "file://" + write_source("fw" + content, content), devupd_digest(content), t);
    ASSERT_EQ(r.status, Status::update_success);
    paths.push_back(r.path);
  }
  EXPECT_EQ(f.pending(), kMaxPendingUpdates);
  EXPECT_FALSE(fs::exists(paths[0]));
  EXPECT_TRUE(fs::exists(paths[2]));
  DevupdOutcome o;
  const auto r = f.activate(devupd_token(1), o.done());
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, Status::activate_failed);
  EXPECT_EQ(r->detail, "no update with this token");
  // The same token again replaces its update.
  const auto again = fetch(f, "file://" + write_source("fwx", "x"), devupd_digest("x"), 3);
  ASSERT_EQ(again.status, Status::update_success);
  EXPECT_FALSE(fs::exists(paths[2]));
  EXPECT_EQ(f.pending(), 2u);
}

TEST_F(SrupDeviceUpdate, ActivateRunsTheApplyCommandWithTheFilesPath) {
  const auto out = dir_.path() / "applied";
  const auto script = dir_.path() / "apply.sh";
  std::ofstream(script) << "#!/bin/sh\n[ \"$1\" = --install ] || exit 9\ncat \"$2\" > " << out.string()
                        << "\n[ \"$(cat \"$2\")\" = good ] || exit 4\n";
  ::chmod(script.c_str(), 0755);
  config_.apply_program = script.string();
  config_.apply_args = {"--install"};
  UpdateFetcher f(config_, runner_);
  ASSERT_EQ(fetch(f, "file://" + write_source("a", "good"), devupd_digest("good"), 1).status, Status::update_success);
  DevupdOutcome o;
  ASSERT_FALSE(f.activate(devupd_token(1), o.done()).has_value());
  auto r = o.wait();
  EXPECT_EQ(r.status, Status::activate_success) << r.detail;
  EXPECT_EQ(r.detail, "apply: exit 0");
  std::ifstream in(out);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "good");
  EXPECT_EQ(f.pending(), 0u);
  EXPECT_TRUE(pqot::test::eventually([&] { return devupd_files(config_.dir) == 0; }));
  // An apply command that fails: 0x1F with its exit code.
  ASSERT_EQ(fetch(f, "file://" + write_source("b", "bad"), devupd_digest("bad"), 2).status, Status::update_success);
  DevupdOutcome o2;
  ASSERT_FALSE(f.activate(devupd_token(2), o2.done()).has_value());
  r = o2.wait();
  EXPECT_EQ(r.status, Status::activate_failed);
  EXPECT_EQ(r.detail, "apply: exit 4");
}

TEST_F(SrupDeviceUpdate, ActivateWithoutApplyProgramFails) {
  UpdateFetcher f(config_, runner_);
  ASSERT_EQ(fetch(f, "file://" + write_source("a", "a"), devupd_digest("a"), 1).status, Status::update_success);
  DevupdOutcome o;
  const auto r = f.activate(devupd_token(1), o.done());
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, Status::activate_failed);
  EXPECT_EQ(r->detail, "no apply program configured");
}

// What an agent killed mid-download (or with updates ready) left in the update directory is
// deleted when the next one starts: only files of the fetcher's own naming, nothing else.
TEST_F(SrupDeviceUpdate, LeftoversOfAnEarlierRunAreSweptAtStart) {
  fs::create_directories(config_.dir);
  const fs::path d = config_.dir;
  for (const char* name : {"update-a1B2c3.part", "update-Zz9xY0", "update-000000.part"})
    std::ofstream(d / name) << "partial";
  // Not the fetcher's: other names, a directory and a symlink of its naming, and the symlink's target.
  const std::vector<std::string> kept = {"update-abc.part", "update-abcdefg", "update-abcdef.tmp", "notes.txt",
                                         "update-abc-de", "xupdate-abcdef", "update-dir000", "update-link00"};
  for (const auto& name : kept)
    if (name != "update-dir000" && name != "update-link00") std::ofstream(d / name) << "keep";
  fs::create_directory(d / "update-dir000");
  const fs::path target = dir_.path() / "target";
  std::ofstream(target) << "keep";
  fs::create_symlink(target, d / "update-link00");
  {
    UpdateFetcher f(config_, runner_);
    EXPECT_EQ(f.swept(), 3u);
    for (const char* name : {"update-a1B2c3.part", "update-Zz9xY0", "update-000000.part"})
      EXPECT_FALSE(fs::exists(d / name)) << name;
    for (const auto& name : kept) EXPECT_TRUE(fs::exists(fs::symlink_status(d / name))) << name;
    EXPECT_TRUE(fs::exists(target));
    EXPECT_EQ(devupd_files(d), kept.size());
  }
  UpdateFetcher again(config_, runner_);
  EXPECT_EQ(again.swept(), 0u);
}

TEST_F(SrupDeviceUpdate, DestructionDeletesReadyFiles) {
  std::string path;
  {
    UpdateFetcher f(config_, runner_);
    const auto r = fetch(f, "file://" + write_source("a", "a"), devupd_digest("a"));
    ASSERT_EQ(r.status, Status::update_success);
    path = r.path;
    EXPECT_TRUE(fs::exists(path));
  }
  EXPECT_FALSE(fs::exists(path));
}

}  // namespace
