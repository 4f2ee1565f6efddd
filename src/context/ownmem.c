/* Whether bytes a registration names are memory weft allocated itself
 * (data/span.h's weft_owned): the slabs of its host copies and the zones
 * of its devices. A registration there was accepted, and its tasks raced
 * with those of the data whose copy it was (lost updates), or wrote into
 * the next data given the block once the first was released. */
#include "context/context.h"
#include "data/hostmem.h"
#include "device/registry.h"

#include <stdio.h>

int weft_context_weft_memory(void *arg, uintptr_t lo, uintptr_t hi, char *what, size_t n)
{
    weft_context_t *ctx = arg;
    if (weft_hostmem_holds(ctx->hostmem, lo, hi)) {
        snprintf(what, n, "its host copies of data");
        return 1;
    }
    for (int i = 1; ctx->devices && i <= ctx->devices->n; i++) {
        const weft_device_t *dev = ctx->devices->dev[i];
        uintptr_t base = (uintptr_t)dev->zone_base;
        if (base && lo < base + dev->zone_bytes && base < hi) {
            snprintf(what, n, "the memory of device %d", i);
            return 1;
        }
    }
    return 0;
}
