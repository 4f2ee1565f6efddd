/* weft_matrix_host_acquire / _release on a grid with more ranks than
 * tiles (docs/SEMANTICS.md section 1): the same acquire/release code runs
 * on every rank, and on a rank that holds no tile both succeed doing
 * nothing. Before, the acquire returned 0 there and the release
 * WEFT_ERR_INVALID ("no tile of the matrix is acquired"), so the usual
 * "if (rc == 0) rc = release" loop sent those ranks to weft_fini while
 * the tile's owner waited: out of step on every rank. Run on 3 ranks with
 * a 7 x 5 matrix of one tile (a second acquire is refused on every rank
 * too); its owner writes it through the wrapped
 * array between a write acquire and its release, a task on an emu device
 * doubles it, and the gather checks it. The acquire is refused on every
 * rank while the tile is in a taskpool not waited for, and for a mode that
 * is none (before, on the owner only). */
#include <string.h>

#include "../check.h"
#include "weft/weft.h"

#define M 7
#define N 5

static int twice(weft_task_t *t)
{
    double *a = weft_task_ptr(t, 0);
    int64_t ld = weft_task_ld(t, 0);
    for (int j = 0; j < weft_task_cols(t, 0); j++)
        for (int i = 0; i < weft_task_rows(t, 0); i++) a[i + j * ld] *= 2;
    return 0;
}
static const weft_task_class_t twice_cls = {
    .name = "twice", .body = {[WEFT_DEV_CPU] = twice, [WEFT_DEV_EMU] = twice}};

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL);
    int rank = weft_rank(ctx), nr = weft_nranks(ctx);
    static double U[M * N], G[M * N];
    weft_matrix_t *A = weft_matrix_wrap(ctx, WEFT_DOUBLE, U, M, M, N, 8, 8, nr, 1);
    REQUIRE(A != NULL);
    CHECK(weft_matrix_local_count(A) == (rank == 0));

    int rc = weft_matrix_host_acquire(A, WEFT_W);
    CHECK(rc == 0);
    for (int k = 0; k < M * N; k++) U[k] = k;
    if (rc == 0) CHECK(weft_matrix_host_release(A) == 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "twice");
    CHECK(weft_insert_task(tp, &twice_cls, WEFT_RW | WEFT_AFFINITY, weft_tile(A, 0, 0), 0) == 0);
    /* Refused on every rank while the tile is in a taskpool not waited for,
     * and for a mode that is none: before, only the tile's owner looked
     * (the others acquired nothing and returned 0, the owner -1). */
    CHECK(weft_matrix_host_acquire(A, WEFT_R) == WEFT_ERR_INVALID);
    CHECK(weft_matrix_host_release(A) == WEFT_ERR_INVALID);
    CHECK(weft_taskpool_wait(tp) == 0);
    CHECK(weft_matrix_host_acquire(A, 0x40) == WEFT_ERR_INVALID);
    rc = weft_matrix_host_acquire(A, WEFT_R);
    CHECK(rc == 0);
    /* A second acquire is refused on every rank alike (the ranks without
     * a tile accepted it, a stranger's report). */
    CHECK(weft_matrix_host_acquire(A, WEFT_R) == WEFT_ERR_INVALID);
    if (rc == 0) CHECK(weft_matrix_host_release(A) == 0);
    /* A release without its acquire is refused on every rank alike. */
    CHECK(weft_matrix_host_release(A) == WEFT_ERR_INVALID);
    CHECK(weft_matrix_gather(A, nr - 1, rank == nr - 1 ? G : NULL, M) == 0);
    /* After a gather the matrix is the user's to acquire again. */
    CHECK(weft_matrix_host_acquire(A, WEFT_R) == 0);
    CHECK(weft_matrix_host_release(A) == 0);
    if (rank == nr - 1)
        for (int k = 0; k < M * N; k++) CHECK(G[k] == 2.0 * k);
    weft_taskpool_free(tp);
    weft_matrix_free(A);
    CHECK(weft_fini(ctx) == 0);
    return check_report("test_acquire_few");
}
