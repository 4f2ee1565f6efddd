/* Copies of a data's bytes between devices: the synchronous 2D copy (or
 * the data's stage function), the write-back of a device's newest version
 * to host memory (pushout), and the host copy a host task uses. Where a
 * device copy's memory comes from is devevict.c's. */
#include <stdlib.h>

#include "data/hostmem.h"
#include "devmgr/devmgr.h"
#include "trace/trace.h"
#include "util/fault.h"
#include "util/inbody.h"
#include "util/log.h"

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
static int run_stage_fn(int level, weft_device_t *by, weft_data_t *d, weft_stage_fn fn,
                        const weft_stage_t *s)
{
    atomic_int misuse = 0;
    weft_inbody_t saved;
    weft_inbody_enter_callback(&saved, &misuse, "the stage function of data", 1, d->key,
                               "the copy");
    int frc = fn(s, d->stage_arg);
    weft_inbody_leave(&saved);
    if (frc != 0)
        weft_log(level, by->index,
                 "the stage-%s function of data %llu (weft_data_set_stage) returned %d: the "
                 "copy from device %d to device %d fails",
                 s->dst_device == 0 ? "out" : "in", (unsigned long long)d->key, frc, s->src_device,
                 s->dst_device);
    return frc != 0 || atomic_load(&misuse) ? WEFT_ERR_TASK : WEFT_SUCCESS;
}

int weft_devcopy_enqueue(int level, weft_device_t *by, int stream, weft_data_t *d,
                         weft_data_copy_t *dst, weft_data_copy_t *src)
{
    if (weft_fault_copy_hit(d->ctx->fault, level, by->index, (unsigned long long)d->key,
                            src->device, -1, dst->device))
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
        int rc = weft_device_stream_drain(by, stream);
        if (rc != WEFT_SUCCESS) return rc;
    }
    if (run_stage_fn(level, by, d, fn, &s) != WEFT_SUCCESS) return WEFT_ERR_TASK;
    /* Counted as weft_device_copy counts the copies it enqueues. */
    weft_device_count_copy(by, dst->device, src->device, (long long)d->bytes);
    return WEFT_SUCCESS;
}

