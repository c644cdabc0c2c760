// What the test PKI (test_pki.cpp) and enrolment certificates (enrol.cpp) share: OpenSSL handles,
// RFC 5280 serials, extensions in OpenSSL's v3 syntax, dates. Internal to pqot_pki.
#pragma once

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>
#include <string>

#include "crypto/openssl_util.hpp"  // internal to src/, shared with pqot::crypto

namespace pqot::pki::x509 {

using crypto::ossl::Deleter;
using PkeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY_free>>;
using X509Ptr = std::unique_ptr<X509, Deleter<X509_free>>;
using ReqPtr = std::unique_ptr<X509_REQ, Deleter<X509_REQ_free>>;
using ExtPtr = std::unique_ptr<X509_EXTENSION, Deleter<X509_EXTENSION_free>>;
using NamesPtr = std::unique_ptr<GENERAL_NAMES, Deleter<GENERAL_NAMES_free>>;
using NamePtr = std::unique_ptr<GENERAL_NAME, Deleter<GENERAL_NAME_free>>;
using StringPtr = std::unique_ptr<ASN1_STRING, Deleter<ASN1_STRING_free>>;
using BnPtr = std::unique_ptr<BIGNUM, Deleter<BN_free>>;
using BioPtr = std::unique_ptr<BIO, Deleter<BIO_free_all>>;

/// crypto::Error{internal} with OpenSSL's queued errors unless `ok`.
void check(bool ok, const std::string& what);

/// RFC 5280 section 4.1.2.2: 16 random bytes, positive and not zero.
void set_random_serial(X509* cert);

/// Adds one extension written in OpenSSL's v3 configuration syntax ("critical,CA:FALSE").
void add_extension(X509* cert, X509* issuer, int nid, const char* value);

/// notAfter as a UTC date "YYYY-MM-DD".
std::string not_after_date(const X509* cert);

/// What a memory BIO holds.
std::string bio_text(BIO* bio);

}  // namespace pqot::pki::x509
