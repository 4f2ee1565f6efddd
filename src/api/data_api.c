/* The public data calls: NEW tiles, user (MANAGED) memory, release, and
 * the checks every data handle goes through. */
#include "api/data_api.h"

#include <stdio.h>
#include <stdlib.h>

#include "sched/task.h"
#include "devmgr/devmgr.h"
#include "stf/insert.h"
#include "stf/newread.h"
#include "stf/record.h"
#include "stf/remote.h"
#include "stf/seqcheck.h"
#include "stf/taskpool.h"
#include "util/log.h"

int weft_data_check_between(const weft_data_t *d, const char *call)
{
    const char *tp = weft_insert_busy_pool_name(d);
    if (!tp) return WEFT_SUCCESS;
    weft_error("%s: data %llu is used by taskpool \"%s\", which was not waited for: call "
               "weft_taskpool_wait on it first",
               call, (unsigned long long)d->key, tp);
    return WEFT_ERR_INVALID;
}

/* The creations the ranks compare (stf/seqcheck.h): described only to
 * report a divergence. arg: key, type, rows, cols, owner rank. */
static void describe_data(const weft_seqcall_kind_t *kind, const int64_t *arg, char *text, size_t n)
{
    snprintf(text, n, "%s(data %lld: type %d, %d x %d, owner rank %d)", kind->name,
             (long long)arg[0], (int)arg[1], (int)arg[2], (int)arg[3], (int)arg[4]);
}

/* arg: key, 1 for a function or 0 for zeros. */
static void describe_set_init(const weft_seqcall_kind_t *kind, const int64_t *arg, char *text,
                              size_t n)
{
    snprintf(text, n, "%s(data %lld, %s)", kind->name, (long long)arg[0],
             arg[1] ? "function" : "zeros");
}

static const weft_seqcall_kind_t seq_data_new = {"weft_data_new", describe_data};
static const weft_seqcall_kind_t seq_data_register = {"weft_data_register", describe_data};
static const weft_seqcall_kind_t seq_set_init = {"weft_data_set_init", describe_set_init};

/* Logs a data creation for the check across ranks. */
static void log_creation(weft_context_t *ctx, const weft_seqcall_kind_t *kind, weft_dtype_t type,
                         int rows, int cols, int owner_rank)
{
    weft_seqcheck_call(ctx, kind,
                       (int64_t[WEFT_SEQCALL_ARGS]){(int64_t)ctx->next_key, (int64_t)type, rows,
                                                    cols, owner_rank});
}

/* The owner must be a rank of the run; every rank checks the same
 * arguments, so every rank refuses the same call. */
static int check_owner(const weft_context_t *ctx, const char *call, int owner_rank)
{
    if (owner_rank >= 0 && owner_rank < ctx->nranks) return WEFT_SUCCESS;
    weft_error("%s: owner rank %d is not in [0, %d): pass the rank that holds the data", call,
               owner_rank, ctx->nranks);
    return WEFT_ERR_INVALID;
}

/* The element type and the shape; every rank checks the same arguments.
 * Here, not only in the data layer, whose message names neither the call
 * nor which of the two is wrong ("invalid type or size 1 x 1" for a type
 * that is no weft_dtype_t). */
static int check_shape(const char *call, weft_dtype_t type, int rows, int cols)
{
    if (weft_dtype_check(call, type) != WEFT_SUCCESS) return WEFT_ERR_INVALID;
    if (rows <= 0 || cols <= 0) {
        weft_error("%s: a tile of %d x %d elements: rows and cols must be positive", call, rows,
                   cols);
        return WEFT_ERR_INVALID;
    }
    /* So that a NULL from the data layer afterwards is memory alone. */
    size_t elem = weft_dtype_size(type), bytes;
    if (weft_data__tile_fits(elem, rows, cols, &bytes)) return WEFT_SUCCESS;
    weft_error("%s: %d x %d elements of %zu bytes are more bytes than a tile can hold (at most "
               "%lld): use smaller tiles",
               call, rows, cols, elem, (long long)PTRDIFF_MAX);
    return WEFT_ERR_INVALID;
}

