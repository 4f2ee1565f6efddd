/* The residual check of weft-potrf (--check): ||A - L L^T|| computed by
 * tasks where the factor's tiles are. Its CPU kernels, its CUDA bodies
 * (the two O(N^3) classes run where the factor is, GPUs included) and its
 * task classes. Kept apart from potrf_kernels.h because weft-posv shares
 * the factorization but checks its solution instead. Header-only. */
#ifndef WEFT_APPS_POTRF_CHECK_H
#define WEFT_APPS_POTRF_CHECK_H

#include <cblas.h>
#include <stdint.h>
#include <stdlib.h>

#include <weft/weft.h>

#include "app_sums.h"
#include "potrf_kernels.h"

#ifdef WEFT_APP_HAVE_CUDA
/* ---- residual check (--check) on the GPU --------------------------------- */

/* tmp (k x k, ld k) := the lower triangle of the diagonal factor l, zeros
 * above (cuSOLVER leaves A's upper triangle in the factor's tile): cleared,
 * then the triangle packed and unpacked. tmp comes first in the workspace,
 * the packed triangle after it. */
static int potrf_cuda_lower_copy(weft_task_t *t, const double *l, int ldl, int k, double **tmp)
{
    size_t full = (size_t)k * (size_t)k, packed = (size_t)k * ((size_t)k + 1) / 2;
    double *ws =
        potrf_cuda_scratch(t, (full + packed) * sizeof(double), "the GPU residual check", k);
    if (ws == NULL) return -1;
    cublasHandle_t h = (cublasHandle_t)weft_task_blas_handle(t);
    if (cudaMemsetAsync(ws, 0, full * sizeof(double), (cudaStream_t)weft_task_stream(t)) !=
        cudaSuccess) {
        fprintf(stderr, "weft-potrf: cudaMemsetAsync of the check's workspace failed\n");
        return -1;
    }
    if (potrf_cuda_blas_ok(cublasDtrttp(h, CUBLAS_FILL_MODE_LOWER, k, l, ldl, ws + full),
                           "cublasDtrttp") != 0 ||
        potrf_cuda_blas_ok(cublasDtpttr(h, CUBLAS_FILL_MODE_LOWER, k, ws + full, ws, k),
                           "cublasDtpttr") != 0)
        return -1;
    *tmp = ws;
    return 0;
}

/* flow 0: L[n][k] R, flow 1: R[n][n] RW; value 0: int tri (k == n). Lower
 * part of R -= L L^T, as potrf_cpu_resid_syrk. */
static int potrf_cuda_resid_syrk(weft_task_t *t)
{
    int tri;
    weft_task_value(t, 0, &tri);
    const double *l = weft_task_ptr(t, 0);
    int ldl = potrf_cuda_ld(t, 0), n = weft_task_rows(t, 1), k = weft_task_cols(t, 0);
    double *tmp = NULL;
    if (tri && potrf_cuda_lower_copy(t, l, ldl, k, &tmp) != 0) return -1;
    if (tri) {
        l = tmp;
        ldl = k;
    }
    const double mone = -1.0, one = 1.0;
    return potrf_cuda_blas_ok(cublasDsyrk((cublasHandle_t)weft_task_blas_handle(t),
                                          CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, n, k, &mone, l, ldl,
                                          &one, weft_task_ptr(t, 1), potrf_cuda_ld(t, 1)),
                              "cublasDsyrk (check)");
}

/* flow 0: L[m][k] R, flow 1: L[n][k] R, flow 2: R[m][n] RW; value 0: int
 * tri (k == n: L[n][n] is lower triangular). R -= L[m][k] L[n][k]^T. */
static int potrf_cuda_resid_gemm(weft_task_t *t)
{
    int tri;
    weft_task_value(t, 0, &tri);
    const double *b = weft_task_ptr(t, 1);
    int ldb = potrf_cuda_ld(t, 1), k = weft_task_cols(t, 0);
    double *tmp = NULL;
    if (tri && potrf_cuda_lower_copy(t, b, ldb, k, &tmp) != 0) return -1;
    if (tri) {
        b = tmp;
        ldb = k;
    }
    const double mone = -1.0, one = 1.0;
    return potrf_cuda_blas_ok(cublasDgemm((cublasHandle_t)weft_task_blas_handle(t), CUBLAS_OP_N,
                                          CUBLAS_OP_T, weft_task_rows(t, 2), weft_task_cols(t, 2),
                                          k, &mone, weft_task_ptr(t, 0), potrf_cuda_ld(t, 0), b,
                                          ldb, &one, weft_task_ptr(t, 2), potrf_cuda_ld(t, 2)),
                              "cublasDgemm (check)");
}

