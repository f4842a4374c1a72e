// libevent's event-config.h defines _GNU_SOURCE. If it came first, glibc's features.h would be
// read with GNU extensions on inside this module only, and types such as fd_set would differ from
// the ones Dispatch and Glibc see (`fds_bits` against `__fds_bits`), which clang refuses when one
// Swift module imports both. Reading a system header first fixes the feature set to the default.
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/buffer.h>
#include <event2/keyvalq_struct.h>
#include <event2/thread.h>
#include <event2/listener.h>
#include <event2/bufferevent.h>
