/* A tile's columns copied between two column-major layouts: cols columns
 * of rows elements of elem bytes, dld and sld elements apart (a packed
 * buffer has ld = rows). The host-side twin of the devices' 2D copies. */
#ifndef WEFT_UTIL_COLS_H
#define WEFT_UTIL_COLS_H

#include <stdint.h>
#include <string.h>

static inline void weft_copy_cols(void *dst, int64_t dld, const void *src, int64_t sld, int rows,
                                  int cols, size_t elem)
{
    size_t col = (size_t)rows * elem;
    if (dld == rows && sld == rows) { /* one block: one call */
        memcpy(dst, src, col * (size_t)cols);
        return;
    }
    for (int j = 0; j < cols; j++)
        memcpy((char *)dst + (size_t)j * (size_t)dld * elem,
               (const char *)src + (size_t)j * (size_t)sld * elem, col);
}

#endif
