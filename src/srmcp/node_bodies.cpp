// The response bodies of READ and WRITE (docs/srmcp.md §9.1 JSON, §9.2 compact), written from
// the node store's results, and the forms of READ and WRITE that produce them.
#include <array>
#include <future>

#include "node_pending.hpp"
#include "pqot/srmcp/compact.hpp"
#include "pqot/srmcp/json_text.hpp"

namespace pqot::srmcp {

Json NodeStore::read(const std::vector<std::string>& ids, const Principal& who) const {
  Json values = Json::array();
  const auto st = read_and_wait(ids, who);  // owns the entries (and the ids they point to)
  for (auto& e : st->entries) {
    Json entry{{"id", *e.id}};
    if (e.type) entry["type"] = type_name(*e.type);
    if (e.result.status == Status::ok) entry["value"] = std::move(e.result.value);
    entry["ts_ms"] = to_ms(e.result.timestamp);
    entry["status"] = code(e.result.status);
    values.push_back(std::move(entry));
  }
  return Json{{"values", std::move(values)}};
}
void NodeStore::begin_body(BodyEncoding encoding, std::size_t count, std::string& out) {
  if (encoding == BodyEncoding::compact) {
    compact::begin_entries(out, count);
  } else {
    out += "{\"values\":[";
  }
}

void NodeStore::append_read_entry(BodyEncoding encoding, const ReadEntry& e, bool first, std::string& out) {
  if (encoding == BodyEncoding::compact) {
    compact::append_read_entry(out, e.type, e.result.status, to_ms(e.result.timestamp), e.result.value);
    return;
  }
  // The same JSON as read(), written directly (keys in dump()'s order: id, status, ts_ms, type,
  // value): a READ of ten nodes otherwise builds and frees some fifty small objects.
  out += first ? "{\"id\":" : ",{\"id\":";
  append_json_string(out, *e.id);
  out += ",\"status\":";
  out += std::to_string(code(e.result.status));
  out += ",\"ts_ms\":";
  out += std::to_string(to_ms(e.result.timestamp));
  if (e.type) {
    out += ",\"type\":\"";
    out += type_name(*e.type);  // fixed ASCII names: no escaping needed
    out += '"';
  }
  if (e.result.status == Status::ok) {
    out += ",\"value\":";
    append_json(out, e.result.value);
  }
  out += '}';
}

void NodeStore::end_body(BodyEncoding encoding, std::string& out) {
  if (encoding == BodyEncoding::json) out += "]}";
}

void NodeStore::append_read(BodyEncoding encoding, const PendingRead& st, std::string& out) {
  begin_body(encoding, st.entries.size(), out);
  bool first = true;
  for (const auto& e : st.entries) {
    append_read_entry(encoding, e, first, out);
    first = false;
  }
  end_body(encoding, out);
}

void NodeStore::read_text(const std::vector<std::string>& ids, const Principal& who, std::string& out) const {
  append_read(BodyEncoding::json, *read_and_wait(ids, who), out);
}

bool NodeStore::read_text(const std::vector<std::string>& ids, const Principal& who, std::string& out,
                          TextDone later) const {
  return read_body(ids, who, BodyEncoding::json, out, std::move(later));
}

bool NodeStore::read_body(const std::vector<std::string>& ids, const Principal& who, BodyEncoding encoding,
                          std::string& out, TextDone later) const {
  return read_body(ids, who, encoding, out, [&later] { return std::move(later); });
}

bool NodeStore::read_body(const std::vector<std::string>& ids, const Principal& who, BodyEncoding encoding,
                          std::string& out, MakeTextDone make_later) const {
  // One pass when no node waits for a backend (the usual READ): each node is read and its entry
  // written at once, with no shared state. The nodes are looked up first, so that a READ that
  // does wait calls no backend twice.
  constexpr std::size_t kOnePassMax = 64;
  if (ids.size() <= kOnePassMax) {
    std::array<ReadAccess, kOnePassMax> access;
    bool waits = false;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      access[i] = read_access(ids[i], who);
      waits = waits || (access[i].status == Status::ok && access[i].node->spec.read_async);
    }
    if (!waits) {
      begin_body(encoding, ids.size(), out);
      for (std::size_t i = 0; i < ids.size(); ++i) {
        const auto [node, status] = access[i];
        ReadEntry e{&ids[i], std::nullopt, {}};
        if (node != nullptr) e.type = node->spec.type;
        e.result = status == Status::ok ? node->read_value()
                                        : ReadResult{status, nullptr, std::chrono::system_clock::now()};
        append_read_entry(encoding, e, i == 0, out);
      }
      end_body(encoding, out);
      return true;
    }
  }
  bool done_now = false;
  auto st = start_read(
      ids, who,
      [later = make_later(), encoding](PendingRead& p) {
        std::string body;
        append_read(encoding, p, body);
        later(std::move(body));
      },
      done_now);
  if (done_now) append_read(encoding, *st, out);
  return done_now;
}

