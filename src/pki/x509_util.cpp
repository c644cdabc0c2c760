// Shared X.509 helpers of pqot_pki (x509_util.hpp).
#include "x509_util.hpp"

#include <array>
#include <cstdint>
#include <ctime>

#include "pqot/crypto/random.hpp"

namespace pqot::pki::x509 {

void check(bool ok, const std::string& what) {
  if (!ok) crypto::ossl::throw_error(what);
}

// RFC 5280 section 4.1.2.2: positive, at most 20 octets; 128 random bits make collisions moot.
void set_random_serial(X509* cert) {
  BnPtr serial(BN_new());
  check(serial != nullptr, "BN_new");
  std::array<std::uint8_t, 16> bytes{};
  do {
    crypto::random_bytes(bytes);
    check(BN_bin2bn(bytes.data(), static_cast<int>(bytes.size()), serial.get()) != nullptr,
          "BN_bin2bn");
  } while (BN_is_zero(serial.get()));
  check(BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert)) != nullptr,
        "BN_to_ASN1_INTEGER");
}

void add_extension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx{};
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  ExtPtr ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value));
  check(ext != nullptr, std::string("building extension ") + OBJ_nid2sn(nid) + "=" + value);
  check(X509_add_ext(cert, ext.get(), -1) == 1, "X509_add_ext");
}

std::string not_after_date(const X509* cert) {
  std::tm tm{};
  check(ASN1_TIME_to_tm(X509_get0_notAfter(cert), &tm) == 1, "ASN1_TIME_to_tm");
  std::array<char, 16> text{};
  std::strftime(text.data(), text.size(), "%Y-%m-%d", &tm);
  return text.data();
}

std::string bio_text(BIO* bio) {
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  return size > 0 ? std::string(data, static_cast<std::size_t>(size)) : std::string();
}

}  // namespace pqot::pki::x509
