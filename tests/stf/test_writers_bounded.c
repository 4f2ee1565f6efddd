/* A taskpool that writes each of many tiles once holds a bounded number of
 * ended tasks: N NEW 1x1 tiles dealt over the ranks, task k writes k + 1
 * into tile k, all in one taskpool, SPIN_US a body so that insertion runs
 * ahead. Each tile's dependency record kept its last writer until the
 * tile's next write or the taskpool's wait, so a matrix filled by tasks
 * held one ended task (about 1.5 KiB) per tile: 100,000 tiles, 160 MiB
 * a rank. Checked: the peak of the rank's runtime metadata against the
 * bound given, the tiles' values on their owners, the tasks run.
 *
 *   test_writers_bounded NTILES PEAK_MIB SPIN_US [weft options] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "context/context.h"
#include "weft/weft.h"

static double spin_s;

static int fill(weft_task_t *t)
{
    for (double t0 = MPI_Wtime(); MPI_Wtime() - t0 < spin_s;)
        ;
    long k = 0;
    if (weft_task_value_get(t, 0, &k, sizeof k) != 0) return -1;
    *(double *)weft_task_ptr(t, 0) = (double)(k + 1);
    return 0;
}

static const weft_task_class_t fill_class = {.name = "fill", .body = {[WEFT_DEV_CPU] = fill}};

/* Tiles of this rank whose value is not k + 1 (each tile's owner looks). */
static long wrong_tiles(weft_data_t **tile, long n, int me, int np)
{
    long wrong = 0;
    for (long k = me; k < n; k += np) {
        double *p = NULL;
        int64_t ld = 0;
        if (weft_data_host_acquire(tile[k], WEFT_R, (void **)&p, &ld) != WEFT_SUCCESS) {
            wrong++;
            continue;
        }
        wrong += p[0] != (double)(k + 1);
        if (weft_data_host_release(tile[k]) != WEFT_SUCCESS) wrong++;
    }
    return wrong;
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx || argc < 4) return 1;
    long n = atol(argv[1]);
    double bound_mib = atof(argv[2]);
    spin_s = atof(argv[3]) * 1e-6;
    int me = weft_rank(ctx), np = weft_nranks(ctx);
    weft_data_t **tile = calloc((size_t)n, sizeof *tile);
    int rc = tile ? WEFT_SUCCESS : WEFT_ERR_NOMEM;
    for (long k = 0; k < n && rc == WEFT_SUCCESS; k++)
        if (!(tile[k] = weft_data_new(ctx, WEFT_DOUBLE, 1, 1, (int)(k % np)))) rc = WEFT_ERR_NOMEM;
    weft_taskpool_t *tp = rc == WEFT_SUCCESS ? weft_taskpool_new(ctx, "fill") : NULL;
    for (long k = 0; k < n && tp && rc == WEFT_SUCCESS; k++)
        rc = weft_insert_task(tp, &fill_class, WEFT_W, tile[k], WEFT_VALUE, &k, sizeof k, 0);
    int wrc = tp ? weft_taskpool_wait(tp) : WEFT_ERR_INVALID;
    long run = tp ? weft_taskpool_ntasks_run(tp) : 0, all = run;
    MPI_Allreduce(&run, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    double peak = (double)ctx->meta.peak / (1024.0 * 1024.0);
    long wrong = rc == WEFT_SUCCESS && wrc == WEFT_SUCCESS ? wrong_tiles(tile, n, me, np) : n;
    int ok =
        rc == WEFT_SUCCESS && wrc == WEFT_SUCCESS && all == n && peak <= bound_mib && wrong == 0;
    printf("test_writers_bounded rank %d: %ld tasks run of %ld, metadata peak %.1f MiB (bound "
           "%.0f), %ld wrong tiles: %s\n",
           me, all, n, peak, bound_mib, wrong, ok ? "PASSED" : "FAILED");
    weft_taskpool_free(tp);
    for (long k = 0; k < n && tile; k++) weft_data_release(tile[k]);
    free(tile);
    return (weft_fini(ctx) != 0) || !ok;
}
