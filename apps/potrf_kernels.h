/* Tile kernels, cost estimates and task classes of weft-potrf.
 *
 * Header-only on purpose: apps/CMakeLists.txt builds every .c file of
 * apps/ as its own program, so the pieces of weft-potrf kept apart live
 * here as static functions. weft-potrf.c and weft-posv.c include it
 * (through potrf_dag.h); the check of weft-potrf is in potrf_check.h.
 *
 * Every matrix is column-major; a body reads the tile shapes of its flows
 * with weft_task_rows/cols and their leading dimensions with weft_task_ld,
 * so partial tiles (N not a multiple of NB) need no special case.
 *
 * Bodies per device type: every class has its CPU body. The factorization
 * classes (potrf, trsm, syrk, gemm; trtri and trsm_inv, the TRSM by an
 * inverted diagonal factor of --trsm-inv) also run on accelerators: on CUDA
 * devices the cuSOLVER/cuBLAS bodies of potrf_cuda.h (when built with the
 * CUDA toolkit, WEFT_APP_HAVE_CUDA), on emu devices their CPU bodies as the
 * emulated device's kernels. Fill runs on the host (an emu device, which
 * runs CPU bodies, may run it too); the prefetch class only brings a tile
 * to its home accelerator before the timing. */
#ifndef WEFT_APPS_POTRF_KERNELS_H
#define WEFT_APPS_POTRF_KERNELS_H

#include <cblas.h>
#include <pthread.h>
#include <unistd.h>
#include <lapacke.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <weft/weft.h>

#include "potrf_cuda.h" /* CUDA bodies, empty without WEFT_APP_HAVE_CUDA */
#include "potrf_matrix.h"

/* [WEFT_DEV_CUDA] = fn, in a class's body list when the CUDA bodies exist. */
#ifdef WEFT_APP_HAVE_CUDA
#define POTRF_CUDA_BODY(fn) [WEFT_DEV_CUDA] = fn,
#else
#define POTRF_CUDA_BODY(fn)
#endif

/* ---- the test matrix ------------------------------------------------- */

/* What a fill or norm task needs to regenerate its tile of the original
 * matrix: the seed, the global order and the tile's first row and column. */
typedef struct potrf_tile_arg {
    uint64_t seed;
    int64_t n;    /* global order N, added to the diagonal */
    int64_t row0; /* global index of the tile's first row */
    int64_t col0; /* global index of the tile's first column */
} potrf_tile_arg_t;

/* ---- cost estimates (flops of the LAPACK counts) ---------------------- */

static double potrf_flops_potrf(const weft_task_t *t)
{
    double n = weft_task_rows(t, 0);
    return n * n * n / 3.0 + n * n / 2.0 + n / 6.0;
}

static double potrf_flops_trsm(const weft_task_t *t)
{
    double m = weft_task_rows(t, 1), n = weft_task_cols(t, 1);
    return m * n * n;
}

/* LAPACK's count for dtrtri of order n. */
static double potrf_flops_trtri(const weft_task_t *t)
{
    double n = weft_task_rows(t, 0);
    return n * n * n / 3.0 + 2.0 * n / 3.0;
}

static double potrf_flops_syrk(const weft_task_t *t)
{
    double n = weft_task_rows(t, 1), k = weft_task_cols(t, 0);
    return k * n * (n + 1.0);
}

static double potrf_flops_gemm(const weft_task_t *t)
{
    double m = weft_task_rows(t, 2), n = weft_task_cols(t, 2), k = weft_task_cols(t, 0);
    return 2.0 * m * n * k;
}

/* ---- factorization kernels ------------------------------------------- */

/* dst (n x n) := the lower triangle of src, zeros above. */
static void potrf_copy_lower(int n, const double *src, int64_t lds, double *dst, int64_t ldd)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) dst[i + j * ldd] = i >= j ? src[i + j * lds] : 0.0;
}

/* flow 0: A[k][k] RW. Fails (negative) when the tile is not SPD. */
static int potrf_cpu_potrf(weft_task_t *t)
{
    int n = weft_task_rows(t, 0);
    lapack_int info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', n, weft_task_ptr(t, 0),
                                          (lapack_int)weft_task_ld(t, 0));
    if (info != 0) {
        weft_task_error(t,
                        "dpotrf of a diagonal tile returned info=%d (the matrix is not "
                        "positive definite)",
                        (int)info);
        return -1;
    }
    return 0;
}

/* flow 0: A[k][k] R, flow 1: A[m][k] RW; A[m][k] := A[m][k] L[k][k]^-T. */
static int potrf_cpu_trsm(weft_task_t *t)
{
    cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit,
                weft_task_rows(t, 1), weft_task_cols(t, 1), 1.0, weft_task_ptr(t, 0),
                (int)weft_task_ld(t, 0), weft_task_ptr(t, 1), (int)weft_task_ld(t, 1));
    return 0;
}

/* flow 0: L[k][k] R, flow 1: D[k] W; D[k] := L[k][k]^-1, lower triangular
 * with zeros above, so that the panel's TRSMs become multiplications
 * (--trsm-inv). Fails when the factor is singular. */
