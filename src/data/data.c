/* The data and its copies: the one place that changes a copy's version,
 * state, transfer mark or readers (docs/COHERENCY.md). */
#include "data/data.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "data/hostmem.h"
#include "util/inbody.h"
#include "util/log.h"

size_t weft_dtype_size(weft_dtype_t t)
{
    switch (t) {
    case WEFT_DOUBLE:
        return sizeof(double);
    case WEFT_FLOAT:
        return sizeof(float);
    case WEFT_BYTE:
        return 1;
    case WEFT_INT32:
        return sizeof(int32_t);
    case WEFT_INT64:
        return sizeof(int64_t);
    case WEFT_DTYPE_STRUCT:
        return 0; /* a struct of no bytes */
    }
    int s = (int)t - WEFT_DTYPE_STRUCT;
    return s > 0 && s <= 65535 ? (size_t)s : 0;
}

int weft_dtype_check(const char *call, weft_dtype_t type)
{
    if (weft_dtype_size(type) > 0) return WEFT_SUCCESS;
    /* Through int: the enum may be unsigned, and -1 read as a struct. */
    long long bytes = (long long)(int)type - WEFT_DTYPE_STRUCT;
    if (bytes >= 0) /* weft_dtype_struct(0) or (65536 and up): the size is the mistake. */
        weft_error("%s: element type %d is weft_dtype_struct(%lld%s): a struct element holds 1 "
                   "to 65535 bytes",
                   call, (int)type, bytes, bytes == (1 << 30) ? " or more" : "");
    else
        weft_error("%s: element type %d is not a weft_dtype_t: pass WEFT_DOUBLE, WEFT_FLOAT, "
                   "WEFT_BYTE, WEFT_INT32, WEFT_INT64 or weft_dtype_struct(bytes), 1 <= bytes "
                   "<= 65535",
                   call, (int)type);
    return WEFT_ERR_INVALID;
}

_Static_assert(offsetof(weft_data_t, home_device) <= 64,
               "what insertion reads of a data fits its first cache line");

/* Whole cache lines: the first is what insertion reads (data.h). */
#define DATA_BYTES ((sizeof(weft_data_t) + 63) / 64 * 64)

void weft_data__free_mem(void *mem) { free(mem); }

weft_data_t *weft_data__create(struct weft_context *ctx, uint64_t key, weft_dtype_t type, int rows,
                               int cols, int owner_rank)
{
    return weft_data__create_in(NULL, ctx, key, type, rows, cols, owner_rank);
}

int weft_data__tile_fits(size_t elem, int rows, int cols, size_t *bytes)
{
    /* Struct elements make rows x cols x elem overflow size_t (2^30 x 2^30
     * of 16 bytes is 0): every copy would then be too small for its tile. */
    return !__builtin_mul_overflow((size_t)rows * (size_t)cols, elem, bytes) &&
           *bytes <= (size_t)PTRDIFF_MAX;
}

weft_data_t *weft_data__create_in(void *mem, struct weft_context *ctx, uint64_t key,
                                  weft_dtype_t type, int rows, int cols, int owner_rank)
{
    size_t elem = weft_dtype_size(type), bytes = 0;
    if (elem == 0 || rows <= 0 || cols <= 0) {
        weft_error("data %llu: invalid type or size %d x %d", (unsigned long long)key, rows, cols);
        weft_data__free_mem(mem);
        return NULL;
    }
    if (!weft_data__tile_fits(elem, rows, cols, &bytes)) {
        weft_error("data %llu: %d x %d elements of %zu bytes are more bytes than a tile can "
                   "hold (at most %lld): use smaller tiles",
                   (unsigned long long)key, rows, cols, elem, (long long)PTRDIFF_MAX);
        weft_data__free_mem(mem);
        return NULL;
    }
    weft_data_t *d = mem ? mem : aligned_alloc(64, DATA_BYTES);
    if (!d) return NULL;
    memset(d, 0, DATA_BYTES);
    d->tag = WEFT_HANDLE_DATA;
    d->key = key;
    d->ctx = ctx;
    d->type = type;
    d->rows = rows;
    d->cols = cols;
    d->elem = elem;
    d->bytes = bytes;
    d->owner_rank = owner_rank;
    weft_spin_init(&d->lock);
    atomic_init(&d->refs, 1);
    return d;
}