void NodeStore::append_write_entry(BodyEncoding encoding, std::string_view id, Status status,
                                   std::optional<ValueType> type, const Json& stored, bool first,
                                   std::string& out) {
  if (encoding == BodyEncoding::compact) {
    compact::append_write_entry(out, status, type, stored);
    return;
  }
  out += first ? "{\"id\":" : ",{\"id\":";
  append_json_string(out, id);
  out += ",\"status\":";
  out += std::to_string(code(status));
  if (status == Status::ok) {
    out += ",\"value\":";
    append_json(out, stored);
  }
  out += '}';
}

void NodeStore::append_write(BodyEncoding encoding, const PendingWrite& st, std::string& out) {
  begin_body(encoding, st.entries.size(), out);
  bool first = true;
  for (const auto& e : st.entries) {
    append_write_entry(encoding, e.id, e.status, e.type, e.stored, first, out);
    first = false;
  }
  end_body(encoding, out);
}

Json NodeStore::write(const std::vector<std::pair<std::string, Json>>& values, const Principal& who) {
  auto finished = std::make_shared<std::promise<void>>();
  bool done_now = false;
  auto st = start_write(values, who, [finished](PendingWrite&) { finished->set_value(); }, done_now);
  if (!done_now) finished->get_future().wait();
  Json results = Json::array();
  for (auto& e : st->entries) {
    Json entry{{"id", e.id}};
    if (e.status == Status::ok) entry["value"] = std::move(e.stored);
    entry["status"] = code(e.status);
    results.push_back(std::move(entry));
  }
  return Json{{"values", std::move(results)}};
}

bool NodeStore::write_text(const std::vector<std::pair<std::string, Json>>& values, const Principal& who,
                           std::string& out, TextDone later) {
  return write_body(values, who, BodyEncoding::json, out, std::move(later));
}

bool NodeStore::write_body(const std::vector<std::pair<std::string, Json>>& values, const Principal& who,
                           BodyEncoding encoding, std::string& out, TextDone later) {
  return write_body(values, who, encoding, out, [&later] { return std::move(later); });
}

bool NodeStore::write_body(const std::vector<std::pair<std::string, Json>>& values, const Principal& who,
                           BodyEncoding encoding, std::string& out, MakeTextDone make_later) {
  // One pass when no node waits for a backend, as for READ.
  constexpr std::size_t kOnePassMax = 64;
  if (values.size() <= kOnePassMax) {
    std::array<WriteAccess, kOnePassMax> access;
    bool waits = false;
    for (std::size_t i = 0; i < values.size(); ++i) {
      access[i] = write_access(values[i].first, values[i].second, who);
      waits = waits || (access[i].status == Status::ok && access[i].node->spec.write_async);
    }
    if (!waits) {
      begin_body(encoding, values.size(), out);
      for (std::size_t i = 0; i < values.size(); ++i) {
        const auto [node, status] = access[i];
        const std::optional<ValueType> type =
            node != nullptr ? std::optional(node->spec.type) : std::nullopt;
        if (status != Status::ok) {
          append_write_entry(encoding, values[i].first, status, type, nullptr, i == 0, out);
          continue;
        }
        const auto [s, stored] = write_at_once(*node, values[i].second);
        append_write_entry(encoding, values[i].first, s, type, stored, i == 0, out);
      }
      end_body(encoding, out);
      return true;
    }
  }
  bool done_now = false;
  auto st = start_write(
      values, who,
      [later = make_later(), encoding](PendingWrite& p) {
        std::string body;
        append_write(encoding, p, body);
        later(std::move(body));
      },
      done_now);
  if (done_now) append_write(encoding, *st, out);
  return done_now;
}

}  // namespace pqot::srmcp
