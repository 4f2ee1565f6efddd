/* A matrix is refused up front only for the tiles it puts on a rank:
 * received copies count in a rank's host memory but are never refused, so
 * they may take it past its share, and a vector with no block there was
 * then refused on that rank alone ("needs 0 bytes"), failing the wait on
 * every rank (a reviewer's probe). Two ranks, host_memory_use=1 (1% of the
 * node's memory over its ranks): B (rank 0) and C (rank 1), NT tiles each,
 * each matrix about 0.55 of a rank's share (sized from MemTotal); one task
 * on rank 1 reads every tile of B into C's first, and while its body runs
 * (it holds the received copies: 1.1 of the share on rank 1) both ranks
 * call weft_vector_new of one block (on rank 0), which must be made on
 * both. Skips (77) where a matrix would take more than 2 GiB, or where the
 * share is smaller than MemTotal says (a cgroup: the matrices refused).
 * Prints "test_matrix_room_received rank R: ..." and exits 0 when the
 * vector was made and wait and fini returned 0. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "weft/weft.h"

#define NT 8
#define COLS 1024

static atomic_int body_started, body_may_end;

static int on0(int i, int j, void *a)
{
    (void)i, (void)j, (void)a;
    return 0;
}
static int on1(int i, int j, void *a)
{
    (void)i, (void)j, (void)a;
    return 1;
}

/* C's first tile += every tile of B; holds its inputs until told. */
static int sum_all(weft_task_t *t)
{
    atomic_store(&body_started, 1);
    while (!atomic_load(&body_may_end)) nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
    *(double *)weft_task_ptr(t, 0) += *(const double *)weft_task_ptr(t, 1);
    return 0;
}
static const weft_task_class_t sum_cls = {.name = "sum_all", .body = {[WEFT_DEV_CPU] = sum_all}};

/* Rows of a tile so that NT tiles of COLS doubles take 0.55 of 1% of the
 * node's memory over 2 ranks. */
static long long tile_rows(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    long long kib = 0;
    if (f) {
        if (fscanf(f, "MemTotal: %lld kB", &kib) != 1) kib = 0;
        fclose(f);
    }
    long long share = kib * 1024 / 100 / 2;
    return share * 55 / 100 / NT / COLS / 8;
}

int main(int argc, char **argv)
{
    long long R = tile_rows();
    if (R < 1 || R * COLS * 8 * NT > (2LL << 30)) {
        printf("test_matrix_room_received: tiles of %lld rows needed: skipped\n", R);
        return 77;
    }
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx || weft_nranks(ctx) != 2) return 1;
    int me = weft_rank(ctx), rc = 0;
    weft_dist_t d0 = {.rank = on0}, d1 = {.rank = on1};
    weft_matrix_t *B = weft_matrix_new_dist(ctx, WEFT_DOUBLE, R * NT, COLS, (int)R, COLS, &d0);
    weft_matrix_t *C = weft_matrix_new_dist(ctx, WEFT_DOUBLE, R * NT, COLS, (int)R, COLS, &d1);
    if (!B || !C) {
        printf("test_matrix_room_received rank %d: the matrices refused: skipped\n", me);
        if (B) weft_matrix_free(B);
        if (C) weft_matrix_free(C);
        weft_fini(ctx);
        return 77;
    }
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "receive");
    weft_arg_t a[NT + 1];
    a[0] = weft_arg_data(WEFT_RW, weft_tile(C, 0, 0));
    for (int k = 0; k < NT; k++) a[k + 1] = weft_arg_data(WEFT_R, weft_tile(B, k, 0));
    rc |= weft_insert_task_array(tp, &sum_cls, a, NT + 1);
    if (me == 1) /* its inputs received, held by the running body */
        while (!atomic_load(&body_started)) nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
    weft_matrix_t *V = weft_vector_new(ctx, WEFT_DOUBLE, 16, 16); /* one block, on rank 0 */
    atomic_store(&body_may_end, 1);
    int w = weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    if (V) weft_matrix_free(V);
    weft_matrix_free(B);
    weft_matrix_free(C);
    int frc = weft_fini(ctx);
    printf("test_matrix_room_received rank %d: %d tiles of %lld x %d, vector %s, wait %d, fini "
           "%d\n",
           me, NT, R, COLS, V ? "made" : "refused", w, frc);
    return rc != 0 || !V || w != 0 || frc != 0;
}
