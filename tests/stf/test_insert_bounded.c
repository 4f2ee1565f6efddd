/* Insertion that outruns execution holds a bounded number of tasks: a
 * chain of N tasks (each waits for the one before it, so the workers run
 * one at a time while the program inserts as fast as it can) alternating
 * between the first and the last rank, each body SPIN_US long. Task i writes tile i % 2 with the
 * value of the other tile plus one, so the tiles end with N and N - 1.
 * Before sched_pending_max a rank held every task not run yet: 400,000 of
 * them over 2 ranks, 890 MiB a rank. Checked: the peak of the rank's
 * runtime metadata (tasks and records, the count show_stats prints)
 * against the bound given, the tiles' values, and the tasks run.
 *
 * With SLOW_AT, task SLOW_AT sleeps SLOW_S seconds: the ranks' holds see
 * nothing move for a second, give up and go on to twice the bound, no
 * further (before: every task left, once a hold gave up).
 *
 *   test_insert_bounded NTASKS PEAK_MIB SPIN_US [SLOW_AT SLOW_S] [weft options] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "context/context.h"
#include "weft/weft.h"

static double spin_s, slow_s;
static long slow_at = -1;

static int step(weft_task_t *t)
{
    /* Slower than an insertion, so that the inserting thread gets ahead. */
    for (double t0 = MPI_Wtime(); MPI_Wtime() - t0 < spin_s;)
        ;
    double *w = weft_task_ptr(t, 0);
    const double *r = weft_task_ptr(t, 1);
    if ((long)r[0] == slow_at)
        for (double t0 = MPI_Wtime(); MPI_Wtime() - t0 < slow_s;) usleep(10000);
    w[0] = r[0] + 1;
    return 0;
}

static const weft_task_class_t step_class = {.name = "step", .body = {[WEFT_DEV_CPU] = step}};

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx || argc < 4) return 1;
    long n = atol(argv[1]);
    double bound_mib = atof(argv[2]);
    spin_s = atof(argv[3]) * 1e-6;
    if (argc > 5) {
        slow_at = atol(argv[4]);
        slow_s = atof(argv[5]);
    }
    int me = weft_rank(ctx), last = weft_nranks(ctx) - 1;
    double v[2] = {0, 0};
    weft_data_t *tile[2] = {
        weft_data_register(ctx, WEFT_DOUBLE, me == 0 ? &v[0] : NULL, 1, 1, 1, 0),
        weft_data_register(ctx, WEFT_DOUBLE, me == last ? &v[1] : NULL, 1, 1, 1, last)};
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "chain");
    int rc = tp && tile[0] && tile[1] ? WEFT_SUCCESS : WEFT_ERR_NOMEM;
    for (long i = 0; i < n && rc == WEFT_SUCCESS; i++)
        rc = weft_insert_task(tp, &step_class, WEFT_RW, tile[i % 2], WEFT_R, tile[(i + 1) % 2], 0);
    int wrc = tp ? weft_taskpool_wait(tp) : WEFT_ERR_INVALID;
    long run = tp ? weft_taskpool_ntasks_run(tp) : 0, all = run;
    MPI_Allreduce(&run, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    double peak = (double)ctx->meta.peak / (1024.0 * 1024.0);
    int ok = rc == WEFT_SUCCESS && wrc == WEFT_SUCCESS && all == n && peak <= bound_mib &&
             (me != 0 || v[0] == (double)(n % 2 ? n : n - 1)) &&
             (me != last || v[1] == (double)(n % 2 ? n - 1 : n));
    printf(
        "test_insert_bounded rank %d: %ld tasks run of %ld, metadata peak %.1f MiB (bound %.0f), "
        "tiles %g %g: %s\n",
        me, all, n, peak, bound_mib, me == 0 ? v[0] : -1, me == last ? v[1] : -1,
        ok ? "PASSED" : "FAILED");
    weft_taskpool_free(tp);
    weft_data_release(tile[0]);
    weft_data_release(tile[1]);
    return (weft_fini(ctx) != 0) || !ok;
}