int weft_devcopy_sync(int level, weft_context_t *ctx, weft_device_t *by, int stream, weft_data_t *d,
                      weft_data_copy_t *dst, weft_data_copy_t *src)
{
    /* In flight for the watchdog: an eviction's write-back may outlast
     * watchdog_s with nothing else moving. */
    if (ctx) atomic_fetch_add(&ctx->dev_inflight, 1);
    weft_trace_t *tr = ctx ? ctx->trace : NULL;
    uint64_t t0 = weft_trace_stamp(tr);
    int rc = weft_devcopy_enqueue(level, by, stream, d, dst, src);
    if (rc == WEFT_SUCCESS) rc = weft_device_stream_drain(by, stream);
    if (ctx) atomic_fetch_sub(&ctx->dev_inflight, 1);
    /* On the calling thread's track, begun and ended there (a write-back
     * inside its eviction's slice): the trace's copies then add up to the
     * device counters' bytes with the stage-ins. */
    static const char *const kind_name[] = {"copy h2d", "copy d2h", "copy d2d"};
    weft_trace_slice(tr, weft_trace_thread_track, t0, weft_trace_now(),
                     kind_name[weft_device_xfer_kind(dst->device, src->device)], "xfer",
                     "\"key\":%llu,\"bytes\":%lld,\"from\":%d,\"to\":%d,\"ok\":%d",
                     (unsigned long long)d->key, (long long)d->bytes, src->device, dst->device,
                     rc == WEFT_SUCCESS);
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

/* Waits until the host copy can be written or is newest; the lock is held
 * on return. Returns the host target, or NULL with *rc set. */
static weft_data_copy_t *wait_host_target(weft_data_t *d, host_block_t *fresh, int *rc)
{
    weft_data_lock(d);
    for (;;) {
        weft_data_copy_t *h = host_target_locked(d, fresh, rc);
        if (h || *rc == WEFT_SUCCESS || *rc == WEFT_ERR_INTERNAL) return h;
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

/* Under d's lock: the start of a D2H copy of the newest version into the
 * host copy (marked arriving), its source held by a reader; then the lock
 * is dropped. WEFT_ERR_DEVICE, lock kept, when that version is on a failed
 * device: nothing can be read there, and saying so beats handing out the
 * older version the host holds. */
static int pull_start_locked(weft_data_t *d, weft_data_copy_t **src, uint32_t *v)
{
    *src = live_newest_locked(d);
    weft_device_t *by = d->ctx->devices->dev[(*src)->device];
    if (weft_device_is_broken(by)) {
        weft_device_log_lost(by, (unsigned long long)d->key, d->version);
        return WEFT_ERR_DEVICE;
    }
    *v = weft_data_xfer_begin_locked(d, 0);
    weft_data_copy_reader_acquire_locked(*src);
    weft_data_unlock(d);
    return WEFT_SUCCESS;
}

/* Under d's lock, unlocked meanwhile: one D2H copy from the newest copy
 * into h on the stage-out stream of the device holding it (a failure
 * logged at level). */
static int pull_to_host(int level, weft_data_t *d, weft_data_copy_t *h)
{
    weft_data_copy_t *src;
    uint32_t v;
    int rc = pull_start_locked(d, &src, &v);
    if (rc != WEFT_SUCCESS) return rc;
    weft_device_t *by = d->ctx->devices->dev[src->device];
    rc = weft_devcopy_sync(level, d->ctx, by, WEFT_STREAM_OUT, d, h, src);
    weft_data_lock(d);
    weft_data_copy_reader_release_locked(src);
    weft_data_xfer_end_locked(d, 0, v, rc == WEFT_SUCCESS);
    return rc;
}

/* Says why no host copy could be made when no copy was found to read
 * (rc WEFT_ERR_INTERNAL from host_target_locked); returns the status. A
 * copy that fails on the way (an injected fault returns WEFT_ERR_INTERNAL
 * too) had one. A NEW data at v0 without one was never written: its first
 * writer failed (a reader inserted before that is refused at insertion). */
static int no_source(const weft_data_t *d)
{
    if ((d->flags & WEFT_DATA_NEW) && d->version == 0) {
        weft_error("data %llu has no contents: the task that was to write it first failed, so "
                   "no version of it exists; write it (WEFT_W) or give it initial contents "
                   "(weft_data_set_init) before a task reads it",
                   (unsigned long long)d->key);
        return WEFT_ERR_INVALID;
    }
    weft_error("data %llu: no copy holds its newest version v%u", (unsigned long long)d->key,
               d->version);
    return WEFT_ERR_INTERNAL;
}

int weft_devcopy_to_host(int level, weft_data_t *d, weft_data_copy_t **out)
{
    host_block_t fresh = {0};
    int rc = WEFT_SUCCESS;
    weft_data_copy_t *h = wait_host_target(d, &fresh, &rc);
    int none = !h && rc == WEFT_ERR_INTERNAL;
    if (h) rc = pull_to_host(level, d, h);
    if (rc == WEFT_SUCCESS && out) {
        *out = d->copies[0];
        weft_data_copy_reader_acquire_locked(*out);
    }
    weft_data_unlock(d);
    host_block_put(d, &fresh);
    return none ? no_source(d) : rc;
}

/* Under d's lock, unlocked meanwhile: the D2H copy of pull_to_host,
 * enqueued and not waited for; p describes it. */
static int pull_enqueue(weft_data_t *d, weft_data_copy_t *h, weft_devcopy_pull_t *p)
{
    weft_data_copy_t *src;
    uint32_t v;
    int rc = pull_start_locked(d, &src, &v);
    if (rc != WEFT_SUCCESS) return rc;
    weft_device_t *by = d->ctx->devices->dev[src->device];
    weft_event_t ev = {0};
    rc = weft_devcopy_enqueue(WEFT_LOG_ERROR, by, WEFT_STREAM_OUT, d, h, src);
    if (rc == WEFT_SUCCESS) rc = weft_device_event_record(by, WEFT_STREAM_OUT, &ev);
    weft_data_lock(d);
    if (rc != WEFT_SUCCESS) {
        weft_data_copy_reader_release_locked(src);
        weft_data_xfer_end_locked(d, 0, v, 0);
        return rc;
    }
    *p = (weft_devcopy_pull_t){.by = by, .ev = ev, .src = src, .version = v};
    return WEFT_SUCCESS;
}

int weft_devcopy_pull_begin(weft_data_t *d, weft_devcopy_pull_t *p, weft_data_copy_t **out)
{
    host_block_t fresh = {0};
    int rc = WEFT_SUCCESS;
    weft_data_lock(d);
    weft_data_copy_t *h = host_target_locked(d, &fresh, &rc);
    if (!h && rc == WEFT_ERR_NOMEM && !fresh.ptr) {
        /* The memory comes outside the lock; the state is looked at again. */
        weft_data_unlock(d);
        if (host_block_get(d, &fresh) != WEFT_SUCCESS) return WEFT_ERR_NOMEM;
        weft_data_lock(d);
        h = host_target_locked(d, &fresh, &rc);
    }
    p->by = NULL;
    if (h) rc = pull_enqueue(d, h, p);
    if (!h && rc == WEFT_SUCCESS) {
        *out = d->copies[0];
        weft_data_copy_reader_acquire_locked(*out);
    } else if (rc == WEFT_SUCCESS) {
        *out = NULL;
    }
    weft_data_unlock(d);
    host_block_put(d, &fresh);
    return !h && rc == WEFT_ERR_INTERNAL ? no_source(d) : rc;
}

int weft_devcopy_pull_end(weft_data_t *d, weft_devcopy_pull_t *p, int status,
                          weft_data_copy_t **out)
{
    weft_data_lock(d);
    weft_data_copy_reader_release_locked(p->src);
    weft_data_xfer_end_locked(d, 0, p->version, status == WEFT_SUCCESS);
    /* The caller reads this version (a reader of it in the task graph):
     * nothing wrote a newer one meanwhile, so the host copy holds it. */
    if (status == WEFT_SUCCESS) {
        *out = d->copies[0];
        weft_data_copy_reader_acquire_locked(*out);
    }
    weft_data_unlock(d);
    p->by = NULL;
    return status;
}

/* The host copy a first write lands in, with a reader taken: WEFT_AGAIN,
 * unless `wait`, while a write-back of the previous version is still
 * landing in it. */
static int host_write_copy(weft_data_t *d, int wait, weft_data_copy_t **out)
{
    host_block_t fresh = {0};
    weft_data_lock(d);
    for (;;) {
        weft_data_copy_t *h = d->copies[0];
        if (h && h->xfer == WEFT_XFER_UNDER) {
            if (!wait) break;
            weft_data_wait_change(d); /* until that write-back lands */
            continue;
        }
        if (h || fresh.ptr) break;
        weft_data_unlock(d);
        if (host_block_get(d, &fresh) != WEFT_SUCCESS) return WEFT_ERR_NOMEM;
        weft_data_lock(d);
    }
    weft_data_copy_t *h = d->copies[0];
    int rc = WEFT_SUCCESS;
    if (h && h->xfer == WEFT_XFER_UNDER)
        rc = WEFT_AGAIN;
    else if (!h && !(h = host_attach_locked(d, &fresh)))
        rc = WEFT_ERR_NOMEM;
    if (rc == WEFT_SUCCESS) weft_data_copy_reader_acquire_locked(h);
    weft_data_unlock(d);
    host_block_put(d, &fresh);
    if (rc == WEFT_SUCCESS) *out = h;
    return rc;
}

int weft_devcopy_host_flow(weft_data_t *d, int mode, weft_data_copy_t **out)
{
    if (mode & WEFT_R) return weft_devcopy_to_host(WEFT_LOG_ERROR, d, out);
    return host_write_copy(d, 1, out);
}

int weft_devcopy_host_write_nowait(weft_data_t *d, weft_data_copy_t **out)
{
    return host_write_copy(d, 0, out);
}
