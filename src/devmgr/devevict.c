/* Device copies from the zone: the LRU of each device, the choice of a
 * victim when the zone is full (clean copies first, then dirty ones once
 * their newest version was written back to host, so that it is never
 * lost) and the allocation of a device copy that evicts as needed. The
 * copies' bytes and the write-back itself are devcopy.c's. */
#include <stdlib.h>

#include "devmgr/devahead.h"
#include "devmgr/devmgr.h"
#include "trace/trace.h"
#include "util/log.h"

/* ---- the LRU of a device ------------------------------------------------ */

static void lru_unlink_locked(weft_devmgr_t *m, weft_data_copy_t *c) { weft_list_remove(&c->lru); }

static void lru_append_locked(weft_devmgr_t *m, weft_data_copy_t *c)
{
    weft_list_push_back(&m->lru, &c->lru);
}

void weft_devcopy_touch(weft_devmgr_t *m, weft_data_copy_t *c)
{
    if (c->owner == WEFT_MEM_MANAGED) return; /* never evicted: not listed */
    pthread_mutex_lock(&m->lru_lock);
    if (weft_list_linked(&c->lru)) weft_list_move_back(&m->lru, &c->lru);
    pthread_mutex_unlock(&m->lru_lock);
}

/* free_fn of runtime-owned device copies; the allocator argument is the
 * copy itself so that it leaves its LRU before its memory goes back. */
static void devcopy_free(void *allocator, void *ptr, size_t bytes)
{
    weft_data_copy_t *c = allocator;
    weft_devmgr_t *m = c->data->ctx->devmgr[c->device];
    /* The device closed already (weft_fini frees a disagreeing taskpool
     * after the devices, and its last reference may free a copy): the
     * copy's memory went with the device's. Before, this crashed. */
    if (m == NULL) return;
    weft_devahead_forget(m, c);
    pthread_mutex_lock(&m->lru_lock);
    lru_unlink_locked(m, c);
    pthread_mutex_unlock(&m->lru_lock);
    if (weft_zone_free(m->dev->zone, c->zone_ptr ? c->zone_ptr : ptr) != WEFT_ZONE_OK)
        weft_log(WEFT_LOG_ERROR, m->dev->index, "copy of %zu bytes at %p is not in the zone", bytes,
                 ptr);
    if (m->dev->per_tile) m->dev->ops->mem_free_tile(m->dev, ptr, bytes);
    atomic_fetch_sub(&m->live_copies, 1);
}

/* ---- eviction ------------------------------------------------------------ */

/* A reference on d unless it is already being destroyed (its copies are
 * then on their way back to the zone anyway). */
static int data_tryretain(weft_data_t *d)
{
    int r = atomic_load(&d->refs);
    while (r > 0)
        if (atomic_compare_exchange_weak(&d->refs, &r, r + 1)) return 1;
    return 0;
}

/* A copy that can go without losing anything: stale, or another copy
 * holds the same newest version. */
static int copy_clean_locked(const weft_data_t *d, const weft_data_copy_t *c)
{
    if (!weft_data_copy_is_newest_locked(d, c)) return 1;
    for (int i = 0; i < WEFT_MAX_DEVICES; i++)
        if (d->copies[i] != c && weft_data_copy_is_newest_locked(d, d->copies[i])) return 1;
    return 0;
}

/* Under d's lock: c may go now (nobody reads or fills it, and d is not
 * being destroyed). */
static int evictable_locked(const weft_data_t *d, const weft_data_copy_t *c)
{
    return d->copies[c->device] == c && c->readers == 0 && c->xfer != WEFT_XFER_UNDER &&
           atomic_load(&d->refs) > 0;
}

/* The most evictable copies, least recently used first, that a pick
 * weighs: each eviction walked every copy on the device (1 ms an eviction
 * with 16,000 resident, a stranger's measurement). Beyond them the
 * choice is the best of those seen, as approximate LRU caches do. */
#define EVICT_LOOK 256

/* Under the LRU lock: the least recently used copy that this pass may
 * evict, returned with its data retained and locked, out of the LRU. With
 * a dirty pass to follow (dirty_next), the clean pass looks at EVICT_LOOK
 * evictable copies at most; without one (a caller that cannot write back)
 * it looks on until a clean one, which alone can go. */
