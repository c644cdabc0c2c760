// Internal to the node store (node.cpp, node_bodies.cpp): a node, and READ and WRITE in progress,
// shared between the code that starts the backends and the code that writes the response bodies.
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "pqot/srmcp/node.hpp"

namespace pqot::srmcp {

inline std::int64_t to_ms(std::chrono::system_clock::time_point tp) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(tp.time_since_epoch()).count();
}

inline int code(Status s) { return static_cast<int>(s); }

struct NodeStore::Node {
  explicit Node(NodeSpec s) : spec(std::move(s)) {}
  NodeSpec spec;
  std::vector<std::string> children;  // insertion order; fixed once serving starts
  // Guards `value`, `ts` and the calls into the callables: a backend never sees two calls at once
  // for the same node, so application callables need no locking of their own.
  mutable std::mutex mu;
  Json value;
  std::chrono::system_clock::time_point ts = std::chrono::system_clock::now();

  bool is_folder() const { return spec.type == ValueType::folder; }
  bool visible_to(const Principal& who) const {
    return is_folder() || acl_allows(spec.readers, who) || acl_allows(spec.writers, who);
  }
  ReadResult read_value() const;
};

// One entry of a READ result (§9): the node's type (none for an unknown id) and what its Read gave.
struct NodeStore::ReadEntry {
  const std::string* id;
  std::optional<ValueType> type;
  ReadResult result;
};

// A READ in progress. `pending` counts the backends still to answer plus one for the caller
// while it starts them; whoever brings it to zero finishes the READ (the caller itself when
// every node answered at once, then without calling `finish`).
struct NodeStore::PendingRead {
  std::vector<std::string> ids;  // owned: the request may be gone when a backend answers
  std::vector<ReadEntry> entries;
  std::atomic<std::size_t> pending{1};
  ReadFinish finish;

  void answered() {
    if (pending.fetch_sub(1, std::memory_order_acq_rel) == 1) finish(*this);
  }
};

struct NodeStore::WriteEntry {
  std::string id;
  std::optional<ValueType> type;  // the node's, once known
  Status status = Status::ok;
  Json stored;
};

// A WRITE in progress; the same counting as PendingRead.
struct NodeStore::PendingWrite {
  std::vector<WriteEntry> entries;
  std::atomic<std::size_t> pending{1};
  WriteFinish finish;

  void answered() {
    if (pending.fetch_sub(1, std::memory_order_acq_rel) == 1) finish(*this);
  }
};

}  // namespace pqot::srmcp
