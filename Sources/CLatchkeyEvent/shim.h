// libevent's event-config.h defines _GNU_SOURCE. If it came first, glibc's features.h would be
// read with GNU extensions on inside this module only, and types such as fd_set would differ from
// the ones Dispatch and Glibc see (`fds_bits` against `__fds_bits`), which clang refuses when one
// Swift module imports both. Reading a system header first fixes the feature set to the default.
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <netdb.h>
#include <arpa/inet.h>
// The outbound client's TLS (bufferevent_ssl.h takes an `SSL *`). The same API level as
// CLatchkeyOpenSSL's shim.h, so that both modules see identical OpenSSL declarations and a
// Swift module importing both gets one `SSL`, `SSL_CTX`, `X509`, ... and no conflicts.
#define OPENSSL_API_COMPAT 30000
#define OPENSSL_NO_DEPRECATED 1
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/buffer.h>
#include <event2/keyvalq_struct.h>
#include <event2/thread.h>
#include <event2/listener.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/dns.h>
