/* Which ready task a device manager starts next, and whether it may start
 * it now (issue 18): with device_evict=next_use, among the first ready
 * tasks of the top priority the one whose tiles are already on the device,
 * and no more tasks in flight than device_prefetch_share of the zone holds,
 * so that prefetches do not evict the next tasks' tiles. With lru: the
 * first ready task, as many as device_inflight allows. */
#include <stdlib.h>

#include "devmgr/devmgr.h"
#include "util/log.h"

/* Bytes t's reads would bring to m's device: flows whose data has no
 * copy there at the newest version (nor one arriving). */
static size_t missing_bytes(weft_devmgr_t *m, const weft_task_t *t)
{
    size_t missing = 0;
    for (int i = 0; i < t->nflows; i++) {
        weft_data_t *d = t->flow[i].data;
        if (!(t->flow[i].mode & WEFT_R) || weft_task_first_flow_of(t, i) != i) continue;
        weft_data_lock(d);
        if (!weft_data_copy_at_newest_locked(d, d->copies[m->dev->index])) missing += d->bytes;
        weft_data_unlock(d);
    }
    return missing;
}

/* Of n ready tasks in run order, the index of the one whose reads have the
 * fewest bytes to bring (the first among equals). */
static int pick_resident(weft_devmgr_t *m, weft_task_t *const *cand, int n)
{
    int best = 0;
    size_t best_missing = missing_bytes(m, cand[0]);
    for (int i = 1; i < n && best_missing > 0; i++) {
        size_t missing = missing_bytes(m, cand[i]);
        if (missing < best_missing) {
            best = i;
            best_missing = missing;
        }
    }
    return best;
}

#define RESIDENT_PICK 8 /* ready tasks of the top priority weighed by residency */

/* The next task. With device_evict=next_use: of the first ready tasks of
 * the highest priority, the one with the fewest bytes to bring in (its
 * tiles already on the device), the earliest inserted among equals; the
 * others go back. Weighed outside the queue's lock (it is never held with
 * a data lock). With lru: the first, as before. */
weft_task_t *weft_devpick_next(weft_devmgr_t *m)
{
    weft_task_t *cand[RESIDENT_PICK];
    int n = 0;
    pthread_mutex_lock(&m->lock);
    cand[n] = weft_heap_pop(&m->ready);
    if (cand[n]) n++;
    while (m->evict_next_use && n > 0 && n < RESIDENT_PICK && !weft_heap_empty(&m->ready) &&
           (*(weft_task_t **)weft_vec_at(&m->ready.v, 0))->priority == cand[0]->priority)
        cand[n++] = weft_heap_pop(&m->ready);
    pthread_mutex_unlock(&m->lock);
    if (n <= 1) return n ? cand[0] : NULL;
    int best = pick_resident(m, cand, n);
    weft_task_t *t = cand[best];
    cand[best] = cand[--n];
    pthread_mutex_lock(&m->lock);
    int rc = 0;
    for (int i = 0; i < n; i++) rc |= weft_heap_push(&m->ready, cand[i]);
    pthread_mutex_unlock(&m->lock);
    if (rc != 0) {
        weft_log(WEFT_LOG_ERROR, m->dev->index, "out of memory growing the ready queue");
        abort();
    }
    return t;
}

/* 1 when t, started now beside the tasks in flight, would take their tiles
 * past device_prefetch_share of the zone: it waits for one to end, rather
 * than evict the tiles the next tasks need (sets *bytes, t's share). Only
 * with device_evict=next_use: lru keeps the earlier behaviour whole. */
int weft_devpick_past_budget(weft_devmgr_t *m, const weft_task_t *t, size_t *bytes)
{
    *bytes = weft_devcopy_task_bytes(m, t);
    size_t budget = weft_zone_capacity(m->dev->zone) / 100 * (size_t)m->prefetch_share;
    return m->evict_next_use && m->ninflight > 0 && m->inflight_bytes + *bytes > budget;
}