size_t weft_data__mem_bytes(void) { return DATA_BYTES; }

void weft_data__destroy(weft_data_t *d)
{
    for (int i = 0; i < WEFT_MAX_DEVICES; i++)
        if (d->copies[i]) weft_data_copy_detach_force_locked(d, i);
    if (d->stf) d->stf_free(d->stf);
    d->stf = NULL;
    weft_nextuse_fini(&d->uses);
    d->tag = weft_handle_released(WEFT_HANDLE_DATA);
    weft_quarantine_put(d->quarantine, d, DATA_BYTES, weft_data__free_mem);
}

void weft_data__retain(weft_data_t *d)
{
    atomic_fetch_add_explicit(&d->refs, 1, memory_order_relaxed);
}

void weft_data__unref(weft_data_t *d)
{
    if (atomic_fetch_sub_explicit(&d->refs, 1, memory_order_acq_rel) == 1) weft_data__destroy(d);
}

weft_data_copy_t *weft_data_copy_attach(weft_data_t *d, int device, void *ptr, int64_t ld,
                                        weft_mem_owner_t owner, weft_copy_free_fn free_fn,
                                        void *allocator)
{
    assert(device >= 0 && device < WEFT_MAX_DEVICES && !d->copies[device]);
    weft_data_copy_t *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->data = d;
    c->device = device;
    c->ptr = ptr;
    c->ld = ld;
    c->owner = owner;
    c->free_fn = owner == WEFT_MEM_MANAGED ? NULL : free_fn;
    c->allocator = allocator;
    c->state = WEFT_COPY_INVALID;
    weft_list_init(&c->lru); /* in no LRU list */
    d->copies[device] = c;
    return c;
}

weft_data_copy_t *weft_data_copy_unlink_locked(weft_data_t *d, int device)
{
    weft_data_copy_t *c = d->copies[device];
    if (!c) return NULL;
    assert(c->readers == 0);
    d->copies[device] = NULL;
    return c;
}

void weft_data_copy_free(weft_data_copy_t *c, size_t bytes)
{
    if (!c) return;
    if (c->free_fn) c->free_fn(c->allocator, c->ptr, bytes);
    free(c);
}

void weft_data_copy_detach_force_locked(weft_data_t *d, int device)
{
    weft_data_copy_free(weft_data_copy_unlink_locked(d, device), d->bytes);
}

int weft_data_copy_detach(weft_data_t *d, int device)
{
    weft_data_lock(d);
    weft_data_copy_t *c = d->copies[device];
    int rc = WEFT_SUCCESS;
    if (!c || weft_data_copy_busy_locked(c) || c->state == WEFT_COPY_OWNED)
        rc = WEFT_ERR_INVALID;
    else
        c = weft_data_copy_unlink_locked(d, device);
    weft_data_unlock(d);
    if (rc == WEFT_SUCCESS) weft_data_copy_free(c, d->bytes);
    return rc;
}

int weft_data_copy_at_newest_locked(const weft_data_t *d, const weft_data_copy_t *c)
{
    return c && c->state != WEFT_COPY_INVALID && c->version == d->version;
}

void weft_data_copy_arriving_locked(weft_data_copy_t *c)
{
    c->xfer = WEFT_XFER_UNDER;
    c->intact = 0;
}

static int copy_is_newest(const weft_data_t *d, const weft_data_copy_t *c)
{
    return c && c->state != WEFT_COPY_INVALID && c->version == d->version &&
           c->xfer != WEFT_XFER_UNDER;
}