static weft_data_copy_t *pick_lru(weft_devmgr_t *m, int dirty_pass, int dirty_next)
{
    int looked = 0;
    for (weft_list_t *l = weft_list_first(&m->lru); l && (dirty_pass || looked < EVICT_LOOK);
         l = weft_list_next(&m->lru, l)) {
        weft_data_copy_t *c = weft_list_entry(l, weft_data_copy_t, lru);
        weft_data_t *d = c->data;
        if (!weft_spin_trylock(&d->lock)) continue; /* busy: not a victim now */
        int evictable = evictable_locked(d, c);
        int clean = evictable && copy_clean_locked(d, c);
        looked += dirty_next ? evictable : clean;
        int ok = evictable && (dirty_pass || clean);
        if (ok && data_tryretain(d)) {
            lru_unlink_locked(m, c);
            return c;
        }
        weft_data_unlock(d);
    }
    return NULL;
}

/* 1 when a copy whose data is next used at `next` (clean or not) is a
 * better victim than the best so far: used later, or as late and clean
 * (nothing to write back). Ties keep the less recently used. */
static int farther(weft_use_t next, int clean, const weft_data_copy_t *best, weft_use_t best_next,
                   int best_clean)
{
    if (!best || weft_use_after(next, best_next)) return 1;
    return !weft_use_after(best_next, next) && clean > best_clean;
}

/* The best victim so far of pick_farthest, its data locked. */
typedef struct {
    weft_data_copy_t *c;
    weft_use_t next;
    int clean;
} farthest_t;

/* Weighs copy c (under the LRU lock) for pick_farthest; 1 when this pick
 * may take it. */
static int farthest_weigh(weft_devmgr_t *m, farthest_t *best, weft_data_copy_t *c, weft_use_t after,
                          int clean_only)
{
    weft_data_t *d = c->data;
    if (!weft_spin_trylock(&d->lock)) return 0;
    weft_use_t next = weft_nextuse_first_locked(&d->uses, m->dev->index);
    int ok = evictable_locked(d, c) && weft_use_after(next, after);
    int clean = ok && copy_clean_locked(d, c);
    int takes = ok && (!clean_only || clean);
    if (!takes || !farther(next, clean, best->c, best->next, best->clean)) {
        weft_data_unlock(d);
        return takes;
    }
    if (best->c) weft_data_unlock(best->c->data);
    *best = (farthest_t){c, next, clean};
    return 1;
}

/* Under the LRU lock: the copy whose data's next use (by this rank's
 * unfinished tasks, in run order) is farthest, copies with none first,
 * among the first EVICT_LOOK / 2 it may take from each end of the LRU:
 * the least recently used (the farthest where the program goes back to
 * recent tiles), and the most recently used (the farthest where it sweeps
 * its tiles in turn, as a factorization's trailing updates do). Only
 * copies next used after `after`, and only clean ones with clean_only.
 * Returned like pick_lru's. The best so far stays locked while the walk
 * goes on (other data are only try-locked); the LRU lock keeps every
 * listed copy alive. Each pick walked every copy on the device before (1
 * ms an eviction with 16,000 resident, a stranger's measurement); with the
 * two ends a sweep of twice the device's tiles made as many evictions as
 * that whole walk (2,041, 8,185, 32,761 with 1,000 to 16,000 resident),
 * where the least recently used end alone made 25-48% more. */
static weft_data_copy_t *pick_farthest(weft_devmgr_t *m, weft_use_t after, int clean_only)
{
    farthest_t best = {NULL, after, 0};
    weft_list_t *l = weft_list_first(&m->lru), *stop = NULL;
    for (int looked = 0; l && looked < EVICT_LOOK / 2; l = weft_list_next(&m->lru, l)) {
        looked +=
            farthest_weigh(m, &best, weft_list_entry(l, weft_data_copy_t, lru), after, clean_only);
        stop = l;
    }
    /* From the other end, down to where the first walk stopped. */
    if (l) {
        int looked = 0;
        for (weft_list_t *r = weft_list_last(&m->lru); r != stop && looked < EVICT_LOOK / 2;
             r = r->prev)
            looked += farthest_weigh(m, &best, weft_list_entry(r, weft_data_copy_t, lru), after,
                                     clean_only);
    }
    if (best.c && !data_tryretain(best.c->data)) {
        weft_data_unlock(best.c->data); /* its last reference went meanwhile */
        return NULL;
    }
    if (best.c) lru_unlink_locked(m, best.c);
    return best.c;
}

