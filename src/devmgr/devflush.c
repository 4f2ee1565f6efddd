/* The write-backs that put the final versions into the user's memory (a
 * MANAGED host copy: weft_data_register, weft_matrix_wrap) after a wait,
 * and what a failed one leaves (docs/SEMANTICS.md section 3, "A write-back
 * into user memory that fails"): the newest version stays on its device
 * copy, the data is *pending* (flag WEFT_DATA_WB_PENDING, listed in
 * ctx->wb_pending with a reference), and the write-back is tried again at
 * every later point where the user's memory must be current: each later
 * wait, an acquire by the host, the data's release and weft_fini. Each
 * failure is an error naming the data; the one that settles it says so.
 * Main thread, between taskpools. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devmgr/devmgr.h"
#include "stf/failure.h"
#include "stf/insert.h"
#include "stf/taskpool.h"
#include "util/log.h"

/* When the newest version of d is on a device only, copies it into the
 * host copy; no more. */
static int write_back(weft_data_t *d)
{
    if (!d->ctx || d->ctx->ndevices == 0) return WEFT_SUCCESS;
    weft_data_lock(d);
    int need =
        !weft_data_copy_is_newest_locked(d, d->copies[0]) && weft_data_newest_copy_locked(d, -1);
    weft_data_unlock(d);
    return need ? weft_devcopy_to_host(WEFT_LOG_ERROR, d, NULL) : WEFT_SUCCESS;
}

/* Whether d's newest bytes are a failed body's and the host copy holds an
 * older version intact, to which the wait's recovery goes back
 * (api/recover.c): not to be written over. */
static int keeps_older(weft_data_t *d)
{
    weft_data_lock(d);
    int keep = weft_data_older_host_locked(d) != NULL;
    weft_data_unlock(d);
    return keep;
}

static size_t pending_index(const weft_context_t *ctx, const weft_data_t *d)
{
    weft_data_t *const *list = ctx->wb_pending.data;
    size_t i = 0;
    while (i < ctx->wb_pending.n && list[i] != d) i++;
    return i;
}

/* d's user memory lacks its newest version: listed, with a reference, so
 * that a release does not end the retries. Without memory for the list it
 * stays a data like any other, written back when a later wait touches it. */
static void pending_add(weft_data_t *d)
{
    weft_context_t *ctx = d->ctx;
    if (d->flags & WEFT_DATA_WB_PENDING) return;
    if (weft_vec_push(&ctx->wb_pending, &d) != WEFT_SUCCESS) {
        weft_error("data %llu: no memory to list its write-back for a retry",
                   (unsigned long long)d->key);
        return;
    }
    weft_data__retain(d);
    d->flags |= WEFT_DATA_WB_PENDING;
}

/* A pending d whose host copy holds the newest version again: said, and
 * unlisted (its last reference may go with it: d is not used after). */
static void pending_settle(weft_data_t *d)
{
    weft_context_t *ctx = d->ctx;
    if (!(d->flags & WEFT_DATA_WB_PENDING)) return;
    d->flags &= ~WEFT_DATA_WB_PENDING;
    weft_warn("data %llu: the user's memory holds its newest version v%u again (the write-back "
              "that failed earlier is settled)",
              (unsigned long long)d->key, d->version);
    size_t i = pending_index(ctx, d);
    if (i == ctx->wb_pending.n) return;
    weft_vec_remove(&ctx->wb_pending, i);
    weft_data__unref(d);
}

/* A pending d whose version is lost for good: unlisted without a word
 * (the caller said why). */
static void pending_drop(weft_data_t *d)
{
    weft_context_t *ctx = d->ctx;
    if (!(d->flags & WEFT_DATA_WB_PENDING)) return;
    d->flags &= ~WEFT_DATA_WB_PENDING;
    size_t i = pending_index(ctx, d);
    if (i == ctx->wb_pending.n) return;
    weft_vec_remove(&ctx->wb_pending, i);
    weft_data__unref(d);
}

/* "the write-back of data 3 into user memory failed: ...": what a failed
 * write-back leaves, for the error lines. The memory's contents are not
 * named by a version: a copy that failed may have written part of it. */