#endif /* WEFT_APP_HAVE_CUDA */

/* ---- residual kernels (--check; the CUDA ones above) ----- */

/* The factor tile of flow f of a residual task as a dense matrix in *l
 * (leading dimension *ld): the tile itself, or, when value 0 (int tri)
 * says it is a diagonal factor, whose upper triangle is not L, a copy of
 * its lower triangle with zeros above in *tmp, which the caller frees.
 * -1 when that copy cannot be allocated. */
static int potrf_resid_factor(weft_task_t *t, int f, const double **l, int64_t *ld, double **tmp)
{
    int tri;
    weft_task_value(t, 0, &tri);
    *l = weft_task_ptr(t, f);
    *ld = weft_task_ld(t, f);
    *tmp = NULL;
    if (!tri) return 0;
    int k = weft_task_cols(t, f);
    *tmp = malloc(sizeof(double) * (size_t)k * (size_t)k);
    if (*tmp == NULL) return -1;
    potrf_copy_lower(k, *l, *ld, *tmp, k);
    *l = *tmp;
    *ld = k;
    return 0;
}

/* flow 0: L[n][k] R, flow 1: R[n][n] RW; value 0: int tri (k == n, so only
 * the lower triangle of L[n][n] is L). Lower part of R -= L L^T. */
static int potrf_cpu_resid_syrk(weft_task_t *t)
{
    const double *l;
    int64_t ldl;
    double *tmp;
    if (potrf_resid_factor(t, 0, &l, &ldl, &tmp) != 0) return -1;
    cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, weft_task_rows(t, 1), weft_task_cols(t, 0),
                -1.0, l, (int)ldl, 1.0, weft_task_ptr(t, 1), (int)weft_task_ld(t, 1));
    free(tmp);
    return 0;
}

/* flow 0: L[m][k] R, flow 1: L[n][k] R, flow 2: R[m][n] RW; value 0: int
 * tri (k == n: L[n][n] is lower triangular). R -= L[m][k] L[n][k]^T. */
static int potrf_cpu_resid_gemm(weft_task_t *t)
{
    const double *b;
    int64_t ldb;
    double *tmp;
    if (potrf_resid_factor(t, 1, &b, &ldb, &tmp) != 0) return -1;
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, weft_task_rows(t, 2), weft_task_cols(t, 2),
                weft_task_cols(t, 0), -1.0, weft_task_ptr(t, 0), (int)weft_task_ld(t, 0), b,
                (int)ldb, 1.0, weft_task_ptr(t, 2), (int)weft_task_ld(t, 2));
    free(tmp);
    return 0;
}

/* ||R[m][n]||_F^2 and ||A0[m][n]||_F^2 (A0 regenerated), counting the
 * symmetric upper part: off-diagonal elements twice, the diagonal once. */
static double potrf_resid_elem(const void *arg, double x, double z, int64_t gi, int64_t gj,
                               double *d, double *y)
{
    const potrf_tile_arg_t *a = arg;
    (void)z;
    *d = *y = 0.0;
    if (gi < gj) return 0.0;
    *d = x;
    *y = potrf_elem(a->seed, a->n, gi, gj);
    return gi == gj ? 1.0 : 2.0;
}

/* flow 0: R[m][n] R, flow 1: this rank's sums tile RW; value 0:
 * potrf_tile_arg_t. */
static int potrf_cpu_resid_norm(weft_task_t *t)
{
    potrf_tile_arg_t a;
    weft_task_value(t, 0, &a);
    app_resid_t r = {potrf_resid_elem, &a, a.row0, a.col0, .x = 0, .z = -1, .sums = 1, .col = 0};
    return app_sums_resid(t, &r);
}

/* The O(N^3) part of the check runs where the factor is, GPUs included. */
static const weft_task_class_t potrf_class_resid_syrk = {
    .name = "resid_syrk",
    .body = {[WEFT_DEV_CPU] = potrf_cpu_resid_syrk, POTRF_CUDA_BODY(potrf_cuda_resid_syrk)},
    .flops = potrf_flops_syrk};
static const weft_task_class_t potrf_class_resid_gemm = {
    .name = "resid_gemm",
    .body = {[WEFT_DEV_CPU] = potrf_cpu_resid_gemm, POTRF_CUDA_BODY(potrf_cuda_resid_gemm)},
    .flops = potrf_flops_gemm};
static const weft_task_class_t potrf_class_resid_norm = {
    .name = "resid_norm", .body = {[WEFT_DEV_CPU] = potrf_cpu_resid_norm}, .flops = NULL};

#endif /* WEFT_APPS_POTRF_CHECK_H */