/* Takes the victim out of d; the caller frees it once d is unlocked. */
static weft_data_copy_t *evict_locked(weft_devmgr_t *m, weft_data_t *d, int device)
{
    weft_data_copy_t *gone = weft_data_copy_unlink_locked(d, device);
    weft_data_fix_owner_locked(d);
    atomic_fetch_add(&m->dev->stats.evictions, 1);
    return gone;
}

/* Victims whose write-back to host failed during one search for room.
 * Each keeps its newest version on the device (dirty, listed: nothing is
 * lost, a later eviction or the wait writes it back) and is held by a
 * reader and a reference until the search ends, so that no pick takes it
 * again meanwhile and another copy goes instead. */
#define EVICT_HELD_MAX 4

typedef struct evict_held {
    weft_data_copy_t *copy[EVICT_HELD_MAX];
    int n;
    int rc;                 /* the first failed write-back's status */
    unsigned long long key; /* and its data */
} evict_held_t;

/* Under d's lock: c, whose write-back failed with rc, joins h with the
 * reader and reference the caller holds; 0 when h is full. */
static int hold_victim_locked(evict_held_t *h, weft_data_copy_t *c, int rc)
{
    if (h->n == EVICT_HELD_MAX) return 0;
    if (h->n == 0) {
        h->rc = rc;
        h->key = (unsigned long long)c->data->key;
    }
    h->copy[h->n++] = c;
    return 1;
}

/* The end of a search for room: the held victims may be picked again. */
static void release_held(evict_held_t *h)
{
    for (int i = 0; i < h->n; i++) {
        weft_data_t *d = h->copy[i]->data;
        weft_data_lock(d);
        weft_data_copy_reader_release_locked(h->copy[i]);
        weft_data_unlock(d);
        weft_data__unref(d);
    }
    h->n = 0;
}

/* A failed write-back of a victim: said (the data is safe), the search
 * goes on with another copy. */
static void warn_held(weft_devmgr_t *m, const weft_data_t *d, int rc)
{
    weft_log(WEFT_LOG_WARN, m->dev->index,
             "data %llu: the write-back of its newest version v%u to host memory, to make room "
             "on %s, failed (%s): it stays on the device, and another copy is evicted instead",
             (unsigned long long)d->key, d->version, m->dev->name, weft_strerror(rc));
}

/* A dirty victim: its newest version goes to host first (waiting for the
 * host copy when it is busy), then it goes unless someone started using it
 * meanwhile (it is then listed again). Returns 1 when it went or became
 * clean (*went: which), 0 when its write-back failed and it joined h, a
 * negative status when it failed and h is full. */
static int evict_dirty(weft_devmgr_t *m, weft_data_t *d, weft_data_copy_t *c, evict_held_t *h,
                       int *went)
{
    int device = c->device;
    weft_data_copy_reader_acquire_locked(c);
    weft_data_unlock(d);
    /* A warning: the caller takes another victim, or says why it cannot. */
    int rc = weft_devcopy_to_host(WEFT_LOG_WARN, d, NULL);
    weft_data_lock(d);
    int held = rc != WEFT_SUCCESS && hold_victim_locked(h, c, rc);
    if (!held) weft_data_copy_reader_release_locked(c);
    if (rc == WEFT_SUCCESS) atomic_fetch_add(&m->dev->stats.writebacks, 1);
    weft_data_copy_t *gone = NULL;
    if (rc == WEFT_SUCCESS && c->readers == 0 && copy_clean_locked(d, c)) {
        gone = evict_locked(m, d, device);
    } else {
        pthread_mutex_lock(&m->lru_lock);
        lru_append_locked(m, c);
        pthread_mutex_unlock(&m->lru_lock);
    }
    *went = gone != NULL;
    weft_data_unlock(d);
    weft_data_copy_free(gone, d->bytes);
    if (held) warn_held(m, d, rc);
    if (!held) weft_data__unref(d);
    return rc == WEFT_SUCCESS ? 1 : held ? 0 : rc;
}

