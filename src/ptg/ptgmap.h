/* The map the PTG builder keeps from a task or flow reference (class,
 * indices, flow) to a number of its own: open addressing, linear probing,
 * grown at half full. Keys are references with their unused indices zeroed
 * (ptg_ref_norm), so equal references hash alike. */
#ifndef WEFT_PTG_PTGMAP_H
#define WEFT_PTG_PTGMAP_H

#include <stddef.h>
#include <stdint.h>

#include "weft/ptg.h"

typedef struct weft_ptgmap {
    weft_ptg_ref_t *keys;
    size_t *vals; /* SIZE_MAX: empty slot */
    size_t cap;   /* a power of two, 0 before the first insertion */
    size_t n;
} weft_ptgmap_t;

void weft_ptgmap_init(weft_ptgmap_t *m);
void weft_ptgmap_fini(weft_ptgmap_t *m);
/* The value of key, or SIZE_MAX when absent. */
size_t weft_ptgmap_get(const weft_ptgmap_t *m, const weft_ptg_ref_t *key);
/* Sets key's value (key absent). WEFT_SUCCESS or WEFT_ERR_NOMEM. */
int weft_ptgmap_put(weft_ptgmap_t *m, const weft_ptg_ref_t *key, size_t val)
    __attribute__((warn_unused_result));
/* Bytes it holds (runtime metadata). */
size_t weft_ptgmap_bytes(const weft_ptgmap_t *m);

#endif
