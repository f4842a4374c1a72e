// GNU libunistring's Unicode normalisation (<uninorm.h>): NFKC for passwords and usernames.
#include <uninorm.h>

// UNINORM_NFKC is the address of an incomplete struct, which Swift cannot import.
static inline uninorm_t latchkey_uninorm_nfkc(void) { return UNINORM_NFKC; }
