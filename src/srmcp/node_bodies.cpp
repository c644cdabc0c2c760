// The response bodies of READ and WRITE (docs/srmcp.md §9.1 JSON, §9.2 compact), written from
// the node store's results, and the forms of READ and WRITE that produce them.
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
void NodeStore::append_read_text(const PendingRead& st, std::string& out) {
  // The same JSON as read(), written directly (keys in dump()'s order: id, status, ts_ms, type,
  // value): a READ of ten nodes otherwise builds and frees some fifty small objects.
  out += "{\"values\":[";
  bool first = true;
  for (const auto& e : st.entries) {
    out += first ? "{\"id\":" : ",{\"id\":";
    first = false;
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
  out += "]}";
}

void NodeStore::read_text(const std::vector<std::string>& ids, const Principal& who, std::string& out) const {
  append_read_text(*read_and_wait(ids, who), out);
}

bool NodeStore::read_text(const std::vector<std::string>& ids, const Principal& who, std::string& out,
                          TextDone later) const {
  return read_body(ids, who, BodyEncoding::json, out, std::move(later));
}

void NodeStore::append_read_compact(const PendingRead& st, std::string& out) {
  compact::begin_entries(out, st.entries.size());
  for (const auto& e : st.entries) {
    compact::append_read_entry(out, e.type, e.result.status, to_ms(e.result.timestamp), e.result.value);
  }
}

bool NodeStore::read_body(const std::vector<std::string>& ids, const Principal& who, BodyEncoding encoding,
                          std::string& out, TextDone later) const {
  const auto append = encoding == BodyEncoding::compact ? &append_read_compact : &append_read_text;
  bool done_now = false;
  auto st = start_read(
      ids, who,
      [later = std::move(later), append](PendingRead& p) {
        std::string body;
        append(p, body);
        later(std::move(body));
      },
      done_now);
  if (done_now) append(*st, out);
  return done_now;
}

void NodeStore::append_write_text(const PendingWrite& st, std::string& out) {
  out += "{\"values\":[";
  bool first = true;
  for (const auto& e : st.entries) {
    out += first ? "{\"id\":" : ",{\"id\":";
    first = false;
    append_json_string(out, e.id);
    out += ",\"status\":";
    out += std::to_string(code(e.status));
    if (e.status == Status::ok) {
      out += ",\"value\":";
      append_json(out, e.stored);
    }
    out += '}';
  }
  out += "]}";
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

void NodeStore::append_write_compact(const PendingWrite& st, std::string& out) {
  compact::begin_entries(out, st.entries.size());
  for (const auto& e : st.entries) compact::append_write_entry(out, e.status, e.type, e.stored);
}

bool NodeStore::write_body(const std::vector<std::pair<std::string, Json>>& values, const Principal& who,
                           BodyEncoding encoding, std::string& out, TextDone later) {
  const auto append = encoding == BodyEncoding::compact ? &append_write_compact : &append_write_text;
  bool done_now = false;
  auto st = start_write(
      values, who,
      [later = std::move(later), append](PendingWrite& p) {
        std::string body;
        append(p, body);
        later(std::move(body));
      },
      done_now);
  if (done_now) append(*st, out);
  return done_now;
}

}  // namespace pqot::srmcp
