/* The public taskpool calls that need every layer beneath: the wait (the
 * ranks' agreement, final versions sent home, the tasks, device copies of
 * user memory pushed out, the failure exchange) and the free. */
#include "context/context.h"

#include <stdio.h>

#include "api/recover.h"
#include "devmgr/devmgr.h"
#include "ptg/ptgwait.h"
#include "stf/redux.h"
#include "stf/remote.h"
#include "stf/seqcheck.h"
#include "stf/taskpool.h"
#include "stf/taskrun.h"
#include "trace/trace.h"
#include "util/clock.h"
#include "util/inbody.h"
#include "util/log.h"

/* The taskpool-end leak report (context/leak.c), told to the failure
 * exchange as this rank's failure: the first leak's line, counted. */
static void leak_check(weft_taskpool_t *tp)
{
    const weft_context_t *ctx = tp->ctx;
    weft_taskpool_t *const *pools = ctx->taskpools.data;
    int others_open = 0;
    for (size_t i = 0; i < ctx->taskpools.n; i++)
        others_open |= pools[i] != tp && weft_taskpool_unwaited(pools[i]);
    int n =
        weft_taskpool_leak_report(tp->ctx, tp->touched.data, tp->touched.n, tp->name, others_open);
    if (n == 0) return;
    char first[WEFT_LOG_LINE], what[sizeof tp->fail.what];
    weft_log_last_error(first, sizeof first);
    snprintf(what, sizeof what, "%d leaked cop%s (weft's broken invariant); the last: %.300s", n,
             n == 1 ? "y" : "ies", first);
    weft_failure_note(tp, WEFT_ERR_INTERNAL, what);
}

/* The wait's refusal once the ranks are out of step or MPI has ended: the
 * taskpool is left to weft_fini (weft_taskpool_free skips it). No body
 * starts any more, and those running have returned. */
static int not_waited(weft_taskpool_t *tp)
{
    weft_error("taskpool %s: its tasks are not waited for (no more of them start, weft_fini drops "
               "them): %s",
               tp->name, weft_context_diverged_why(tp->ctx));
    tp->mismatch = 1;
    weft_taskrun_halted_wait(tp->ctx);
    return WEFT_ERR_MISMATCH;
}

static int wait_pool(weft_taskpool_t *tp);

/* A wait inside a wait of the same thread (a signal handler's) is
 * refused; weft_fini's own waits are inside weft_fini. */
int weft_taskpool_wait(weft_taskpool_t *tp)
{
    if (weft_inbody_call_refuse("weft_taskpool_wait", "weft_fini")) return WEFT_ERR_INVALID;
    const char *was = weft_inbody_call_enter("weft_taskpool_wait");
    int rc = wait_pool(tp);
    weft_inbody_call_leave(was);
    return rc;
}

static int wait_checked(weft_taskpool_t *tp);

/* The wait, drawn on the trace's "main thread" track (when the thread that
 * made the context waits: the track has one writer), with the tasks kept
 * here and how long ago the first was inserted: a stranger looking for
 * where an iteration's time went saw the workers and the comm thread only.
 * The insertion is not a slice of its own: taskpools inserted in turn
 * before their waits would cross. */
static int wait_pool(weft_taskpool_t *tp)
{
    if (!weft_handle_check_main(tp, WEFT_HANDLE_TASKPOOL, "weft_taskpool_wait", 1))
        return WEFT_ERR_INVALID;
    weft_context_t *ctx = tp->ctx;
    uint64_t w0 = weft_trace_stamp(ctx->trace);
    double first = tp->t_first;
    long kept = tp->ninserted_local - tp->ended_before;
    int rc = wait_checked(tp);
    if (ctx->trace && weft_trace_thread_track == ctx->trace_main)
        weft_trace_slice(ctx->trace, ctx->trace_main, w0, weft_trace_now(), "wait", "api",
                         "\"taskpool\":\"%.20s\",\"status\":%d,\"tasks\":%ld,"
                         "\"inserting_us\":%.1f",
                         tp->name, rc, kept, first > 0 ? 1e-3 * (double)w0 - 1e6 * first : 0.0);
    return rc;
}

