/* weft_init and weft_fini: MPI, topology, parameters, trace, devices,
 * workers and comm thread started in order, each step agreed between
 * ranks, and stopped in reverse. */
#include "context/context.h"

#include "weft/weft_mpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stf/agree.h"
#include "runtime/comm_glue.h"
#include "runtime/livepools.h"
#include "runtime/lifecycle.h"
#include "devmgr/devmgr.h"
#include "stf/watchdog.h"
#include "stf/seqcheck.h"
#include "util/blas_threads.h"
#include "stf/sim.h"
#include "util/fault.h"
#include "util/inbody.h"
#include "util/log.h"

void weft_context_fail(weft_context_t *ctx, int status)
{
    int expected = 0;
    atomic_compare_exchange_strong(&ctx->error, &expected, status);
}

void weft_context_diverge(weft_context_t *ctx, int status)
{
    /* Its first cause, for the words of the refusals that follow. */
    if (!ctx->diverged) ctx->diverged = status == WEFT_ERR_MPI ? WEFT_ERR_MPI : 1;
    /* The tasks left may never get what they wait for, and a program told
     * its ranks are apart goes to weft_fini or away: none of its bodies
     * starts from now (they wrote its memory after the wait had returned). */
    atomic_store(&ctx->bodies_halted, 1);
    /* What weft_fini returns: the divergence's status on every rank that
     * saw it, also where a task had failed before (one rank returned
     * WEFT_ERR_TASK, the others the divergence's); the ranks' first
     * disagreement stays the answer once found. */
    if (status == WEFT_ERR_MISMATCH)
        atomic_store(&ctx->error, status);
    else if (status == WEFT_ERR_MPI && atomic_load(&ctx->error) != WEFT_ERR_MISMATCH)
        atomic_store(&ctx->error, status);
    else
        weft_context_fail(ctx, status);
}

/* The trace (parameter trace=FILE): the file is opened now, so that a
 * path that cannot be written fails weft_init rather than the end of the
 * run; tracks for the main thread, the workers and the comm thread;
 * devices add theirs when they start. */
static int start_trace(weft_context_t *ctx)
{
    int rc = weft_trace_create(weft_params_str(ctx->params, "trace"),
                               weft_params_int(ctx->params, "trace_buffer_events"), &ctx->trace);
    if (rc != WEFT_SUCCESS || !ctx->trace) return rc;
    rc = weft_trace_open(ctx->trace, ctx->world_rank);
    if (rc != WEFT_SUCCESS) {
        weft_trace_destroy(ctx->trace);
        ctx->trace = NULL;
        return rc;
    }
    ctx->trace_main = weft_trace_track(ctx->trace, "main thread");
    ctx->trace_comm = weft_trace_track(ctx->trace, "comm");
    /* The calling thread's own work (a host acquire's copy, an eviction
     * it makes room with) records there from now, not only once it ran a
     * task: it was dropped before (track -1). */
    weft_trace_thread_track = ctx->trace_main;
    return WEFT_SUCCESS;
}

/* why (n bytes): the trace's own error line when it could not be written. */
static int write_trace(weft_context_t *ctx, char *why, size_t n)
{
    if (!ctx->trace) return WEFT_SUCCESS;
    int rc = weft_trace_write(ctx->trace, ctx->world_rank);
    if (rc != WEFT_SUCCESS) {
        weft_log_last_error(why, n);
        weft_error("weft_fini: the trace could not be written");
    }
    weft_trace_destroy(ctx->trace);
    ctx->trace = NULL;
    return rc;
}

/* Step 1: parameters. A failure is kept for the agreement, never returned
 * early: the other ranks would wait for this one in MPI. */
