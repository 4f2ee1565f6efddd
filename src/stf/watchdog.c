/* Waiting for a taskpool with an eye open: a progress line on rank 0 once a
 * second (parameter progress) and a stall watchdog (watchdog_s): with no
 * task running, none completed and no byte moved for that long, the rank
 * says what it waits for, and with watchdog_abort ends the run with a
 * non-zero exit. A long task is not a stall: while a body runs (on a
 * worker or a device) the rank is making progress. */
#include "stf/watchdog.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "stf/record.h"
#include "util/clock.h"
#include "util/ending.h"
#include "util/log.h"

/* Everything that moves when the rank makes progress, device copies
 * included: a rank whose tasks wait for evictions and write-backs to make
 * room moves bytes and runs nothing (such a run was reported as stalled,
 * and watchdog_abort ended it). A task in a device's flight list waiting
 * for its own copies (weft_watchdog_check) counts as running. */
static int64_t progress_mark(weft_context_t *ctx)
{
    weft_stats_t st;
    if (weft_stats_get(ctx, &st) != 0) return 0;
    int64_t m =
        st.tasks_run + st.net_bytes_sent + st.net_bytes_received + atomic_load(&ctx->actions_done);
    for (int k = 1; k <= ctx->ndevices; k++) {
        weft_device_counters_t d;
        if (weft_device_counters_get(ctx, k, &d) == WEFT_SUCCESS)
            m += d.bytes_h2d + d.bytes_d2h + d.bytes_d2d + d.evictions;
    }
    return m;
}

/* The tasks since the last wait returned (a taskpool waited for again,
 * as weft-potrf's --nruns, counted its earlier runs' tasks), and their
 * time and rate since their first insertion (else since the wait began). */
static void print_progress(weft_taskpool_t *tp, double t0)
{
    double from = tp->t_first > 0 ? tp->t_first : t0, el = weft_clock_s() - from;
    double gf = el > 0 ? atomic_load(&tp->flops_done) / el * 1e-9 : 0;
    /* pending also counts the rank's internal send tasks: the line counts
     * the body tasks, ended whatever their outcome (run, failed, cancelled). */
    long done = (long)atomic_load(&tp->nended) - tp->ended_before;
    long all = tp->ninserted_local - tp->ended_before;
    fprintf(stderr,
            "weft[0] progress: %s: %ld / %ld tasks of this rank ended, %ld left, %.1f s, "
            "%.2f GFLOPS\n",
            tp->name, done, all, all > done ? all - done : 0, el, gf);
}

/* A task that has not finished and the inputs it still lacks. */
static void report_task(int level, const weft_task_t *t)
{
    if (t->kind == WEFT_TASK_RECV) {
        const weft_comm_action_t *a = t->action;
        weft_log(level, -1, "stall: waiting for data %llu v%u from rank %d (receive not complete)",
                 (unsigned long long)t->flow[0].data->key, a->version, a->peer);
        return;
    }
    if (t->kind == WEFT_TASK_SEND) {
        const weft_comm_action_t *a = t->action;
        weft_log(level, -1, "stall: send of data %llu v%u to rank %d not complete",
                 (unsigned long long)t->flow[0].data->key, a->version, a->peer);
        return;
    }
    int missing = 0;
    for (int i = 0; i < t->nflows; i++) {
        const weft_stf_rec_t *rec = weft_stf_rec(t->flow[i].data);
        const weft_task_t *w = rec ? rec->last_writer : NULL;
        /* The record keeps the last writer only: one inserted after t is
         * not what t waits for (an earlier writer of the chain is). */
        if (!w || w == t || w->done || w->seq > t->seq) continue;
        weft_log(level, -1, "stall: task %s waits for data %llu from %s", weft_task_name(t).text,
                 (unsigned long long)t->flow[i].data->key, weft_task_name(w).text);
        missing++;
    }
    /* Predecessors not ended: ndeps counts them (plus none once released). */
    long waits = (long)atomic_load(&t->ndeps);
    if (!missing && waits > 0)
        weft_log(level, -1, "stall: task %s waits for %ld earlier task(s) not shown",
                 weft_task_name(t).text, waits);
    else if (!missing)
        weft_log(level, -1, "stall: task %s is ready or running", weft_task_name(t).text);
}

/* Walks the dependency records of the touched data: every unfinished task
 * is some data's last writer or one of its readers. */
