/* MPI for weft's contexts: started by the first weft_init unless the
 * application started it, finalized with the last live context. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "runtime/lifecycle.h"

#include "params/params.h"
#include "runtime/endsignal.h"

#include "util/ending.h"
#include "util/log.h"

/* MPI is one a process and contexts may be several: MPI_Finalize comes
 * with the end of the last live context, when weft started MPI (finalized
 * with the first context's end, it aborted the others' weft_fini). */
static atomic_int mpi_contexts; /* live contexts */
static atomic_int mpi_ours;     /* weft called MPI_Init_thread */
static atomic_long mpi_pid;     /* the process that made the contexts */
static atomic_int mpi_abandoned; /* contexts MPI_Finalize ended, weft_fini not called yet */

/* A process that leaves main (or calls exit) with a context live: its
 * tasks not waited for never run, MPI is not finalized, and a single
 * process used to exit 0 without a word. Said on the rank, and the exit
 * made non-zero; _exit, since weft's threads still run and the rest of
 * exit's clean-up (MPI's own destructors) would pull memory from under
 * them. A library destructor, not atexit: it runs after every atexit
 * handler and C++ static destructor of the program, one of which may call
 * weft_fini (an atexit handler registered by weft_init ran before those
 * registered earlier). A context ended by MPI_Finalize (mpiend.c) is not
 * live, but one that weft_fini never ended after it dropped its tasks
 * alike (the exit was 0): said too. Open MPI's MPI_Abort leaves by _exit
 * and runs none of this. A
 * child the application forked holds a copy of the count but none of the
 * contexts: its exit is its own. */
static atomic_int exit_status; /* the program's own, once exit began (glibc's on_exit) */

#ifdef __GLIBC__
static void note_exit_status(int status, void *arg)
{
    (void)arg;
    atomic_store(&exit_status, status);
}
#endif

/* The status the process leaves with when a context is live: the
 * program's own when it chose a failure (exit(3) left with 1 before), 1
 * when it meant success. */
static int live_exit_status(void)
{
    int own = atomic_load(&exit_status) & 0xff;
    return own != 0 ? own : 1;
}

__attribute__((destructor)) static void exit_with_live_context(void)
{
    int live = atomic_load(&mpi_contexts), ended = atomic_load(&mpi_abandoned);
    if ((live <= 0 && ended <= 0) || atomic_load(&mpi_pid) != (long)getpid()) return;
    int aborting = weft_ending_aborting();
    if (aborting) {
        /* weft ended the job itself and said why; its MPI_Abort exited
         * (Open MPI out of memory): not the application's forgotten
         * weft_fini. The code it ended with (the watchdog's is 3). */
        fflush(NULL);
        _exit(aborting - 1);
    }
    int code = live_exit_status();
    if (live > 0)
        weft_error("the process is exiting with %d weft context%s live: weft_fini was not called, "
                   "so tasks not waited for are dropped and MPI is not finalized; call "
                   "weft_taskpool_wait and weft_fini before leaving main (exit status %d)",
                   live, live == 1 ? "" : "s", code);
    else /* MPI_Finalize said so when it came; the exit said nothing more and was 0 */
        weft_error("the process is exiting with %d weft context%s that MPI_Finalize ended and "
                   "weft_fini never did: tasks not waited for were dropped; call "
                   "weft_taskpool_wait and weft_fini before MPI_Finalize (exit status %d)",
                   ended, ended == 1 ? "" : "s", code);
    weft_ending_run();
    fflush(NULL);
    _exit(code);
}

/* One weft_init or weft_fini of the process at a time in MPI's start and
 * end: two threads' weft_init both found MPI not started and both started
 * it (Open MPI aborted the process), or duplicated MPI_COMM_WORLD at once
 * (two collectives on one communicator: a crash in MPI). Only those (and
 * weft_init_comm's duplication of MPI_COMM_WORLD or of a communicator of
 * one rank; dup_unlocked): the collectives after the duplication are the
 * context's own communicator's, which another thread's context does not
 * share. */
static pthread_mutex_t mpi_lock = PTHREAD_MUTEX_INITIALIZER;

static int start_mpi_locked(weft_context_t *ctx, int *argc, char ***argv, const MPI_Comm *user);
static void meet_node(weft_context_t *ctx);

