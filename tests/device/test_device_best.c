/* get_best_device: without affinity, independent GEMMs spread by estimated
 * completion time reach every device; with affinity, each task runs on its
 * tile's home device (matrix tile rows cyclic over the devices). */
#include "devtest.h"

#define NB 64
#define T 8
#define REPS 4

#define WEFT_TEST_MAX_DEV 64

static atomic_int misplaced;

/* gemm whose value 0 is the device it must run on. */
static void check_place(weft_task_t *t)
{
    int want;
    weft_task_value(t, 0, &want);
    if (weft_task_device(t) != want) atomic_fetch_add(&misplaced, 1);
}

static int gemm_placed(weft_task_t *t)
{
    check_place(t);
    return devtest_gemm_body(t);
}

#ifdef WEFT_TEST_CUDA
static int gemm_placed_cuda(weft_task_t *t)
{
    check_place(t);
    return devtest_cuda_gemm3(t, CUBLAS_OP_N, 1.0, 1.0);
}
#endif

static const weft_task_class_t gemm_aff = {
    .name = "gemm_placed",
    .body = {[WEFT_DEV_CPU] = gemm_placed, [WEFT_DEV_CUDA] = DEVTEST_CUDA_BODY(gemm_placed_cuda)},
    .flops = devtest_flops_gemm};

static void fill(weft_matrix_t *X, double seed)
{
    for (int i = 0; i < weft_matrix_mt(X); i++)
        for (int j = 0; j < weft_matrix_nt(X); j++)
            devtest_fill_array(weft_data_host_ptr(weft_tile(X, i, j), NULL), NB, NB, NB,
                               seed + i + 7.0 * j);
}

static void without_affinity(weft_context_t *ctx, weft_matrix_t *A, weft_matrix_t *C)
{
    int ndev = weft_ndevices(ctx);
    int64_t before[17];
    for (int d = 1; d <= ndev; d++) before[d] = devtest_counters(ctx, d).tasks;
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "free");
    int rc = 0;
    for (int r = 0; r < REPS; r++)
        for (int i = 0; i < T; i++)
            for (int j = 0; j < T && rc == 0; j++)
                rc = weft_insert_task(tp, &devtest_gemm, WEFT_R, weft_tile(A, i, j), WEFT_R,
                                      weft_tile(A, j, i), WEFT_RW, weft_tile(C, i, j), 0);
    CHECK(rc == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    weft_taskpool_free(tp);
    for (int d = 1; d <= ndev; d++) {
        int64_t n = devtest_counters(ctx, d).tasks - before[d];
        printf("no affinity: device %d ran %lld of %d tasks\n", d, (long long)n, REPS * T * T);
        CHECK(n > 0);
    }
}

/* Matrix tiles are homed by tile row, whole rows on one device, and the
 * rows are dealt so that every device gets about as much of a lower
 * triangle's work (row i weighs (i+1)^2). 8 rows on 2 devices: 106 and 98
 * (round robin: 84 and 120); on 4 devices, two rows each: 65 to 41 (round
 * robin: 26 to 80). Other device counts (a GPU machine's) deal 8 rows in
 * partial rounds: only the whole-rows property is checked there. With
 * more devices than the T rows (and columns), the deal goes tile by tile
 * (collections/matrix_home.c): every device then homes some tile. */
