/* ahead: iterations of small tasks inserted ahead of their execution (one
 * wait at the end) beside the same iterations waited for one by one, in
 * one run, per iteration.
 *
 * Usage: mpiexec -n R ahead [-i iters] [-b blocks] [-n elems] [-r reps]
 *                           [--weft-...]
 * Build (bench/ is outside the CMake build), against a build tree B:
 *   mpicc -O2 -std=c11 -Iinclude bench/ahead.c -o ahead -LB/src -lweft -Wl,-rpath,B/src
 *
 * An iteration: a scale task on each of the `blocks` blocks of a vector
 * dealt over the ranks (elems doubles each), then a sum of every block
 * into block 0 and a broadcast-like step in which each block reads block 0
 * back: a chain across the ranks at every iteration, as an iterative
 * solver's dot product makes, so that inserting ahead gains nothing and
 * costs what the tasks held meanwhile cost (their memory, first touched).
 * A solver written so ran its 300 iterations inserted before one wait at
 * 290 us an iteration against 130 waited one by one (on this project's
 * 2-core VM, where a page fault costs some microseconds); task structures
 * from huge-page slabs (src/sched/task_slab.c) brought the first to 143
 * (docs/RESULTS.md, 2026-12-07).
 * Each mode runs reps times, alternating, first (cold) run and best
 * printed, on rank 0:
 *   RESULT ahead mode=<each|once> ranks=<R> iters=<i> blocks=<b> first_us=<t> best_us=<t>
 * Public API only; a benchmark: it asserts no time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <weft/weft.h>

static int scale_body(weft_task_t *t)
{
    double *x = weft_task_ptr(t, 0);
    int n = weft_task_rows(t, 0);
    for (int i = 0; i < n; i++) x[i] = 0.5 * x[i] + 1.0;
    return 0;
}

/* flow 0 (RW) += flow 1 (R), elementwise over the shorter. */
static int add_body(weft_task_t *t)
{
    double *y = weft_task_ptr(t, 0);
    const double *x = weft_task_ptr(t, 1);
    int n =
        weft_task_rows(t, 0) < weft_task_rows(t, 1) ? weft_task_rows(t, 0) : weft_task_rows(t, 1);
    for (int i = 0; i < n; i++) y[i] = 0.5 * (y[i] + x[i]);
    return 0;
}

static const weft_task_class_t scale_class = {.name = "scale",
                                              .body = {[WEFT_DEV_CPU] = scale_body}};
static const weft_task_class_t add_class = {.name = "add", .body = {[WEFT_DEV_CPU] = add_body}};

static int iteration(weft_taskpool_t *tp, weft_matrix_t *V, int blocks)
{
    int rc = 0;
    for (int b = 0; b < blocks && rc == 0; b++)
        rc = weft_insert_task(tp, &scale_class, WEFT_RW, weft_tile(V, b, 0), 0);
    for (int b = 1; b < blocks && rc == 0; b++)
        rc = weft_insert_task(tp, &add_class, WEFT_RW, weft_tile(V, 0, 0), WEFT_R,
                              weft_tile(V, b, 0), 0);
    for (int b = 1; b < blocks && rc == 0; b++)
        rc = weft_insert_task(tp, &add_class, WEFT_RW, weft_tile(V, b, 0), WEFT_R,
                              weft_tile(V, 0, 0), 0);
    return rc;
}

/* One run of iters iterations, waited for after each (each = 1) or once;
 * its time per iteration in *us. 0 or a weft status. */
static int run(weft_context_t *ctx, weft_matrix_t *V, int iters, int blocks, int each, double *us)
{
    weft_taskpool_t *tp = weft_taskpool_new(ctx, each ? "each" : "once");
    if (!tp) return WEFT_ERR_NOMEM;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    int rc = 0;
    for (int k = 0; k < iters && rc == 0; k++) {
        rc = iteration(tp, V, blocks);
        if (rc == 0 && (each || k == iters - 1)) rc = weft_taskpool_wait(tp);
    }
    *us = 1e6 * (MPI_Wtime() - t0) / iters;
    long long want = (long long)iters * (3 * blocks - 2), ran = weft_taskpool_ntasks_run(tp), all;
    weft_taskpool_free(tp);
    MPI_Allreduce(&ran, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rc == 0 && all != want) {
        fprintf(stderr, "ahead: %lld tasks ran, %lld inserted\n", all, want);
        rc = WEFT_ERR_INTERNAL;
    }
    return rc;
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 1;
    int iters = 300, blocks = 8, elems = 250, reps = 3;
    int bad = argc % 2 == 0; /* a flag without its value */
    for (int i = 1; i + 1 < argc; i += 2) {
        int v = atoi(argv[i + 1]);
        if (!strcmp(argv[i], "-i"))
            iters = v;
        else if (!strcmp(argv[i], "-b"))
            blocks = v;
        else if (!strcmp(argv[i], "-n"))
            elems = v;
        else if (!strcmp(argv[i], "-r"))
            reps = v;
        else
            bad = 1; /* unknown: said, not skipped */
    }
    if (bad || iters < 1 || blocks < 2 || elems < 1 || reps < 1) {
        fprintf(stderr, "usage: ahead [-i iters >= 1] [-b blocks >= 2] [-n elems >= 1] "
                        "[-r reps >= 1]\n");
        weft_fini(ctx);
        return 1;
    }
    weft_matrix_t *V = weft_vector_new(ctx, WEFT_DOUBLE, (int64_t)blocks * elems, elems);
    int rc = V ? 0 : WEFT_ERR_NOMEM;
    double first[2] = {0, 0}, best[2] = {1e300, 1e300};
    for (int r = 0; r < reps && rc == 0; r++)
        for (int each = 1; each >= 0 && rc == 0; each--) {
            double us = 0;
            rc = run(ctx, V, iters, blocks, each, &us);
            if (r == 0) first[each] = us;
            if (us < best[each]) best[each] = us;
        }
    if (rc == 0 && weft_rank(ctx) == 0)
        for (int each = 1; each >= 0; each--)
            printf("RESULT ahead mode=%s ranks=%d iters=%d blocks=%d first_us=%.1f best_us=%.1f\n",
                   each ? "each" : "once", weft_nranks(ctx), iters, blocks, first[each],
                   best[each]);
    if (rc != 0) fprintf(stderr, "ahead: %s\n", weft_strerror(rc));
    if (V) weft_matrix_free(V);
    int fini = weft_fini(ctx);
    return rc != 0 || fini != 0;
}
