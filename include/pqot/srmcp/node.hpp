// SRMCP nodes: the OPC-UA-like data model a server exposes (docs/srmcp.md §9, docs/srmcpd.md).
//
// Each node has an id, a name, a type, parents and children, a description, access rights and a
// backend: the Read and Write callables of the published design. Backends shipped here: memory
// (the value lives in the node), simulated signals (signal.hpp, computed from the clock) and Modbus
// TCP devices (gateway.hpp, whose callables complete later, from the device's thread); the
// application can supply its own callables of either kind.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "pqot/channel/principal.hpp"
#include "pqot/common/function_ref.hpp"
#include "pqot/srmcp/wire.hpp"

namespace pqot::srmcp {

using Json = nlohmann::json;

/// Value types (§9). `folder` nodes have no value and only group children.
enum class ValueType { folder, boolean, int64, float64, string, json };
/// "folder", "bool", "int64", "double", "string", "json"
std::string_view type_name(ValueType t);
std::optional<ValueType> parse_type_name(std::string_view name);
/// True if `v` is a valid value of type `t` ("json" accepts objects and arrays only; int64 accepts
/// JSON integers only; double accepts any JSON number).
bool value_matches(ValueType t, const Json& v);

/// A node id is 1..128 printable ASCII characters without spaces (0x21..0x7e).
bool valid_node_id(std::string_view id);

/// Who is asking: the client certificate's commonName and organizationalUnit values (§2).
using channel::Principal;

/// An access-control list entry is "*" (anyone), an identity ("client1"), or "role:NAME".
using Acl = std::vector<std::string>;
bool acl_allows(const Acl& acl, const Principal& who);

/// Result of a Read callable.
struct ReadResult {
  Status status = Status::ok;
  Json value;
  std::chrono::system_clock::time_point timestamp = std::chrono::system_clock::now();
};
/// Result of a Write callable: the value as stored (echoed to the client).
struct WriteResult {
  Status status = Status::ok;
  Json stored;
};

using ReadFn = std::function<ReadResult()>;
using WriteFn = std::function<WriteResult(const Json& value)>;

/// Callables of a backend that waits (a remote device): they start the operation and return; the
/// backend calls `done` exactly once, from any thread, possibly before returning (a cached
/// value). They are called without any lock held, so the backend serialises its own work.
using ReadDone = std::function<void(ReadResult)>;
using WriteDone = std::function<void(WriteResult)>;
using AsyncReadFn = std::function<void(ReadDone done)>;
using AsyncWriteFn = std::function<void(const Json& value, WriteDone done)>;

/// While a READ or WRITE starts the backends of all its nodes, backends that wait may hold back
/// their wake-ups (`defer`), so that requests for one device go out together (the Modbus gateway
/// batches what is queued when its thread wakes). Scopes nest; the outermost runs the wake-ups.
class BackendBatch {
 public:
  BackendBatch();
  ~BackendBatch();
  BackendBatch(const BackendBatch&) = delete;
  BackendBatch& operator=(const BackendBatch&) = delete;
  /// Inside a scope: runs `wake` once when the outermost scope ends (once per `key`) and returns
  /// true. Outside any scope: returns false and the caller wakes at once.
  static bool defer(const void* key, std::function<void()> wake);
};

/// Everything needed to create a node.
struct NodeSpec {
  std::string id;  ///< unique, 1..128 printable ASCII characters, no spaces
  std::string name;
  ValueType type = ValueType::folder;
  std::vector<std::string> parents;  ///< ids of parent nodes (folders); empty = top level
  std::string description;
  std::string unit;
  Acl readers{"*"};
  Acl writers{};  ///< empty = read-only
  Json initial;   ///< initial value of a memory node
  ReadFn read;    ///< null = memory backend
  WriteFn write;  ///< null = memory backend (if writers is non-empty)
  AsyncReadFn read_async;    ///< instead of `read`, for a backend that waits
  AsyncWriteFn write_async;  ///< instead of `write`; needs read_async
};

/// The node store: fixed structure after construction, values guarded per node, safe to use from
/// several threads. All functions produce the JSON bodies of §9. The synchronous callables of one
/// node are never called concurrently (the node's mutex is held around them).
///
/// READ and WRITE come in two forms. The forms with a `later` completion never block: if every
/// node answers at once they append the body to `out` and return true; otherwise they return
/// false and `later` gets the body once the slowest backend has answered (on that backend's
/// thread). The plain forms wait for backends that wait (tests, tools; not the server).
class NodeStore {
 public:
  NodeStore();
  ~NodeStore();
  NodeStore(const NodeStore&) = delete;
  NodeStore& operator=(const NodeStore&) = delete;

  /// Adds a node. Throws std::invalid_argument for a duplicate or malformed id, an unknown parent
  /// (parents must be added first), a parent that is not a folder or listed twice, a name over 256
  /// characters, an initial value of the wrong type, or writers on a node with a Read callable but
  /// no Write callable. A memory node without an initial value starts at false, 0, 0.0, "" or {}.
  void add(NodeSpec spec);
  std::size_t size() const;
  bool contains(const std::string& id) const;

  /// BROWSE (§9): `{"nodes": [{"id","name","type","parents","children","description","unit",
  /// "readable","writable"}...]}` for `root` (all top-level nodes if empty) and its descendants
  /// down to `depth` levels (0 = only the root level). Only nodes the principal may read or write
  /// appear with readable/writable set accordingly; folders always appear. "children" lists only
  /// such visible nodes. Negative depth = unlimited; a node under several parents is listed once.
  /// Throws ProtocolError{reply, UNKNOWN_NODE} for an unknown root.
  Json browse(const std::string& root, int depth, const Principal& who) const;