weft_data_copy_t *weft_data_newest_copy_locked(weft_data_t *d, int prefer_device)
{
    if (prefer_device >= 0 && copy_is_newest(d, d->copies[prefer_device]))
        return d->copies[prefer_device];
    for (int i = 0; i < WEFT_MAX_DEVICES; i++)
        if (copy_is_newest(d, d->copies[i])) return d->copies[i];
    return NULL;
}

void weft_data_written_locked(weft_data_t *d, int device)
{
    weft_data_written_at_locked(d, device, d->version + 1);
}

/* Copies other than keep labelled v or later no longer hold versions of
 * the data's history: v's number now names other bytes (a version set
 * back after a failure, a host write at the same number). */
static void forget_from_locked(weft_data_t *d, const weft_data_copy_t *keep, uint32_t v)
{
    for (int i = 0; i < WEFT_MAX_DEVICES; i++) {
        weft_data_copy_t *c = d->copies[i];
        if (c && c != keep && c->version >= v) c->intact = 0;
    }
}

/* Whether every newest copy but dst holds its version intact: a copy made
 * from a failed body's bytes is not intact either. */
static int newest_intact_locked(const weft_data_t *d, const weft_data_copy_t *dst)
{
    for (int i = 0; i < WEFT_MAX_DEVICES; i++) {
        const weft_data_copy_t *c = d->copies[i];
        if (c && c != dst && copy_is_newest(d, c) && !c->intact) return 0;
    }
    return 1;
}

void weft_data_written_at_locked(weft_data_t *d, int device, uint32_t version)
{
    weft_data_wake_mark_locked(d);
    weft_data_copy_t *w = d->copies[device];
    assert(w);
    forget_from_locked(d, w, version);
    d->version = version;
    for (int i = 0; i < WEFT_MAX_DEVICES; i++) {
        weft_data_copy_t *c = d->copies[i];
        if (c && c != w) c->state = WEFT_COPY_INVALID;
    }
    w->version = d->version;
    w->state = WEFT_COPY_OWNED;
    w->xfer = WEFT_XFER_COMPLETE;
    w->intact = 1;
}

void weft_data_copied_locked(weft_data_t *d, int device, uint32_t version)
{
    weft_data_wake_mark_locked(d);
    weft_data_copy_t *dst = d->copies[device];
    assert(dst);
    /* From another rank (a newer version: no copy here holds it), or from
     * a copy here at the newest version, which may hold a failed body's
     * bytes. */
    dst->intact = version > d->version || newest_intact_locked(d, dst);
    if (version > d->version) {
        /* A newer version arrived from another rank: every local copy is stale. */
        d->version = version;
        for (int i = 0; i < WEFT_MAX_DEVICES; i++)
            if (d->copies[i] && d->copies[i] != dst) d->copies[i]->state = WEFT_COPY_INVALID;
    }
    dst->version = version;
    dst->xfer = WEFT_XFER_COMPLETE;
    int others = 0;
    for (int i = 0; i < WEFT_MAX_DEVICES; i++) {
        weft_data_copy_t *c = d->copies[i];
        if (c && c != dst && copy_is_newest(d, c)) {
            c->state = WEFT_COPY_SHARED;
            others++;
        }
    }
    dst->state = others ? WEFT_COPY_SHARED : WEFT_COPY_OWNED;
}

void weft_data_copy_set_initial_locked(weft_data_t *d, int device)
{
    weft_data_copy_t *c = d->copies[device];
    assert(c);
    c->version = d->version;
    c->state = WEFT_COPY_OWNED;
    c->xfer = WEFT_XFER_COMPLETE;
    c->intact = 1;
    forget_from_locked(d, c, c->version);
}

int weft_data_copy_is_newest_locked(const weft_data_t *d, const weft_data_copy_t *c)
{
    return copy_is_newest(d, c);
}

uint32_t weft_data_xfer_begin_locked(weft_data_t *d, int device)
{
    weft_data_copy_t *c = d->copies[device];
    assert(c && c->readers >= 0);
    c->version = d->version;
    c->xfer = WEFT_XFER_UNDER;
    c->intact = 0;
    return d->version;
}