static int load_params(weft_context_t *ctx)
{
    /* Made and read from argv by weft_runtime_start_mpi, with the pairing. */
    int rc = ctx->params_rc;
    if (!ctx->params) {
        weft_error("out of host memory for the parameters");
        return rc;
    }
    weft_runtime_apply_live_params(ctx);
    /* Read once: a report's collectives depend on it, so every rank must
     * see the same value (weft_init compares the ranks' parameters). */
    ctx->seq_detail = (int)weft_params_int(ctx->params, "seqcheck_detail");
    if (rc == WEFT_SUCCESS) weft_watchdog_say_unused(ctx);
    if (rc == WEFT_SUCCESS) rc = weft_sim_setup(ctx);
    if (rc == WEFT_SUCCESS)
        rc = weft_fault_create(weft_params_str(ctx->params, "fault_inject"), ctx->rank, ctx->nranks,
                               &ctx->fault);
    ctx->spans.fault = ctx->fault; /* NULL until then: nothing registers before */
    ctx->spans.weft_owned = weft_context_weft_memory;
    ctx->spans.weft_owned_arg = ctx;
    return rc;
}

/* Step 2: the machine, BLAS threads and the trace file; undoes itself on
 * failure. */
static int start_host(weft_context_t *ctx)
{
    if (hwloc_topology_init(&ctx->topo) != 0) {
        weft_error("hwloc could not read the machine topology");
        return WEFT_ERR_INTERNAL;
    }
    int rc = WEFT_ERR_INTERNAL;
    if (hwloc_topology_load(ctx->topo) != 0) {
        weft_error("hwloc could not read the machine topology");
        goto undo_topo;
    }
    if ((rc = weft_runtime_choose_cpuset(ctx)) != WEFT_SUCCESS) goto undo_cpuset;
    /* BLAS inside tasks stays single-threaded: the workers are the threads. */
    weft_blas_threads_single(&ctx->blas_threads);
    if ((rc = start_trace(ctx)) != WEFT_SUCCESS) goto undo_blas;
    return WEFT_SUCCESS;

undo_blas:
    weft_blas_threads_restore(&ctx->blas_threads);
undo_cpuset:
    hwloc_bitmap_free(ctx->cpuset);
undo_topo:
    hwloc_topology_destroy(ctx->topo);
    return rc;
}

static void stop_host(weft_context_t *ctx)
{
    weft_trace_destroy(ctx->trace);
    ctx->trace = NULL;
    weft_blas_threads_restore(&ctx->blas_threads);
    hwloc_bitmap_free(ctx->cpuset);
    hwloc_topology_destroy(ctx->topo);
}

/* MPI starts first, so that every later failure can be agreed on; each
 * failure-prone step ends with an agreement that every rank enters. */
/* The context before any step: its own structures, nothing of MPI yet. */
static weft_context_t *context_new(void)
{
    weft_context_t *ctx = calloc(1, sizeof *ctx);
    if (!ctx) {
        weft_error("weft_init: out of host memory");
        return NULL;
    }
    ctx->tag = WEFT_HANDLE_CONTEXT;
    ctx->owner_thread = weft_inbody_thread();
    ctx->void_refusals0 = weft_context_void_refusals(NULL, 0);
    ctx->comm = MPI_COMM_NULL;
    weft_quarantine_init(&ctx->quarantine);
    weft_task_pool_init(&ctx->task_pool);
    ctx->meta.tasks_live = &ctx->task_pool.live;
    ctx->meta.task_bytes = (long long)sizeof(weft_task_t);
    weft_seqlog_init(&ctx->calls, sizeof(weft_seqcall_t), &ctx->meta);
    pthread_mutex_init(&ctx->live_lock, NULL);
    pthread_mutex_init(&ctx->readers_lock, NULL);
    weft_vec_init(&ctx->live, sizeof(weft_data_t *), 256);
    weft_vec_init(&ctx->matrices, sizeof(weft_matrix_t *), 8);
    weft_vec_init(&ctx->user_pins, sizeof(weft_pin_range_t), 4);
    weft_vec_init(&ctx->wb_pending, sizeof(weft_data_t *), 4);
    weft_vec_init(&ctx->taskpools, sizeof(struct weft_taskpool *), 8);
    return ctx;
}

