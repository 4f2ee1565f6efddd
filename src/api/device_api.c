/* The public device calls (types, counters, home devices, user device
 * memory) and the statistics lines. */
#include <stdint.h>
#include <stdio.h>

#include "api/data_api.h"
#include "data/hostmem.h"
#include "data/span.h"
#include "devmgr/devmgr.h"
#include "stf/seqcheck.h"
#include "stf/taskpool.h"
#include "util/log.h"
#include "util/mib.h"

int weft_device_type(const weft_context_t *ctx, int index)
{
    if (!weft_handle_check(ctx, WEFT_HANDLE_CONTEXT, "weft_device_type", 1)) return -1;
    if (index < 0 || index > ctx->ndevices) return -1;
    return index == 0 ? WEFT_DEV_CPU : (int)ctx->devices->dev[index]->ops->type;
}

/* Device index's counters now (ctx's devices open). */
static void read_counters(const weft_context_t *ctx, int index, weft_device_counters_t *out)
{
    weft_device_t *dev = ctx->devices->dev[index];
    weft_device_stats_t *s = &dev->stats;
    *out = (weft_device_counters_t){
        .tasks = atomic_load(&s->tasks),
        .bytes_h2d = atomic_load(&s->bytes[WEFT_XFER_H2D]),
        .bytes_d2h = atomic_load(&s->bytes[WEFT_XFER_D2H]),
        .bytes_d2d = atomic_load(&s->bytes[WEFT_XFER_D2D]),
        .evictions = atomic_load(&s->evictions),
        .writebacks = atomic_load(&s->writebacks),
        .mem_capacity = (int64_t)weft_zone_capacity(dev->zone),
        .mem_used = (int64_t)weft_zone_used(dev->zone),
        .mem_peak = (int64_t)weft_zone_peak(dev->zone),
        .copies = atomic_load(&ctx->devmgr[index]->live_copies),
        .busy_ns = atomic_load(&s->busy_ns),
        .batches = atomic_load(&s->batches),
        .batched_tasks = atomic_load(&s->batched_tasks),
        .prefetches = atomic_load(&s->prefetches),
        .prefetches_unused = atomic_load(&s->prefetches_unused),
        .launched_ahead = atomic_load(&s->launched_ahead),
    };
}

void weft_context_keep_device_counters(weft_context_t *ctx)
{
    pthread_mutex_lock(&ctx->readers_lock);
    for (int i = 1; i <= ctx->ndevices && i < WEFT_MAX_DEVICES; i++)
        read_counters(ctx, i, &ctx->device_final[i]);
    ctx->ndevices_final = ctx->ndevices;
    ctx->devices_gone = 1;
    pthread_mutex_unlock(&ctx->readers_lock);
}

int weft_device_counters_get(const weft_context_t *ctx, int index, weft_device_counters_t *out)
{
    if (!weft_handle_check(ctx, WEFT_HANDLE_CONTEXT, "weft_device_counters_get", 1))
        return WEFT_ERR_INVALID;
    if (!out) {
        weft_error("argument 3 of weft_device_counters_get is NULL: pass a "
                   "weft_device_counters_t to fill");
        return WEFT_ERR_INVALID;
    }
    /* Under the lock: weft_fini on another thread may be closing the
     * devices; once closed, their last counters. */
    weft_context_t *c = (weft_context_t *)ctx;
    pthread_mutex_lock(&c->readers_lock);
    int n = ctx->devices_gone ? ctx->ndevices_final : ctx->ndevices;
    int ok = index >= 1 && index <= n;
    if (ok && ctx->devices_gone)
        *out = ctx->device_final[index];
    else if (ok)
        read_counters(ctx, index, out);
    pthread_mutex_unlock(&c->readers_lock);
    if (ok) return WEFT_SUCCESS;
    weft_error("weft_device_counters_get: device %d is not an accelerator of this rank (1..%d; "
               "0 is the host, which has no device counters)",
               index, n);
    return WEFT_ERR_INVALID;
}

