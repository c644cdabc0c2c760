// What a committed reload did (docs/tripd.md, "Reloading"): its log line, and what it stopped in
// order to restart and could not start again (a listening address it could not take back).
#pragma once

#include <string>
#include <vector>

namespace pqot::tripd {

/// Names for a reload's log line: "a,b,c", or "-" for none.
inline std::string name_list(const std::vector<std::string>& names) {
  if (names.empty()) return "-";
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

struct ReloadOutcome {
  std::string line;                 ///< what changed, for the log (no key material)
  std::vector<std::string> failed;  ///< "path NAME: why" or "relay NAME: why": down until a later reload
};

}  // namespace pqot::tripd