/* Contexts that weft_fini ended, kept for the rest of the process. */
static weft_context_t *ended_contexts;
static pthread_mutex_t ended_lock = PTHREAD_MUTEX_INITIALIZER;

/* The released handles the ended contexts keep, newest first, within one
 * quarantine's bounds for them all: each kept its own (up to 16384 handles,
 * 4 MiB) for the rest of the process, so a service that ran a job of 10,000
 * tiles a context grew 5.5 MB a job (a stranger's loop). Past the bounds
 * the older contexts' are freed: a call with one of those handles reads
 * freed memory, as with a handle past a live context's window. */
static void trim_ended_locked(void)
{
    long n = 0;
    size_t bytes = 0;
    for (weft_context_t *c = ended_contexts; c; c = c->ended_next) {
        size_t b = 0;
        long k = weft_quarantine_held(&c->quarantine, &b);
        if (k == 0) continue;
        if (n + k > WEFT_QUARANTINE_SLOTS || bytes + b > WEFT_QUARANTINE_BYTES) {
            weft_quarantine_drop(&c->quarantine);
            continue;
        }
        n += k;
        bytes += b;
    }
}

/* Every handle of ctx the user still holds (data, matrices, taskpools and
 * the released ones of the quarantine) and ctx itself keep their memory,
 * tagged ended: a call made with one after weft_fini (a second weft_fini,
 * a weft_matrix_free in the application's cleanup) is refused with an
 * error naming it, where it read freed memory (docs/SEMANTICS.md 2). */
static void context_end_handles(weft_context_t *ctx)
{
    weft_data_t **live = ctx->live.data;
    for (size_t i = 0; i < ctx->live.n; i++)
        weft_handle_tag_set(live[i], weft_handle_ended(live[i]->tag));
    weft_matrix_t **mats = ctx->matrices.data;
    for (size_t i = 0; i < ctx->matrices.n; i++)
        weft_handle_tag_set(mats[i], weft_handle_ended(WEFT_HANDLE_MATRIX));
    weft_quarantine_end(&ctx->quarantine);
    weft_handle_tag_set(ctx, weft_handle_ended(WEFT_HANDLE_CONTEXT));
    pthread_mutex_lock(&ended_lock);
    ctx->ended_next = ended_contexts;
    ended_contexts = ctx;
    trim_ended_locked();
    pthread_mutex_unlock(&ended_lock);
}

/* The context's own structures, last: freed (weft_init's undo, whose
 * caller never sees ctx) or ended (weft_fini). */
static void context_free(weft_context_t *ctx, int end)
{
    weft_seqlog_free(&ctx->calls);
    weft_vec_fini(&ctx->taskpools);
    weft_vec_fini(&ctx->user_pins);
    weft_spans_fini(&ctx->spans);
    weft_vec_fini(&ctx->wb_pending);
    weft_task_pool_fini(&ctx->task_pool);
    if (end) context_end_handles(ctx);
    weft_vec_fini(&ctx->live);
    weft_vec_fini(&ctx->matrices);
    pthread_mutex_destroy(&ctx->live_lock);
    if (end) return;
    weft_quarantine_fini(&ctx->quarantine);
    ctx->tag = weft_handle_released(WEFT_HANDLE_CONTEXT);
    free(ctx);
}

