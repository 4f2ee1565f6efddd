/* The context: everything one weft instance owns. No globals elsewhere, so
 * two contexts could coexist and a test can build one alone. */
#ifndef WEFT_CONTEXT_CONTEXT_H
#define WEFT_CONTEXT_CONTEXT_H

#include <hwloc.h>
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>

#include "comm/comm.h"
#include "data/data.h"
#include "data/span.h"
#include "params/params.h"
#include "sched/sched.h"
#include "sched/task.h"
#include "context/meta.h"
#include "context/seqlog.h"
#include "trace/trace.h"
#include "util/handle.h"
#include "util/inbody.h"
#include "util/vec.h"
#include "util/blas_threads.h"
#include "weft/weft.h"
#include "weft/weft_stats.h"

/* A range of user memory weft_host_pin page-locked (api/device_api.c). */
typedef struct weft_pin_range {
    char *ptr;
    size_t bytes;
    struct weft_device *by; /* the device whose module pinned it, NULL: none could */
} weft_pin_range_t;

struct weft_context {
    uint32_t tag;                    /* util/handle.h: WEFT_HANDLE_CONTEXT; first field */
    struct weft_context *ended_next; /* once weft_fini ended it (runtime/lifecycle.c) */
    unsigned long owner_thread;      /* the thread that made it (util/inbody.h's number) */
    weft_params_t *params;
    int rank, nranks;
    int world_rank;             /* the process's in MPI_COMM_WORLD: log lines, trace file */
    const char *init_call;      /* "weft_init" or "weft_init_comm": the call its lines name */
    int local_rank, local_size; /* among the ranks of this node */
    int *node_of;               /* every rank's node: its lowest rank (start_mpi) */
    int mpi_started;            /* counted among the contexts MPI serves (lifecycle.c) */
    MPI_Comm comm;              /* weft's own duplicate of MPI_COMM_WORLD or weft_init_comm's */
    hwloc_topology_t topo;
    hwloc_bitmap_t cpuset; /* PUs this rank's workers may use */
    int ncores;
    int ndevices;                 /* accelerators, device indices 1..ndevices */
    struct weft_devices *devices; /* device/registry.h */
    struct weft_hostmem *hostmem; /* data/hostmem.h: pinned host copies, NULL: plain */
    weft_vec_t user_pins;         /* weft_host_pin's ranges (weft_pin_range_t), main thread */
    weft_spans_t spans;           /* the user memory of live registrations, main thread */
    struct weft_devmgr *devmgr[WEFT_MAX_DEVICES]; /* devmgr/devmgr.h, [0] NULL */
    /* Tasks homed on each device, listed at insertion for its manager to
     * stage their inputs ahead (sched/upcoming.h); NULL where it does not. */
    struct weft_upcoming *upcoming[WEFT_MAX_DEVICES];
    atomic_llong host_load_ns; /* estimated work queued on the host (device selection) */
    weft_sched_t *sched;
    /* Takes a task whose predecessors are done (exec/exec.h's
     * weft_exec_ready, set by weft_init): insertion and task ends, below the
     * device manager and the comm engine, hand tasks up through it. */
    weft_task_ready_fn ready;
    weft_task_pool_t task_pool; /* task structures, allocated by the main thread */
    weft_comm_t *comm_engine;   /* NULL on a single rank */
    int mpi_thread_level;
    int comm_shares_core; /* the workers fill the rank's cores: the comm thread shares them */
    uint64_t next_seq;    /* tasks inserted (main thread) */
    uint64_t next_key;    /* data created (main thread): names data across ranks */
    uint64_t waves;       /* taskpool waves begun (main thread): stf/taskpool.h's wave */
    weft_blas_threads_t blas_threads; /* the BLAS thread count weft_init changed */
    atomic_int error;                 /* first error seen by a worker, 0 if none */
    struct weft_fault *fault;         /* fault_inject rules of this rank, NULL: none */
    atomic_llong tasks_failed, tasks_cancelled;
    atomic_llong tasks_run;
    atomic_llong actions_done;           /* network SEND/RECV tasks finished */
    atomic_llong sends_done, recvs_done; /* of those, SENDs and RECVs (show_stats) */
    /* What insertion did (main thread): tasks the application inserted
     * (walked), body tasks this rank kept, SEND and RECV tasks inferred,
     * and seconds from each taskpool's first insertion to its wait. */
    long long walked, kept, sends, recvs;
    double insert_s;
    double ptg_build_s;        /* of which weft_ptg_insert's builds (inserting thread's CPU time) */
    weft_meta_t meta;          /* runtime metadata bytes (context/meta.h) */
    struct weft_sim *sim;      /* simulation mode (stf/sim.h), NULL in a real run */
    uint64_t sim_graph_keys;   /* simulation: next_key at the last graph (stf/newread.c) */
    int sim_unseen_said;       /* simulation: the unseen graph write was said */
    atomic_long tasks_running; /* bodies started and not finished (host and devices) */
    atomic_long dev_inflight;  /* device work in flight: tasks in the managers' flight lists
                                  (staging in, or waiting for a copy of theirs) and
                                  synchronous copies (the watchdog's "running" too) */
    atomic_long host_bodies_ended; /* bodies finished on host cores (the comm thread's naps) */
    /* Once the ranks diverged no body starts (stf/taskrun.c): the flag,
     * and the bodies inside their call, which a wait that says so lets
     * return first. */
    atomic_int bodies_halted;
    atomic_long bodies_in;
    int halt_waited_out; /* a halted wait reached its bound: later calls do not wait again */
    /* The workers leave a core to each device manager: set once the workers
     * start, read by the managers (devexec.c's idle wait). */
    atomic_int devmgr_own_core;
    /* Agreement between ranks (stf/agree.h), main thread. */
    long nagree;          /* agreements passed */
    int diverged;         /* an agreement found the ranks out of step, or a collective failed in MPI
                             (then WEFT_ERR_MPI; else 1): no collective is safe */
    /* The application called MPI_Finalize before weft_fini (runtime/
     * mpiend.c): the threads are stopped, no MPI call is safe. */
    atomic_int mpi_gone;
    int misuse;           /* a call weft_fini reports: taskpool not waited for, trace not written */
    char misuse_why[512]; /* the error line of the first misuse, told to the other ranks */
    long void_refusals0;  /* weft_context_void_refusals at weft_init */
    weft_seqlog_t calls;  /* data and matrix creations since the last agreement */
    /* Taskpools not freed yet, in creation order (main thread): weft_fini
     * waits for those with tasks not waited for, then frees them. */
    weft_vec_t taskpools; /* struct weft_taskpool * */
    long taskpools_made;  /* numbers taskpools from 1 */
    /* Matrices not freed (main thread): weft_fini marks them ended. */
    weft_vec_t matrices; /* weft_matrix_t * */
    int params_rc;       /* weft_params_load's, in weft_runtime_start_mpi */
    /* The counters' any-thread readers (weft_stats_get,
     * weft_device_counters_get) against weft_fini taking their sources
     * away (a monitor thread's read crashed inside a closing device): the
     * last values are kept here once their source goes, under this lock,
     * which is never destroyed (the context outlives weft_fini). */
    pthread_mutex_t readers_lock;
    int comm_gone, devices_gone, ndevices_final;
    weft_comm_counters_t comm_final;
    weft_device_counters_t device_final[WEFT_MAX_DEVICES];
    /* Live data, for the leak report (main thread + destroy under lock). */
    pthread_mutex_t live_lock;
    weft_vec_t live; /* weft_data_t * */
    /* Data whose write-back into the user's memory failed, each with a
     * reference, tried again at each wait (devmgr/devflush.c; main thread). */
    weft_vec_t wb_pending; /* weft_data_t * */
    int leak_report, show_stats;
    atomic_int check_reads;    /* bodies' read-only flows hashed (stf/flowcheck.h); live */
    atomic_int check_writes;   /* bodies' write-only flows filled with NaNs (flowcheck.h); live */
    atomic_int unwritten_said; /* check_writes' warnings given */
    int seq_detail;      /* seqcheck_detail: task logs keep a record an entry */
    long insert_window;  /* pending tasks past which the inserting thread helps */
    long insert_max;     /* pending tasks past which insertion waits; 0: never */
    long holds, hold_giveups; /* insertions held back, holds given up (main thread) */
    double hold_s;            /* time insertions were held back */
    weft_trace_t *trace; /* NULL unless the trace parameter names a file */
    int trace_main, trace_worker0, trace_comm; /* tracks (workers consecutive) */
    weft_quarantine_t quarantine;              /* released handles, freed later */
};

