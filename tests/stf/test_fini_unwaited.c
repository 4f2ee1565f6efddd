/* weft_fini with a taskpool never waited for (nor freed): fini must name
 * it on every rank (run_expect.sh checks), run every task (the values
 * land in the user's wrapped matrix, read after fini) and return
 * WEFT_ERR_INVALID. Tile (0,0) is set to 1 and added to every other tile
 * of row 0, on a 1 x nranks grid.
 *
 * --waits R: rank R waits for the taskpool and frees it; the others forget
 * it (--free: they free it without a wait, which waits with an error).
 * Their misuse fails rank R's weft_fini too, naming it (rank R returned 0
 * before: the failure stayed on the ranks that made it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elapsed.h"
#include "weft/weft.h"

#define NB 8
#define NT 4

static int set_body(weft_task_t *t)
{
    double *x = weft_task_ptr(t, 0);
    for (int i = 0; i < NB; i++)
        for (int j = 0; j < NB; j++) x[i + j * weft_task_ld(t, 0)] = 1.0;
    return 0;
}

static int add_body(weft_task_t *t)
{
    const double *a = weft_task_ptr(t, 0);
    double *b = weft_task_ptr(t, 1);
    for (int i = 0; i < NB; i++)
        for (int j = 0; j < NB; j++) b[i + j * weft_task_ld(t, 1)] += a[i + j * weft_task_ld(t, 0)];
    return 0;
}

static const weft_task_class_t set_cls = {.name = "set", .body = {[WEFT_DEV_CPU] = set_body}};
static const weft_task_class_t add_cls = {.name = "add", .body = {[WEFT_DEV_CPU] = add_body}};

int main(int argc, char **argv)
{
    elapsed_start();
    static double a[NB * NB * NT]; /* NB x NB*NT, column-major, lda NB */
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 2;
    int rank = weft_rank(ctx), n = weft_nranks(ctx);
    weft_matrix_t *A = weft_matrix_wrap(ctx, WEFT_DOUBLE, a, NB, NB, NB * NT, NB, NB, 1, n);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "forgotten");
    int rc = weft_insert_task(tp, &set_cls, WEFT_W | WEFT_AFFINITY, weft_tile(A, 0, 0), 0);
    for (int j = 1; j < NT; j++)
        rc |= weft_insert_task(tp, &add_cls, WEFT_R, weft_tile(A, 0, 0), WEFT_RW | WEFT_AFFINITY,
                               weft_tile(A, 0, j), 0);
    int waits = -1, free_it = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--waits") == 0 && i + 1 < argc) waits = atoi(argv[++i]);
        free_it |= strcmp(argv[i], "--free") == 0;
    }
    if (rank == waits) {
        rc |= weft_taskpool_wait(tp);
        weft_taskpool_free(tp);
    } else if (free_it) {
        weft_taskpool_free(tp); /* waits, after an error */
    }
    int f = weft_fini(ctx); /* no wait, no free: fini does both */
    int wrong = 0;
    for (int j = 0; j < NT; j++)
        if (j % n == rank &&
            (a[(size_t)j * NB * NB] != 1.0 || a[(size_t)(j + 1) * NB * NB - 1] != 1.0))
            wrong++;
    int ok = rc == 0 && f == WEFT_ERR_INVALID && !wrong;
    printf("test_fini_unwaited rank %d: fini=%d, %d local tiles wrong: %s\n", rank, f, wrong,
           ok ? "PASSED" : "FAILED");
    return !ok;
}