/* weft_init (user NULL) and weft_init_comm: the steps, each agreed. */
static weft_context_t *init_on(int *argc, char ***argv, const MPI_Comm *user)
{
    weft_log_thread_ready(); /* its error lines, before any signal handler's */
    weft_context_t *ctx = context_new();
    if (!ctx) return NULL;
    ctx->init_call = user ? "weft_init_comm" : "weft_init";
    weft_log_clear_last_error();
    if (weft_runtime_start_mpi(ctx, argc, argv, user) != WEFT_SUCCESS) goto undo_ctx;
    int rc = load_params(ctx);
    if (weft_runtime_init_agree(ctx, 1, "parameters", rc) != WEFT_SUCCESS) goto undo_params;
    rc = start_host(ctx);
    if (weft_runtime_init_agree(ctx, 2, "topology and trace file", rc) != WEFT_SUCCESS) {
        if (rc == WEFT_SUCCESS) stop_host(ctx);
        goto undo_params;
    }
    /* The ranks left the agreement together: the traces share an origin. */
    weft_trace_set_origin(ctx->trace, weft_trace_now());
    rc = weft_devexec_start(ctx);
    if (weft_runtime_init_agree(ctx, 3, "devices", rc) != WEFT_SUCCESS) {
        if (rc == WEFT_SUCCESS) weft_devexec_stop(ctx);
        goto undo_host;
    }
    rc = weft_runtime_start_threads(ctx);
    if (weft_runtime_init_agree(ctx, 4, "workers and comm", rc) != WEFT_SUCCESS) {
        if (rc == WEFT_SUCCESS) weft_runtime_stop_threads(ctx);
        goto undo_devices;
    }
    /* Collective: every rank has its engine now (nccl communicators). */
    rc = ctx->comm_engine ? weft_comm_connect(ctx->comm_engine) : WEFT_SUCCESS;
    if (weft_runtime_init_agree(ctx, 5, "transports", rc) != WEFT_SUCCESS) {
        weft_runtime_stop_threads(ctx);
        goto undo_devices;
    }
    weft_inbody_main_begin();
    weft_runtime_watch_mpi_end(ctx);
    return ctx;

undo_devices:
    weft_devexec_stop(ctx);
undo_host:
    stop_host(ctx);
undo_params:
    weft_sim_free(ctx);
    weft_fault_destroy(ctx->fault);
    weft_params_destroy(ctx->params);
    weft_runtime_stop_mpi(ctx);
undo_ctx:
    context_free(ctx, 0);
    return NULL;
}

weft_context_t *weft_init(int *argc, char ***argv)
{
    if (weft_inbody_refuse("weft_init")) return NULL;
    return init_on(argc, argv, NULL);
}

weft_context_t *weft_init_comm(MPI_Comm comm, int *argc, char ***argv)
{
    if (weft_inbody_refuse("weft_init_comm")) return NULL;
    return init_on(argc, argv, &comm);
}

/* Calls that return nothing refused while ctx lived have only weft_fini
 * to fail (context/leak.c); its exchange tells the other ranks. 1 when
 * this rank has such a refusal of its own to say (say_void_refusals), its
 * words in what. A misuse seen first (a taskpool freed before its wait)
 * keeps its own words in the exchange, and these are still said: the
 * line was lost when both were this rank's. */
static int note_void_refusals(weft_context_t *ctx, char *what, size_t size)
{
    char last[256];
    long n = weft_context_void_refusals(last, sizeof last) - ctx->void_refusals0;
    if (n <= 0) return 0;
    snprintf(what, size,
             "%ld call%s that return%s nothing refused (weft_data_release, weft_taskpool_free, "
             "weft_matrix_free); the last: %.250s",
             n, n == 1 ? "" : "s", n == 1 ? "s" : "", last);
    if (ctx->misuse == WEFT_SUCCESS) {
        ctx->misuse = WEFT_ERR_INVALID;
        snprintf(ctx->misuse_why, sizeof ctx->misuse_why, "%s", what);
    }
    return 1;
}

/* After the exchange, which may fail in MPI: the line names the status
 * weft_fini returns, the run's first error (it said -1 when a failed
 * task, or a failed collective of the exchange, made it return -9 or -6). */
static void say_void_refusals(weft_context_t *ctx, const char *what)
{
    int err = atomic_load(&ctx->error);
    if (err != WEFT_SUCCESS)
        weft_error("weft_fini: %s (it returns %d (%s), the run's first error)", what, err,
                   weft_strerror(err));
    else
        weft_error("weft_fini returns %d (WEFT_ERR_INVALID): %s", WEFT_ERR_INVALID, what);
}