  /// READ (§9): `{"values": [{"id","value","type","ts_ms","status"}...]}` in request order; a
  /// per-node failure sets that entry's "status" (numeric §11 code) and omits "value".
  Json read(const std::vector<std::string>& ids, const Principal& who) const;
  /// The same READ result as compact JSON text appended to `out` (what the server sends; cheaper
  /// than building the Json value and serialising it).
  void read_text(const std::vector<std::string>& ids, const Principal& who, std::string& out) const;
  using TextDone = std::function<void(std::string text)>;
  bool read_text(const std::vector<std::string>& ids, const Principal& who, std::string& out,
                 TextDone later) const;

  /// WRITE (§9): `{"values": [{"id","value","status"}...]}` with the stored value echoed.
  /// Per-node failures: UNKNOWN_NODE, NOT_WRITABLE, ACCESS_DENIED, TYPE_MISMATCH, BACKEND_ERROR.
  Json write(const std::vector<std::pair<std::string, Json>>& values, const Principal& who);
  /// The same WRITE result as compact JSON text (what the server sends).
  bool write_text(const std::vector<std::pair<std::string, Json>>& values, const Principal& who,
                  std::string& out, TextDone later);

  /// READ and WRITE with the response body in `encoding` (§9.1 JSON text, §9.2 compact records);
  /// the rest as read_text and write_text.
  bool read_body(const std::vector<std::string>& ids, const Principal& who, BodyEncoding encoding, std::string& out,
                 TextDone later) const;
  bool write_body(const std::vector<std::pair<std::string, Json>>& values, const Principal& who,
                  BodyEncoding encoding, std::string& out, TextDone later);
  /// The same, with the completion made only when a backend must be waited for: `make_later` is
  /// called at most once, before any backend starts. A READ or WRITE whose nodes all answer at
  /// once (memory, signals, refusals) then allocates nothing here beyond `out`'s growth.
  using MakeTextDone = common::FunctionRef<TextDone()>;
  bool read_body(const std::vector<std::string>& ids, const Principal& who, BodyEncoding encoding, std::string& out,
                 MakeTextDone make_later) const;
  bool write_body(const std::vector<std::pair<std::string, Json>>& values, const Principal& who,
                  BodyEncoding encoding, std::string& out, MakeTextDone make_later);

  /// Reads one node for a subscription; nullopt if unknown or not readable by `who`.
  std::optional<ReadResult> read_one(const std::string& id, const Principal& who) const;
  /// Reads for a subscription, without blocking: one result per id, in order (UNKNOWN_NODE,
  /// NOT_READABLE or ACCESS_DENIED for ids that cannot be read).
  using ResultsDone = std::function<void(std::vector<ReadResult>)>;
  bool read_results(const std::vector<std::string>& ids, const Principal& who, std::vector<ReadResult>& out,
                    ResultsDone later) const;
  /// The first id of `ids` that `who` cannot read, with the status a READ would give it; nullopt if
  /// every one is readable. Calls no backend.
  std::optional<std::pair<std::string, Status>> check_readable(const std::vector<std::string>& ids,
                                                               const Principal& who) const;

 private:
  struct Node;
  struct ReadEntry;
  struct PendingRead;
  struct WriteEntry;
  struct PendingWrite;
  // Whether `who` may read a node, without calling its backend: the node (null when it is not
  // revealed to `who`, §11) and OK or the status of the refusal.
  struct ReadAccess {
    const Node* node;
    Status status;
  };
  ReadAccess read_access(const std::string& id, const Principal& who) const;
  // The same for writing `value` (TYPE_MISMATCH included).
  struct WriteAccess {
    Node* node;
    Status status;
  };
  WriteAccess write_access(const std::string& id, const Json& value, const Principal& who) const;
  // Writes through a node's memory or synchronous Write callable (not one that waits).
  struct WriteOutcome {
    Status status;
    Json stored;
  };
  static WriteOutcome write_at_once(Node& n, const Json& value);
  using ReadFinish = std::function<void(PendingRead&)>;
  using WriteFinish = std::function<void(PendingWrite&)>;
  std::shared_ptr<PendingRead> start_read(const std::vector<std::string>& ids, const Principal& who,
                                          ReadFinish finish, bool& done_now) const;
  std::shared_ptr<PendingRead> read_and_wait(const std::vector<std::string>& ids, const Principal& who) const;
  std::shared_ptr<PendingWrite> start_write(const std::vector<std::pair<std::string, Json>>& values,
                                            const Principal& who, WriteFinish finish, bool& done_now);
  // READ and WRITE bodies in three parts (an opening, entries, a close), so that the one-pass
  // forms and those that wait write the same bytes. Both bodies open and close alike.
  static void begin_body(BodyEncoding encoding, std::size_t count, std::string& out);
  static void append_read_entry(BodyEncoding encoding, const ReadEntry& e, bool first, std::string& out);
  static void end_body(BodyEncoding encoding, std::string& out);
  static void append_read(BodyEncoding encoding, const PendingRead& st, std::string& out);
  // A WRITE body likewise.
  static void append_write_entry(BodyEncoding encoding, std::string_view id, Status status,
                                 std::optional<ValueType> type, const Json& stored, bool first,
                                 std::string& out);
  static void append_write(BodyEncoding encoding, const PendingWrite& st, std::string& out);
  // Looked up by id on every request; the order of nodes lives in top_level_ and Node::children.
  std::unordered_map<std::string, std::unique_ptr<Node>> nodes_;
  std::vector<std::string> top_level_;
};

}  // namespace pqot::srmcp