/* Under the LRU lock: the next victim of a pass (see evict_one). */
static weft_data_copy_t *pick(weft_devmgr_t *m, weft_use_t after, int write_back, int dirty_pass)
{
    return m->evict_next_use ? pick_farthest(m, after, !write_back)
                             : pick_lru(m, dirty_pass, write_back);
}

/* Evicts c, a victim returned by pick with its data locked and retained;
 * evict_dirty's answer. */
static int evict_victim(weft_devmgr_t *m, weft_data_copy_t *c, evict_held_t *h)
{
    weft_data_t *d = c->data;
    weft_trace_t *tr = m->ctx->trace;
    uint64_t t0 = weft_trace_stamp(tr);
    unsigned long long key = (unsigned long long)d->key;
    int rc = 1, dirty = !copy_clean_locked(d, c), went = 1;
    if (dirty) {
        rc = evict_dirty(m, d, c, h, &went);
    } else {
        weft_data_copy_t *gone = evict_locked(m, d, c->device);
        went = gone != NULL;
        weft_data_unlock(d);
        weft_data_copy_free(gone, d->bytes);
        weft_data__unref(d);
    }
    /* One "evict" per eviction counted (stats.evictions); a victim that
     * was written back and kept (a task took it meanwhile, or the
     * write-back failed) is a "write-back" alone. */
    weft_trace_slice(tr, weft_trace_thread_track, t0, weft_trace_now(),
                     went ? "evict" : "write-back", "evict",
                     "\"key\":%llu,\"device\":%d,\"writeback\":%d", key, m->dev->index, dirty);
    return rc;
}

/* Frees one copy of the device: 1 when one went (or became clean), 0 when
 * nothing is evictable now, a negative status when write-backs failed for
 * more victims than h holds (a victim whose write-back fails joins h and
 * another is tried). With next_use only a copy next used after `after`
 * may go. Without write_back only a clean copy may go: a dirty one would
 * first be copied to host, synchronously, by the calling thread. */
static int evict_one(weft_devmgr_t *m, weft_use_t after, int write_back, evict_held_t *h)
{
    for (int dirty_pass = 0; dirty_pass < 2; dirty_pass++) {
        if (dirty_pass && (m->evict_next_use || !write_back)) break; /* next_use weighs both */
        for (;;) {
            pthread_mutex_lock(&m->lru_lock);
            weft_data_copy_t *c = pick(m, after, write_back, dirty_pass);
            pthread_mutex_unlock(&m->lru_lock);
            if (!c) break;
            int rc = evict_victim(m, c, h);
            if (rc != 0) return rc;
        }
    }
    return 0;
}

int weft_devcopy_evict_all(weft_devmgr_t *m)
{
    evict_held_t h = {.n = 0};
    int n = 0, r;
    while ((r = evict_one(m, WEFT_USE_ANY, 1, &h)) > 0) n++;
    release_held(&h);
    return r < 0 ? r : h.rc < 0 ? h.rc : n;
}

/* No room for d because the only copies that could go hold their data's
 * newest version and could not be written back (h): the caller fails. */
static int no_room_held(int level, weft_devmgr_t *m, const weft_data_t *d, const evict_held_t *h,
                        int rc)
{
    weft_log(level, m->dev->index,
             "no room on %s for data %llu: the copies that could be evicted hold the newest "
             "version of their data, and writing it back to host memory failed (data %llu "
             "first: %s); they stay on the device",
             m->dev->name, (unsigned long long)d->key, h->key, weft_strerror(h->rc));
    return rc < 0 ? rc : h->rc;
}

/* Zone memory for d, evicting as needed; NULL with *rc set when none:
 * WEFT_AGAIN when nothing can go now. A victim's failed write-back fails
 * the allocation only when no other copy can go and no task in flight on
 * the device will free one (no_room_held); while tasks are in flight the
 * caller waits for them and tries again, that victim included. */
static void *zone_alloc_evicting(weft_devmgr_t *m, const weft_data_t *d, weft_use_t after,
                                 int write_back, int level, int *rc)
{
    evict_held_t h = {.n = 0};
    void *p = weft_zone_malloc(m->dev->zone, d->bytes);
    while (!p) {
        int r = evict_one(m, after, write_back, &h);
        if (r <= 0) {
            /* Held victims only on the manager's own thread (write_back):
             * its tasks and its copies ahead are what may still free room. */
            int stuck = h.n > 0 && (r < 0 || (m->ninflight == 0 && weft_devahead_inflight(m) == 0));
            *rc = stuck ? no_room_held(level, m, d, &h, r) : r < 0 ? r : WEFT_AGAIN;
            break;
        }
        p = weft_zone_malloc(m->dev->zone, d->bytes);
    }
    release_held(&h);
    return p;
}

