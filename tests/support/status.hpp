// The numeric `status` of one result entry of a READ or WRITE response (docs/srmcp.md §9).
#pragma once

#include <nlohmann/json.hpp>

namespace pqot::test {

inline int status_of(const nlohmann::json& entry) { return entry.at("status").get<int>(); }

}  // namespace pqot::test