static void report_stall(weft_taskpool_t *tp, double idle)
{
    weft_context_t *ctx = tp->ctx;
    int level = weft_watchdog_level(ctx);
    weft_log(level, -1,
             "stall: taskpool %s: no task running, none completed and no transfer progressed "
             "for %.0f s; %ld tasks pending here",
             tp->name, idle, (long)atomic_load(&tp->pending));
    const weft_task_t *seen[32];
    int shown = 0;
    for (size_t i = 0; i < tp->touched.n && shown < 32; i++) {
        const weft_stf_rec_t *rec = weft_stf_rec(weft_taskpool_touched(tp, i));
        for (long r = -1; rec && r < (long)rec->readers.n && shown < 32; r++) {
            const weft_task_t *t = r < 0 ? rec->last_writer : weft_stf_rec_reader(rec, (size_t)r);
            int dup = !t || t->done;
            for (int k = 0; k < shown && !dup; k++) dup = seen[k] == t;
            if (dup) continue;
            seen[shown++] = t;
            report_task(level, t);
        }
    }
    if (ctx->comm_engine) weft_comm_dump(ctx->comm_engine, level);
}

int weft_watchdog_shows(const weft_context_t *ctx)
{
    int64_t prog = weft_params_int(ctx->params, "progress");
    return ctx->rank == 0 && (prog > 0 || (prog < 0 && isatty(STDERR_FILENO)));
}

/* The line when tp->progress_due has come (t0: where its time counts
 * from when nothing was inserted), and the next a second later: the one
 * schedule of the insertion's lines and the wait's. */
static void progress_when_due(weft_taskpool_t *tp, double t0, double now)
{
    if (now < tp->progress_due) return;
    print_progress(tp, t0);
    tp->progress_due = now + 1.0;
}

void weft_watchdog_progress(weft_taskpool_t *tp)
{
    progress_when_due(tp, tp->t_first, weft_clock_s());
}

void weft_watchdog_start(weft_watchdog_t *w, weft_taskpool_t *tp)
{
    weft_context_t *ctx = tp->ctx;
    *w = (weft_watchdog_t){
        .tp = tp,
        .stall_s = (int)weft_params_int(ctx->params, "watchdog_s"),
        .show = weft_watchdog_shows(ctx),
        .t0 = weft_clock_s(),
        .mark = progress_mark(ctx),
    };
    w->last_move = w->t0;
    /* A second after the last line the insertion printed, if any. */
    if (w->show && tp->progress_due <= 0) tp->progress_due = w->t0 + 1.0;
}

int weft_watchdog_on(const weft_watchdog_t *w) { return w->stall_s || w->show; }

int weft_watchdog_level(const weft_context_t *ctx)
{
    return weft_params_int(ctx->params, "watchdog_abort") ? WEFT_LOG_ERROR : WEFT_LOG_WARN;
}

void weft_watchdog_say_unused(const weft_context_t *ctx)
{
    if (weft_params_int(ctx->params, "watchdog_abort") &&
        weft_params_int(ctx->params, "watchdog_s") == 0)
        weft_warn("watchdog_abort=1 does nothing while watchdog_s=0 (the stall watchdog is off): "
                  "give watchdog_s the seconds without progress after which the run ends");
}

void weft_watchdog_abort(weft_context_t *ctx)
{
    /* Nothing here tells a rank gone for good from one still in a long
     * body, paused or starved of its cores: name the parameter to raise
     * for those (section 6 of docs/SEMANTICS.md). */
    weft_error("stall: watchdog_abort is set: ending the run (watchdog_s=%d: a rank waited for "
               "may be running a longer task, be paused or slowed, or have ended without its "
               "launcher ending the job; if alive, raise watchdog_s above the longest task)",
               (int)weft_params_int(ctx->params, "watchdog_s"));
    /* Other threads still append to it: it is not written (its .part
     * files, begun at weft_init, are removed as the rank ends), which the
     * user is told. */
    const char *trace = weft_params_str(ctx->params, "trace");
    if (trace && trace[0])
        weft_error("stall: the trace (trace=%s) is not written: the run ends here", trace);
    fflush(stderr);
    sleep(1); /* let the comm engine print what it waits for */
    if (ctx->nranks > 1) weft_abort_job(MPI_COMM_WORLD, 3);
    weft_ending_run();
    _exit(3);
}

void weft_watchdog_check(weft_watchdog_t *w)
{
    weft_context_t *ctx = w->tp->ctx;
    double now = weft_clock_s();
    int64_t m = progress_mark(ctx);
    if (m != w->mark || atomic_load(&ctx->tasks_running) > 0 ||
        atomic_load(&ctx->dev_inflight) > 0) {
        w->mark = m;
        w->last_move = now;
        w->reported = 0;
    }
    if (w->show) progress_when_due(w->tp, w->t0, now);
    if (w->stall_s && !w->reported && now - w->last_move >= w->stall_s) {
        report_stall(w->tp, now - w->last_move);
        w->reported = 1;
        if (weft_params_int(ctx->params, "watchdog_abort")) weft_watchdog_abort(ctx);
    }
}
