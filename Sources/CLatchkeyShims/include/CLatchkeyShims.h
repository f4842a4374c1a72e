#ifndef CLATCHKEY_SHIMS_H
#define CLATCHKEY_SHIMS_H
// What Swift cannot import from the C libraries: OpenSSL's function-like macros over SSL_ctrl
// and SSL_CTX_ctrl. Each function is a one-line forward named CLatchkeyShims_<original>.
//
// The same API level as CLatchkeyOpenSSL's and CLatchkeyEvent's shim.h, so that a Swift module
// importing these modules together sees one set of OpenSSL declarations.
#define OPENSSL_API_COMPAT 30000
#define OPENSSL_NO_DEPRECATED 1
#include <openssl/ssl.h>

/// SSL_CTX_set_min_proto_version(3): the lowest protocol version `context` negotiates.
/// Returns 1 on success, 0 on failure.
long CLatchkeyShims_SSL_CTX_set_min_proto_version(SSL_CTX *_Nonnull context, int version);

/// SSL_set_tlsext_host_name(3): the host name `ssl` sends in the SNI extension (RFC 6066 §3).
/// Returns 1 on success, 0 on failure.
long CLatchkeyShims_SSL_set_tlsext_host_name(SSL *_Nonnull ssl, const char *_Nonnull name);

#endif
