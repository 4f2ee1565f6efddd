#include "stf/taskpool.h"

#include <stdlib.h>
#include <string.h>

#include "sched/task.h"
#include "devmgr/devmgr.h"
#include "stf/remote.h"
#include "stf/seqcheck.h"
#include "stf/watchdog.h"
#include "util/clock.h"
#include "util/log.h"

weft_taskpool_t *weft_taskpool_new(weft_context_t *ctx, const char *name)
{
    if (!weft_handle_check(ctx, WEFT_HANDLE_CONTEXT, "weft_taskpool_new", 1)) return NULL;
    weft_taskpool_t *tp = calloc(1, sizeof *tp);
    if (!tp) return NULL;
    tp->tag = WEFT_HANDLE_TASKPOOL;
    tp->ctx = ctx;
    snprintf(tp->name, sizeof tp->name, "%s", name ? name : "taskpool");
    pthread_mutex_init(&tp->lock, NULL);
    pthread_cond_init(&tp->done, NULL);
    tp->epoch = 1;
    if (weft_context_add_taskpool(ctx, tp) != WEFT_SUCCESS) {
        weft_error("taskpool %s: out of host memory", tp->name);
        pthread_cond_destroy(&tp->done);
        pthread_mutex_destroy(&tp->lock);
        free(tp);
        return NULL;
    }
    return tp;
}

void weft_taskpool_task_done(weft_taskpool_t *tp)
{
    if (atomic_fetch_sub_explicit(&tp->pending, 1, memory_order_acq_rel) != 1) return;
    /* The waiter rechecks pending under the lock, so this cannot be lost. */
    pthread_mutex_lock(&tp->lock);
    pthread_cond_broadcast(&tp->done);
    pthread_mutex_unlock(&tp->lock);
}

int weft_taskpool_touch(weft_taskpool_t *tp, weft_data_t *d)
{
    if (tp->ntouched == tp->touched_cap) {
        int cap = tp->touched_cap ? tp->touched_cap * 2 : 64;
        weft_data_t **v = realloc(tp->touched, sizeof *v * (size_t)cap);
        if (!v) return WEFT_ERR_NOMEM;
        tp->touched = v;
        tp->touched_cap = cap;
    }
    weft_data_retain(d);
    tp->touched[tp->ntouched++] = d;
    return WEFT_SUCCESS;
}

/* Every task is done: the dependency records of the touched data hold
 * finished tasks only; drop them so the next wave starts clean. */
static void reset_tracking(weft_taskpool_t *tp)
{
    for (int i = 0; i < tp->ntouched; i++) {
        weft_data_t *d = tp->touched[i];
        if (d->last_writer) weft_task_unref(d->last_writer);
        d->last_writer = NULL;
        for (int r = 0; r < d->nreaders; r++) weft_task_unref(d->readers[r]);
        d->nreaders = 0;
        d->stf_epoch = 0;
        weft_data_unref(d);
    }
    tp->ntouched = 0;
    tp->epoch++;
}

int weft_taskpool_wait(weft_taskpool_t *tp)
{
    if (!weft_handle_check(tp, WEFT_HANDLE_TASKPOOL, "weft_taskpool_wait", 1))
        return WEFT_ERR_INVALID;
    weft_context_t *ctx = tp->ctx;
    if (ctx->diverged) {
        /* Its tasks may wait for transfers that will never come. */
        weft_error("taskpool %s is not waited for: the ranks are out of step since an earlier "
                   "disagreement (see above)",
                   tp->name);
        tp->mismatch = 1;
        return WEFT_ERR_MISMATCH;
    }
    if (ctx->nranks > 1) {
        /* The agreement comes first, before any other collective and any
         * transfer: ranks elsewhere would otherwise leave this one
         * waiting forever. */
        int rc = weft_seqcheck_verify(tp);
        if (rc != WEFT_SUCCESS) return rc;
        rc = weft_remote_flush(tp);
        if (rc != WEFT_SUCCESS) weft_context_fail(ctx, rc);
    }
    weft_watchdog_wait(tp);
    weft_devexec_flush(tp);
    int rc = weft_failure_exchange(tp);
    if (ctx->nranks > 1) {
        weft_remote_reclaim(tp);
        weft_seqcheck_reset(tp);
    }
    if (ctx->leak_report) weft_taskpool_leak_report(ctx, tp->touched, tp->ntouched, tp->name);
    reset_tracking(tp);
    double el = weft_clock_s() - tp->t_first;
    double f = atomic_exchange(&tp->flops_done, 0.0);
    tp->last_gflops = tp->t_first > 0 && el > 0 ? f / el * 1e-9 : 0.0;
    tp->t_first = 0;
    return rc;
}

double weft_taskpool_gflops(const weft_taskpool_t *tp)
{
    return weft_handle_check(tp, WEFT_HANDLE_TASKPOOL, "weft_taskpool_gflops", 1) ? tp->last_gflops
                                                                                  : 0.0;
}

void weft_taskpool_destroy(weft_taskpool_t *tp)
{
    weft_context_remove_taskpool(tp->ctx, tp);
    free(tp->touched);
    weft_seqlog_free(&tp->seq);
    pthread_cond_destroy(&tp->done);
    pthread_mutex_destroy(&tp->lock);
    /* Kept a while: a call with the freed taskpool reads a released tag. */
    tp->tag = weft_handle_released(WEFT_HANDLE_TASKPOOL);
    weft_quarantine_put(&tp->ctx->quarantine, tp, free);
}

void weft_taskpool_free(weft_taskpool_t *tp)
{
    if (!tp) return;
    if (!weft_handle_check(tp, WEFT_HANDLE_TASKPOOL, "weft_taskpool_free", 1)) return;
    /* Tasks of a taskpool the ranks disagreed on may still run, or never:
     * weft_fini destroys it once no thread can touch it. */
    if (tp->mismatch) return;
    /* Whether tasks were inserted since the last wait, not whether some are
     * pending here: every rank must make the same implicit wait. */
    if (tp->t_first > 0 && !tp->mismatch) {
        weft_error("taskpool %s freed with tasks not waited for (%ld not finished on this "
                   "rank): waiting for them; call weft_taskpool_wait before weft_taskpool_free",
                   tp->name, (long)atomic_load(&tp->pending));
        tp->ctx->misuse = WEFT_ERR_INVALID;
        if (weft_taskpool_wait(tp) != WEFT_SUCCESS)
            weft_error("taskpool %s: the wait at its free failed", tp->name);
    }
    if (!tp->mismatch) reset_tracking(tp);
    weft_taskpool_destroy(tp);
}

int64_t weft_taskpool_ntasks_run(const weft_taskpool_t *tp)
{
    if (!weft_handle_check(tp, WEFT_HANDLE_TASKPOOL, "weft_taskpool_ntasks_run", 1)) return -1;
    return atomic_load(&((weft_taskpool_t *)tp)->nrun);
}