/* The per-rank summary lines of show_stats. */
void weft_stats_print(weft_context_t *ctx);
/* The engine's counters kept in ctx for weft_stats_get, just before
 * weft_fini (or MPI's end) destroys the engine. */
void weft_context_keep_comm_counters(weft_context_t *ctx);
/* The same for each device's counters (weft_device_counters_get), before
 * the devices close (api/device_api.c). */
void weft_context_keep_device_counters(weft_context_t *ctx);

/* Records the first error of the run (any thread). */
void weft_context_fail(weft_context_t *ctx, int status);
/* The ranks found themselves out of step (status WEFT_ERR_MISMATCH), or
 * MPI failed in a collective (WEFT_ERR_MPI): no collective is made any
 * more. A disagreement, which every rank learns alike, is what weft_fini
 * returns, even where an error of this rank alone came first (a task's
 * failure, not exchanged since). Main thread. */
void weft_context_diverge(weft_context_t *ctx, int status);

/* A data with no copies, tagged and tied to ctx's quarantine; NULL on bad
 * sizes (logged). Main thread. */
weft_data_t *weft_data_make(weft_context_t *ctx, weft_dtype_t type, int rows, int cols,
                            int owner_rank);

/* Registry of live data for the leak report. */
int weft_context_track(weft_context_t *ctx, weft_data_t *d);
void weft_context_untrack(weft_context_t *ctx, weft_data_t *d);
/* Copies of the given data still read, or left on a rank that does not own
 * them, at the end of a taskpool; logged, returns how many. With
 * others_open (another taskpool of the rank has tasks not waited for), a
 * copy being read is not counted: the work of those tasks may hold it (a
 * task reading it, an eviction writing it back to make room for one). */
