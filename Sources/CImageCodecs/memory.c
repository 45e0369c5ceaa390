#include "image_codecs.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

int vp_tune_allocator(size_t mmap_threshold, size_t top_pad) {
#if defined(__GLIBC__) && defined(M_MMAP_THRESHOLD) && defined(M_TOP_PAD)
    return mallopt(M_MMAP_THRESHOLD, (int)mmap_threshold) == 1 && mallopt(M_TOP_PAD, (int)top_pad) == 1;
#else
    (void)mmap_threshold;
    (void)top_pad;
    return 0;
#endif
}
