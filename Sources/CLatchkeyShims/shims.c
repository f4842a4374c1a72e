#include "CLatchkeyShims.h"

long CLatchkeyShims_SSL_CTX_set_min_proto_version(SSL_CTX *_Nonnull context, int version) {
    return SSL_CTX_set_min_proto_version(context, version);
}

long CLatchkeyShims_SSL_set_tlsext_host_name(SSL *_Nonnull ssl, const char *_Nonnull name) {
    return SSL_set_tlsext_host_name(ssl, name);
}
