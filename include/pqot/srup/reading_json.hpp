// A telemetry reading (docs/srup-pq.md 5.3) as one JSON object, for stores and displays:
// {"t":MS,"channels":{"voltage_l1":230.1,...}}. Channels section 5.3 names get their names
// (pqot/srup/meter_channels.hpp), others "0x0abc"; numbers as numbers (NaN and infinities, which
// JSON cannot hold, as the strings "nan", "inf", "-inf"), strings escaped (the C0 controls, DEL
// and the C1 controls U+0080..U+009F as \uXXXX, so a line shown on a terminal cannot drive it),
// bytes in hex.
#pragma once

#include <string>

#include "pqot/srup/body.hpp"

namespace pqot::srup {

std::string reading_json(const Reading& reading);

/// The channel's name, or "0x0abc".
std::string channel_name(std::uint16_t channel);

}  // namespace pqot::srup