static int potrf_cpu_trtri(weft_task_t *t)
{
    int n = weft_task_rows(t, 0);
    double *d = weft_task_ptr(t, 1);
    int64_t ldd = weft_task_ld(t, 1);
    potrf_copy_lower(n, weft_task_ptr(t, 0), weft_task_ld(t, 0), d, ldd);
    lapack_int info = LAPACKE_dtrtri_work(LAPACK_COL_MAJOR, 'L', 'N', n, d, (lapack_int)ldd);
    if (info != 0) {
        weft_task_error(t, "dtrtri of a diagonal factor returned info=%d", (int)info);
        return -1;
    }
    return 0;
}

/* flow 0: D[k] = L[k][k]^-1 R, flow 1: A[m][k] RW; A[m][k] := A[m][k] D^T,
 * the TRSM of potrf_cpu_trsm by the inverted factor. */
static int potrf_cpu_trsm_inv(weft_task_t *t)
{
    cblas_dtrmm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit,
                weft_task_rows(t, 1), weft_task_cols(t, 1), 1.0, weft_task_ptr(t, 0),
                (int)weft_task_ld(t, 0), weft_task_ptr(t, 1), (int)weft_task_ld(t, 1));
    return 0;
}

/* flow 0: A[m][k] R, flow 1: A[m][m] RW; A[m][m] -= A[m][k] A[m][k]^T. */
static int potrf_cpu_syrk(weft_task_t *t)
{
    cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, weft_task_rows(t, 1), weft_task_cols(t, 0),
                -1.0, weft_task_ptr(t, 0), (int)weft_task_ld(t, 0), 1.0, weft_task_ptr(t, 1),
                (int)weft_task_ld(t, 1));
    return 0;
}

/* flow 0: A[m][k] R, flow 1: A[n][k] R, flow 2: A[m][n] RW;
 * A[m][n] -= A[m][k] A[n][k]^T. */
static int potrf_cpu_gemm(weft_task_t *t)
{
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, weft_task_rows(t, 2), weft_task_cols(t, 2),
                weft_task_cols(t, 0), -1.0, weft_task_ptr(t, 0), (int)weft_task_ld(t, 0),
                weft_task_ptr(t, 1), (int)weft_task_ld(t, 1), 1.0, weft_task_ptr(t, 2),
                (int)weft_task_ld(t, 2));
    return 0;
}

/* A batch of GEMM tasks of one shape on an emulated device: one after the
 * other (what the batch path of a device manager needs to be tested by). */
static int potrf_cpu_gemm_batch(weft_task_t *const *ts, int n)
{
    int rc = 0;
    for (int i = 0; i < n; i++)
        if (potrf_cpu_gemm(ts[i]) != 0) rc = -1;
    return rc;
}

/* Columns [c0, c1) of a tile of the test matrix, one hash a element: the
 * prefixes of its rows are computed once (rows_pre), a column's once. */
typedef struct potrf_fill_part {
    const potrf_tile_arg_t *a;
    double *p;
    int64_t ld;
    int rows, c0, c1;
    const uint64_t *rows_pre;
} potrf_fill_part_t;

static void *potrf_fill_columns(void *arg)
{
    const potrf_fill_part_t *f = arg;
    const potrf_tile_arg_t *a = f->a;
    for (int j = f->c0; j < f->c1; j++) {
        int64_t gj = a->col0 + j;
        uint64_t col_pre = potrf_elem_prefix(a->seed, gj);
        double *col = f->p + (size_t)j * (size_t)f->ld;
        for (int i = 0; i < f->rows; i++) {
            int64_t gi = a->row0 + i;
            col[i] = gi >= gj ? potrf_elem_from(f->rows_pre[i], gj, gi == gj, a->n)
                              : potrf_elem_from(col_pre, gi, 0, a->n);
        }
    }
    return NULL;
}

/* Threads a fill of `elems` elements takes: one for tiles up to 4M
 * elements (the tiled runs, whose fills run side by side on the
 * workers), else one a 4M up to the cores online. A whole matrix taken
 * as one tile (app_cli_one_tile) has no other task beside its fill: one
 * thread took 1.5 s at N = 16384. */
#define POTRF_FILL_ELEMS_A_THREAD ((int64_t)1 << 22)
#define POTRF_FILL_THREADS_MAX 64

static int potrf_fill_threads(int64_t elems)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int64_t want = elems / POTRF_FILL_ELEMS_A_THREAD;
    if (want > cpus) want = cpus;
    if (want > POTRF_FILL_THREADS_MAX) want = POTRF_FILL_THREADS_MAX;
    return want < 1 ? 1 : (int)want;
}

/* flow 0: a tile W; value 0: potrf_tile_arg_t. Writes the whole tile of the
 * test matrix (both triangles of a diagonal tile). */
