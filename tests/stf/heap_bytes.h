/* The heap in use, mmapped blocks included, from glibc's mallinfo2 (2.33
 * and later; sanitizers' allocators do not fill it: tests that read it are
 * registered only where it can fail). */
#ifndef WEFT_TESTS_STF_HEAP_BYTES_H
#define WEFT_TESTS_STF_HEAP_BYTES_H

#include <malloc.h>

static inline size_t heap_bytes(void)
{
    struct mallinfo2 m = mallinfo2();
    return m.uordblks + m.hblkhd;
}

#endif
