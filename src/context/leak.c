/* Data made by a context, its live data and the leak report: at the end, a data the user
 * never released that still holds runtime-owned memory is a real leak.
 * Temporaries (NEW tiles, network copies) released by the user or by weft
 * are gone from this list by then, so they are never reported. */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "context/coll.h"
#include "context/context.h"
#include "util/log.h"

weft_data_t *weft_data_make(weft_context_t *ctx, weft_dtype_t type, int rows, int cols,
                            int owner_rank)
{
    /* Every rank makes every data of the run (each NEW tile of a chain of
     * tasks, wherever it runs): the memory of one released long ago is
     * reused rather than a malloc and a free a data. */
    void *mem = weft_quarantine_take(&ctx->quarantine, weft_data__mem_bytes(), weft_data__free_mem);
    weft_data_t *d = weft_data__create_in(mem, ctx, ctx->next_key++, type, rows, cols, owner_rank);
    if (d) d->quarantine = &ctx->quarantine;
    return d;
}

int weft_context_track(weft_context_t *ctx, weft_data_t *d)
{
    pthread_mutex_lock(&ctx->live_lock);
    int rc = weft_vec_push(&ctx->live, &d);
    if (rc == WEFT_SUCCESS) d->live_slot = (int)ctx->live.n;
    pthread_mutex_unlock(&ctx->live_lock);
    return rc;
}

void weft_context_untrack(weft_context_t *ctx, weft_data_t *d)
{
    pthread_mutex_lock(&ctx->live_lock);
    /* The data knows its place: releasing every tile of a matrix is not
     * quadratic in the tiles (every rank holds a handle for each). */
    weft_data_t **live = ctx->live.data;
    int i = d->live_slot - 1;
    if (i >= 0 && (size_t)i < ctx->live.n && live[i] == d) {
        weft_vec_swap_remove(&ctx->live, (size_t)i);
        if ((size_t)i < ctx->live.n) live[i]->live_slot = i + 1;
        d->live_slot = 0;
    }
    pthread_mutex_unlock(&ctx->live_lock);
}

static const char *state_name(weft_coherency_t s)
{
    return s == WEFT_COPY_OWNED ? "OWNED" : s == WEFT_COPY_SHARED ? "SHARED" : "INVALID";
}

static int report_data(weft_data_t *d, const char *when)
{
    int n = 0;
    /* A stale device copy of a data on the user's memory is a cache the
     * user's data keeps, not weft's leak: the user did not release that
     * data, which is not reported either (a wait with another taskpool
     * open leaves such copies: reported, weft_fini failed a correct run). */
    int users = weft_data_in_user_memory(d);
    for (int dev = 0; dev < WEFT_MAX_DEVICES; dev++) {
        weft_data_copy_t *c = d->copies[dev];
        if (!c || c->owner == WEFT_MEM_MANAGED) continue;
        if (users && dev > 0 && c->state == WEFT_COPY_INVALID && c->readers == 0) continue;
        weft_error("leak at %s: data %llu (%d x %d) copy on device %d: %s v%u, %d readers, "
                   "last task #%llu",
                   when, (unsigned long long)d->key, d->rows, d->cols, dev, state_name(c->state),
                   c->version, c->readers, (unsigned long long)c->last_task);
        n++;
    }
    return n;
}

/* At the end of a taskpool nothing may still read a copy, and a rank keeps
 * no copy of a tile it does not own (those visited for the taskpool and
 * were reclaimed): anything else is a leak of this taskpool. */
int weft_taskpool_leak_report(weft_context_t *ctx, weft_data_t *const *data, size_t n,
                              const char *name, int others_open)
{
    int leaks = 0;
    for (size_t i = 0; i < n; i++) {
        weft_data_t *d = data[i];
        weft_data_lock(d);
        for (int dev = 0; dev < WEFT_MAX_DEVICES; dev++) {
            weft_data_copy_t *c = d->copies[dev];
            int visiting = ctx->nranks > 1 && d->owner_rank != ctx->rank;
            int read = c && c->readers > 0 && !others_open;
            if (!c || (!read && !(visiting && c->owner == WEFT_MEM_RUNTIME))) continue;
            weft_error("leak at the end of taskpool %s: data %llu (%d x %d) copy on device %d: "
                       "%s v%u, %d readers, last task #%llu%s",
                       name, (unsigned long long)d->key, d->rows, d->cols, dev,
                       state_name(c->state), c->version, c->readers,
                       (unsigned long long)c->last_task,
                       read ? "" : " (a copy of another rank's tile left here)");
            leaks++;
        }
        weft_data_unlock(d);
    }
    return leaks;
}

int weft_context_leak_report(weft_context_t *ctx, const char *when)
{
    int leaks = 0;
    pthread_mutex_lock(&ctx->live_lock);
    weft_data_t **live = ctx->live.data;
    size_t nlive = ctx->live.n;
    for (size_t i = 0; i < nlive; i++) leaks += report_data(live[i], when);
    pthread_mutex_unlock(&ctx->live_lock);
    if (leaks)
        weft_error("%d runtime-owned cop%s of %zu unreleased data %s still alive at %s", leaks,
                   leaks == 1 ? "y" : "ies", nlive, leaks == 1 ? "is" : "are", when);
    return leaks;
}

/* The last refusal's words, not the first: a weft_fini that counts
 * refusals since its context began quotes one of them (the first of the
 * process may predate the context). */
static pthread_mutex_t void_lock = PTHREAD_MUTEX_INITIALIZER;
static long void_refusals;
static char void_last[256];

void weft_context_void_refused(void)
{
    pthread_mutex_lock(&void_lock);
    weft_log_last_error(void_last, sizeof void_last);
    void_refusals++;
    pthread_mutex_unlock(&void_lock);
}