int weft_runtime_start_mpi(weft_context_t *ctx, int *argc, char ***argv, const MPI_Comm *user)
{
    pthread_mutex_lock(&mpi_lock);
    int rc = start_mpi_locked(ctx, argc, argv, user);
    /* The --weft- words taken off argv in the same locked step as the
     * duplication that pairs weft_init's context with the other ranks':
     * threads that shared one argv took them later, one after the other,
     * so the options could land in a context whose partner on another rank
     * had the defaults (weft_init failed there: "differs between ranks"),
     * and their rewrites of argv raced. The first context to pair on each
     * rank takes them. weft_init_comm's contexts pair by their
     * communicators, outside the lock: the first to get here takes them,
     * so threads that make such contexts at once each give their own argv
     * (weft_mpi.h). */
    if (rc == WEFT_SUCCESS) {
        ctx->params_rc = weft_params_create(&ctx->params);
        if (ctx->params_rc == WEFT_SUCCESS)
            ctx->params_rc = weft_params_load(ctx->params, argc, argv);
    }
    pthread_mutex_unlock(&mpi_lock);
    /* Left to here by start_mpi_locked (dup_unlocked). */
    if (rc == WEFT_SUCCESS && ctx->comm == MPI_COMM_NULL) MPI_Comm_dup(*user, &ctx->comm);
    if (rc == WEFT_SUCCESS) MPI_Comm_rank(ctx->comm, &ctx->rank);
    if (rc == WEFT_SUCCESS) meet_node(ctx);
    return rc;
}

/* weft_init_comm's communicator: MPI started by the application, and one
 * weft can duplicate and run on. Each rank decides alone, before any
 * collective: MPI_COMM_NULL is what MPI_Comm_split gives a rank outside
 * every group, so that rank is simply not one of the context's, and the
 * other two cases are alike on every rank of the communicator. */
static int check_user_comm(const MPI_Comm *user)
{
    int inited = 0, inter = 0;
    MPI_Initialized(&inited);
    if (!inited) {
        weft_error("weft_init_comm: MPI is not started: a program that gives weft a communicator "
                   "starts MPI itself (MPI_Init_thread with MPI_THREAD_MULTIPLE) and finalizes it "
                   "after weft_fini; weft_init starts it otherwise");
        return WEFT_ERR_MPI;
    }
    if (*user == MPI_COMM_NULL) {
        weft_error("weft_init_comm: the communicator is MPI_COMM_NULL (a rank outside every "
                   "group of MPI_Comm_split gets it): this rank is in no weft context");
        return WEFT_ERR_INVALID;
    }
    if (MPI_Comm_test_inter(*user, &inter) != MPI_SUCCESS || inter) {
        weft_error("weft_init_comm: the communicator is an intercommunicator: weft runs on the "
                   "ranks of one group (MPI_Intercomm_merge makes an intracommunicator of both)");
        return WEFT_ERR_INVALID;
    }
    return WEFT_SUCCESS;
}

/* An application's communicator of several ranks is duplicated outside
 * mpi_lock: two threads whose contexts are on different communicators
 * with ranks in common, started in one order on one rank and the other
 * order on another, each held the lock on one rank inside its duplication
 * and waited for it on the other (a stranger's threads, hung in 3 of 3
 * runs; MPI itself allows the two duplications at once). Under the lock
 * still: MPI_COMM_WORLD itself (weft_init's contexts duplicate it there:
 * two duplications of one communicator at once are no MPI, a reviewer's
 * run crashed in 1 of 3), a communicator of one rank (MPI_COMM_SELF: no
 * other rank to wait for, and two threads' ensembles would duplicate it
 * at once), and everything below MPI_THREAD_MULTIPLE (refused later,
 * said), where no two MPI calls may run at once. */
static int dup_unlocked(const weft_context_t *ctx, const MPI_Comm *user)
{
    if (!user || ctx->mpi_thread_level != MPI_THREAD_MULTIPLE) return 0;
    int size = 1, same = MPI_UNEQUAL;
    MPI_Comm_size(*user, &size);
    MPI_Comm_compare(*user, MPI_COMM_WORLD, &same);
    return size > 1 && same != MPI_IDENT;
}