weft_data_t *weft_data_new(weft_context_t *ctx, weft_dtype_t type, int rows, int cols,
                           int owner_rank)
{
    if (!weft_handle_check_main(ctx, WEFT_HANDLE_CONTEXT, "weft_data_new", 1)) return NULL;
    /* The key names the data in a divergence report: the ranks agree on it
     * up to the first creation that differs. */
    log_creation(ctx, &seq_data_new, type, rows, cols, owner_rank);
    /* Checks every rank makes alike: no refusal entry (see matrix.c build). */
    if (check_owner(ctx, "weft_data_new", owner_rank) != WEFT_SUCCESS ||
        check_shape("weft_data_new", type, rows, cols) != WEFT_SUCCESS)
        return NULL;
    weft_data_t *d = weft_data_make(ctx, type, rows, cols, owner_rank);
    if (d) d->flags |= WEFT_DATA_NEW | WEFT_DATA_MADE_NEW;
    if (d && weft_context_track(ctx, d) != 0) {
        weft_data__unref(d);
        d = NULL;
    }
    if (!d) {
        /* The shape and its bytes were checked: only memory is left (it
         * said nothing). */
        weft_error("weft_data_new: out of host memory for the data's record");
        weft_seqcheck_refused(ctx); /* named on every rank at the next agreement */
    }
    return d;
}

int weft_data_check_outside_write(const weft_data_t *d, const char *call)
{
    /* Before, the owner's write was kept there only: the other ranks'
     * readers read the initial contents (wait 0 everywhere), and a tile
     * past the eager limit that the owner then sent waited for a receive
     * that no rank posted (a hang). A reducible data's reductions fold into
     * its owner's contents, which the other ranks never read: the owner's
     * write is their start (a plain reader of it before any task wrote it
     * is refused at insertion). */
    if (d->ctx->nranks == 1 || (d->flags & (WEFT_DATA_INIT | WEFT_DATA_REDUX)) != WEFT_DATA_INIT ||
        !weft_insert_never_written(d))
        return WEFT_SUCCESS;
    weft_error("%s: data %llu is a NEW data whose initial contents (weft_data_set_init) each "
               "rank that reads it makes itself: a write outside tasks on this rank would not "
               "reach the others; write it in a task, read it with WEFT_R, or make it reducible "
               "first (weft_data_set_reduction: its reductions start from the owner's contents)",
               call, (unsigned long long)d->key);
    return WEFT_ERR_INVALID;
}

int weft_data_set_init(weft_data_t *d, weft_data_init_fn init, void *arg)
{
    if (!weft_handle_check_main(d, WEFT_HANDLE_DATA, "weft_data_set_init", 1))
        return WEFT_ERR_INVALID;
    weft_context_t *ctx = d->ctx;
    /* Ranks that read d first make its contents themselves: they must all
     * know it, or one waits for a transfer that another never sends. */
    weft_seqcheck_call(ctx, &seq_set_init,
                       (int64_t[WEFT_SEQCALL_ARGS]){(int64_t)d->key, init != NULL});
    const weft_stf_rec_t *r = weft_stf_rec(d);
    const char *busy = weft_insert_busy_pool_name(d);
    int written = !(d->flags & WEFT_DATA_NEW) || d->version > 0 || weft_remote_version(d) > 0 ||
                  (r && r->written);
    if (busy)
        weft_error("weft_data_set_init: data %llu is used by taskpool \"%s\", which was not "
                   "waited for: set the initialiser before the data's first task",
                   (unsigned long long)d->key, busy);
    else if (written)
        weft_error("weft_data_set_init: data %llu is not a NEW data that no task wrote: it has "
                   "contents already",
                   (unsigned long long)d->key);
    if (!busy && !written) weft_newread_sim_unseen(d, "weft_data_set_init accepted on");
    if (busy || written) {
        /* The ranks that read d first must all know (see above). */
        weft_seqcheck_refused(ctx);
        return WEFT_ERR_INVALID;
    }
    d->init_fn = init;
    d->init_arg = arg;
    d->flags |= WEFT_DATA_INIT;
    return WEFT_SUCCESS;
}