static int potrf_cpu_fill(weft_task_t *t)
{
    potrf_tile_arg_t a;
    weft_task_value(t, 0, &a);
    int rows = weft_task_rows(t, 0), cols = weft_task_cols(t, 0);
    uint64_t *rows_pre = malloc((size_t)rows * sizeof *rows_pre);
    if (rows_pre == NULL) {
        weft_task_error(t, "no memory to generate a %d x %d tile", rows, cols);
        return -1;
    }
    for (int i = 0; i < rows; i++) rows_pre[i] = potrf_elem_prefix(a.seed, a.row0 + i);
    int nt = potrf_fill_threads((int64_t)rows * cols);
    potrf_fill_part_t part[POTRF_FILL_THREADS_MAX];
    pthread_t tid[POTRF_FILL_THREADS_MAX];
    int started = 0, here[POTRF_FILL_THREADS_MAX];
    for (int k = 0; k < nt; k++) {
        part[k] = (potrf_fill_part_t){.a = &a,
                                      .p = weft_task_ptr(t, 0),
                                      .ld = weft_task_ld(t, 0),
                                      .rows = rows,
                                      .c0 = (int)((int64_t)cols * k / nt),
                                      .c1 = (int)((int64_t)cols * (k + 1) / nt),
                                      .rows_pre = rows_pre};
        /* Part 0 runs here; a thread that cannot start leaves its part here too. */
        here[k] = k == 0 || pthread_create(&tid[started], NULL, potrf_fill_columns, &part[k]) != 0;
        if (!here[k]) started++;
    }
    for (int k = 0; k < nt; k++)
        if (here[k]) potrf_fill_columns(&part[k]);
    for (int k = 0; k < started; k++) pthread_join(tid[k], NULL);
    free(rows_pre);
    return 0;
}

/* flow 0: a tile R on its home device; nothing to compute: the task only
 * makes weft copy the tile there (stage-in), so that the timed
 * factorization starts with the matrix on the accelerators. */
static int potrf_nop(weft_task_t *t)
{
    (void)t;
    return 0;
}

static const weft_task_class_t potrf_class_potrf = {.name = "potrf",
                                                    .body = {[WEFT_DEV_CPU] = potrf_cpu_potrf,
                                                             [WEFT_DEV_EMU] = potrf_cpu_potrf,
                                                             POTRF_CUDA_BODY(potrf_cuda_potrf)},
                                                    .flops = potrf_flops_potrf};
static const weft_task_class_t potrf_class_trsm = {.name = "trsm",
                                                   .body = {[WEFT_DEV_CPU] = potrf_cpu_trsm,
                                                            [WEFT_DEV_EMU] = potrf_cpu_trsm,
                                                            POTRF_CUDA_BODY(potrf_cuda_trsm)},
                                                   .flops = potrf_flops_trsm};
static const weft_task_class_t potrf_class_trtri = {.name = "trtri",
                                                    .body = {[WEFT_DEV_CPU] = potrf_cpu_trtri,
                                                             [WEFT_DEV_EMU] = potrf_cpu_trtri,
                                                             POTRF_CUDA_BODY(potrf_cuda_trtri)},
                                                    .flops = potrf_flops_trtri};
static const weft_task_class_t potrf_class_trsm_inv = {
    .name = "trsm_inv",
    .body = {[WEFT_DEV_CPU] = potrf_cpu_trsm_inv,
             [WEFT_DEV_EMU] = potrf_cpu_trsm_inv,
             POTRF_CUDA_BODY(potrf_cuda_trsm_inv)},
    .flops = potrf_flops_trsm};
static const weft_task_class_t potrf_class_syrk = {.name = "syrk",
                                                   .body = {[WEFT_DEV_CPU] = potrf_cpu_syrk,
                                                            [WEFT_DEV_EMU] = potrf_cpu_syrk,
                                                            POTRF_CUDA_BODY(potrf_cuda_syrk)},
                                                   .flops = potrf_flops_syrk};
/* Small GEMMs also go out in batches (device_batch, device_batch_elems). */
static const weft_task_class_t potrf_class_gemm = {
    .name = "gemm",
    .body = {[WEFT_DEV_CPU] = potrf_cpu_gemm,
             [WEFT_DEV_EMU] = potrf_cpu_gemm,
             POTRF_CUDA_BODY(potrf_cuda_gemm)},
    .flops = potrf_flops_gemm,
    .batch = {[WEFT_DEV_EMU] = potrf_cpu_gemm_batch, POTRF_CUDA_BODY(potrf_cuda_gemm_batch)}};
static const weft_task_class_t potrf_class_fill = {
    .name = "fill", .body = {[WEFT_DEV_CPU] = potrf_cpu_fill}, .flops = NULL};
/* Inserted with accelerators only (-g > 0). Its CPU body does nothing
 * either: where the device cannot hold the tile (a small device_memory_limit)
 * the prefetch falls back to the host instead of failing the run, as the
 * compute classes do. */
static const weft_task_class_t potrf_class_prefetch = {
    .name = "prefetch",
    .body = {[WEFT_DEV_CPU] = potrf_nop, [WEFT_DEV_EMU] = potrf_nop, POTRF_CUDA_BODY(potrf_nop)},
    .flops = NULL};

#endif /* WEFT_APPS_POTRF_KERNELS_H */
