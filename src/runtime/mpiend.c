/* An MPI_Finalize of the application before weft_fini. MPI aborted the
 * process in the comm thread's next call ("MPI_Testsome() called after
 * MPI_FINALIZE"), with no word of weft. MPI_Finalize deletes the
 * attributes of MPI_COMM_SELF first, while MPI still works: the deletion
 * of weft's attribute stops the live contexts' threads there and marks
 * them, so that the weft calls that follow fail instead of calling MPI,
 * and weft_fini returns WEFT_ERR_MPI after releasing what it can. */
#include <pthread.h>

#include "comm/comm.h"
#include "devmgr/devmgr.h"
#include "runtime/lifecycle.h"
#include "sched/sched.h"
#include "stf/agree.h"
#include "stf/seqcheck.h"
#include "stf/taskpool.h"
#include "util/inbody.h"
#include "util/log.h"

#define MAX_WATCHED 64 /* contexts of one process; more go unwatched */

static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;
static weft_context_t *watched[MAX_WATCHED];
static int watching; /* the attribute whose deletion calls on_finalize is set */

/* The application's MPI ends under ctx: stop what calls MPI (the comm
 * thread; workers and devices first, which hand it transfers), free the
 * communicator, and never call MPI for ctx again. */
static void stop_under(weft_context_t *ctx)
{
    atomic_store(&ctx->mpi_gone, 1);
    weft_context_diverge(ctx, WEFT_ERR_MPI); /* no collective either */
    weft_sched_stop(ctx->sched);
    weft_devexec_halt(ctx);
    if (ctx->comm_engine) {
        weft_context_keep_comm_counters(ctx);
        weft_comm_destroy(ctx->comm_engine);
        ctx->comm_engine = NULL;
    }
    weft_runtime_mpi_ended(ctx);
    /* A wait already begun (MPI_Finalize called by a body, on a worker)
     * waits for tasks that no thread will end now: woken, it sees mpi_gone. */
    struct weft_taskpool **pools = ctx->taskpools.data;
    for (size_t i = 0; i < ctx->taskpools.n; i++) weft_taskpool_wake(pools[i]);
}

/* Whether ctx has other ranks to tell: not once they all learned it was
 * out of step (or its MPI failed), not when simulated, not on one rank. */
static int has_others_to_tell(const weft_context_t *ctx)
{
    return !ctx->diverged && !ctx->sim && ctx->nranks >= 2;
}

/* While MPI still works: the other ranks' next agreement in each live
 * context (their wait, their weft_fini) meets this rank's failure instead
 * of waiting for ever for a rank in MPI_Finalize (MPI_Finalize on one rank
 * only hung the others so). Whatever this rank's own error (a task failed
 * here that no wait shared yet): the others enter their agreement all the
 * same. Every context's agreement is begun before any is waited for, and
 * each ends as it completes: the others may reach them in any order (one
 * context's wait, then another's weft_fini); taken one after another, the
 * first could wait for ever while the others stood in the second. A
 * diverged context is one whose ranks all learned it in an agreement (or
 * whose MPI failed): none of them makes another. */
static void tell_the_others(weft_context_t **ctxs, int n)
{
    static weft_agree_op_t ops[MAX_WATCHED]; /* under watch_lock */
    int begun = 0;
    for (int i = 0; i < n; i++) {
        weft_context_t *ctx = ctxs[i];
        if (!has_others_to_tell(ctx)) continue;
        if (weft_seqcheck_mpi_end_begin(ctx, &ops[begun]) == WEFT_SUCCESS) begun++;
    }
    weft_agree_end_each(ops, begun);
}

/* MPI_Finalize from a thread other than the one that made a context of
 * several ranks (a task body, a thread of the application): that thread
 * cannot join the agreement in step, since the context's own thread may
 * be inside a collective of its own, or waiting for tasks that need this
 * rank, while the others are in the wait's collectives. Joined anyway, it
 * met another rank's collective (MPI_ERR_TRUNCATE, that rank killed by
 * MPI's handler with no word of weft) or waited for ever while the others
 * waited for its tasks. Nothing can tell them: the run ends here. */
static void abort_if_off_thread(weft_context_t **ctxs, int n)
{
    for (int i = 0; i < n; i++) {
        weft_context_t *ctx = ctxs[i];
        if (!has_others_to_tell(ctx) || ctx->owner_thread == weft_inbody_thread()) continue;
        weft_error("MPI_Finalize was called %s, not by the thread that called weft_init, with "
                   "weft running on %d ranks: the other ranks cannot be told in step and would "
                   "wait for ever; ending the run (MPI_Abort). Call weft_fini, then "
                   "MPI_Finalize, from that thread",
                   weft_inbody_in_task() ? "from a task body" : "from another thread", ctx->nranks);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static int on_finalize(MPI_Comm comm, int key, void *value, void *extra)
{
    (void)comm, (void)key, (void)value, (void)extra;
    pthread_mutex_lock(&watch_lock);
    weft_context_t *live[MAX_WATCHED];
    int n = 0;
    for (int i = 0; i < MAX_WATCHED; i++)
        if (watched[i]) {
            live[n++] = watched[i];
            watched[i] = NULL;
        }
    abort_if_off_thread(live, n);
    if (n > 0)
        weft_error("MPI_Finalize was called before weft_fini: weft stops this rank's threads "
                   "now and its later calls fail (call weft_fini before MPI_Finalize)%s",
                   n > 1 ? " in each of its live contexts" : "");
    tell_the_others(live, n);
    for (int i = 0; i < n; i++) stop_under(live[i]);
    pthread_mutex_unlock(&watch_lock);
    return MPI_SUCCESS;
}

void weft_runtime_watch_mpi_end(weft_context_t *ctx)
{
    pthread_mutex_lock(&watch_lock);
    /* The key is let go once its attribute is on MPI_COMM_SELF: MPI keeps
     * it while the attribute lives and frees it when MPI_Finalize deletes
     * that (kept, it was MPI's one block a process never freed, which a
     * leak checker reports in every run). */
    if (!watching) {
        int key = MPI_KEYVAL_INVALID;
        if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, on_finalize, &key, NULL) == MPI_SUCCESS) {
            watching = MPI_Comm_set_attr(MPI_COMM_SELF, key, NULL) == MPI_SUCCESS;
            MPI_Comm_free_keyval(&key);
        }
    }
    for (int i = 0; i < MAX_WATCHED; i++)
        if (!watched[i]) {
            watched[i] = ctx;
            break;
        }
    pthread_mutex_unlock(&watch_lock);
}

void weft_runtime_unwatch_mpi_end(weft_context_t *ctx)
{
    pthread_mutex_lock(&watch_lock);
    for (int i = 0; i < MAX_WATCHED; i++)
        if (watched[i] == ctx) watched[i] = NULL;
    pthread_mutex_unlock(&watch_lock);
}