int weft_taskpool_leak_report(weft_context_t *ctx, weft_data_t *const *data, size_t n,
                              const char *name, int others_open);
/* Logs every tracked data with runtime-owned copies; returns how many. */
int weft_context_leak_report(weft_context_t *ctx, const char *when);
/* weft_fini's last exchange, once everything that can fail there ran:
 * this rank's leaks (counted by the report, 0 when leak_report is off)
 * and status (a failure only this rank may have seen: a write-back, its
 * trace file; why: its error line). On the leaking rank WEFT_ERR_INVALID
 * into ctx->misuse; every rank without a failure of its own logs the
 * lowest failing rank's status and words and takes the status into
 * ctx->misuse. The leaking rank's line names the status weft_fini
 * returns, read after the exchange (WEFT_ERR_MPI when one of its
 * collectives failed: coll.c). Collective unless the ranks diverged; main
 * thread. */
void weft_context_fini_exchange(weft_context_t *ctx, int leaks, int status, const char *why);
/* Notes a misuse that weft_fini reports (status into ctx->misuse unless
 * one is there), right after its error line, kept as its words: the
 * exchange at weft_fini tells them to every rank (a taskpool not waited
 * for on one rank only failed that rank's weft_fini alone). */
void weft_context_misuse(weft_context_t *ctx, int status);
/* A call that returns nothing (weft_data_release, weft_taskpool_free,
 * weft_matrix_free) refused its arguments, after its error line: with no
 * status to return, the weft_fini of each context live then returns
 * WEFT_ERR_INVALID for it (a double release exited 0). Counted per
 * process, since a handle refused (NULL, released) may name no context.
 * Any thread. */
void weft_context_void_refused(void);
/* Refusals of such calls in this process so far; the last one's words into
 * last (n bytes; none when last is NULL). */
long weft_context_void_refusals(char *last, size_t n);

/* Why no collective is made on a diverged context, as the refusals word
 * it: MPI finalized under weft, a collective that failed in MPI (it was
 * called a disagreement), or an earlier disagreement. */
static inline const char *weft_context_diverged_why(weft_context_t *ctx)
{
    return atomic_load(&ctx->mpi_gone) ? "MPI was finalized before weft_fini"
           : ctx->diverged == WEFT_ERR_MPI
               ? "a collective between the ranks failed in MPI earlier (see above): their "
                 "state is unknown"
               : "the ranks are out of step since an earlier disagreement (see above)";
}

/* How the handles other than the context and data begin (matrix,
 * taskpool: each asserts it next to its structure), so that a call finds
 * the context of any handle it was given. */
typedef struct weft_handle_head {
    uint32_t tag;
    struct weft_context *ctx;
} weft_handle_head_t;

/* The context of h, a live handle of kind `kind`. */
static inline weft_context_t *weft_handle_context(const void *h, weft_handle_kind_t kind)
{
    if (kind == WEFT_HANDLE_CONTEXT) return (weft_context_t *)h;
    if (kind == WEFT_HANDLE_DATA) return ((const weft_data_t *)h)->ctx;
    return ((const weft_handle_head_t *)h)->ctx;
}

/* Logs that `call` was made on a context from a thread other than the one
 * that made it (worded by whether this thread made a context of its own);
 * returns 0. */
int weft_context_refuse_thread(const char *call);

/* data/span.h's weft_owned for ctx (arg): its host copies' slabs and its
 * devices' zones (context/ownmem.c). */
int weft_context_weft_memory(void *arg, uintptr_t lo, uintptr_t hi, char *what, size_t n);

/* 1 when the calling thread made ctx: the calls that change a context's
 * sequences, lists and taskpools (weft.h) belong to that thread, and run
 * without locks. Otherwise refused with an error line, 0. */
static inline int weft_context_check_thread(const weft_context_t *ctx, const char *call)
{
    if (__builtin_expect(ctx->owner_thread == weft_inbody_thread(), 1)) return 1;
    return weft_context_refuse_thread(call);
}

/* weft_handle_check for a call that belongs to the thread that made the
 * handle's context: also 0, after its own message, when a task body makes
 * it (util/inbody.h) or another thread does. */
static inline int weft_handle_check_main(const void *h, weft_handle_kind_t want, const char *call,
                                         int pos)
{
    return !weft_inbody_refuse(call) && weft_handle_check(h, want, call, pos) &&
           weft_context_check_thread(weft_handle_context(h, want), call);
}

/* weft_handle_check_main for a call that returns nothing: a refusal is
 * also counted for weft_fini (weft_context_void_refused). */
static inline int weft_handle_check_void(const void *h, weft_handle_kind_t want, const char *call)
{
    if (weft_handle_check_main(h, want, call, 1)) return 1;
    weft_context_void_refused();
    return 0;
}

#endif