static int start_mpi_locked(weft_context_t *ctx, int *argc, char ***argv, const MPI_Comm *user)
{
    int inited = 0, finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) {
        /* MPI would abort the process in its next call. */
        if (user)
            weft_error("weft_init_comm: MPI was finalized already (by the application, or by "
                       "the last weft_fini when weft_init started it): make every context before "
                       "MPI_Finalize");
        else
            weft_error("weft_init: MPI was finalized already (by the last weft_fini or by the "
                       "application), and MPI cannot start twice in a process: keep one context "
                       "for the run, or start MPI yourself and finalize it after the last "
                       "weft_fini");
        return WEFT_ERR_MPI;
    }
    if (user) {
        int rc = check_user_comm(user);
        if (rc != WEFT_SUCCESS) return rc;
    }
    MPI_Initialized(&inited);
    if (!inited) {
        int provided = 0;
        /* Before MPI loads what it loads: a library that puts its own
         * handlers on SIGINT, SIGHUP, SIGTERM (LLVM's on Ubuntu 24.04) made
         * weft leave those signals alone, and the emu zone files stayed;
         * such a handler ends by the one it found. The rank follows. */
        weft_endsignal_install(weft_log_rank());
        /* MPI gets the words up to the first NULL, as the parameters read
         * them: a count with no words behind it (argv NULL) crashed inside
         * Open MPI, which joins them. */
        int n = weft_params_argv_words(argc, argv);
        char **words = n > 0 ? *argv : NULL;
        if (MPI_Init_thread(n > 0 ? &n : NULL, n > 0 ? &words : NULL, MPI_THREAD_MULTIPLE,
                            &provided) != MPI_SUCCESS) {
            weft_error("MPI_Init_thread failed");
            return WEFT_ERR_MPI;
        }
        atomic_store(&mpi_ours, 1);
    }
    atomic_fetch_add(&mpi_contexts, 1);
#ifdef __GLIBC__
    /* Once a process: the status exit was given, for the destructor. */
    if (atomic_exchange(&mpi_pid, (long)getpid()) != (long)getpid())
        on_exit(note_exit_status, NULL);
#else
    atomic_store(&mpi_pid, (long)getpid());
#endif
    ctx->mpi_started = 1;
    MPI_Query_thread(&ctx->mpi_thread_level);
    /* Lines and trace files carry the process's rank in MPI_COMM_WORLD:
     * contexts on two groups of ranks each have a rank 0, and their files
     * and lines would not be told apart (the same rank as the context's
     * under weft_init). Process-wide, set once per context: under the
     * lock. */
    MPI_Comm_rank(MPI_COMM_WORLD, &ctx->world_rank);
    weft_log_set_rank(ctx->world_rank);
    weft_endsignal_install(ctx->world_rank);
    if (!dup_unlocked(ctx, user)) MPI_Comm_dup(user ? *user : MPI_COMM_WORLD, &ctx->comm);
    return WEFT_SUCCESS;
}

/* The context's size and node, on its own communicator. */
static void meet_node(weft_context_t *ctx)
{
    MPI_Comm_size(ctx->comm, &ctx->nranks);
    MPI_Comm node;
    MPI_Comm_split_type(ctx->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &ctx->local_rank);
    MPI_Comm_size(node, &ctx->local_size);
    /* Every rank's node (its lowest rank), for the comm engine's choice of
     * transport. Found here, before any step that can fail on one rank
     * only: a collective behind such a step would leave the others in it. */
    int leader = ctx->rank;
    MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, node);
    MPI_Comm_free(&node);
    ctx->node_of = malloc(sizeof *ctx->node_of * (size_t)ctx->nranks);
    if (!ctx->node_of) {
        weft_error("%s: out of host memory for %d ranks' node ids", ctx->init_call, ctx->nranks);
        weft_abort_job(ctx->comm, 1); /* the others are about to wait for this rank */
    }
    MPI_Allgather(&leader, 1, MPI_INT, ctx->node_of, 1, MPI_INT, ctx->comm);
}

void weft_runtime_stop_mpi(weft_context_t *ctx)
{
    free(ctx->node_of);
    ctx->node_of = NULL;
    if (ctx->comm != MPI_COMM_NULL) MPI_Comm_free(&ctx->comm);
    pthread_mutex_lock(&mpi_lock);
    if (atomic_load(&ctx->mpi_gone)) atomic_fetch_sub(&mpi_abandoned, 1); /* its weft_fini */
    if (ctx->mpi_started && atomic_fetch_sub(&mpi_contexts, 1) == 1) {
        if (atomic_load(&mpi_ours)) {
            atomic_store(&mpi_ours, 0);
            MPI_Finalize();
        }
        weft_endsignal_remove();
    }
    pthread_mutex_unlock(&mpi_lock);
}

void weft_runtime_mpi_ended(weft_context_t *ctx)
{
    if (ctx->comm != MPI_COMM_NULL) MPI_Comm_free(&ctx->comm);
    ctx->comm = MPI_COMM_NULL;
    if (ctx->mpi_started && atomic_fetch_sub(&mpi_contexts, 1) == 1) weft_endsignal_remove();
    ctx->mpi_started = 0;
    atomic_fetch_add(&mpi_abandoned, 1); /* until its weft_fini */
    atomic_store(&mpi_ours, 0);          /* finalized: by the application, not weft */
}
