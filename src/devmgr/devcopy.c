/* Copies across devices: device copies from the zone with eviction (clean
 * copies first, then dirty ones once written back to host: the newest
 * version is never lost), the LRU of each device, and the write-back of a
 * device's newest version to host memory (pushout). */
#include <stdlib.h>

#include "data/hostmem.h"
#include "devmgr/devmgr.h"
#include "trace/trace.h"
#include "util/fault.h"
#include "util/inbody.h"
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

/* Under the LRU lock: the least recently used copy that this pass may
 * evict, returned with its data retained and locked, out of the LRU. */
static weft_data_copy_t *pick_lru(weft_devmgr_t *m, int dirty_pass)
{
    for (weft_list_t *l = weft_list_first(&m->lru); l; l = weft_list_next(&m->lru, l)) {
        weft_data_copy_t *c = weft_list_entry(l, weft_data_copy_t, lru);
        weft_data_t *d = c->data;
        if (!weft_spin_trylock(&d->lock)) continue; /* busy: not a victim now */
        int ok = evictable_locked(d, c) && (dirty_pass || copy_clean_locked(d, c));
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

/* Under the LRU lock: the evictable copy whose data's next use (by this
 * rank's unfinished tasks, in run order) is farthest, copies with none
 * first; only copies next used after `after`. Returned like pick_lru's.
 * The best so far stays locked while the walk goes on (other data are only
 * try-locked); the LRU lock keeps every listed copy alive. */
static weft_data_copy_t *pick_farthest(weft_devmgr_t *m, weft_use_t after)
{
    weft_data_copy_t *best = NULL;
    weft_use_t best_next = after;
    int best_clean = 0;
    for (weft_list_t *l = weft_list_first(&m->lru); l; l = weft_list_next(&m->lru, l)) {
        weft_data_copy_t *c = weft_list_entry(l, weft_data_copy_t, lru);
        weft_data_t *d = c->data;
        if (!weft_spin_trylock(&d->lock)) continue;
        weft_use_t next = weft_nextuse_first_locked(&d->uses, m->dev->index);
        int ok = evictable_locked(d, c) && weft_use_after(next, after);
        int clean = ok && copy_clean_locked(d, c);
        if (!ok || !farther(next, clean, best, best_next, best_clean)) {
            weft_data_unlock(d);
            continue;
        }
        if (best) weft_data_unlock(best->data);
        best = c;
        best_next = next;
        best_clean = clean;
    }
    if (best && !data_tryretain(best->data)) {
        weft_data_unlock(best->data); /* its last reference went meanwhile */
        return NULL;
    }
    if (best) lru_unlink_locked(m, best);
    return best;
}

/* Takes the victim out of d; the caller frees it once d is unlocked. */
static weft_data_copy_t *evict_locked(weft_devmgr_t *m, weft_data_t *d, int device)
{
    weft_data_copy_t *gone = weft_data_copy_unlink_locked(d, device);
    weft_data_fix_owner_locked(d);
    atomic_fetch_add(&m->dev->stats.evictions, 1);
    return gone;
}

static int to_host(weft_data_t *d, weft_data_copy_t **out, int wait);

/* A dirty victim: its newest version goes to host first, then it goes
 * unless someone started using it meanwhile (it is then listed again).
 * Without wait, a host copy busy now (bytes landing, a reader) gives 0:
 * nothing evictable now. */
static int evict_dirty(weft_devmgr_t *m, weft_data_t *d, weft_data_copy_t *c, int wait)
{
    int device = c->device;
    weft_data_copy_reader_acquire_locked(c);
    weft_data_unlock(d);
    int rc = to_host(d, NULL, wait);
    weft_data_lock(d);
    weft_data_copy_reader_release_locked(c);
    if (rc == WEFT_SUCCESS) atomic_fetch_add(&m->dev->stats.writebacks, 1);
    weft_data_copy_t *gone = NULL;
    if (rc == WEFT_SUCCESS && c->readers == 0 && copy_clean_locked(d, c)) {
        gone = evict_locked(m, d, device);
    } else {
        pthread_mutex_lock(&m->lru_lock);
        lru_append_locked(m, c);
        pthread_mutex_unlock(&m->lru_lock);
    }
    weft_data_unlock(d);
    weft_data_copy_free(gone, d->bytes);
    weft_data__unref(d);
    return rc == WEFT_SUCCESS ? 1 : rc == WEFT_AGAIN ? 0 : rc;
}

/* Frees one copy of the device: 1 when one went (or became clean), 0 when
 * nothing is evictable now, a negative status when a write-back failed.
 * With next_use only a copy next used after `after` may go. */
static int evict_one(weft_devmgr_t *m, weft_use_t after, int wait)
{
    for (int dirty_pass = 0; dirty_pass < 2; dirty_pass++) {
        if (m->evict_next_use && dirty_pass) break; /* one walk weighs both */
        pthread_mutex_lock(&m->lru_lock);
        weft_data_copy_t *c = m->evict_next_use ? pick_farthest(m, after) : pick_lru(m, dirty_pass);
        pthread_mutex_unlock(&m->lru_lock);
        if (!c) continue;
        weft_data_t *d = c->data;
        weft_trace_t *tr = m->ctx->trace;
        uint64_t t0 = weft_trace_stamp(tr);
        unsigned long long key = (unsigned long long)d->key;
        int rc = 1, dirty = !copy_clean_locked(d, c);
        if (dirty) {
            rc = evict_dirty(m, d, c, wait);
        } else {
            weft_data_copy_t *gone = evict_locked(m, d, c->device);
            weft_data_unlock(d);
            weft_data_copy_free(gone, d->bytes);
            weft_data__unref(d);
        }
        weft_trace_slice(tr, weft_trace_thread_track, t0, weft_trace_now(), "evict", "evict",
                         "\"key\":%llu,\"device\":%d,\"writeback\":%d", key, m->dev->index, dirty);
        return rc;
    }
    return 0;
}

int weft_devcopy_evict_all(weft_devmgr_t *m)
{
    int n = 0, r;
    while ((r = evict_one(m, WEFT_USE_ANY, 1)) > 0) n++;
    return r < 0 ? r : n;
}

static void *zone_alloc_evicting(weft_devmgr_t *m, size_t bytes, weft_use_t after, int wait,
                                 int *rc)
{
    void *p = weft_zone_malloc(m->dev->zone, bytes);
    while (!p) {
        int r = evict_one(m, after, wait);
        if (r <= 0) {
            *rc = r < 0 ? r : WEFT_AGAIN;
            return NULL;
        }
        p = weft_zone_malloc(m->dev->zone, bytes);
    }
    return p;
}

/* Zone bytes a flow's data takes on the device: none when the copy there
 * is the user's memory (MANAGED), which the zone does not hold. */
static size_t zone_need(int dev, weft_data_t *d)
{
    weft_data_lock(d);
    weft_data_copy_t *c = d->copies[dev];
    int managed = c && c->owner == WEFT_MEM_MANAGED;
    weft_data_unlock(d);
    size_t a = WEFT_ZONE_ALIGNMENT;
    return managed ? 0 : (d->bytes + a - 1) / a * a;
}

size_t weft_devcopy_task_bytes(weft_devmgr_t *m, const weft_task_t *t)
{
    size_t need = 0;
    for (int i = 0; i < t->nflows; i++)
        if (weft_task_first_flow_of(t, i) == i) need += zone_need(m->dev->index, t->flow[i].data);
    return need;
}

int weft_devcopy_task_fits(weft_devmgr_t *m, const weft_task_t *t)
{
    size_t need = weft_devcopy_task_bytes(m, t), capacity = weft_zone_capacity(m->dev->zone);
    int ntiles = 0;
    for (int i = 0; i < t->nflows; i++) ntiles += weft_task_first_flow_of(t, i) == i;
    if (need <= capacity) return WEFT_SUCCESS;
    weft_log(WEFT_LOG_ERROR, m->dev->index,
             "task %s needs %zu bytes of device memory for its %d tiles, but the zone of "
             "%s holds %zu bytes even when empty: it can never run there (raise "
             "device_memory_use, device_memory_limit or device_emu_memory, run fewer ranks on "
             "the device, or use smaller tiles)",
             weft_task_name(t).text, need, ntiles, m->dev->name, capacity);
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

static int get_copy(weft_devmgr_t *m, weft_data_t *d, weft_use_t after, int wait,
                    weft_data_copy_t **out);

int weft_devcopy_get_nowait(weft_devmgr_t *m, weft_data_t *d, weft_data_copy_t **out)
{
    return get_copy(m, d, WEFT_USE_ANY, 0, out);
}

int weft_devcopy_get_ahead(weft_devmgr_t *m, weft_data_t *d, weft_use_t after,
                           weft_data_copy_t **out)
{
    return get_copy(m, d, after, 1, out);
}

static int get_copy(weft_devmgr_t *m, weft_data_t *d, weft_use_t after, int wait,
                    weft_data_copy_t **out)
{
    int dev = m->dev->index;
    weft_data_lock(d);
    weft_data_copy_t *c = d->copies[dev];
    if (c) weft_data_copy_reader_acquire_locked(c);
    weft_data_unlock(d);
    if (c) {
        *out = c;
        return WEFT_SUCCESS;
    }
    if (d->bytes > weft_zone_capacity(m->dev->zone)) {
        weft_log(WEFT_LOG_ERROR, dev, "data %llu (%zu bytes) is larger than the device zone",
                 (unsigned long long)d->key, d->bytes);
        return WEFT_ERR_DEVMEM;
    }
    int rc = WEFT_SUCCESS;
    void *p = zone_alloc_evicting(m, d->bytes, after, wait, &rc), *mem = p;
    if (!p) return rc;
    /* Per-tile mode: the zone counted the bytes, the memory is its own. */
    if (m->dev->per_tile && m->dev->ops->mem_alloc_tile(m->dev, d->bytes, &mem) != WEFT_SUCCESS) {
        int zrc = weft_zone_free(m->dev->zone, p);
        (void)zrc;
        return WEFT_ERR_DEVMEM;
    }
    weft_data_lock(d);
    c = weft_data_copy_attach(d, dev, mem, d->rows, WEFT_MEM_RUNTIME, devcopy_free, NULL);
    if (c) {
        c->allocator = c;
        c->zone_ptr = m->dev->per_tile ? p : NULL;
        weft_data_copy_reader_acquire_locked(c);
        atomic_fetch_add(&m->live_copies, 1);
        pthread_mutex_lock(&m->lru_lock);
        lru_append_locked(m, c);
        pthread_mutex_unlock(&m->lru_lock);
    }
    weft_data_unlock(d);
    if (!c) {
        int zrc = weft_zone_free(m->dev->zone, p);
        (void)zrc; /* p came from this zone a moment ago */
        if (m->dev->per_tile) m->dev->ops->mem_free_tile(m->dev, mem, d->bytes);
        return WEFT_ERR_NOMEM;
    }
    *out = c;
    return WEFT_SUCCESS;
}

/* ---- synchronous copies and the write-back to host ---------------------- */

/* The user's stage function for a copy from src to dst, if d has one for
 * that direction. */
static weft_stage_fn stage_fn(const weft_data_t *d, int dst_dev, int src_dev)
{
    if (dst_dev > 0 && src_dev == 0) return d->stage_in;
    if (dst_dev == 0 && src_dev > 0) return d->stage_out;
    return NULL;
}

/* A stage function runs on a device manager's or the comm thread, as a
 * body does: the calls that belong to the main thread are refused there
 * too (a wait would deadlock), and such a call fails the copy. A non-zero
 * return is named here: the copy's status, WEFT_ERR_TASK, reads "a task
 * body failed" in the lines of the task or the write-back it fails. */
static int run_stage_fn(weft_device_t *by, weft_data_t *d, weft_stage_fn fn, const weft_stage_t *s)
{
    atomic_int misuse = 0;
    weft_inbody_t saved;
    weft_inbody_enter(&saved, &(weft_inbody_t){.cls = "stage function of data",
                                               .seq = (unsigned long long)d->key,
                                               .misuse = &misuse});
    int frc = fn(s, d->stage_arg);
    weft_inbody_leave(&saved);
    if (frc != 0)
        weft_log(WEFT_LOG_ERROR, by->index,
                 "the stage-%s function of data %llu (weft_data_set_stage) returned %d: the "
                 "copy from device %d to device %d fails",
                 s->dst_device == 0 ? "out" : "in", (unsigned long long)d->key, frc, s->src_device,
                 s->dst_device);
    return frc != 0 || atomic_load(&misuse) ? WEFT_ERR_TASK : WEFT_SUCCESS;
}

int weft_devcopy_enqueue(weft_device_t *by, int stream, weft_data_t *d, weft_data_copy_t *dst,
                         weft_data_copy_t *src)
{
    if (weft_fault_copy_hit(d->ctx->fault, by->index, (unsigned long long)d->key, src->device,
                            dst->device))
        return WEFT_ERR_INTERNAL;
    weft_stage_fn fn = stage_fn(d, dst->device, src->device);
    if (!fn) {
        weft_region_t rd = {.ptr = dst->ptr, .ld = dst->ld};
        weft_region_t rs = {.ptr = src->ptr, .ld = src->ld};
        return weft_device_copy(by, stream, rd, dst->device, rs, src->device, d->rows, d->cols,
                                d->elem);
    }
    weft_stage_t s = {.dst = dst->ptr,
                      .dst_ld = dst->ld,
                      .dst_device = dst->device,
                      .src = src->ptr,
                      .src_ld = src->ld,
                      .src_device = src->device,
                      .rows = d->rows,
                      .cols = d->cols,
                      .elem = d->elem,
                      .stream = by->ops->stream_handle(by, stream)};
    if (!s.stream) {
        /* No stream to enqueue on: what the stream holds lands first. */
        weft_event_t ev = {0};
        int rc = by->ops->event_record(by, stream, &ev);
        if (rc == WEFT_SUCCESS) {
            rc = by->ops->event_sync(by, &ev);
            by->ops->event_destroy(by, &ev);
        }
        if (rc != WEFT_SUCCESS) return rc;
    }
    if (run_stage_fn(by, d, fn, &s) != WEFT_SUCCESS) return WEFT_ERR_TASK;
    /* Counted as weft_device_copy counts the copies it enqueues. */
    weft_device_count_copy(by, dst->device, src->device, (long long)d->bytes);
    return WEFT_SUCCESS;
}

int weft_devcopy_sync(weft_context_t *ctx, weft_device_t *by, int stream, weft_data_t *d,
                      weft_data_copy_t *dst, weft_data_copy_t *src)
{
    (void)ctx;
    int rc = weft_devcopy_enqueue(by, stream, d, dst, src);
    weft_event_t ev = {0};
    if (rc == WEFT_SUCCESS) rc = by->ops->event_record(by, stream, &ev);
    if (rc == WEFT_SUCCESS) {
        rc = by->ops->event_sync(by, &ev);
        by->ops->event_destroy(by, &ev);
    }
    return rc; /* its bytes were counted when enqueued */
}

/* Host memory taken for a copy that may turn out not to be needed. */
typedef struct host_block {
    void *ptr, *alloc; /* data/hostmem.h */
} host_block_t;

static int host_block_get(weft_data_t *d, host_block_t *b)
{
    if (!b->ptr) b->ptr = weft_hostmem_alloc(d->ctx->hostmem, d->bytes, &b->alloc);
    return b->ptr ? WEFT_SUCCESS : WEFT_ERR_NOMEM;
}

/* Under d's lock: host copy 0 made from b's memory (which it then owns). */
static weft_data_copy_t *host_attach_locked(weft_data_t *d, host_block_t *b)
{
    weft_data_copy_t *h =
        weft_data_copy_attach(d, 0, b->ptr, d->rows, WEFT_MEM_RUNTIME, weft_hostmem_free, b->alloc);
    if (h) b->ptr = NULL;
    return h;
}

static void host_block_put(weft_data_t *d, host_block_t *b)
{
    if (b->ptr) weft_hostmem_free(b->alloc, b->ptr, d->bytes);
}

/* Under d's lock: the host copy to write the newest version into (its
 * memory allocated when absent), or NULL after setting *rc: WEFT_SUCCESS
 * when the host copy is newest already, WEFT_AGAIN when it is busy. */
static weft_data_copy_t *host_target_locked(weft_data_t *d, host_block_t *fresh, int *rc)
{
    weft_data_copy_t *h = d->copies[0];
    if (weft_data_copy_is_newest_locked(d, h)) {
        *rc = WEFT_SUCCESS;
        return NULL;
    }
    /* Bytes arriving, or a host task writing a newer version into it. */
    if (h && (h->xfer == WEFT_XFER_UNDER || h->readers > 0)) {
        *rc = WEFT_AGAIN;
        return NULL;
    }
    if (!weft_data_newest_copy_locked(d, -1)) {
        *rc = WEFT_ERR_INTERNAL;
        return NULL;
    }
    if (!h && !fresh->ptr) {
        *rc = WEFT_ERR_NOMEM; /* the caller allocates outside the lock */
        return NULL;
    }
    if (!h && !(h = host_attach_locked(d, fresh))) {
        *rc = WEFT_ERR_NOMEM;
        return NULL;
    }
    return h;
}

/* Waits (with wait set) until the host copy can be written or is newest;
 * the lock is held on return. Returns the host target, or NULL with *rc
 * set (WEFT_AGAIN: busy, and wait unset). */
static weft_data_copy_t *wait_host_target(weft_data_t *d, host_block_t *fresh, int wait, int *rc)
{
    weft_data_lock(d);
    for (;;) {
        weft_data_copy_t *h = host_target_locked(d, fresh, rc);
        if (h || *rc == WEFT_SUCCESS || *rc == WEFT_ERR_INTERNAL) return h;
        if (*rc == WEFT_AGAIN && !wait) return NULL;
        if (*rc == WEFT_AGAIN) {
            weft_data_wait_change(d); /* until that transfer or task lets go */
            continue;
        }
        weft_data_unlock(d); /* WEFT_ERR_NOMEM: the memory comes outside the lock */
        if (fresh->ptr || host_block_get(d, fresh) != WEFT_SUCCESS) {
            weft_data_lock(d);
            return NULL;
        }
        weft_data_lock(d);
    }
}

/* Under d's lock: a copy at the newest version on a device that works,
 * else one on a failed device. */
static weft_data_copy_t *live_newest_locked(weft_data_t *d)
{
    weft_devices_t *ds = d->ctx->devices;
    for (int k = 1; k <= ds->n; k++)
        if (weft_data_copy_is_newest_locked(d, d->copies[k]) && !weft_device_is_broken(ds->dev[k]))
            return d->copies[k];
    return weft_data_newest_copy_locked(d, -1);
}

/* Under d's lock, unlocked meanwhile: one D2H copy from the newest copy
 * into h on the stage-out stream of the device holding it. */
static int pull_to_host(weft_data_t *d, weft_data_copy_t *h)
{
    weft_data_copy_t *src = live_newest_locked(d);
    weft_device_t *dead = d->ctx->devices->dev[src->device];
    if (weft_device_is_broken(dead)) {
        /* Nothing can be read from a failed device: the version is gone,
         * and saying so beats handing out the older one the host holds. */
        weft_device_log_lost(dead, (unsigned long long)d->key, d->version);
        return WEFT_ERR_DEVICE;
    }
    uint32_t v = weft_data_xfer_begin_locked(d, 0);
    weft_data_copy_reader_acquire_locked(src);
    weft_data_unlock(d);
    weft_context_t *ctx = d->ctx;
    weft_device_t *by = ctx->devices->dev[src->device];
    int rc = weft_devcopy_sync(ctx, by, WEFT_STREAM_OUT, d, h, src);
    weft_data_lock(d);
    weft_data_copy_reader_release_locked(src);
    weft_data_xfer_end_locked(d, 0, v, rc == WEFT_SUCCESS);
    return rc;
}

int weft_devcopy_to_host(weft_data_t *d, weft_data_copy_t **out) { return to_host(d, out, 1); }

static int to_host(weft_data_t *d, weft_data_copy_t **out, int wait)
{
    host_block_t fresh = {0};
    int rc = WEFT_SUCCESS;
    weft_data_copy_t *h = wait_host_target(d, &fresh, wait, &rc);
    /* Only the search for a source says this: a copy that fails on the
     * way (an injected fault returns WEFT_ERR_INTERNAL too) had one. A NEW
     * data at v0 without one was never written: its first writer failed
     * (a reader inserted before that is refused at insertion). */
    int none = !h && rc == WEFT_ERR_INTERNAL;
    int never = none && (d->flags & WEFT_DATA_NEW) && d->version == 0;
    if (never) rc = WEFT_ERR_INVALID;
    if (h) rc = pull_to_host(d, h);
    if (rc == WEFT_SUCCESS && out) {
        *out = d->copies[0];
        weft_data_copy_reader_acquire_locked(*out);
    }
    weft_data_unlock(d);
    host_block_put(d, &fresh);
    if (never)
        weft_error("data %llu has no contents: the task that was to write it first failed, so "
                   "no version of it exists; write it (WEFT_W) or give it initial contents "
                   "(weft_data_set_init) before a task reads it",
                   (unsigned long long)d->key);
    else if (none)
        weft_error("data %llu: no copy holds its newest version v%u", (unsigned long long)d->key,
                   d->version);
    return rc;
}

int weft_devcopy_host_flow(weft_data_t *d, int mode, weft_data_copy_t **out)
{
    if (mode & WEFT_R) return weft_devcopy_to_host(d, out);
    host_block_t fresh = {0};
    weft_data_lock(d);
    /* A write-back of the previous version may still be landing there. */
    while (d->copies[0] && d->copies[0]->xfer == WEFT_XFER_UNDER) weft_data_wait_change(d);
    while (!d->copies[0] && !fresh.ptr) {
        weft_data_unlock(d);
        if (host_block_get(d, &fresh) != WEFT_SUCCESS) return WEFT_ERR_NOMEM;
        weft_data_lock(d);
    }
    weft_data_copy_t *h = d->copies[0];
    if (!h) h = host_attach_locked(d, &fresh);
    if (h) weft_data_copy_reader_acquire_locked(h);
    weft_data_unlock(d);
    host_block_put(d, &fresh);
    if (!h) return WEFT_ERR_NOMEM;
    *out = h;
    return WEFT_SUCCESS;
}