void weft_data_xfer_end_locked(weft_data_t *d, int device, uint32_t version, int ok)
{
    weft_data_wake_mark_locked(d);
    weft_data_copy_t *c = d->copies[device];
    if (!c || c->xfer != WEFT_XFER_UNDER || c->version != version) return;
    if (ok && version == d->version) {
        weft_data_copied_locked(d, device, version);
        return;
    }
    c->xfer = WEFT_XFER_COMPLETE;
    c->state = WEFT_COPY_INVALID;
}

void weft_data_fix_owner_locked(weft_data_t *d)
{
    weft_data_copy_t *only = NULL;
    int n = 0;
    for (int i = 0; i < WEFT_MAX_DEVICES; i++) {
        if (!copy_is_newest(d, d->copies[i])) continue;
        only = d->copies[i];
        n++;
    }
    if (n == 1) only->state = WEFT_COPY_OWNED;
}

void weft_data_copy_set_current_locked(weft_data_t *d, int device)
{
    weft_data_copy_t *c = d->copies[device];
    assert(c);
    for (int i = 0; i < WEFT_MAX_DEVICES; i++)
        if (d->copies[i] && d->copies[i] != c) d->copies[i]->state = WEFT_COPY_INVALID;
    weft_data_copy_set_initial_locked(d, device);
}

void weft_data_host_only(weft_data_t *d)
{
    weft_data_lock(d);
    if (copy_is_newest(d, d->copies[0])) weft_data_copy_set_current_locked(d, 0);
    weft_data_unlock(d);
}

void weft_data_copy_reader_acquire_locked(weft_data_copy_t *c) { c->readers++; }

int weft_data_copy_busy_locked(const weft_data_copy_t *c)
{
    return c->readers > 0 || c->xfer == WEFT_XFER_UNDER;
}

void weft_data_copy_reader_release_locked(weft_data_copy_t *c)
{
    assert(c->readers > 0);
    c->readers--;
    if (c->readers == 0) weft_data_wake_mark_locked(c->data);
}

weft_data_copy_t *weft_data_older_host_locked(weft_data_t *d)
{
    weft_data_copy_t *c = d->copies[0];
    /* Only the user's memory: every wait writes the final version there,
     * so it holds the version the taskpool began from or a later one. A
     * runtime host copy may be stale across waits (the newest version left
     * on a device), and going back to it went back past versions an
     * earlier wait had ended with (the words fuzzer). */
    if (!d->lost_bytes || !c || c->owner != WEFT_MEM_MANAGED || !c->intact ||
        c->state != WEFT_COPY_INVALID || weft_data_copy_busy_locked(c) || c->version >= d->version)
        return NULL;
    return c->version == 0 && (d->flags & WEFT_DATA_NEW) ? NULL : c;
}

void weft_data_restore_locked(weft_data_t *d, weft_data_copy_t *c)
{
    weft_data_wake_mark_locked(d);
    d->version = c->version;
    d->lost_bytes = 0;
    /* As the host's write of that version: the destroyed versions'
     * numbers are free again (forgotten in the other copies). */
    weft_data_copy_set_current_locked(d, c->device);
}

int weft_data_valid_copies_locked(const weft_data_t *d)
{
    int n = 0;
    for (int i = 0; i < WEFT_MAX_DEVICES; i++)
        if (d->copies[i] && d->copies[i]->state != WEFT_COPY_INVALID) n++;
    return n;
}

void *weft_host_alloc(size_t bytes)
{
    void *p = NULL;
    /* 64-byte alignment keeps BLAS kernels on their fast paths. */
    if (posix_memalign(&p, 64, bytes ? bytes : 64) != 0) return NULL;
    return p;
}

void weft_host_free(void *allocator, void *ptr, size_t bytes)
{
    (void)allocator;
    (void)bytes;
    free(ptr);
}

/* Left UNDER, c would keep every later receive into it (and every host
 * flow that waits for an arrival to end) waiting for ever. */