static void check_home_balance(weft_context_t *ctx, weft_matrix_t *C)
{
    int ndev = weft_ndevices(ctx);
    if (ndev > T) {
        int tiles[WEFT_TEST_MAX_DEV + 1] = {0};
        for (int i = 0; i < T; i++)
            for (int j = 0; j < T; j++) {
                int home = weft_data_device(weft_tile(C, i, j));
                CHECK(home >= 1 && home <= ndev);
                if (home >= 1 && home <= WEFT_TEST_MAX_DEV) tiles[home]++;
            }
        for (int d = 1; d <= ndev && d <= WEFT_TEST_MAX_DEV; d++) CHECK(tiles[d] > 0);
        return;
    }
    double work[WEFT_TEST_MAX_DEV + 1] = {0};
    for (int i = 0; i < T; i++) {
        int home = weft_data_device(weft_tile(C, i, 0));
        CHECK(home >= 1 && home <= ndev && home <= WEFT_TEST_MAX_DEV);
        for (int j = 1; j < T; j++) CHECK(weft_data_device(weft_tile(C, i, j)) == home);
        if (home >= 1 && home <= WEFT_TEST_MAX_DEV) work[home] += (double)(i + 1) * (i + 1);
    }
    double lo = work[1], hi = work[1];
    for (int d = 2; d <= ndev && d <= WEFT_TEST_MAX_DEV; d++) {
        lo = work[d] < lo ? work[d] : lo;
        hi = work[d] > hi ? work[d] : hi;
    }
    printf("tile rows' work per device: min %.0f max %.0f\n", lo, hi);
    /* Rows come in rounds of 2 x ndev; the bound holds for whole rounds. */
    if (T % (2 * ndev) == 0) CHECK(hi <= (ndev <= 2 ? 1.1 : 1.6) * lo);
}

static void with_affinity(weft_context_t *ctx, weft_matrix_t *A, weft_matrix_t *C)
{
    check_home_balance(ctx, C);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "affinity");
    int rc = 0;
    for (int i = 0; i < T; i++)
        for (int j = 0; j < T && rc == 0; j++) {
            int home = weft_data_device(weft_tile(C, i, j)); /* weft_matrix_new's map */
            rc = weft_insert_task(tp, &gemm_aff, WEFT_VALUE, &home, sizeof home, WEFT_R,
                                  weft_tile(A, i, j), WEFT_R, weft_tile(A, j, i),
                                  WEFT_RW | WEFT_AFFINITY, weft_tile(C, i, j), 0);
        }
    CHECK(rc == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    weft_taskpool_free(tp);
    CHECK(atomic_load(&misplaced) == 0);
}

/* C = REPS + 1 products A(i,j) A(j,i) after both phases. */
static void check_result(weft_matrix_t *A, weft_matrix_t *C)
{
    double *ref = malloc(sizeof(double) * NB * NB);
    for (int i = 0; i < T; i++)
        for (int j = 0; j < T; j++) {
            memset(ref, 0, sizeof(double) * NB * NB);
            for (int r = 0; r < REPS + 1; r++)
                cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, NB, NB, NB, 1.0,
                            weft_data_host_ptr(weft_tile(A, i, j), NULL), NB,
                            weft_data_host_ptr(weft_tile(A, j, i), NULL), NB, 1.0, ref, NB);
            CHECK(devtest_maxdiff(weft_data_host_ptr(weft_tile(C, i, j), NULL), NB, ref, NB, NB,
                                  NB) < 1e-9 * NB * REPS);
        }
    free(ref);
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = devtest_init(&argc, &argv, 2);
    weft_matrix_t *A = weft_matrix_new(ctx, WEFT_DOUBLE, NB * T, NB * T, NB, NB, 1, 1);
    weft_matrix_t *C = weft_matrix_new(ctx, WEFT_DOUBLE, NB * T, NB * T, NB, NB, 1, 1);
    fill(A, 1.0);
    for (int i = 0; i < T; i++)
        for (int j = 0; j < T; j++)
            memset(weft_data_host_ptr(weft_tile(C, i, j), NULL), 0, sizeof(double) * NB * NB);
    int type = weft_device_type(ctx, 1); /* emu, or cuda in the GPU variants */
    CHECK(type == WEFT_DEV_EMU || type == WEFT_DEV_CUDA);
    for (int d = 0; d <= weft_ndevices(ctx); d++)
        CHECK(weft_device_type(ctx, d) == (d == 0 ? WEFT_DEV_CPU : type));
    CHECK(weft_device_type(ctx, weft_ndevices(ctx) + 1) == -1);
    without_affinity(ctx, A, C);
    with_affinity(ctx, A, C);
    check_result(A, C);
    weft_matrix_free(A);
    weft_matrix_free(C);
    CHECK(weft_fini(ctx) == 0);
    return check_report("device_best");
}