static int wait_checked(weft_taskpool_t *tp)
{
    weft_context_t *ctx = tp->ctx;
    /* The insertion phase in CPU time of the inserting thread, whatever
     * the wait finds (docs/SCALE.md). */
    if (tp->t_first > 0) ctx->insert_s += weft_clock_thread_s() - tp->cpu_first;
    /* Its tasks may wait for transfers that will never come. */
    if (ctx->diverged) return not_waited(tp);
    /* Partial results still apart are combined by tasks of this wave,
     * inserted alike on every rank before the sequences are compared. */
    int rrc = weft_redux_flush_pool(tp);
    if (rrc != WEFT_SUCCESS) weft_failure_note(tp, rrc, "combining partial results failed");
    if (ctx->nranks > 1) {
        /* The agreement comes first, before any other collective and any
         * transfer: ranks elsewhere would otherwise leave this one
         * waiting forever. */
        int rc = weft_seqcheck_verify(tp);
        if (rc != WEFT_SUCCESS) return rc; /* its bodies halted (weft_taskrun_diverge) */
        rc = weft_remote_flush(tp);
        if (rc != WEFT_SUCCESS)
            weft_failure_note(tp, rc, "sending the final versions to their owners failed");
    }
    weft_taskpool_wait_tasks(tp);
    /* MPI ended under the wait (a body called MPI_Finalize): its tasks
     * will not end, and nothing may call MPI. */
    if (atomic_load(&ctx->mpi_gone)) return not_waited(tp);
    weft_devexec_flush(tp);
    if (ctx->nranks > 1) {
        /* Before the copies away from owners go: they may hold it. */
        int grc = weft_recover_good_versions(tp);
        if (grc != WEFT_SUCCESS)
            weft_failure_note(tp, grc, "bringing the last good versions home failed");
        weft_remote_reclaim(tp);
        weft_seqcheck_reset(tp);
    } else {
        (void)weft_recover_good_versions(tp); /* one rank: it only says what was overwritten */
    }
    if (atomic_load(&tp->fail.nfailed) > 0) weft_devexec_flush_kept(tp);
    if (tp->ptg && ctx->nranks > 1 && !ctx->diverged) weft_ptg_settle(tp);
    tp->ptg = 0;
    /* A copy still read or left behind is weft's broken invariant: found
     * before the ranks exchange their failures, it is one of them, so
     * every rank's wait fails naming it and the rank that holds it. */
    if (ctx->leak_report) leak_check(tp);
    int rc = weft_failure_exchange(tp);
    weft_taskpool_reset_tracking(tp);
    double el = weft_clock_s() - tp->t_first;
    double f = atomic_exchange(&tp->flops_done, 0.0);
    tp->last_gflops = tp->t_first > 0 && el > 0 ? f / el * 1e-9 : 0.0;
    tp->t_first = 0;
    tp->progress_due = 0; /* the next wave's line counts from its first insertion */
    tp->refused = 0;
    tp->ended_before = tp->ninserted_local;
    /* A window's worth of task structures stays cached for the next wave. */
    weft_task_pool_trim(&ctx->task_pool, (size_t)ctx->insert_window);
    return rc;
}

void weft_taskpool_free(weft_taskpool_t *tp)
{
    if (!weft_handle_check_void(tp, WEFT_HANDLE_TASKPOOL, "weft_taskpool_free")) return;
    /* Tasks of a taskpool the ranks disagreed on may still run, or never:
     * weft_fini destroys it once no thread can touch it. */
    if (tp->mismatch) return;
    /* Whether tasks were inserted (or refused) since the last wait, not
     * whether some are pending here: every rank must make the same
     * implicit wait. */
    if (weft_taskpool_unwaited(tp)) {
        weft_error("taskpool %s freed with insertions not waited for (tasks inserted or refused "
                   "since its last wait; %ld not finished on this rank): waiting for them; call "
                   "weft_taskpool_wait before weft_taskpool_free",
                   tp->name, (long)atomic_load(&tp->pending));
        weft_context_misuse(tp->ctx, WEFT_ERR_INVALID);
        if (weft_taskpool_wait(tp) != WEFT_SUCCESS)
            weft_error("taskpool %s: the wait at its free failed", tp->name);
    }
    /* The implicit wait may have found the ranks out of step: then too
     * weft_fini destroys it, once no thread holds its tasks. */
    if (tp->mismatch) return;
    weft_taskpool_reset_tracking(tp);
    weft_taskpool_destroy(tp);
}