/* The owner's memory must be there; other ranks pass what they like. */
static int check_register(const weft_context_t *ctx, const void *ptr, int rows, int64_t ld,
                          int owner_rank)
{
    if (owner_rank != ctx->rank) return WEFT_SUCCESS;
    if (ptr && ld >= rows) return WEFT_SUCCESS;
    weft_error("weft_data_register: %s on the owner rank %d",
               !ptr ? "NULL pointer: pass the address of the user's memory"
                    : "ld is smaller than rows: pass the leading dimension in elements",
               owner_rank);
    return WEFT_ERR_INVALID;
}

static weft_data_t *data_register(weft_context_t *ctx, weft_dtype_t type, void *ptr, int rows,
                                  int cols, int64_t ld, int owner_rank);

weft_data_t *weft_data_register(weft_context_t *ctx, weft_dtype_t type, void *ptr, int rows,
                                int cols, int64_t ld, int owner_rank)
{
    if (!weft_handle_check_main(ctx, WEFT_HANDLE_CONTEXT, "weft_data_register", 1)) return NULL;
    log_creation(ctx, &seq_data_register, type, rows, cols, owner_rank);
    /* Checks every rank makes alike: no refusal entry (see matrix.c build). */
    if (check_owner(ctx, "weft_data_register", owner_rank) != WEFT_SUCCESS ||
        check_shape("weft_data_register", type, rows, cols) != WEFT_SUCCESS)
        return NULL;
    /* Only the owner reads ptr and ld: its refusal is its own. */
    weft_data_t *d = data_register(ctx, type, ptr, rows, cols, ld, owner_rank);
    if (!d) weft_seqcheck_refused(ctx);
    return d;
}

int weft_data_claim_memory(weft_data_t *d, const char *call, void *ptr, int64_t ld,
                           weft_span_t **out)
{
    weft_span_block_t blk = weft_span_block(ptr, d->rows, d->cols, ld, d->elem);
    return weft_spans_claim(&d->ctx->spans, &blk, call, d->key, d->key, out);
}

/* What weft_data_register says where only memory was missing (its
 * arguments were checked). */
static weft_data_t *register_nomem(void)
{
    weft_error("weft_data_register: out of host memory for the data's record");
    return NULL;
}

static weft_data_t *data_register(weft_context_t *ctx, weft_dtype_t type, void *ptr, int rows,
                                  int cols, int64_t ld, int owner_rank)
{
    if (check_register(ctx, ptr, rows, ld, owner_rank) != WEFT_SUCCESS) return NULL;
    weft_data_t *d = weft_data_make(ctx, type, rows, cols, owner_rank);
    if (!d) return register_nomem();
    /* The owner's memory is this rank's to check against the other live
     * registrations; a refusal here is named on every rank at the next
     * agreement (weft_data_register folds it in). */
    if (owner_rank == ctx->rank &&
        weft_data_claim_memory(d, "weft_data_register", ptr, ld, &d->span) != WEFT_SUCCESS) {
        weft_data__unref(d);
        return NULL;
    }
    /* Other ranks hold a handle without memory, as for a matrix's remote
     * tiles: the insertion sequence names the data on every rank. */
    weft_data_copy_t *c = owner_rank != ctx->rank
                              ? NULL
                              : weft_data_copy_attach(d, 0, ptr, ld, WEFT_MEM_MANAGED, NULL, NULL);
    if ((owner_rank == ctx->rank && !c) || weft_context_track(ctx, d) != 0) {
        weft_spans_release(&ctx->spans, d->span);
        weft_data__unref(d);
        return register_nomem();
    }
    if (c) weft_data_copy_set_initial_locked(d, 0);
    return d;
}

