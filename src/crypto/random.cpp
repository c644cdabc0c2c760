#include "pqot/crypto/random.hpp"

#include <openssl/rand.h>

#include <climits>

#include "pqot/crypto/error.hpp"

namespace pqot::crypto {

namespace {
template <int (*Fill)(unsigned char*, int)>
void fill(MutableByteView out) {
  // RAND_bytes takes an int length; draw large requests in chunks.
  std::size_t done = 0;
  while (done < out.size()) {
    const int n = static_cast<int>(std::min<std::size_t>(out.size() - done, INT_MAX));
    if (Fill(out.data() + done, n) != 1) {
      throw Error(ErrorCode::internal, "the OS random number generator failed");
    }
    done += static_cast<std::size_t>(n);
  }
}
}  // namespace

void random_bytes(MutableByteView out) { fill<RAND_bytes>(out); }

std::uint64_t random_u64() {
  std::uint64_t v = 0;
  random_bytes({reinterpret_cast<std::uint8_t*>(&v), sizeof(v)});
  return v;
}
void random_secret_bytes(MutableByteView out) { fill<RAND_priv_bytes>(out); }

}  // namespace pqot::crypto
