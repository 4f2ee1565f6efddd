/* The pending uses of a data (nextuse.h): a ring in increasing insertion
 * number, appended at insertion and dropped at each task's end. */
#include "data/nextuse.h"

#include <stdlib.h>

#include "data/data.h"

void weft_nextuse_push_locked(weft_nextuse_t *u, weft_use_t use)
{
    u->use[(u->head + u->n) % u->cap] = use;
    if (u->n == 0 || use.priority > u->prio_max) u->prio_max = use.priority;
    u->n++;
    int here = use.device < 0 || use.device == u->first_device;
    if (u->first_known && here && weft_use_after(u->first, use)) u->first = use;
}

weft_use_t *weft_nextuse_grow_locked(weft_nextuse_t *u, weft_use_t *grown, int cap)
{
    for (int i = 0; i < u->n; i++) grown[i] = u->use[(u->head + i) % u->cap];
    weft_use_t *old = u->use;
    u->use = grown;
    u->head = 0;
    u->cap = cap;
    return old;
}

void weft_nextuse_drop_locked(weft_nextuse_t *u, uint64_t seq)
{
    int lo = 0, hi = u->n; /* the first use numbered seq or above */
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (u->use[(u->head + mid) % u->cap].seq < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    weft_use_t *x = lo < u->n ? &u->use[(u->head + lo) % u->cap] : NULL;
    if (!x || x->seq != seq || x->dropped) return;
    x->dropped = 1;
    if (u->first_known && u->first.seq == seq) u->first_known = 0;
    while (u->n > 0 && u->use[u->head].dropped) {
        u->head = (u->head + 1) % u->cap;
        u->n--;
    }
}

weft_use_t weft_nextuse_first_locked(weft_nextuse_t *u, int device)
{
    if (u->first_known && u->first_device == device) return u->first;
    weft_use_t first = WEFT_USE_NONE;
    int i = 0, seen_max = INT32_MIN;
    for (; i < u->n; i++) {
        weft_use_t x = u->use[(u->head + i) % u->cap];
        if (x.dropped) continue;
        if (x.priority > seen_max) seen_max = x.priority;
        if (x.device >= 0 && x.device != device) continue;
        if (weft_use_after(first, x)) first = x;
        /* No use listed outranks it, and those after it come later. */
        if (x.priority >= u->prio_max) break;
    }
    if (i == u->n && u->n > 0) u->prio_max = seen_max; /* every use seen: the bound is tight */
    u->first = first;
    u->first_known = 1;
    u->first_device = device;
    return first;
}

int weft_nextuse_writer_before_locked(const weft_nextuse_t *u, uint64_t seq)
{
    /* One walk: a write numbered before seq, or unordered, counts at once;
     * any other write counts unless seq's own use (one at most: the ring's
     * numbers increase) is listed and ordered. It is not listed when it
     * could not be noted (out of memory). */
    int ordered = 0, later_write = 0;
    for (int i = 0; i < u->n; i++) {
        weft_use_t x = u->use[(u->head + i) % u->cap];
        if (x.dropped) continue;
        if (x.seq == seq) {
            ordered = !x.unordered;
            continue;
        }
        if (!x.writes) continue;
        if (x.seq < seq || x.unordered) return 1;
        later_write = 1;
    }
    return later_write && !ordered;
}

void weft_nextuse_fini(weft_nextuse_t *u)
{
    free(u->use);
    u->use = NULL;
    u->n = u->cap = u->head = u->first_known = 0;
}

int weft_data_use_add(weft_data_t *d, weft_use_t use)
{
    weft_use_t *old = NULL;
    weft_data_lock(d);
    if (!weft_nextuse_has_room_locked(&d->uses)) {
        /* Only the inserting thread appends, so the room made here is
         * still there after the allocation; drops meanwhile only add room. */
        int cap = d->uses.cap ? d->uses.cap * 2 : 8;
        weft_data_unlock(d);
        weft_use_t *grown = malloc(sizeof *grown * (size_t)cap);
        if (!grown) return WEFT_ERR_NOMEM;
        weft_data_lock(d);
        old = weft_nextuse_grow_locked(&d->uses, grown, cap);
    }
    weft_nextuse_push_locked(&d->uses, use);
    weft_data_unlock(d);
    free(old); /* host memory goes back outside the spinlock */
    return WEFT_SUCCESS;
}

void weft_data_use_done(weft_data_t *d, uint64_t seq)
{
    weft_data_lock(d);
    weft_nextuse_drop_locked(&d->uses, seq);
    weft_data_unlock(d);
}
