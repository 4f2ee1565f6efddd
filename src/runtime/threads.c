/* The rank's threads: the cores its workers take, the workers (the
 * scheduler), the comm thread, their start in weft_init's step 4 and their
 * stop in weft_fini. */
#include "context/context.h"

#include "weft/weft_mpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context/coll.h"
#include "devmgr/devmgr.h"
#include "exec/exec.h"
#include "runtime/comm_glue.h"
#include "runtime/lifecycle.h"
#include "stf/sim.h"
#include "stf/taskrun.h"
#include "util/log.h"

/* The PUs this rank may use: its binding when mpiexec bound it, otherwise
 * its share of the node among the ranks on it. */
int weft_runtime_choose_cpuset(weft_context_t *ctx)
{
    hwloc_topology_t topo = ctx->topo;
    ctx->cpuset = hwloc_bitmap_alloc();
    if (!ctx->cpuset) return WEFT_ERR_NOMEM;
    hwloc_const_cpuset_t all = hwloc_topology_get_allowed_cpuset(topo);
    if (hwloc_get_cpubind(topo, ctx->cpuset, HWLOC_CPUBIND_PROCESS) != 0 ||
        hwloc_bitmap_iszero(ctx->cpuset))
        hwloc_bitmap_copy(ctx->cpuset, all);
    if (!hwloc_bitmap_isequal(ctx->cpuset, all)) return WEFT_SUCCESS;

    int lrank = ctx->local_rank, lsize = ctx->local_size; /* found by weft_runtime_start_mpi */
    int ncores = hwloc_get_nbobjs_inside_cpuset_by_type(topo, all, HWLOC_OBJ_CORE);
    if (lsize <= 1 || ncores < 1) return WEFT_SUCCESS;
    /* More ranks than cores: one core each, in turn (each rank took every
     * core, so 4 ranks on 2 cores ran 8 workers). */
    int share = ncores >= lsize ? ncores / lsize : 1;
    int first = ncores >= lsize ? lrank * share : lrank % ncores;
    hwloc_bitmap_zero(ctx->cpuset);
    for (int c = first; c < first + share; c++) {
        hwloc_obj_t core = hwloc_get_obj_inside_cpuset_by_type(topo, all, HWLOC_OBJ_CORE, c);
        if (core) hwloc_bitmap_or(ctx->cpuset, ctx->cpuset, core->cpuset);
    }
    return WEFT_SUCCESS;
}

/* A trace track a worker, made once their number is known (start_workers:
 * cores less those left to device managers): one a core showed workers
 * that never ran. */
static void trace_workers(weft_context_t *ctx)
{
    char name[32];
    for (int w = 0; ctx->trace && w < ctx->ncores; w++) {
        snprintf(name, sizeof name, "worker %d", w);
        int t = weft_trace_track(ctx->trace, name);
        if (w == 0) ctx->trace_worker0 = t;
    }
}

static int start_workers(weft_context_t *ctx)
{
    int cores = hwloc_get_nbobjs_inside_cpuset_by_type(ctx->topo, ctx->cpuset, HWLOC_OBJ_CORE);
    int64_t want = weft_params_int(ctx->params, "cores");
    ctx->ncores = want > 0 ? (int)want : (cores > 0 ? cores : 1);
    /* Left to choose, the workers leave a core to each device manager and
     * to the comm thread: those poll, and a worker woken on their core
     * would delay the next kernel launch or message. */
    int reserve = ctx->ndevices + (ctx->nranks > 1);
    if (want <= 0 && ctx->ndevices > 0)
        ctx->ncores = ctx->ncores > reserve ? ctx->ncores - reserve : 1;
    ctx->ready = weft_exec_ready;
    trace_workers(ctx);
    /* No core left for the comm thread: it shares the workers' cores. */
    ctx->comm_shares_core = ctx->nranks > 1 && cores > 0 && ctx->ncores >= cores;
    atomic_store(&ctx->devmgr_own_core, ctx->ndevices > 0 && cores - ctx->ncores >= ctx->ndevices);
    weft_sched_config_t cfg = {
        .nworkers = ctx->ncores,
        .steal = (int)weft_params_int(ctx->params, "sched_steal"),
        .topo = weft_params_int(ctx->params, "bind") ? ctx->topo : NULL,
        .cpuset = ctx->cpuset,
        .exec = weft_exec_task,
        .exec_arg = ctx,
    };
    /* Said whether or not workers are bound (it was silent with bind=0),
     * but not refused: one worker a hardware thread of an SMT core, or a
     * test on a small machine, asks for more on purpose. */
    if (want > cores && cores > 0 && cfg.topo)
        weft_warn("cores=%lld exceeds the %d cores of this rank: %lld workers share %d cores",
                  (long long)want, cores, (long long)want, cores);
    else if (want > cores && cores > 0) /* confined to them only if mpiexec bound the process */
        weft_warn("cores=%lld exceeds the %d cores of this rank: %lld workers for %d cores, not "
                  "pinned to them (bind=0)",
                  (long long)want, cores, (long long)want, cores);
    return weft_sched_create(&cfg, &ctx->sched);
}