/* Zone bytes a flow's data takes on the device: none when the copy there
 * is the user's memory (MANAGED), which the zone does not hold, nor, with
 * present_only, when it has no copy there. */
static size_t zone_need(int dev, weft_data_t *d, int present_only)
{
    weft_data_lock(d);
    weft_data_copy_t *c = d->copies[dev];
    int none = (c && c->owner == WEFT_MEM_MANAGED) || (present_only && !c);
    weft_data_unlock(d);
    size_t a = WEFT_ZONE_ALIGNMENT;
    return none ? 0 : (d->bytes + a - 1) / a * a;
}

/* zone_need over t's distinct flows. */
static size_t task_zone_bytes(weft_devmgr_t *m, const weft_task_t *t, int present_only)
{
    size_t need = 0;
    for (int i = 0; i < t->nflows; i++)
        if (weft_task_first_flow_of(t, i) == i)
            need += zone_need(m->dev->index, t->flow[i].data, present_only);
    return need;
}

size_t weft_devcopy_task_bytes(weft_devmgr_t *m, const weft_task_t *t)
{
    return task_zone_bytes(m, t, 0);
}

size_t weft_devcopy_task_resident(weft_devmgr_t *m, const weft_task_t *t)
{
    return task_zone_bytes(m, t, 1);
}

int weft_devcopy_task_fits(weft_devmgr_t *m, const weft_task_t *t)
{
    size_t need = weft_devcopy_task_bytes(m, t), capacity = weft_zone_capacity(m->dev->zone);
    int ntiles = 0;
    for (int i = 0; i < t->nflows; i++) ntiles += weft_task_first_flow_of(t, i) == i;
    if (need <= capacity) return WEFT_SUCCESS;
    weft_log(WEFT_LOG_ERROR, m->dev->index,
             "task %s needs %zu bytes of device memory for its %d tile%s, but the zone of "
             "%s holds %zu bytes even when empty: it can never run there; raise "
             "device_memory_use, device_memory_limit or device_emu_memory, run fewer ranks on "
             "the device, or use smaller tiles",
             weft_task_name(t).text, need, ntiles, ntiles == 1 ? "" : "s", m->dev->name, capacity);
    return WEFT_ERR_DEVMEM;
}

int weft_devcopy_pinned(weft_devmgr_t *m)
{
    int pinned = 0;
    pthread_mutex_lock(&m->lru_lock);
    for (weft_list_t *l = weft_list_first(&m->lru); l; l = weft_list_next(&m->lru, l)) {
        weft_data_copy_t *c = weft_list_entry(l, weft_data_copy_t, lru);
        weft_data_t *d = c->data;
        if (!weft_spin_trylock(&d->lock)) {
            pinned++; /* busy now: someone is using it */
            continue;
        }
        pinned += c->readers > 0 || c->xfer == WEFT_XFER_UNDER;
        weft_data_unlock(d);
    }
    pthread_mutex_unlock(&m->lru_lock);
    return pinned;
}

/* Under d's lock: the copy of d on m's device with one reader taken for
 * the caller (WEFT_SUCCESS), 1 when there is none. WEFT_AGAIN for the comm
 * thread (`busy_ok` 0) when another thread is writing it (a copy ahead, a
 * stage-in, another landing): bytes received into it now would be
 * overwritten by the older ones still arriving, and labelled newest. */
static int existing_locked(weft_devmgr_t *m, weft_data_t *d, int busy_ok, weft_data_copy_t **out)
{
    weft_data_copy_t *c = d->copies[m->dev->index];
    if (!c) return 1;
    if (!busy_ok && c->xfer == WEFT_XFER_UNDER) return WEFT_AGAIN;
    weft_data_copy_reader_acquire_locked(c);
    *out = c;
    return WEFT_SUCCESS;
}