void weft_data_release(weft_data_t *d)
{
    if (!weft_handle_check_void(d, WEFT_HANDLE_DATA, "weft_data_release")) return;
    /* The matrix would release it again at weft_matrix_free, and its
     * other calls would meet a released tile. */
    if (d->flags & WEFT_DATA_TILE) {
        weft_error("weft_data_release: data %llu is a tile of a matrix (weft_tile): its tiles "
                   "are released together by weft_matrix_free; the call is refused",
                   (unsigned long long)d->key);
        weft_context_void_refused();
        return;
    }
    weft_data__release(d);
}

void weft_data__release(weft_data_t *d)
{
    if (d->host_access)
        weft_warn("weft_data_release: data %llu was still acquired by the host: released too",
                  (unsigned long long)d->key);
    /* The last point where the user sees the handle: a write-back that
     * failed earlier is tried again (a taskpool still using d writes it
     * back at its wait). The list of pending ones keeps d for the later
     * tries when this one fails too. */
    if (!weft_insert_busy_pool_name(d)) weft_devexec_flush_release(d);
    weft_context_untrack(d->ctx, d);
    /* The user's memory may be registered again once the handle is gone and
     * no taskpool uses it any more: while tasks inserted before the release
     * still run, a new handle of the same bytes would race with them, so
     * the memory stays claimed until that taskpool's wait
     * (weft_taskpool_reset_tracking gives it back). Not only this rank's
     * tasks: a reduction's combines, inserted at the wait, and the final
     * version of a tile another rank's task writes, which comes home at
     * the wait, write the bytes too (weft_insert_busy_pool sees both). */
    if (!weft_insert_busy_pool_name(d)) {
        weft_spans_release_all(&d->ctx->spans, d->span);
        d->span = NULL;
    } else {
        weft_span_mark_released(d->span);
    }
    d->flags |= WEFT_DATA_RELEASED;
    /* The user's handle is dead now, even while tasks still hold the data. */
    d->tag = weft_handle_released(WEFT_HANDLE_DATA);
    weft_data__unref(d);
}

int weft_data_owner(const weft_data_t *d)
{
    if (!weft_handle_check(d, WEFT_HANDLE_DATA, "weft_data_owner", 1)) return WEFT_ERR_INVALID;
    return d->owner_rank;
}

long long weft_data_key(const weft_data_t *d)
{
    if (!weft_handle_check(d, WEFT_HANDLE_DATA, "weft_data_key", 1)) return WEFT_ERR_INVALID;
    return (long long)d->key;
}

void *weft_data_host_ptr(weft_data_t *d, int64_t *ld)
{
    if (!weft_handle_check_main(d, WEFT_HANDLE_DATA, "weft_data_host_ptr", 1)) return NULL;
    /* The host may write through the pointer: an acquire for read-write,
     * released at once, leaves every device copy stale. */
    const char *tp = weft_insert_busy_pool_name(d);
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
    if (!weft_handle_check_main(d, WEFT_HANDLE_DATA, "weft_data_set_keep_device_copies", 1))
        return WEFT_ERR_INVALID;
    if (weft_data_check_between(d, "weft_data_set_keep_device_copies") != WEFT_SUCCESS)
        return WEFT_ERR_INVALID;
    if (keep) {
        d->flags |= WEFT_DATA_KEEP_DEVICE;
        return WEFT_SUCCESS;
    }
    d->flags &= ~WEFT_DATA_KEEP_DEVICE;
    /* The default from here on, as if the last wait had dropped them: the
     * user may write the memory next with no call, and a copy kept by an
     * earlier wait was read instead (the write lost, a fuzzer's finding).
     * Unless the memory does not hold the newest version (a write-back
     * pending): then the device still has it. */
    if (weft_data_in_user_memory(d)) weft_data_host_only(d);
    return WEFT_SUCCESS;
}
