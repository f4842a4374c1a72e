// glibc's allocator settings (mallopt and its M_* parameters), which the Glibc module leaves out.
#include <malloc.h>
