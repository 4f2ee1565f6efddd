/* weft's home-device rule spreads every rank's tiles over all of its
 * devices, whatever the matrix's shape: tile rows are dealt where a rank
 * holds tiles in at least as many rows as it has devices, else its tile
 * columns, else its tiles. Rows alone left devices without a tile, and so
 * without a task, wherever a rank's tiles sat in fewer rows than devices:
 * a 1 x n row of tiles (on any number of ranks), a matrix of P tile rows on
 * a P x 1 grid (2 ranks and more), a user distribution giving each rank
 * every 4th row (4 ranks, 2 devices: the rule read the global row). Each
 * case checks, on every rank, that every device homes a tile and runs
 * tasks with affinity to it. Runs on any number of ranks. */
#include "devtest.h"

#define NB 16
#define PER 8 /* tiles a rank */

static atomic_int ran[17];

static int touch(weft_task_t *t)
{
    double *a = weft_task_ptr(t, 0);
    for (int j = 0; j < weft_task_cols(t, 0); j++)
        for (int i = 0; i < weft_task_rows(t, 0); i++) a[i + j * weft_task_ld(t, 0)] += 1.0;
    int dev = weft_task_device(t);
    if (dev >= 0 && dev < 17) atomic_fetch_add(&ran[dev], 1);
    return 0;
}
static const weft_task_class_t touch_cls = {.name = "touch", .body = {[WEFT_DEV_CPU] = touch}};

static int cyclic_row(int i, int j, void *arg)
{
    (void)j;
    return i % *(int *)arg;
}

static void spread(weft_context_t *ctx, weft_matrix_t *A, const char *what)
{
    int ndev = weft_ndevices(ctx), homed[17] = {0};
    REQUIRE(A != NULL && ndev <= 16);
    for (int k = 0; k < weft_matrix_local_count(A); k++) {
        int i, j;
        int d = weft_data_device(weft_matrix_local_tile(A, k, &i, &j));
        CHECK(d >= 1 && d <= ndev);
        if (d >= 1 && d <= ndev) homed[d]++;
    }
    for (int d = 0; d <= 16; d++) atomic_store(&ran[d], 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, what);
    int rc = 0;
    for (int r = 0; r < 2; r++)
        for (int j = 0; j < weft_matrix_nt(A); j++)
            for (int i = 0; i < weft_matrix_mt(A) && rc == 0; i++)
                rc = weft_insert_task(tp, &touch_cls, WEFT_RW | WEFT_AFFINITY, weft_tile(A, i, j),
                                      0);
    CHECK(rc == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    weft_taskpool_free(tp);
    for (int d = 1; d <= ndev; d++) {
        printf("rank %d %s: device %d homes %d tiles, ran %d tasks\n", weft_rank(ctx), what, d,
               homed[d], atomic_load(&ran[d]));
        CHECK(homed[d] > 0);
        CHECK(atomic_load(&ran[d]) > 0);
    }
    weft_matrix_free(A);
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = devtest_init(&argc, &argv, 2);
    int P = weft_nranks(ctx), g = weft_ndevices(ctx);
    /* A row of tiles: one tile row on every rank. */
    spread(ctx, weft_matrix_new(ctx, WEFT_DOUBLE, NB, (int64_t)NB * PER * g * P, NB, NB, 1, P),
           "row");
    /* P tile rows on a P x 1 grid: one local tile row a rank. */
    spread(ctx,
           weft_matrix_new(ctx, WEFT_DOUBLE, (int64_t)NB * P, (int64_t)NB * PER * g, NB, NB, P, 1),
           "rows=P");
    /* A user distribution, rows cyclic over the ranks, weft's devices. */
    weft_dist_t dist = {.rank = cyclic_row, .arg = &P};
    spread(ctx,
           weft_matrix_new_dist(ctx, WEFT_DOUBLE, (int64_t)NB * PER * g * P, NB, NB, NB, &dist),
           "dist");
    CHECK(weft_fini(ctx) == 0);
    return check_report("device_home_deal");
}
