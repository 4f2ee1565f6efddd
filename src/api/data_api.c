/* The public data calls: NEW tiles, user (MANAGED) memory, release, and
 * the checks every data handle goes through. */
#include "api/data_api.h"

#include <stdlib.h>

#include "sched/task.h"
#include "devmgr/devmgr.h"
#include "stf/record.h"
#include "stf/seqcheck.h"
#include "stf/taskpool.h"
#include "util/log.h"

weft_data_t *weft_data_make(weft_context_t *ctx, weft_dtype_t type, int rows, int cols,
                            int owner_rank)
{
    weft_data_t *d = weft_data__create(ctx, ctx->next_key++, type, rows, cols, owner_rank);
    if (d) d->quarantine = &ctx->quarantine;
    return d;
}

const char *weft_data_busy_taskpool(const weft_data_t *d)
{
    const weft_stf_rec_t *r = weft_stf_rec(d);
    const weft_task_t *t = !r               ? NULL
                           : r->last_writer ? r->last_writer
                           : r->readers.n   ? weft_stf_rec_reader(r, 0)
                                            : NULL;
    return t ? t->tp->name : NULL;
}

weft_data_t *weft_data_new(weft_context_t *ctx, weft_dtype_t type, int rows, int cols,
                           int owner_rank)
{
    if (!weft_handle_check(ctx, WEFT_HANDLE_CONTEXT, "weft_data_new", 1)) return NULL;
    weft_seqcheck_call(ctx, "weft_data_new(type %d, %d x %d, owner rank %d)", (int)type, rows, cols,
                       owner_rank);
    if (owner_rank < 0 || owner_rank >= ctx->nranks) {
        weft_error("weft_data_new: owner rank %d is not in [0, %d)", owner_rank, ctx->nranks);
        return NULL;
    }
    weft_data_t *d = weft_data_make(ctx, type, rows, cols, owner_rank);
    if (!d) return NULL;
    d->flags |= WEFT_DATA_NEW;
    if (weft_context_track(ctx, d) != 0) {
        weft_data__unref(d);
        return NULL;
    }
    return d;
}

weft_data_t *weft_data_register(weft_context_t *ctx, weft_dtype_t type, void *ptr, int rows,
                                int cols, int64_t ld)
{
    if (!weft_handle_check(ctx, WEFT_HANDLE_CONTEXT, "weft_data_register", 1)) return NULL;
    weft_seqcheck_call(ctx, "weft_data_register(type %d, %d x %d)", (int)type, rows, cols);
    if (!ptr || ld < rows) {
        weft_error("weft_data_register: %s",
                   !ptr ? "NULL pointer: pass the address of the user's memory"
                        : "ld is smaller than rows: pass the leading dimension in elements");
        return NULL;
    }
    weft_data_t *d = weft_data_make(ctx, type, rows, cols, ctx->rank);
    if (!d) return NULL;
    weft_data_copy_t *c = weft_data_copy_attach(d, 0, ptr, ld, WEFT_MEM_MANAGED, NULL, NULL);
    if (!c || weft_context_track(ctx, d) != 0) {
        weft_data__unref(d);
        return NULL;
    }
    weft_data_copy_set_initial_locked(d, 0);
    return d;
}

void weft_data_release(weft_data_t *d)
{
    if (!weft_handle_check(d, WEFT_HANDLE_DATA, "weft_data_release", 1)) return;
    if (d->host_access)
        weft_warn("weft_data_release: data %llu was still acquired by the host: released too",
                  (unsigned long long)d->key);
    weft_context_untrack(d->ctx, d);
    d->flags |= WEFT_DATA_RELEASED;
    /* The user's handle is dead now, even while tasks still hold the data. */
    d->tag = weft_handle_released(WEFT_HANDLE_DATA);
    weft_data__unref(d);
}

void *weft_data_host_ptr(weft_data_t *d, int64_t *ld)
{
    if (!weft_handle_check(d, WEFT_HANDLE_DATA, "weft_data_host_ptr", 1)) return NULL;
    /* The host may write through the pointer: an acquire for read-write,
     * released at once, leaves every device copy stale. */
    const char *tp = weft_data_busy_taskpool(d);
    if (!tp && d->owner_rank != d->ctx->rank) return NULL; /* a probe for this rank's tiles */
    void *p = NULL;
    int64_t l = 0;
    if (weft_acquire_host(d, WEFT_RW, "weft_data_host_ptr", &p, &l) != WEFT_SUCCESS) return NULL;
    weft_acquire_end(d);
    if (ld) *ld = l;
    return p;
}

int weft_data_set_keep_device_copies(weft_data_t *d, int keep)
{
    if (!weft_handle_check(d, WEFT_HANDLE_DATA, "weft_data_set_keep_device_copies", 1))
        return WEFT_ERR_INVALID;
    if (keep)
        d->flags |= WEFT_DATA_KEEP_DEVICE;
    else
        d->flags &= ~WEFT_DATA_KEEP_DEVICE;
    return WEFT_SUCCESS;
}
