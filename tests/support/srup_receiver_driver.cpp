// A SRUP-PQ command receiver in one process run, for the exactly-once test (issue 12; docs/srup-pq.md
// sections 6 and 7.3): reads one envelope, runs steps 1-9 (open_protected), 10-12 through the
// StateStore, "acts" by appending "executed SENDER SEQ" to an effects file (fsync'ed), and writes
// the sealed Response envelope to an output file. `--crash-at received|accepted|acted|done` kills
// the process with SIGKILL at that point: after reading the envelope, after the `accepted` commit,
// after the act, after the `done` commit (before the answer is written).
//
//   srup_receiver_driver --db FILE --envelope FILE --effects FILE --out FILE [--crash-at POINT]
//
// stdout: the verdict (execute, answer_cached, interrupted, in_progress). Exit 0 when answered or
// dropped as in progress; 4 with the reason on stderr when refused (REPLAY, ...); 1 on an error.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <string>

#include "pqot/srup/protect.hpp"
#include "pqot/srup/state.hpp"
#include "srup_peers.hpp"

namespace {

using namespace pqot;

void crash_if(const std::string& at, const char* point) {
  if (at == point) ::kill(::getpid(), SIGKILL);
}

srup::Bytes read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  return srup::Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Appends and fsyncs: the act is durable before the journal says done.
void append_synced(const std::string& path, const std::string& line) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error("cannot open " + path);
  const bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) &&
                  ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) throw std::runtime_error("cannot write " + path);
}

void write_file(const std::string& path, srup::ByteView bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

std::uint64_t now_ms() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
}

// Section 2.4: status (1) || detail (u16 length || UTF-8). Written by hand here: the body codecs
// are another component.
srup::Bytes response_body(std::uint8_t status, const std::string& detail) {
  srup::Bytes b(3 + detail.size());
  b[0] = status;
  b[1] = static_cast<std::uint8_t>(detail.size() >> 8);
  b[2] = static_cast<std::uint8_t>(detail.size());
  if (!detail.empty()) std::memcpy(b.data() + 3, detail.data(), detail.size());
  return b;
}

srup::Bytes sealed_response(srup::StateStore& store, const srup::Header& request, std::uint8_t status,
                            const std::string& detail, const test::SrupPeer& device,
                            const test::SrupPeer& c2) {
  srup::Header h;
  h.type = srup::MessageType::response;
  h.suite = device.identity.suite;
  h.mode = srup::Mode::sealed;
  h.sender = device.identity.id;
  h.recipient = request.sender;
  h.sequence = store.next_sequence(h.sender, h.recipient);
  h.timestamp_ms = now_ms();
  h.lifetime_ms = 600'000;
  h.topic = srup::topic_tag(test::kSrupResponseTopic);
  h.token = request.token;
  return srup::protect(h, response_body(status, detail), device.identity, &c2.keys);
}

int run(const std::map<std::string, std::string>& args) {
  const std::string crash_at = args.count("--crash-at") ? args.at("--crash-at") : "";
  const srup::Bytes wire = read_file(args.at("--envelope"));
  crash_if(crash_at, "received");

  const test::SrupPeer c2 = test::srup_c2();
  const test::SrupPeer device = test::srup_device();
  srup::Opened opened;
  try {  // steps 1-9: nothing unauthenticated reaches the state store
    opened = srup::open_protected(wire, test::kSrupCommandTopic, now_ms(), device.identity,
                                  [&](std::uint64_t id) { return id == c2.identity.id ? &c2.keys : nullptr; });
  } catch (const srup::Refused& r) {
    std::cerr << r.what() << "\n";
    return 4;
  }
  const srup::Header& h = opened.header;
  srup::StateStore store(args.at("--db"));
  const srup::StreamKey stream{h.sender, h.recipient};
  const auto admission = store.admit_command(stream, h.sequence, h.token, h.type);  // step 10
  switch (admission.verdict) {
    case srup::StateStore::Verdict::replay:
      std::cerr << "REPLAY\n";
      return 4;
    case srup::StateStore::Verdict::in_progress:
      std::cout << "in_progress\n";
      return 0;
    case srup::StateStore::Verdict::answer_cached:
      write_file(args.at("--out"), admission.response);
      std::cout << "answer_cached\n";
      return 0;
    case srup::StateStore::Verdict::interrupted: {
      const srup::Bytes rsp = sealed_response(store, h, 0x90, "INTERRUPTED", device, c2);
      store.complete_command(stream, h.sequence, rsp);
      write_file(args.at("--out"), rsp);
      std::cout << "interrupted\n";
      return 0;
    }
    case srup::StateStore::Verdict::execute:
      break;
  }
  crash_if(crash_at, "accepted");
  append_synced(args.at("--effects"),
                "executed " + std::to_string(h.sender) + " " + std::to_string(h.sequence) + "\n");  // step 12
  crash_if(crash_at, "acted");
  const srup::Bytes rsp = sealed_response(store, h, 0x20, "ok", device, c2);  // action: success
  store.complete_command(stream, h.sequence, rsp);
  crash_if(crash_at, "done");
  write_file(args.at("--out"), rsp);
  std::cout << "execute\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> args;
  for (int i = 1; i + 1 < argc; i += 2) args[argv[i]] = argv[i + 1];
  for (const char* required : {"--db", "--envelope", "--effects", "--out"}) {
    if (args.count(required) == 0) {
      std::cerr << "usage: srup_receiver_driver --db FILE --envelope FILE --effects FILE --out FILE "
                   "[--crash-at received|accepted|acted|done]\n";
      return 2;
    }
  }
  try {
    return run(args);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
