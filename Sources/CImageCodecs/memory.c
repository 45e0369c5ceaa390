#include "image_codecs.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

int vp_map_large_allocations(size_t threshold) {
#if defined(__GLIBC__) && defined(M_MMAP_THRESHOLD)
    return mallopt(M_MMAP_THRESHOLD, (int)threshold);
#else
    (void)threshold;
    return 0;
#endif
}
