/* The triangular solves of weft-posv and its check: kernels and classes.
 *
 * After the Cholesky factorization A = L L^T (potrf_dag.h), the right-hand
 * sides B (N x NRHS, tiled like A) are solved in place: forward L Y = B
 * (a TRSM on each diagonal block, a GEMM update below it), then backward
 * L^T X = Y. A tile of B is written where it lives (on its home
 * accelerator with -g); the factor's tiles travel to it. CPU bodies
 * (CBLAS), CUDA bodies (cuBLAS on the task's stream), emu devices run the
 * CPU bodies. Only the lower triangle of a diagonal factor tile is read
 * (LAPACK and cuSOLVER leave A's upper triangle there). Header-only. */
#ifndef WEFT_APPS_POSV_KERNELS_H
#define WEFT_APPS_POSV_KERNELS_H

#include <cblas.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <weft/weft.h>

#include "potrf_kernels.h" /* POTRF_CUDA_BODY, potrf_cuda_blas_ok, potrf_cuda_ld */

/* flow 0: L[k][k] R, flow 1: B[k][j] RW. forward: B := L^-1 B; else
 * B := L^-T B. */
static int posv_cpu_trsm(weft_task_t *t, int forward)
{
    cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, forward ? CblasNoTrans : CblasTrans,
                CblasNonUnit, weft_task_rows(t, 1), weft_task_cols(t, 1), 1.0, weft_task_ptr(t, 0),
                (int)weft_task_ld(t, 0), weft_task_ptr(t, 1), (int)weft_task_ld(t, 1));
    return 0;
}
static int posv_cpu_trsm_fwd(weft_task_t *t) { return posv_cpu_trsm(t, 1); }
static int posv_cpu_trsm_bwd(weft_task_t *t) { return posv_cpu_trsm(t, 0); }

/* flow 0: a factor tile R, flow 1: B[k][j] R, flow 2: B[m][j] RW.
 * forward: flow 0 is L[m][k], B[m][j] -= L[m][k] B[k][j]; backward: flow 0
 * is L[k][m], B[m][j] -= L[k][m]^T B[k][j]. */
static int posv_cpu_gemm(weft_task_t *t, int forward)
{
    int inner = forward ? weft_task_cols(t, 0) : weft_task_rows(t, 0);
    cblas_dgemm(CblasColMajor, forward ? CblasNoTrans : CblasTrans, CblasNoTrans,
                weft_task_rows(t, 2), weft_task_cols(t, 2), inner, -1.0, weft_task_ptr(t, 0),
                (int)weft_task_ld(t, 0), weft_task_ptr(t, 1), (int)weft_task_ld(t, 1), 1.0,
                weft_task_ptr(t, 2), (int)weft_task_ld(t, 2));
    return 0;
}
static int posv_cpu_gemm_fwd(weft_task_t *t) { return posv_cpu_gemm(t, 1); }
static int posv_cpu_gemm_bwd(weft_task_t *t) { return posv_cpu_gemm(t, 0); }

static double posv_flops_trsm(const weft_task_t *t)
{
    double m = weft_task_rows(t, 1), n = weft_task_cols(t, 1);
    return m * m * n;
}

static double posv_flops_gemm(const weft_task_t *t)
{
    return 2.0 * weft_task_rows(t, 2) * weft_task_cols(t, 2) * weft_task_rows(t, 1);
}

#ifdef WEFT_APP_HAVE_CUDA
/* The CUDA bodies of posv_cpu_trsm and posv_cpu_gemm. */
static int posv_cuda_trsm(weft_task_t *t, int forward)
{
    const double one = 1.0;
    return potrf_cuda_blas_ok(cublasDtrsm((cublasHandle_t)weft_task_blas_handle(t),
                                          CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER,
                                          forward ? CUBLAS_OP_N : CUBLAS_OP_T, CUBLAS_DIAG_NON_UNIT,
                                          weft_task_rows(t, 1), weft_task_cols(t, 1), &one,
                                          weft_task_ptr(t, 0), potrf_cuda_ld(t, 0),
                                          weft_task_ptr(t, 1), potrf_cuda_ld(t, 1)),
                              "cublasDtrsm (solve)");
}
static int posv_cuda_trsm_fwd(weft_task_t *t) { return posv_cuda_trsm(t, 1); }
static int posv_cuda_trsm_bwd(weft_task_t *t) { return posv_cuda_trsm(t, 0); }

static int posv_cuda_gemm(weft_task_t *t, int forward)
{
    const double mone = -1.0, one = 1.0;
    int inner = forward ? weft_task_cols(t, 0) : weft_task_rows(t, 0);
    return potrf_cuda_blas_ok(
        cublasDgemm((cublasHandle_t)weft_task_blas_handle(t), forward ? CUBLAS_OP_N : CUBLAS_OP_T,
                    CUBLAS_OP_N, weft_task_rows(t, 2), weft_task_cols(t, 2), inner, &mone,
                    weft_task_ptr(t, 0), potrf_cuda_ld(t, 0), weft_task_ptr(t, 1),
                    potrf_cuda_ld(t, 1), &one, weft_task_ptr(t, 2), potrf_cuda_ld(t, 2)),
        "cublasDgemm (solve)");
}
static int posv_cuda_gemm_fwd(weft_task_t *t) { return posv_cuda_gemm(t, 1); }
static int posv_cuda_gemm_bwd(weft_task_t *t) { return posv_cuda_gemm(t, 0); }
#endif