static void describe(const weft_data_t *d, int rc, const char *when, char *buf, size_t n)
{
    int dev = 0;
    for (int i = 1; i < WEFT_MAX_DEVICES && !dev; i++)
        if (d->copies[i] && d->copies[i]->version == d->version &&
            d->copies[i]->state != WEFT_COPY_INVALID)
            dev = i;
    snprintf(buf, n,
             "the write-back of data %llu into user memory failed%s: %s; the memory does not hold "
             "its newest version v%u, which stays on device %d and is written back at the next "
             "wait, acquire or release of the data",
             (unsigned long long)d->key, when, weft_strerror(rc), d->version, dev);
}

/* d's final version reached the user's memory (at a wait, or settled at
 * weft_fini): the user may write that memory next, so the device copies
 * go unless kept, and a pending d is unlisted (d may be gone after). */
static void written_back(weft_data_t *d)
{
    if (!(d->flags & WEFT_DATA_KEEP_DEVICE)) weft_data_host_only(d);
    pending_settle(d);
}

/* A write-back that settles a pending d here (an acquire, a release) ends
 * like one at a wait: the user may write the memory next (SEMANTICS.md
 * section 3), and a device copy left current at the same version would be
 * read by the next task instead of what the user wrote. */
int weft_devexec_flush_data(weft_data_t *d)
{
    int pending = (d->flags & WEFT_DATA_WB_PENDING) != 0;
    int rc = write_back(d);
    if (rc == WEFT_SUCCESS && pending) written_back(d);
    return rc;
}

int weft_devexec_flush_now(weft_data_t *d)
{
    int rc = write_back(d);
    if (rc == WEFT_SUCCESS)
        written_back(d);
    else
        pending_add(d); /* tried again at the next wait, acquire, release */
    return rc;
}

/* d's final version into the user's memory at tp's wait; a failure fails
 * the wait (on every rank: failure.c) and leaves d pending. */
static void flush_at_wait(weft_taskpool_t *tp, weft_data_t *d, int keep_older)
{
    if (keep_older && keeps_older(d)) return; /* nothing written, nothing settled */
    int again = (d->flags & WEFT_DATA_WB_PENDING) != 0;
    int rc = write_back(d);
    if (rc == WEFT_SUCCESS) {
        written_back(d);
        return;
    }
    char what[400];
    int lost = 1; /* no later try can bring it back */
    if (rc == WEFT_ERR_DEVICE) {
        /* Its only newest copy is on a device that failed: no retry can
         * bring it back. Not pending: each later reader of the version
         * fails naming it (devcopy.c), and the user's memory keeps what it
         * held, an older version. */
        snprintf(what, sizeof what,
                 "the write-back of data %llu into user memory failed: its newest version v%u "
                 "is lost with the device that held it; the memory holds an older version%s",
                 (unsigned long long)d->key, d->version,
                 d->ctx->nranks > 1 ? " unless another rank holds it (said below when it comes "
                                      "home)"
                                    : "");
    } else if (d->flags & WEFT_DATA_RELEASED) {
        /* Released while this taskpool used it: its memory goes back to
         * the user at this wait, the last try. */
        snprintf(what, sizeof what,
                 "the write-back of data %llu (released) into user memory failed: %s; its newest "
                 "version v%u is lost, the memory given back at this wait does not hold it",
                 (unsigned long long)d->key, weft_strerror(rc), d->version);
    } else {
        describe(d, rc, again ? " again (it had failed at an earlier wait)" : "", what,
                 sizeof what);
        lost = 0;
    }
    weft_error("taskpool %s: %s", tp->name, what);
    weft_failure_note(tp, rc, what);
    if (lost)
        pending_drop(d);
    else
        pending_add(d);
}

/* A taskpool other than tp, not waited for yet, uses d: writing d back
 * now would race with it; that taskpool's own wait tries again. */
static int used_elsewhere(const weft_taskpool_t *tp, const weft_data_t *d)
{
    const weft_taskpool_t *busy = weft_insert_busy_pool(d);
    return busy && busy != tp;
}

void weft_devexec_flush(weft_taskpool_t *tp)
{
    weft_context_t *ctx = tp->ctx;
    if (ctx->ndevices == 0) return;
    weft_devahead_prune(ctx);
    /* Those pending from earlier waits first, whether or not this taskpool
     * used them (a copy: a settled one leaves the list). */
    size_t npend = ctx->wb_pending.n;
    weft_data_t **pend = npend ? malloc(npend * sizeof *pend) : NULL;
    if (pend) memcpy(pend, ctx->wb_pending.data, npend * sizeof *pend);
    for (size_t i = 0; pend && i < npend; i++)
        if (!used_elsewhere(tp, pend[i])) flush_at_wait(tp, pend[i], 1);
    free(pend);
    for (size_t i = 0; i < tp->touched.n; i++) {
        weft_data_t *d = weft_taskpool_touched(tp, i);
        if (!weft_data_in_user_memory(d)) continue;
        /* Tried above in this wait already. */
        if (d->flags & WEFT_DATA_WB_PENDING) continue;
        flush_at_wait(tp, d, 1);
    }
}