/* What only this rank may have seen at weft_fini is told to every rank;
 * its own refused calls are said after, with the status weft_fini
 * returns. */
static void fini_tell(weft_context_t *ctx, int leaks, int status, const char *why)
{
    char refusals[512];
    int refused = note_void_refusals(ctx, refusals, sizeof refusals);
    weft_context_fini_exchange(ctx, leaks, status, why);
    if (refused) say_void_refusals(ctx, refusals);
}

/* weft_fini's first part: what the run leaves to say, while every thread
 * still runs. Taskpools not waited for are waited for first (all ranks in
 * the same order), then the ranks agree that all reached weft_fini: only
 * then is the barrier safe. After a disagreement no collective runs. */
static void fini_report(weft_context_t *ctx)
{
    /* What the program printed before goes out now: a rank that leaves
     * first with a non-zero exit has the launcher end this one with
     * SIGTERM, and a verdict line still in stdout's buffer was lost. */
    fflush(stdout);
    weft_runtime_unwatch_mpi_end(ctx);
    (void)weft_context_wait_forgotten(ctx);
    if (ctx->nranks > 1 && !ctx->diverged) (void)weft_seqcheck_fini(ctx);
    if (ctx->show_stats) weft_stats_print(ctx);
    if (ctx->sim) weft_sim_report(ctx);
}

/* The user's memory written back, the leak report, the devices closed, the
 * trace written, and what failed told to every rank. */
static void fini_settle(weft_context_t *ctx, int in_step)
{
    weft_context_free_taskpools(ctx, 0);
    /* The user's memory, before the leak report (not tried after a
     * disagreement: the devices' managers are stopped). */
    char why[WEFT_LOG_LINE] = "";
    int frc = weft_devexec_flush_fini(ctx, in_step);
    if (frc != WEFT_SUCCESS) weft_log_last_error(why, sizeof why);
    int leaks = ctx->leak_report ? weft_context_leak_report(ctx, "weft_fini") : 0;
    if (leaks && !why[0]) weft_log_last_error(why, sizeof why);
    weft_devexec_stop(ctx); /* after the report: leaked copies still name their device */
    weft_sched_destroy(ctx->sched);
    ctx->sched = NULL;
    weft_context_free_taskpools(ctx, 1);
    int trc = write_trace(ctx, why[0] ? NULL : why, sizeof why);
    if (trc != WEFT_SUCCESS) ctx->misuse = trc;
    if (frc == WEFT_SUCCESS) frc = trc;
    fini_tell(ctx, leaks, frc, why);
}

static int fini_context(weft_context_t *ctx);

/* weft_fini inside a wait or weft_fini of the same thread (a signal
 * handler's) is refused: it ran collectives inside the wait's and hung. */
int weft_fini(weft_context_t *ctx)
{
    if (weft_inbody_call_refuse("weft_fini", NULL)) return WEFT_ERR_INVALID;
    const char *was = weft_inbody_call_enter("weft_fini");
    int rc = fini_context(ctx);
    weft_inbody_call_leave(was);
    return rc;
}

static int fini_context(weft_context_t *ctx)
{
    if (!weft_handle_check_main(ctx, WEFT_HANDLE_CONTEXT, "weft_fini", 1)) return WEFT_ERR_INVALID;
    fini_report(ctx);
    fini_settle(ctx, weft_runtime_fini_stop_threads(ctx));
    int rc = atomic_load(&ctx->error);
    if (rc == WEFT_SUCCESS) rc = ctx->misuse;
    weft_blas_threads_restore(&ctx->blas_threads);
    hwloc_bitmap_free(ctx->cpuset);
    hwloc_topology_destroy(ctx->topo);
    weft_runtime_stop_mpi(ctx);
    weft_sim_free(ctx);
    weft_fault_report_unfired(ctx->fault);
    weft_fault_destroy(ctx->fault);
    weft_params_destroy(ctx->params);
    context_free(ctx, 1);
    weft_inbody_main_end();
    return rc;
}