/* The comm thread calls MPI while the application's thread may too. */
static int start_comm(weft_context_t *ctx)
{
    /* On one rank too, which needs no comm thread: the same program
     * worked on one rank and failed on two. */
    if (ctx->mpi_thread_level < MPI_THREAD_MULTIPLE) {
        weft_error("MPI was initialised without MPI_THREAD_MULTIPLE: weft's comm thread needs "
                   "it (call MPI_Init_thread with MPI_THREAD_MULTIPLE%s)",
                   strcmp(ctx->init_call, "weft_init") ? "" : ", or let weft_init do it");
        return WEFT_ERR_MPI;
    }
    if (ctx->nranks == 1 || ctx->sim) return WEFT_SUCCESS; /* a simulation sends nothing */
    weft_comm_config_t cfg = {
        .comm = ctx->comm,
        .node_of = ctx->node_of,
        .eager_limit = (size_t)weft_params_int(ctx->params, "comm_eager_limit"),
        .max_requests = (int)weft_params_int(ctx->params, "comm_max_requests"),
        .busy = ctx->comm_shares_core ? &ctx->tasks_running : NULL,
        .ended = &ctx->host_bodies_ended,
        .nap_ns = 1000 * (long)weft_params_int(ctx->params, "comm_nap_us"),
        .nap_max_ns = 1000 * (long)weft_params_int(ctx->params, "comm_nap_max_us"),
        .give_up_ns = 1000000000LL * weft_params_int(ctx->params, "comm_give_up_s"),
        .done = weft_taskrun_action_done,
        .done_arg = ctx,
        .trace = ctx->trace,
        .trace_track = ctx->trace_comm,
    };
    /* comm_node_split=rank: every rank its own node for the engine's choice
     * of transport (ipc then never reaches), as on a cluster; devices are
     * still shared as the host has them. */
    int *own = NULL;
    if (weft_params_int(ctx->params, "comm_node_split") == 1) {
        own = malloc(sizeof *own * (size_t)ctx->nranks);
        if (!own) return WEFT_ERR_NOMEM;
        for (int r = 0; r < ctx->nranks; r++) own[r] = r;
        cfg.node_of = own;
    }
    int rc = weft_comm_glue_config(ctx, &cfg);
    if (rc == WEFT_SUCCESS) rc = weft_comm_create(&cfg, &ctx->comm_engine);
    free(own); /* the engine keeps its own copy */
    if (rc != WEFT_SUCCESS) weft_error("could not start the comm engine: %s", weft_strerror(rc));
    return rc;
}

int weft_runtime_start_threads(weft_context_t *ctx)
{
    int rc = start_workers(ctx);
    if (rc != WEFT_SUCCESS) {
        /* This line is what the other ranks are told: with the reason
         * the thread's start gave (the thread limit, said by name). */
        char why[WEFT_LOG_LINE / 2] = "";
        weft_log_last_error(why, sizeof why);
        weft_error("could not start %d worker threads%s%s%s", ctx->ncores, why[0] ? " (" : "", why,
                   why[0] ? ")" : "");
        return rc;
    }
    rc = start_comm(ctx);
    if (rc != WEFT_SUCCESS) weft_sched_destroy(ctx->sched);
    if (rc == WEFT_SUCCESS && ctx->sim) weft_sim_take_ready(ctx);
    return rc;
}

void weft_runtime_stop_threads(weft_context_t *ctx)
{
    weft_comm_destroy(ctx->comm_engine);
    ctx->comm_engine = NULL;
    weft_sched_destroy(ctx->sched);
}

/* Stops the threads that move data and hand out tasks: the comm engine
 * once every rank's transfers are over, then the scheduler. Whether the
 * ranks were in step when weft_fini began. */
int weft_runtime_fini_stop_threads(weft_context_t *ctx)
{
    if (ctx->diverged) {
        /* Tasks the disagreement (or an MPI_Finalize, on one rank too)
         * abandoned may still run and hand transfers to the engine or
         * successors to the scheduler: first stop every thread that can.
         * The scheduler stays allocated until the engine is gone: a
         * receive the engine ends releases its successors into it (freed
         * here first, that push crashed, stf_agree_grid_r4 in 1 run of
         * ~600). The devices stay open: the engine's ipc mappings are
         * undone through them (closing them first crashed here). */
        weft_sched_stop(ctx->sched);
        weft_devexec_halt(ctx);
    }
    int in_step = !ctx->diverged;
    if (ctx->comm_engine) {
        /* Every rank's transfers are over once all reach this point. A
         * failed barrier leaves that unknown: said, and weft_fini returns
         * WEFT_ERR_MPI (it returned 0); no collective follows. */
        int brc = in_step ? weft_coll_check(ctx, MPI_Barrier(ctx->comm),
                                            "weft_fini: the barrier after every rank's transfers")
                          : WEFT_SUCCESS;
        (void)brc; /* a failure diverged the context: weft_fini returns it */
        weft_context_keep_comm_counters(ctx);
        weft_comm_destroy(ctx->comm_engine);
        ctx->comm_engine = NULL;
    }
    /* Joined, not freed: a device manager that released a task into a
     * worker's inbox may still be waking a worker in it (the task ran and
     * the user reached weft_fini meanwhile); freed here, that wake-up
     * touched freed memory (ThreadSanitizer). Freed once the managers are
     * joined (fini_settle). */
    weft_sched_stop(ctx->sched);
    return in_step;
}
