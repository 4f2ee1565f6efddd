/* The public data calls: NEW tiles, user (MANAGED) memory, release, and
 * access to the host copy between taskpools. */
#include <stdlib.h>

#include "stf/context.h"
#include "stf/devmgr.h"
#include "stf/seqcheck.h"
#include "util/log.h"

weft_data_t *weft_data_new(weft_context_t *ctx, weft_dtype_t type, int rows, int cols,
                           int owner_rank)
{
    if (!ctx) return NULL;
    weft_seqcheck_call(ctx, "weft_data_new(type %d, %d x %d, owner rank %d)", (int)type, rows, cols,
                       owner_rank);
    if (owner_rank < 0 || owner_rank >= ctx->nranks) {
        weft_error("weft_data_new: owner rank %d is not in [0, %d)", owner_rank, ctx->nranks);
        return NULL;
    }
    weft_data_t *d = weft_data_create(ctx, ctx->next_key++, type, rows, cols, owner_rank);
    if (!d) return NULL;
    d->flags |= WEFT_DATA_NEW;
    if (weft_context_track(ctx, d) != 0) {
        weft_data_unref(d);
        return NULL;
    }
    return d;
}

weft_data_t *weft_data_register(weft_context_t *ctx, weft_dtype_t type, void *ptr, int rows,
                                int cols, int64_t ld)
{
    if (!ctx) return NULL;
    weft_seqcheck_call(ctx, "weft_data_register(type %d, %d x %d)", (int)type, rows, cols);
    if (!ptr || ld < rows) {
        weft_error("weft_data_register: %s", !ptr ? "NULL pointer" : "ld smaller than rows");
        return NULL;
    }
    weft_data_t *d = weft_data_create(ctx, ctx->next_key++, type, rows, cols, ctx->rank);
    if (!d) return NULL;
    weft_data_copy_t *c = weft_data_copy_attach(d, 0, ptr, ld, WEFT_MEM_MANAGED, NULL, NULL);
    if (!c || weft_context_track(ctx, d) != 0) {
        weft_data_unref(d);
        return NULL;
    }
    weft_data_copy_set_initial_locked(d, 0);
    return d;
}

void weft_data_release(weft_data_t *d)
{
    if (!d) return;
    weft_context_untrack(d->ctx, d);
    d->flags |= WEFT_DATA_RELEASED;
    weft_data_unref(d);
}

void *weft_data_host_ptr(weft_data_t *d, int64_t *ld)
{
    if (!d) return NULL;
    /* The newest version may live on a device only: bring it home first. */
    if (weft_devexec_flush_data(d) != WEFT_SUCCESS) return NULL;
    weft_data_lock(d);
    weft_data_copy_t *c = d->copies[0];
    void *p = NULL;
    if (c && c->version == d->version && c->state != WEFT_COPY_INVALID) {
        p = c->ptr;
        if (ld) *ld = c->ld;
    }
    weft_data_unlock(d);
    return p;
}
