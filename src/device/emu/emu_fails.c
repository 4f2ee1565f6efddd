/* The failed ops of an emulated stream (emu_fails.h); the caller holds the
 * device's lock. */
#include "device/emu/emu_fails.h"

#include <stdlib.h>
#include <string.h>

void weft_emu__fails_add(emu_fails_t *f, uint64_t op)
{
    if (f->n == WEFT_EMU_FAILS_KEPT) {
        /* The older half goes: a move every KEPT / 2 failures. */
        size_t drop = f->n / 2;
        f->dropped_upto = f->op[drop - 1];
        memmove(f->op, f->op + drop, (f->n - drop) * sizeof *f->op);
        f->n -= drop;
    }
    if (f->n == f->cap) {
        size_t cap = f->cap ? 2 * f->cap : 16;
        uint64_t *v = realloc(f->op, cap * sizeof *v);
        if (!v) {
            f->lost = 1;
            return;
        }
        f->op = v;
        f->cap = cap;
    }
    f->op[f->n++] = op;
}

int weft_emu__fails_between(const emu_fails_t *f, uint64_t prev, uint64_t last)
{
    if (f->lost || prev < f->dropped_upto) return 1;
    size_t lo = 0, hi = f->n; /* the first failure past prev */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (f->op[mid] <= prev)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < f->n && f->op[lo] <= last;
}

void weft_emu__fails_free(emu_fails_t *f)
{
    free(f->op);
    *f = (emu_fails_t){0};
}