void weft_devstats_print(weft_context_t *ctx)
{
    for (int i = 1; i <= ctx->devices->n; i++) {
        weft_device_counters_t c;
        if (weft_device_counters_get(ctx, i, &c) != WEFT_SUCCESS) continue;
        weft_log_stats(i,
                       "%s: %lld tasks (busy %.3f s), H2D %s MiB, D2H %s MiB, D2D %s MiB, "
                       "%lld evictions (%lld write-backs), peak %s of %s MiB, "
                       "%lld batches (%lld tasks), %lld prefetches ahead (%lld unused), "
                       "%lld launched ahead of a receive",
                       ctx->devices->dev[i]->name, (long long)c.tasks, c.busy_ns * 1e-9,
                       weft_mib_text(c.bytes_h2d).s, weft_mib_text(c.bytes_d2h).s,
                       weft_mib_text(c.bytes_d2d).s, (long long)c.evictions,
                       (long long)c.writebacks, weft_mib_text(c.mem_peak).s,
                       weft_mib_text(c.mem_capacity).s, (long long)c.batches,
                       (long long)c.batched_tasks, (long long)c.prefetches,
                       (long long)c.prefetches_unused, (long long)c.launched_ahead);
    }
    size_t pinned, total;
    int slabs;
    weft_hostmem_stats(ctx->hostmem, &pinned, &total, &slabs);
    /* Emulated devices run the pinning rule as a GPU's would but lock no
     * page: said, and the amount is what the rule chose ("pinned" beside
     * "no page is locked" read as a contradiction). */
    int locks = weft_devexec_pin_device(ctx) != NULL;
    if (ctx->hostmem && ctx->ndevices > 0)
        weft_log_stats(-1, "host copies: %s MiB %s of %s MiB in slabs (%d slabs made)%s",
                       weft_mib_text((int64_t)pinned).s, locks ? "pinned" : "chosen for pinning",
                       weft_mib_text((int64_t)total).s, slabs,
                       locks ? "" : "; emulated devices only: no page is locked");
}

/* arg: the data's key, whether stage_in and stage_out are set (the
 * functions themselves differ in address between processes). */
static void describe_stage(const weft_seqcall_kind_t *kind, const int64_t *arg, char *text,
                           size_t n)
{
    snprintf(text, n, "%s(data %lld, stage_in %s, stage_out %s)", kind->name, (long long)arg[0],
             arg[1] ? "set" : "NULL", arg[2] ? "set" : "NULL");
}

static const weft_seqcall_kind_t seq_stage = {"weft_data_set_stage", describe_stage};

int weft_data_set_stage(weft_data_t *d, weft_stage_fn stage_in, weft_stage_fn stage_out, void *arg)
{
    if (!weft_handle_check_main(d, WEFT_HANDLE_DATA, "weft_data_set_stage", 1) ||
        weft_data_check_between(d, "weft_data_set_stage") != WEFT_SUCCESS)
        return WEFT_ERR_INVALID;
    d->stage_in = stage_in;
    d->stage_out = stage_out;
    d->stage_arg = arg;
    /* Each rank moves the data by its own handle's functions (host layout
     * between ranks when set): ranks that set them differently would mix
     * layouts silently, so the next agreement compares them. */
    weft_seqcheck_call(
        d->ctx, &seq_stage,
        (int64_t[WEFT_SEQCALL_ARGS]){(int64_t)d->key, stage_in != NULL, stage_out != NULL});
    return WEFT_SUCCESS;
}

int weft_data_set_device(weft_data_t *d, int device)
{
    if (!weft_handle_check_main(d, WEFT_HANDLE_DATA, "weft_data_set_device", 1))
        return WEFT_ERR_INVALID;
    /* The home device is its owner's: another rank (with fewer devices,
     * or none) keeps it without checking it against its own, as for a
     * matrix's tiles, rather than refuse on its own a call its owner
     * takes (weft_home_device ignores it there). */
    int owner = d->owner_rank == d->ctx->rank;
    /* Every rank sees the same open taskpool (its insertion marks d), so
     * every rank refuses alike: no sequence entry. */
    if (weft_data_check_between(d, "weft_data_set_device") != WEFT_SUCCESS) return WEFT_ERR_INVALID;
    if (device < 0 || (owner && device > d->ctx->ndevices)) {
        if (device < 0) /* any rank knows: no rank's range claimed as the owner's */
            weft_error("weft_data_set_device: device %d of data %llu is negative (0 is the host, "
                       "1 and up the accelerators of its owner, rank %d)",
                       device, (unsigned long long)d->key, d->owner_rank);
        else
            weft_error("weft_data_set_device: device %d is not in [0, %d] on data %llu's owner "
                       "rank %d",
                       device, d->ctx->ndevices, (unsigned long long)d->key, d->owner_rank);
        /* Only the owner knows its devices: the other ranks learn of the
         * refusal at the next agreement. */
        char what[96];
        snprintf(what, sizeof what, "weft_data_set_device(data %llu, device %d)",
                 (unsigned long long)d->key, device);
        weft_seqcheck_refused_call(d->ctx, what);
        return WEFT_ERR_INVALID;
    }
    d->home_device = device;
    d->flags |= WEFT_DATA_HOMED;
    return WEFT_SUCCESS;
}

int weft_data_device(const weft_data_t *d)
{
    if (!weft_handle_check(d, WEFT_HANDLE_DATA, "weft_data_device", 1)) return -1;
    return (d->flags & WEFT_DATA_HOMED) ? d->home_device : -1;
}

/* Makes room on `device` for the user's copy: a runtime copy there goes,
 * after its version was saved on host when it was the only newest one. */
