// The comparison contenders: NTRU and Saber, NIST round-3 KEM candidates that were not
// standardized. pqot implements them (src/crypto/contenders/) only so that measurements can put
// them beside ML-KEM on the same machine; they are never offered by default and never negotiated
// (kem_by_name() does not know them). docs/crypto.md, "Comparison contenders".
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "pqot/crypto/kem.hpp"

namespace pqot::crypto {

/// "NTRU-HPS-2048-509", "NTRU-HPS-2048-677", "NTRU-HPS-4096-821", "NTRU-HRSS-701", "LightSaber",
/// "Saber", "FireSaber", in that stable order.
std::span<const std::string_view> contender_kem_names() noexcept;

/// The contender named `name` (exact spelling). Throws Error{unknown_algorithm}. Stateless
/// singletons; each reports contender() == true.
const Kem& contender_kem_by_name(std::string_view name);

/// kem_by_name(), then the contenders: for the command line and the benchmarks only, never for a
/// protocol. Throws Error{unknown_algorithm} naming both lists.
const Kem& any_kem_by_name(std::string_view name);

/// The one-line warning a tool prints when it runs a contender.
std::string contender_warning(const Kem& kem);

}  // namespace pqot::crypto
