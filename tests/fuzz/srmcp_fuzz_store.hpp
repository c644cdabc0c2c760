// The node store the SRMCP body fuzz targets run requests through: a folder and one writable
// memory node of each type.
#pragma once

#include <tuple>

#include "pqot/srmcp/node.hpp"

namespace pqot::srmcp::fuzz {

inline NodeStore& store() {
  static NodeStore* s = [] {
    auto* n = new NodeStore();
    NodeSpec folder;
    folder.id = "f";
    n->add(folder);
    for (auto [id, type, init] : {std::tuple{"f.d", ValueType::float64, Json(1.5)},
                                  {"f.i", ValueType::int64, Json(2)},
                                  {"f.s", ValueType::string, Json("x")},
                                  {"f.b", ValueType::boolean, Json(true)},
                                  {"f.j", ValueType::json, Json::object()}}) {
      NodeSpec spec;
      spec.id = id;
      spec.type = type;
      spec.parents = {"f"};
      spec.initial = init;
      spec.writers = {"*"};
      n->add(spec);
    }
    return n;
  }();
  return *s;
}

}  // namespace pqot::srmcp::fuzz