long weft_context_void_refusals(char *last, size_t n)
{
    pthread_mutex_lock(&void_lock);
    long count = void_refusals;
    if (last && n) snprintf(last, n, "%s", void_last);
    pthread_mutex_unlock(&void_lock);
    return count;
}

void weft_context_misuse(weft_context_t *ctx, int status)
{
    if (ctx->misuse != WEFT_SUCCESS) return;
    ctx->misuse = status;
    weft_log_last_error(ctx->misuse_why, sizeof ctx->misuse_why);
}

/* One failing rank's status and words, sent from root to every rank. */
typedef struct fini_words {
    int status;
    char msg[WEFT_LOG_LINE];
} fini_words_t;

static int share_words(weft_context_t *ctx, int root, int status, const char *why, fini_words_t *f)
{
    *f = (fini_words_t){status, ""};
    if (ctx->rank == root) snprintf(f->msg, sizeof f->msg, "%s", why ? why : "");
    return weft_coll_share_failure(ctx, root, &f->status, f->msg, sizeof f->msg,
                                   "weft_fini: passing a rank's failure at weft_fini on");
}

/* The lowest rank among those whose `mine` is set (INT_MAX: none), or
 * INT_MAX after a failed collective (the context diverged). */
static int lowest_rank(weft_context_t *ctx, int mine)
{
    int r = mine ? ctx->rank : INT_MAX;
    int rc = weft_coll_all(ctx, &r, "weft_fini: its last exchange between ranks");
    return rc == WEFT_SUCCESS ? r : INT_MAX;
}

static void say_leak_status(weft_context_t *ctx, int err)
{
    if (err != WEFT_SUCCESS)
        weft_error("weft_fini: these leaks are an error (release every data and matrix "
                   "before weft_fini, or set leak_report=0); it returns %d (%s), the run's "
                   "first error",
                   err, weft_strerror(err));
    else
        weft_error("weft_fini returns %d (WEFT_ERR_INVALID) for these leaks: release every "
                   "data and matrix (weft_data_release, weft_matrix_free) before weft_fini, "
                   "or set leak_report=0",
                   WEFT_ERR_INVALID);
    if (ctx->misuse == WEFT_SUCCESS) ctx->misuse = WEFT_ERR_INVALID;
}

/* A rank without a failure of its own takes the lowest failing rank's. */
static void take_failure(weft_context_t *ctx, int first, const fini_words_t *f, int err)
{
    if (err != WEFT_SUCCESS)
        weft_error("weft_fini: rank %d failed at weft_fini (%s): %s; weft_fini returns %d (%s), "
                   "the run's first error",
                   first, weft_strerror(f->status), f->msg, err, weft_strerror(err));
    else
        weft_error("weft_fini returns %d (%s): rank %d failed at weft_fini: %s", f->status,
                   weft_strerror(f->status), first, f->msg);
    if (ctx->misuse == WEFT_SUCCESS) ctx->misuse = f->status;
}

/* The exchange itself, on a context whose ranks are in step: the lowest
 * failing rank and the next one, their words passed to every rank. A
 * collective that fails diverges ctx (coll.c) and ends it there. */
static void exchange_failures(weft_context_t *ctx, int status, const char *why)
{
    int first = lowest_rank(ctx, status != WEFT_SUCCESS);
    if (first == INT_MAX || ctx->diverged) return;
    /* Every failing rank but the lowest: all ranks know there is one. */
    int second = lowest_rank(ctx, status != WEFT_SUCCESS && ctx->rank != first);
    fini_words_t f, g = {0, ""};
    if (ctx->diverged || share_words(ctx, first, status, why, &f) != WEFT_SUCCESS) return;
    if (second != INT_MAX && share_words(ctx, second, status, why, &g) != WEFT_SUCCESS) return;
    if (status == WEFT_SUCCESS) {
        take_failure(ctx, first, &f, atomic_load(&ctx->error));
        return;
    }
    int other = ctx->rank == first ? second : first;
    const fini_words_t *o = ctx->rank == first ? &g : &f;
    if (other != INT_MAX && other != ctx->rank)
        weft_error("weft_fini: rank %d failed at weft_fini too (%s): %s", other,
                   weft_strerror(o->status), o->msg);
}

/* Data left unreleased with runtime memory is the application's error, as
 * a taskpool never waited for is: weft_fini returns WEFT_ERR_INVALID for
 * it, on every rank, since the memory may be held by one rank only. So
 * for the other failures that only one rank sees at weft_fini (a
 * write-back into user memory that failed again, its trace file that
 * could not be written, a taskpool it alone freed or ended unwaited). The
 * exchange is made whatever leak_report says: set on some ranks only
 * (weft_param_set), it must not leave the others in a collective. A rank
 * with a failure of its own hears of another's too (it said only its
 * own, and a leak on one rank went unnamed on another that failed): the
 * lowest failing rank from the next one, the others from the lowest. */
void weft_context_fini_exchange(weft_context_t *ctx, int leaks, int status, const char *why)
{
    if (status == WEFT_SUCCESS && leaks > 0) status = WEFT_ERR_INVALID;
    if (status == WEFT_SUCCESS && ctx->misuse != WEFT_SUCCESS) {
        status = ctx->misuse; /* a taskpool this rank alone did not wait for */
        why = ctx->misuse_why;
    }
    if (ctx->nranks > 1 && !ctx->diverged && !ctx->sim) exchange_failures(ctx, status, why);
    /* weft_fini returns the run's first error, read after the exchange: a
     * collective of it that failed made that WEFT_ERR_MPI (the line said
     * -1 and weft_fini returned -6), and a line that named another status
     * than the one returned misled (a task's failure came first). */
    if (leaks) say_leak_status(ctx, atomic_load(&ctx->error));
}