static int drop_runtime_copy(weft_data_t *d, int device)
{
    weft_data_lock(d);
    weft_data_copy_t *c = d->copies[device];
    int lone = c && weft_data_copy_is_newest_locked(d, c) && weft_data_valid_copies_locked(d) == 1;
    weft_data_unlock(d);
    if (lone) {
        int rc = weft_devcopy_to_host(WEFT_LOG_ERROR, d, NULL);
        if (rc != WEFT_SUCCESS) return rc;
    }
    weft_data_lock(d);
    c = d->copies[device];
    int busy = c && (weft_data_copy_busy_locked(c) || c->owner == WEFT_MEM_MANAGED);
    weft_data_copy_t *gone = NULL;
    if (c && !busy) {
        gone = weft_data_copy_unlink_locked(d, device);
        weft_data_fix_owner_locked(d);
    }
    weft_data_unlock(d);
    weft_data_copy_free(gone, d->bytes);
    return busy ? WEFT_ERR_INVALID : WEFT_SUCCESS;
}

/* The user's host memory (weft_data_register) holds the data between
 * taskpools: given current contents on a device, it gets them now. It kept
 * the old ones until a wait of a taskpool using the data, so a write of the
 * user's in between was lost, and a task read the device's. */
static int hand_current_to_user_memory(weft_data_t *d)
{
    if (!weft_data_in_user_memory(d)) return WEFT_SUCCESS;
    int rc = weft_devexec_flush_now(d);
    if (rc != WEFT_SUCCESS)
        weft_error("weft_data_register_device: data %llu: registered, but copying its "
                   "contents into the user's host memory failed (%s): retried at the next "
                   "wait, acquire or release of the data",
                   (unsigned long long)d->key, weft_strerror(rc));
    return rc;
}

/* The arguments of weft_data_register_device, each refusal named. */
static int register_device_args_ok(weft_data_t *d, int device, const void *ptr, int64_t ld,
                                   int current)
{
    if (!weft_handle_check_main(d, WEFT_HANDLE_DATA, "weft_data_register_device", 1) ||
        weft_data_check_between(d, "weft_data_register_device") != WEFT_SUCCESS)
        return WEFT_ERR_INVALID;
    if (current && weft_data_check_outside_write(d, "weft_data_register_device") != WEFT_SUCCESS)
        return WEFT_ERR_INVALID;
    /* The owner holds the data's contents; another rank's copy is one that
     * came from it. Made current there, it was newer than the owner's on
     * that rank alone: a task there read it and its result replaced the
     * owner's version silently. */
    if (current && d->owner_rank != d->ctx->rank) {
        weft_error("weft_data_register_device: data %llu: current=1 on rank %d, but rank %d owns "
                   "it: only the owner's memory holds its contents (a copy elsewhere comes from "
                   "it); register this memory with current=0 (weft fills it when a task needs "
                   "the data here), or set the contents on the owner",
                   (unsigned long long)d->key, d->ctx->rank, d->owner_rank);
        return WEFT_ERR_INVALID;
    }
    if (!ptr || ld < d->rows) {
        weft_error("weft_data_register_device: data %llu: %s", (unsigned long long)d->key,
                   !ptr ? "NULL pointer" : "ld is smaller than the rows of the tile");
        return WEFT_ERR_INVALID;
    }
    if (device < 1 || device > d->ctx->ndevices) {
        weft_error("weft_data_register_device: data %llu: device %d is not an accelerator of this "
                   "rank (1..%d; 0 is the host, whose memory weft_data_register takes)",
                   (unsigned long long)d->key, device, d->ctx->ndevices);
        return WEFT_ERR_INVALID;
    }
    return WEFT_SUCCESS;
}