static void copy_arrival_failed_locked(weft_data_t *d, weft_data_copy_t *c)
{
    weft_data_wake_mark_locked(d);
    c->xfer = WEFT_XFER_COMPLETE;
    c->state = WEFT_COPY_INVALID;
}

void weft_data_publish(weft_data_t *d, weft_data_copy_t *c, weft_publish_t what, uint32_t version,
                       uint64_t task_seq)
{
    weft_data_lock(d);
    assert(d->copies[c->device] == c);
    if (what == WEFT_PUBLISH_WRITTEN)
        weft_data_written_at_locked(d, c->device, version ? version : d->version + 1);
    else if (what == WEFT_PUBLISH_RECEIVED)
        weft_data_copied_locked(d, c->device, version);
    else if (what == WEFT_PUBLISH_LOST)
        copy_arrival_failed_locked(d, c);
    else if (what == WEFT_PUBLISH_SPOILED)
        c->intact = 0; /* before the reader goes: nothing copies it meanwhile */
    if (task_seq) c->last_task = task_seq;
    weft_data_copy_reader_release_locked(c);
    weft_data_unlock(d);
}

/* The initial contents of d into p (ld elements apart). Outside the lock:
 * the user's function may take its time, and no task can reach d before
 * the copy is current. It runs on the main thread, inside an insertion,
 * an acquire or a graph's build: a call from it into those would reenter
 * them, so it is refused as from a body. */
static int fill_initial(const weft_data_t *d, void *p, int64_t ld)
{
    if (!d->init_fn) {
        for (int j = 0; j < d->cols; j++)
            memset((char *)p + (size_t)j * (size_t)ld * d->elem, 0, (size_t)d->rows * d->elem);
        return WEFT_SUCCESS;
    }
    atomic_int misuse = 0;
    weft_inbody_t saved;
    weft_inbody_enter_callback(&saved, &misuse, "the init function of data", 1, d->key,
                               "the data's initialisation");
    d->init_fn(p, ld, d->rows, d->cols, d->init_arg);
    weft_inbody_leave(&saved);
    return atomic_load(&misuse) ? WEFT_ERR_INVALID : WEFT_SUCCESS;
}

int weft_data_init_contents(weft_data_t *d, struct weft_hostmem *pool)
{
    weft_data_lock(d);
    int have = weft_data_valid_copies_locked(d) > 0;
    weft_data_copy_t *h = d->copies[0];
    /* Only one no task or transfer reads (the failed writer's copy is
     * left mid-write: its transfer state says so, and nothing uses it). */
    if (h && h->readers > 0) h = NULL;
    weft_data_unlock(d);
    if (have) return WEFT_SUCCESS;
    /* A host copy without contents (made for a first writer that failed)
     * takes them in place: attaching another beside it failed, and the
     * task that read the data was told "out of host memory". */
    if (h) {
        int rc = fill_initial(d, h->ptr, h->ld);
        if (rc != WEFT_SUCCESS) return rc;
        weft_data_lock(d);
        weft_data_copy_set_initial_locked(d, 0);
        weft_data_unlock(d);
        return WEFT_SUCCESS;
    }
    void *alloc;
    void *p = weft_hostmem_alloc(pool, d->bytes, &alloc);
    if (!p) return WEFT_ERR_NOMEM;
    if (fill_initial(d, p, d->rows) != WEFT_SUCCESS) {
        weft_hostmem_free(alloc, p, d->bytes);
        return WEFT_ERR_INVALID;
    }
    weft_data_lock(d);
    weft_data_copy_t *c = d->copies[0] ? NULL
                                       : weft_data_copy_attach(d, 0, p, d->rows, WEFT_MEM_RUNTIME,
                                                               weft_hostmem_free, alloc);
    if (c) weft_data_copy_set_initial_locked(d, 0);
    weft_data_unlock(d);
    if (!c) weft_hostmem_free(alloc, p, d->bytes);
    return c ? WEFT_SUCCESS : WEFT_ERR_NOMEM;
}