void weft_devexec_flush_kept(weft_taskpool_t *tp)
{
    if (tp->ctx->ndevices == 0) return;
    for (size_t i = 0; i < tp->touched.n; i++) {
        weft_data_t *d = weft_taskpool_touched(tp, i);
        /* Left alone above, and the recovery did not go back. */
        if (weft_data_in_user_memory(d) && keeps_older(d)) flush_at_wait(tp, d, 0);
    }
}

/* The last try for a data the user released: the memory is the user's
 * again at once (to free, or to register anew), so no later write may
 * reach it. Before, the retries went on: a new registration of the same
 * bytes was overwritten by the old version at a later wait, and memory
 * freed after the release was written after its free. */
static void give_up_released(weft_data_t *d, int rc, const char *when)
{
    weft_error("%s: the write-back of data %llu into user memory failed again (%s): its "
               "newest version v%u is lost, the memory the release gives back does not hold it",
               when, (unsigned long long)d->key, weft_strerror(rc), d->version);
    weft_context_fail(d->ctx, rc);
    pending_drop(d);
}

void weft_devexec_flush_release(weft_data_t *d)
{
    if (!(d->flags & WEFT_DATA_WB_PENDING)) return;
    int rc = weft_devexec_flush_data(d);
    if (rc != WEFT_SUCCESS) give_up_released(d, rc, "weft_data_release");
}

void weft_devexec_flush_give_up(weft_data_t *d)
{
    if (!(d->flags & WEFT_DATA_WB_PENDING)) return;
    weft_warn("data %llu: the host acquire with WEFT_W gives up its pending write-back (version "
              "v%u): what the program writes now is the newest version",
              (unsigned long long)d->key, d->version);
    pending_drop(d);
}

int weft_devexec_flush_fini(weft_context_t *ctx, int retry)
{
    int first = WEFT_SUCCESS;
    while (ctx->wb_pending.n > 0) {
        weft_data_t *d = *(weft_data_t **)weft_vec_at(&ctx->wb_pending, ctx->wb_pending.n - 1);
        int rc = retry ? write_back(d) : WEFT_ERR_MISMATCH;
        if (rc == WEFT_SUCCESS) {
            /* As at a wait (the device copy left was reported a leak of an
             * unreleased data, where a run without the failure said nothing). */
            written_back(d);
            continue;
        }
        weft_error("weft_fini: the write-back of data %llu into user memory failed again: %s; "
                   "its newest version v%u is lost, the memory does not hold it",
                   (unsigned long long)d->key, weft_strerror(rc), d->version);
        weft_context_fail(ctx, rc);
        if (first == WEFT_SUCCESS) first = rc;
        d->flags &= ~WEFT_DATA_WB_PENDING;
        weft_vec_remove(&ctx->wb_pending, ctx->wb_pending.n - 1);
        /* Without devices, its device copy cannot go back to a zone: it
         * stays, as an unreleased data does. */
        if (retry) weft_data__unref(d);
    }
    /* A device that failed during the run fails weft_fini on every rank
     * (weft_context_fini_exchange), even where no task of this rank did. */
    for (int i = 1; ctx->devices && i <= ctx->devices->n; i++) {
        weft_device_t *dev = ctx->devices->dev[i];
        if (!weft_device_is_broken(dev)) continue;
        long long failed = atomic_load(&dev->stats.failed_broken);
        if (failed >= WEFT_DEVICE_BROKEN_NAMED) /* the eighth line promised it */
            weft_error("weft_fini: device %s failed during the run (its errors are above): %lld "
                       "tasks failed on it in all, the first %d named above",
                       dev->name, failed, WEFT_DEVICE_BROKEN_NAMED);
        else
            weft_error("weft_fini: device %s failed during the run (its errors are above)",
                       dev->name);
        weft_context_fail(ctx, WEFT_ERR_DEVICE);
        if (first == WEFT_SUCCESS) first = WEFT_ERR_DEVICE;
    }
    return first;
}
