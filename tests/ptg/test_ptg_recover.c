/* After a graph fails, every data holds its newest good version, as after
 * inserted tasks (docs/SEMANTICS.md section 3).
 *
 * One data X (B doubles, owned by rank 0, in user memory) goes through a
 * chain of steps X = 2 X + (s + 1), step s on the rank PATTERN[s] names;
 * the body of step FAILSTEP returns an error, the steps after it are
 * cancelled. A failed body may have changed the copy it was given: that
 * copy is never taken for a good version, on the owner as elsewhere. So X
 * must hold the newest of: the owner's copy (its last step's output, or
 * X's first version) unless the step failed there, and on each other rank
 * the output of the last step that ran there unless a step failed there
 * after it; when none is left (the step failed on the owner and no other
 * rank holds a version), what the failed body left on the owner (this one
 * leaves it as it was, the failed step's input). Each body notes its step; after the failed wait
 * the ranks combine their notes into that version, whose value X must hold: in the owner's memory
 * right after the wait, and in what a task on every rank reads of X in the next taskpool. MODE
 * "ptg" builds the chain as a graph, "stf" inserts it task by task (the same contract).
 *
 * Before: a graph numbered the versions each rank saw locally, and the
 * wait's recovery compared those numbers across ranks, so a rank that had
 * seen more versions offered an older one as newest: the owner got step
 * 3's value where step 4 had run (pattern 011100, failure on the owner),
 * or kept it while a newer one stayed away (0000120), every time. */
#include <mpi.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weft/ptg.h"
#include "weft/weft.h"

#define B 4
#define MAX_STEPS 16
#define MAX_RANKS 8

static struct chain {
    const char *pattern;
    int nsteps, fail_step;
    weft_data_t *x;
} chain;
/* The last step whose body ran here, the one that failed here (-1: none). */
static atomic_int last_ran = -1, failed_here = -1;
static double seen[MAX_RANKS];

static int body_step(weft_task_t *t)
{
    int s;
    if (weft_task_value_get(t, 0, &s, sizeof s) != WEFT_SUCCESS) return -1;
    if (s == chain.fail_step) {
        atomic_store(&failed_here, s);
        return -7;
    }
    double *x = weft_task_ptr(t, 0);
    for (int k = 0; k < B; k++) x[k] = 2 * x[k] + (s + 1);
    atomic_store(&last_ran, s);
    return 0;
}

static int body_look(weft_task_t *t)
{
    int r;
    if (weft_task_value_get(t, 0, &r, sizeof r) != WEFT_SUCCESS) return -1;
    seen[r] = ((const double *)weft_task_ptr(t, 0))[0];
    return 0;
}

static const weft_task_class_t step_class = {
    .name = "step", .body = {[WEFT_DEV_CPU] = body_step, [WEFT_DEV_EMU] = body_step}};
static const weft_task_class_t look_class = {.name = "look", .body = {[WEFT_DEV_CPU] = body_look}};

static int rank_of(int s) { return chain.pattern[s] - '0'; }

static void range_step(const int *idx, int dim, int *lo, int *hi, const void *arg)
{
    (void)idx, (void)dim, (void)arg;
    *lo = 0;
    *hi = chain.nsteps - 1;
}

static int rank_step(const int *idx, const void *arg)
{
    (void)arg;
    return rank_of(idx[0]);
}

static int args_step(const int *idx, weft_arg_t *a, int max, const void *arg)
{
    (void)max, (void)arg;
    a[0] = weft_arg_data(WEFT_RW, chain.x);
    a[1] = weft_arg_value(&idx[0], sizeof idx[0]);
    a[2] = weft_arg_int(WEFT_ON_RANK, rank_of(idx[0]));
    return 3;
}

static int prod_step(const int *idx, int flow, weft_ptg_ref_t *p, const void *arg)
{
    (void)flow, (void)arg;
    if (idx[0] == 0) return 0;
    *p = (weft_ptg_ref_t){.cls = 0, .flow = 0, .idx = {idx[0] - 1}};
    return 1;
}

static int cons_step(const int *idx, int flow, weft_ptg_ref_t *to, int max, const void *arg)
{
    (void)flow, (void)arg;
    if (idx[0] + 1 >= chain.nsteps) return 0;
    if (max >= 1) to[0] = (weft_ptg_ref_t){.cls = 0, .flow = 0, .idx = {idx[0] + 1}};
    return 1;
}