static const weft_task_class_t posv_class_trsm_fwd = {.name = "solve_trsm_l",
                                                      .body = {[WEFT_DEV_CPU] = posv_cpu_trsm_fwd,
                                                               [WEFT_DEV_EMU] = posv_cpu_trsm_fwd,
                                                               POTRF_CUDA_BODY(posv_cuda_trsm_fwd)},
                                                      .flops = posv_flops_trsm};
static const weft_task_class_t posv_class_trsm_bwd = {.name = "solve_trsm_lt",
                                                      .body = {[WEFT_DEV_CPU] = posv_cpu_trsm_bwd,
                                                               [WEFT_DEV_EMU] = posv_cpu_trsm_bwd,
                                                               POTRF_CUDA_BODY(posv_cuda_trsm_bwd)},
                                                      .flops = posv_flops_trsm};
static const weft_task_class_t posv_class_gemm_fwd = {.name = "solve_gemm_l",
                                                      .body = {[WEFT_DEV_CPU] = posv_cpu_gemm_fwd,
                                                               [WEFT_DEV_EMU] = posv_cpu_gemm_fwd,
                                                               POTRF_CUDA_BODY(posv_cuda_gemm_fwd)},
                                                      .flops = posv_flops_gemm};
static const weft_task_class_t posv_class_gemm_bwd = {.name = "solve_gemm_lt",
                                                      .body = {[WEFT_DEV_CPU] = posv_cpu_gemm_bwd,
                                                               [WEFT_DEV_EMU] = posv_cpu_gemm_bwd,
                                                               POTRF_CUDA_BODY(posv_cuda_gemm_bwd)},
                                                      .flops = posv_flops_gemm};

/* ---- check: R = B0 - A0 X, tile by tile --------------------------------- */

/* flow 0: X[k][j] R, flow 1: R[m][j] RW; value 0: potrf_tile_arg_t of
 * A0[m][k]. R -= A0[m][k] X[k][j], A0's tile regenerated (A now holds L). */
static int posv_cpu_resid(weft_task_t *t)
{
    potrf_tile_arg_t a;
    if (weft_task_value_get(t, 0, &a, sizeof a) != 0) return -1;
    int rows = weft_task_rows(t, 1), inner = weft_task_rows(t, 0);
    double *a0 = malloc(sizeof(double) * (size_t)rows * (size_t)inner);
    if (a0 == NULL) return -1;
    for (int j = 0; j < inner; j++)
        for (int i = 0; i < rows; i++)
            a0[i + (size_t)j * rows] = potrf_elem(a.seed, a.n, a.row0 + i, a.col0 + j);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, rows, weft_task_cols(t, 1), inner, -1.0,
                a0, rows, weft_task_ptr(t, 0), (int)weft_task_ld(t, 0), 1.0, weft_task_ptr(t, 1),
                (int)weft_task_ld(t, 1));
    free(a0);
    return 0;
}

/* flow 0: a sums tile RW; value 0: int column, value 1: potrf_tile_arg_t
 * of A0[m][k] (m >= k), value 2: int rows and cols. Adds the squared norm
 * of the tile and of its mirror above the diagonal (A0 is symmetric; only
 * the lower tiles are visited): elements below the diagonal twice. */
static int posv_cpu_anorm(weft_task_t *t)
{
    int c, shape[2];
    potrf_tile_arg_t a;
    if (weft_task_value_get(t, 0, &c, sizeof c) != 0 ||
        weft_task_value_get(t, 1, &a, sizeof a) != 0 ||
        weft_task_value_get(t, 2, shape, sizeof shape) != 0)
        return -1;
    double s2 = 0.0;
    for (int j = 0; j < shape[1]; j++)
        for (int i = 0; i < shape[0]; i++) {
            int64_t gi = a.row0 + i, gj = a.col0 + j;
            if (gi < gj) continue;
            double v = potrf_elem(a.seed, a.n, gi, gj);
            s2 += (gi == gj ? 1.0 : 2.0) * v * v;
        }
    app_sums_put(t, 0, c, &s2, 1);
    return 0;
}

static const weft_task_class_t posv_class_resid = {
    .name = "check_resid", .body = {[WEFT_DEV_CPU] = posv_cpu_resid}, .flops = NULL};
static const weft_task_class_t posv_class_anorm = {
    .name = "check_anorm", .body = {[WEFT_DEV_CPU] = posv_cpu_anorm}, .flops = NULL};

#endif /* WEFT_APPS_POSV_KERNELS_H */