/* Memory allocated for a copy that was not attached goes back. */
static void give_back(weft_devmgr_t *m, void *zone_ptr, void *mem, size_t bytes)
{
    int zrc = weft_zone_free(m->dev->zone, zone_ptr);
    (void)zrc; /* zone_ptr came from this zone a moment ago */
    if (m->dev->per_tile) m->dev->ops->mem_free_tile(m->dev, mem, bytes);
}

/* Attaches a copy of d at mem (zone block p) on m's device, listed in its
 * LRU, with one reader taken; NULL when out of memory. Under d's lock. */
static weft_data_copy_t *attach_locked(weft_devmgr_t *m, weft_data_t *d, void *p, void *mem)
{
    weft_data_copy_t *c =
        weft_data_copy_attach(d, m->dev->index, mem, d->rows, WEFT_MEM_RUNTIME, devcopy_free, NULL);
    if (!c) return NULL;
    c->allocator = c;
    c->zone_ptr = m->dev->per_tile ? p : NULL;
    weft_data_copy_reader_acquire_locked(c);
    atomic_fetch_add(&m->live_copies, 1);
    pthread_mutex_lock(&m->lru_lock);
    lru_append_locked(m, c);
    pthread_mutex_unlock(&m->lru_lock);
    return c;
}

/* fault_inject device_alloc: the device refuses a tile's own allocation. */
static int tile_alloc_refused(weft_devmgr_t *m)
{
    if (!weft_fault_hit(m->dev->fault, WEFT_FAULT_DEVICE_ALLOC, NULL)) return 0;
    weft_log(WEFT_LOG_WARN, m->dev->index,
             "fault_inject: %s refuses a tile's allocation (injected)", m->dev->name);
    return 1;
}

/* The manager's callers (write_back, busy_ok 1) wait themselves for a copy
 * being written; the comm thread's must not (get_nowait). level: of the
 * 'no room' line when an eviction's write-back fails and nothing else can
 * go. */
static int get_copy(weft_devmgr_t *m, weft_data_t *d, weft_use_t after, int write_back, int busy_ok,
                    int level, weft_data_copy_t **out)
{
    int dev = m->dev->index;
    weft_data_lock(d);
    int rc = existing_locked(m, d, busy_ok, out);
    weft_data_unlock(d);
    if (rc <= 0) return rc;
    if (d->bytes > weft_zone_capacity(m->dev->zone)) {
        weft_log(WEFT_LOG_ERROR, dev, "data %llu (%zu bytes) is larger than the device zone",
                 (unsigned long long)d->key, d->bytes);
        return WEFT_ERR_DEVMEM;
    }
    rc = WEFT_SUCCESS;
    void *p = zone_alloc_evicting(m, d, after, write_back, level, &rc), *mem = p;
    if (!p) return rc;
    /* Per-tile mode: the zone counted the bytes, the memory is its own
     * (and the device's allocator may refuse it, the zone's count
     * notwithstanding: another process took the memory). */
    if (m->dev->per_tile && (tile_alloc_refused(m) ||
                             m->dev->ops->mem_alloc_tile(m->dev, d->bytes, &mem) != WEFT_SUCCESS)) {
        int zrc = weft_zone_free(m->dev->zone, p);
        (void)zrc;
        return WEFT_ERR_DEVMEM;
    }
    /* The manager (a task, a copy ahead) and the comm thread (a receive)
     * may both have allocated for d on this device meanwhile: the first
     * copy attached is the one, the other's memory goes back. */
    weft_data_copy_t *c = NULL;
    int attached = 0;
    weft_data_lock(d);
    rc = existing_locked(m, d, busy_ok, &c);
    if (rc == 1) {
        c = attach_locked(m, d, p, mem);
        attached = c != NULL;
        rc = attached ? WEFT_SUCCESS : WEFT_ERR_NOMEM;
    }
    weft_data_unlock(d);
    if (!attached) give_back(m, p, mem, d->bytes);
    if (rc == WEFT_SUCCESS) *out = c;
    return rc;
}

int weft_devcopy_get_nowait(weft_devmgr_t *m, weft_data_t *d, weft_data_copy_t **out)
{
    return get_copy(m, d, WEFT_USE_ANY, 0, 0, WEFT_LOG_ERROR, out);
}

int weft_devcopy_get_ahead(weft_devmgr_t *m, weft_data_t *d, weft_use_t after, int level,
                           weft_data_copy_t **out)
{
    return get_copy(m, d, after, 1, 1, level, out);
}