int weft_data_register_device(weft_data_t *d, int device, void *ptr, int64_t ld, int current)
{
    int rc = register_device_args_ok(d, device, ptr, ld, current);
    if (rc != WEFT_SUCCESS) return rc;
    /* The device memory joins the rank's live registrations: with unified
     * addresses (CUDA) two handles of the same device bytes are refused as
     * two of the same host bytes are, and an emu device's memory, which is
     * host memory, is checked against the host registrations too. */
    weft_span_t *sp = NULL;
    rc = weft_data_claim_memory(d, "weft_data_register_device", ptr, ld, &sp);
    if (rc != WEFT_SUCCESS) return rc;
    rc = drop_runtime_copy(d, device);
    if (rc != WEFT_SUCCESS) weft_spans_release(&d->ctx->spans, sp);
    if (rc == WEFT_ERR_INVALID) {
        weft_error("weft_data_register_device: data %llu already has a copy in use or a user "
                   "copy on device %d",
                   (unsigned long long)d->key, device);
        return rc;
    }
    if (rc != WEFT_SUCCESS) {
        /* The runtime copy there held the only newest version and could not
         * be saved to host first: registering would lose it. */
        weft_error("weft_data_register_device: data %llu: its newest version lives only in the "
                   "runtime's copy on device %d and writing it back to host failed (%s); "
                   "nothing was registered",
                   (unsigned long long)d->key, device, weft_strerror(rc));
        return rc;
    }
    weft_data_lock(d);
    weft_data_copy_t *c = weft_data_copy_attach(d, device, ptr, ld, WEFT_MEM_MANAGED, NULL, NULL);
    if (c && current) {
        weft_data_copy_set_current_locked(d, device);
        d->flags &= ~WEFT_DATA_NEW;
    }
    weft_data_unlock(d);
    if (!c) {
        weft_spans_release(&d->ctx->spans, sp);
        weft_error("weft_data_register_device: data %llu: out of host memory for its copy's "
                   "record on device %d",
                   (unsigned long long)d->key, device);
        return WEFT_ERR_NOMEM;
    }
    weft_span_chain(&d->span, sp); /* given back with the host block */
    return current ? hand_current_to_user_memory(d) : WEFT_SUCCESS;
}

/* ---- user memory pinned for the devices -------------------------------- */

int weft_host_pin(weft_context_t *ctx, void *ptr, size_t bytes)
{
    if (!weft_handle_check_main(ctx, WEFT_HANDLE_CONTEXT, "weft_host_pin", 1))
        return WEFT_ERR_INVALID;
    if (ptr == NULL || bytes == 0) {
        weft_error("weft_host_pin: %s", ptr == NULL ? "NULL pointer" : "0 bytes");
        return WEFT_ERR_INVALID;
    }
    if (bytes > UINTPTR_MAX - (uintptr_t)ptr) {
        weft_error("weft_host_pin: [%p, +%zu) runs past the end of the address space", ptr, bytes);
        return WEFT_ERR_INVALID;
    }
    char *p = ptr;
    for (size_t i = 0; i < ctx->user_pins.n; i++) {
        const weft_pin_range_t *r = weft_vec_at(&ctx->user_pins, i);
        if (p < r->ptr + r->bytes && r->ptr < p + bytes) {
            weft_error("weft_host_pin: [%p, +%zu) overlaps [%p, +%zu), pinned already: pin whole "
                       "allocations once",
                       ptr, bytes, (void *)r->ptr, r->bytes);
            return WEFT_ERR_INVALID;
        }
    }
    weft_pin_range_t r = {p, bytes, weft_devexec_pin_device(ctx)};
    if (weft_vec_reserve(&ctx->user_pins, ctx->user_pins.n + 1) != WEFT_SUCCESS) {
        weft_error("weft_host_pin: out of host memory for the record of [%p, +%zu)", ptr, bytes);
        return WEFT_ERR_NOMEM;
    }
    if (r.by) {
        int rc = weft_devexec_host_pin(ctx, r.by, ptr, bytes, "user memory");
        if (rc != WEFT_SUCCESS) {
            weft_error("weft_host_pin: %s could not pin [%p, +%zu): %s", r.by->name, ptr, bytes,
                       weft_strerror(rc));
            return rc == WEFT_ERR_INVALID ? rc : WEFT_ERR_INTERNAL;
        }
    }
    int prc = weft_vec_push(&ctx->user_pins, &r);
    (void)prc; /* reserved above */
    return WEFT_SUCCESS;
}

int weft_host_unpin(weft_context_t *ctx, void *ptr)
{
    if (!weft_handle_check_main(ctx, WEFT_HANDLE_CONTEXT, "weft_host_unpin", 1))
        return WEFT_ERR_INVALID;
    for (size_t i = 0; i < ctx->user_pins.n; i++) {
        weft_pin_range_t *r = weft_vec_at(&ctx->user_pins, i);
        if (r->ptr != ptr) continue;
        int rc = r->by ? r->by->ops->host_unregister(r->by, ptr) : WEFT_SUCCESS;
        weft_vec_swap_remove(&ctx->user_pins, i);
        if (rc != WEFT_SUCCESS) {
            weft_error("weft_host_unpin: the driver refused to unpin %p: %s", ptr,
                       weft_strerror(rc));
            return WEFT_ERR_INTERNAL;
        }
        return WEFT_SUCCESS;
    }
    weft_error("weft_host_unpin: %p is not the start of memory weft_host_pin pinned", ptr);
    return WEFT_ERR_INVALID;
}

void weft_host_unpin_all(weft_context_t *ctx)
{
    while (ctx->user_pins.n > 0) {
        weft_pin_range_t *r = weft_vec_at(&ctx->user_pins, ctx->user_pins.n - 1);
        if (r->by) (void)r->by->ops->host_unregister(r->by, r->ptr);
        ctx->user_pins.n--;
    }
}