static int insert_chain(weft_taskpool_t *tp, int graph)
{
    if (graph) {
        weft_ptg_class_t cls = {&step_class, 1,         range_step, rank_step,
                                args_step,   prod_step, cons_step,  NULL};
        weft_ptg_t g = {.classes = &cls, .nclasses = 1};
        return weft_ptg_insert(tp, &g);
    }
    int rc = WEFT_SUCCESS;
    for (int s = 0; s < chain.nsteps && rc == WEFT_SUCCESS; s++)
        rc = weft_insert_task(tp, &step_class, WEFT_RW, chain.x, WEFT_VALUE, &s, sizeof s,
                              WEFT_ON_RANK, rank_of(s), 0);
    return rc;
}

/* X's value after steps 0..last (last -1: none ran). */
static double expected(int last)
{
    double v = 1;
    for (int s = 0; s <= last; s++) v = 2 * v + (s + 1);
    return v;
}

/* The version this rank holds that may come home, as the last step that
 * made it (-1: X's first version, on the owner), or -2 for none. */
static int intact_here(int me)
{
    int last = atomic_load(&last_ran), failed = atomic_load(&failed_here);
    if (me == 0) return failed >= 0 ? -2 : last;
    return failed > last ? -2 : last >= 0 ? last : -2;
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 1;
    int me = weft_rank(ctx), nranks = weft_nranks(ctx);
    if (argc != 4 || strlen(argv[2]) > MAX_STEPS || nranks > MAX_RANKS) {
        fprintf(stderr,
                "usage: test_ptg_recover ptg|stf PATTERN FAIL_STEP (at most %d steps, "
                "%d ranks)\n",
                MAX_STEPS, MAX_RANKS);
        weft_fini(ctx);
        return 2;
    }
    int graph = strcmp(argv[1], "ptg") == 0;
    chain.pattern = argv[2];
    chain.nsteps = (int)strlen(chain.pattern);
    chain.fail_step = atoi(argv[3]);
    double *mem = me == 0 ? malloc(B * sizeof *mem) : NULL;
    for (int k = 0; mem && k < B; k++) mem[k] = 1;
    chain.x = weft_data_register(ctx, WEFT_DOUBLE, mem, B, 1, B, 0);

    weft_taskpool_t *tp = weft_taskpool_new(ctx, "chain");
    int irc = insert_chain(tp, graph);
    int wrc = weft_taskpool_wait(tp);
    double home = mem ? mem[0] : 0;
    MPI_Bcast(&home, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);

    int last = intact_here(me);
    MPI_Allreduce(MPI_IN_PLACE, &last, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    /* None left: the failed body's input, as it left it on the owner. */
    int left = atomic_load(&failed_here) - 1;
    MPI_Bcast(&left, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (last == -2) last = left;

    weft_taskpool_t *tp2 = weft_taskpool_new(ctx, "look");
    int lrc = WEFT_SUCCESS;
    for (int r = 0; r < nranks && lrc == WEFT_SUCCESS; r++)
        lrc = weft_insert_task(tp2, &look_class, WEFT_R, chain.x, WEFT_VALUE, &r, sizeof r,
                               WEFT_ON_RANK, r, 0);
    int lwrc = weft_taskpool_wait(tp2);
    MPI_Allreduce(MPI_IN_PLACE, seen, nranks, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);

    double want = expected(last);
    int wait_ok = chain.fail_step < 0 ? wrc == WEFT_SUCCESS : wrc == WEFT_ERR_TASK;
    int ok = irc == WEFT_SUCCESS && wait_ok && lrc == WEFT_SUCCESS && lwrc == WEFT_SUCCESS &&
             home == want;
    for (int r = 0; r < nranks; r++) ok &= seen[r] == want;
    printf(
        "test_ptg_recover rank %d: %s %s: newest intact after step %d, X %s: owner's memory %.0f, "
        "read by rank %d %.0f (want %.0f; insert %d, wait %d, next wait %d)\n",
        me, argv[1], chain.pattern, last, ok ? "ok" : "STALE", home, me, seen[me], want, irc, wrc,
        lwrc);
    fflush(stdout);
    weft_taskpool_free(tp);
    weft_taskpool_free(tp2);
    weft_data_release(chain.x);
    int frc = weft_fini(ctx);
    free(mem);
    return ok && (frc == WEFT_SUCCESS || frc == WEFT_ERR_TASK) ? 0 : 1;
}
