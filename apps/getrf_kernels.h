/* Tile kernels, cost estimates and task classes of weft-getrf (LU without
 * pivoting). Header-only because apps/CMakeLists.txt builds every .c file
 * of apps/ as its own program; only weft-getrf.c includes it.
 *
 * Tiles are column-major; bodies take shapes from weft_task_rows/cols and
 * leading dimensions from weft_task_ld, so partial tiles need no special
 * case. The factorization classes (getrf, trsm_row, trsm_col, gemm) and the
 * O(N^3) class of the check (resid) run on the host, on emu devices (their
 * CPU bodies as emulated kernels) and, built with the CUDA toolkit, on CUDA
 * devices (getrf_cuda.h). The rest (fill, the norms and sums, the info
 * check) run on the host. */
#ifndef WEFT_APPS_GETRF_KERNELS_H
#define WEFT_APPS_GETRF_KERNELS_H

#include <cblas.h>
#include <lapacke.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <weft/weft.h>

/* Which factor tiles of a resid task are diagonal tiles, whose other
 * triangle is not part of the factor (value 0 of the task). */
enum { GETRF_DIAG_L = 1, GETRF_DIAG_U = 2 };

#include "app_sums.h"
#include "getrf_cuda.h" /* CUDA bodies, empty without WEFT_APP_HAVE_CUDA */
#include "lu_matrix.h"

#ifdef WEFT_APP_HAVE_CUDA
#define GETRF_CUDA_BODY(fn) [WEFT_DEV_CUDA] = fn,
#else
#define GETRF_CUDA_BODY(fn)
#endif

/* Inner block of the CPU tile factorization: columns factorized by rank-1
 * updates before one TRSM and one GEMM bring the rest of the tile up to
 * date. 32 keeps the unblocked part (level-2 BLAS) small for 192..512
 * tiles. */
#define GETRF_INNER_NB 32

/* What a fill or norm task needs to regenerate its tile of the original. */
typedef struct getrf_tile_arg {
    uint64_t seed;
    int64_t n;    /* global order N, added to the diagonal */
    int64_t row0; /* global index of the tile's first row */
    int64_t col0; /* global index of the tile's first column */
} getrf_tile_arg_t;

/* ---- cost estimates --------------------------------------------------- */

/* LAPACK's count for dgetrf of a square tile of order n. */
static double getrf_flops_getrf(const weft_task_t *t)
{
    double n = weft_task_rows(t, 0);
    return 2.0 * n * n * n / 3.0 - n * n / 2.0 - n / 6.0;
}

/* Row panel: an m x n tile times the inverse of an m x m triangle. */
static double getrf_flops_trsm_row(const weft_task_t *t)
{
    double m = weft_task_rows(t, 1), n = weft_task_cols(t, 1);
    return m * m * n;
}

/* Column panel: an m x n tile times the inverse of an n x n triangle. */
static double getrf_flops_trsm_col(const weft_task_t *t)
{
    double m = weft_task_rows(t, 1), n = weft_task_cols(t, 1);
    return m * n * n;
}

/* Inverting an n x n triangle (dtrtri's leading term). */
static double getrf_flops_inverse(const weft_task_t *t)
{
    double n = weft_task_rows(t, 0);
    return n * n * n / 3.0;
}

static double getrf_flops_gemm(const weft_task_t *t)
{
    double m = weft_task_rows(t, 2), n = weft_task_cols(t, 2), k = weft_task_cols(t, 0);
    return 2.0 * m * n * k;
}

/* ---- factorization kernels -------------------------------------------- */

/* Unblocked LU without pivoting of the m x nb panel p (columns j0..j0+nb of
 * the tile, from row j0 down): each column divided by its pivot, then a
 * rank-1 update of the panel's columns to its right. 0, or the 1-based
 * global column of the first zero pivot. */
static int getrf_panel(int m, int nb, double *p, int64_t ld, int j0)
{
    for (int c = 0; c < nb; c++) {
        double piv = p[c + c * ld];
        if (piv == 0.0) return j0 + c + 1;
        int below = m - c - 1;
        cblas_dscal(below, 1.0 / piv, p + c + 1 + c * ld, 1);
        if (c + 1 < nb)
            cblas_dger(CblasColMajor, below, nb - c - 1, -1.0, p + c + 1 + c * ld, 1,
                       p + c + (c + 1) * ld, (int)ld, p + c + 1 + (c + 1) * ld, (int)ld);
    }
    return 0;
}

/* Right-looking blocked LU without pivoting of the m x n tile a: L unit
 * lower and U upper overwrite it. LAPACKE only has dgetrf with partial
 * pivoting, which would permute rows across tiles. 0, or the 1-based
 * column of the first zero pivot (as LAPACK's info). */
static int getrf_tile(int m, int n, double *a, int64_t ld)
{
    int steps = m < n ? m : n;
    for (int j = 0; j < steps; j += GETRF_INNER_NB) {
        int jb = steps - j < GETRF_INNER_NB ? steps - j : GETRF_INNER_NB;
        double *a11 = a + j + j * ld;
        int info = getrf_panel(m - j, jb, a11, ld, j);
        if (info != 0) return info;
        int right = n - j - jb, below = m - j - jb;
        if (right <= 0) continue;
        double *a12 = a11 + jb * ld, *a21 = a11 + jb;
        /* U12 := L11^-1 A12, then the trailing block loses L21 U12. */
        cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, jb, right, 1.0,
                    a11, (int)ld, a12, (int)ld);
        if (below > 0)
            cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, below, right, jb, -1.0, a21,
                        (int)ld, a12, (int)ld, 1.0, a12 + jb, (int)ld);
    }
    return 0;
}

/* flow 0: A[k][k] RW, flow 1: info[k] W (one int). The tile's LU in place;
 * its info (0, or the tile's first zero pivot) in the info tile, which the
 * driver reads after the timing, as on CUDA devices. */
static int getrf_cpu_getrf(weft_task_t *t)
{
    int info = getrf_tile(weft_task_rows(t, 0), weft_task_cols(t, 0), weft_task_ptr(t, 0),
                          weft_task_ld(t, 0));
    memcpy(weft_task_ptr(t, 1), &info, sizeof info);
    return 0;
}

/* flow 0: A[k][k] R, flow 1: A[k][n] RW; A[k][n] := L[k][k]^-1 A[k][n]. */
static int getrf_cpu_trsm_row(weft_task_t *t)
{
    cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, weft_task_rows(t, 1),
                weft_task_cols(t, 1), 1.0, weft_task_ptr(t, 0), (int)weft_task_ld(t, 0),
                weft_task_ptr(t, 1), (int)weft_task_ld(t, 1));
    return 0;
}

/* flow 0: A[k][k] R, flow 1: A[m][k] RW; A[m][k] := A[m][k] U[k][k]^-1. */
static int getrf_cpu_trsm_col(weft_task_t *t)
{
    cblas_dtrsm(CblasColMajor, CblasRight, CblasUpper, CblasNoTrans, CblasNonUnit,
                weft_task_rows(t, 1), weft_task_cols(t, 1), 1.0, weft_task_ptr(t, 0),
                (int)weft_task_ld(t, 0), weft_task_ptr(t, 1), (int)weft_task_ld(t, 1));
    return 0;
}

/* flow 0: A[m][k] R, flow 1: A[k][n] R, flow 2: A[m][n] RW;
 * A[m][n] -= L[m][k] U[k][n]. */
static int getrf_cpu_gemm(weft_task_t *t)
{
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, weft_task_rows(t, 2),
                weft_task_cols(t, 2), weft_task_cols(t, 0), -1.0, weft_task_ptr(t, 0),
                (int)weft_task_ld(t, 0), weft_task_ptr(t, 1), (int)weft_task_ld(t, 1), 1.0,
                weft_task_ptr(t, 2), (int)weft_task_ld(t, 2));
    return 0;
}

/* ---- the panels by inverted factors (--trsm-inv) ---------------------- */

/* flow 0: A[k][k] R, flow 1: X W. X := L[k][k]^-1 (unit lower, zeros
 * above) when lower, else U[k][k]^-1 (zeros below): the whole tile is
 * written, so a GPU body can use it as a full matrix whatever made it. */
static int getrf_cpu_inverse(weft_task_t *t, int lower)
{
    int n = weft_task_rows(t, 0);
    const double *a = weft_task_ptr(t, 0);
    double *x = weft_task_ptr(t, 1);
    int64_t lda = weft_task_ld(t, 0), ldx = weft_task_ld(t, 1);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            int keep = lower ? i > j : i <= j;
            x[i + j * ldx] = keep ? a[i + j * lda] : (lower && i == j ? 1.0 : 0.0);
        }
    lapack_int info = LAPACKE_dtrtri_work(LAPACK_COL_MAJOR, lower ? 'L' : 'U', lower ? 'U' : 'N',
                                          n, x, (lapack_int)ldx);
    if (info == 0) return 0;
    weft_task_error(t, "inverting a diagonal factor: dtrtri returned info=%d", (int)info);
    return -1;
}

static int getrf_cpu_inv_l(weft_task_t *t) { return getrf_cpu_inverse(t, 1); }
static int getrf_cpu_inv_u(weft_task_t *t) { return getrf_cpu_inverse(t, 0); }

/* flow 0: X R (an inverted factor), flow 1: B RW; B := X B when left (row
 * panel, X unit lower), else B X (column panel, X upper). */
static int getrf_cpu_by_inverse(weft_task_t *t, int left)
{
    cblas_dtrmm(CblasColMajor, left ? CblasLeft : CblasRight, left ? CblasLower : CblasUpper,
                CblasNoTrans, left ? CblasUnit : CblasNonUnit, weft_task_rows(t, 1),
                weft_task_cols(t, 1), 1.0, weft_task_ptr(t, 0), (int)weft_task_ld(t, 0),
                weft_task_ptr(t, 1), (int)weft_task_ld(t, 1));
    return 0;
}

static int getrf_cpu_row_inv(weft_task_t *t) { return getrf_cpu_by_inverse(t, 1); }
static int getrf_cpu_col_inv(weft_task_t *t) { return getrf_cpu_by_inverse(t, 0); }

/* flow 0: a tile W; value 0: getrf_tile_arg_t. The tile of the original. */
static int getrf_cpu_fill(weft_task_t *t)
{
    getrf_tile_arg_t a;
    if (weft_task_value_get(t, 0, &a, sizeof a) != 0) return -1;
    double *p = weft_task_ptr(t, 0);
    int64_t ld = weft_task_ld(t, 0);
    int rows = weft_task_rows(t, 0), cols = weft_task_cols(t, 0);
    for (int j = 0; j < cols; j++)
        for (int i = 0; i < rows; i++) p[i + j * ld] = lu_elem(a.seed, a.n, a.row0 + i, a.col0 + j);
    return 0;
}

/* flow 0: a tile R on its home accelerator. Computes nothing: weft copies
 * the tile there first, so the timed factorization starts with it there. */
static int getrf_nop(weft_task_t *t)
{
    (void)t;
    return 0;
}

/* flow 0: info[k] R; value 0: int k. Fails the task when the LU of
 * diagonal tile k met a zero pivot (the factors are then meaningless). */
static int getrf_cpu_info(weft_task_t *t)
{
    int info, k;
    if (weft_task_value_get(t, 0, &k, sizeof k) != 0) return -1;
    memcpy(&info, weft_task_ptr(t, 0), sizeof info);
    if (info == 0) return 0;
    weft_task_error(t, "the LU of diagonal tile %d met a zero pivot (info=%d)", k, info);
    return -1;
}

static const weft_task_class_t getrf_class_getrf = {.name = "getrf",
                                                    .body = {[WEFT_DEV_CPU] = getrf_cpu_getrf,
                                                             [WEFT_DEV_EMU] = getrf_cpu_getrf,
                                                             GETRF_CUDA_BODY(getrf_cuda_getrf)},
                                                    .flops = getrf_flops_getrf};
static const weft_task_class_t getrf_class_trsm_row = {
    .name = "trsm_row",
    .body = {[WEFT_DEV_CPU] = getrf_cpu_trsm_row,
             [WEFT_DEV_EMU] = getrf_cpu_trsm_row,
             GETRF_CUDA_BODY(getrf_cuda_trsm_row)},
    .flops = getrf_flops_trsm_row};
static const weft_task_class_t getrf_class_trsm_col = {
    .name = "trsm_col",
    .body = {[WEFT_DEV_CPU] = getrf_cpu_trsm_col,
             [WEFT_DEV_EMU] = getrf_cpu_trsm_col,
             GETRF_CUDA_BODY(getrf_cuda_trsm_col)},
    .flops = getrf_flops_trsm_col};
static const weft_task_class_t getrf_class_gemm = {.name = "gemm",
                                                   .body = {[WEFT_DEV_CPU] = getrf_cpu_gemm,
                                                            [WEFT_DEV_EMU] = getrf_cpu_gemm,
                                                            GETRF_CUDA_BODY(getrf_cuda_gemm)},
                                                   .flops = getrf_flops_gemm};
static const weft_task_class_t getrf_class_inv_l = {.name = "inv_l",
                                                    .body = {[WEFT_DEV_CPU] = getrf_cpu_inv_l,
                                                             [WEFT_DEV_EMU] = getrf_cpu_inv_l,
                                                             GETRF_CUDA_BODY(getrf_cuda_inv_l)},
                                                    .flops = getrf_flops_inverse};
static const weft_task_class_t getrf_class_inv_u = {.name = "inv_u",
                                                    .body = {[WEFT_DEV_CPU] = getrf_cpu_inv_u,
                                                             [WEFT_DEV_EMU] = getrf_cpu_inv_u,
                                                             GETRF_CUDA_BODY(getrf_cuda_inv_u)},
                                                    .flops = getrf_flops_inverse};
static const weft_task_class_t getrf_class_row_inv = {
    .name = "row_inv",
    .body = {[WEFT_DEV_CPU] = getrf_cpu_row_inv,
             [WEFT_DEV_EMU] = getrf_cpu_row_inv,
             GETRF_CUDA_BODY(getrf_cuda_row_inv)},
    .flops = getrf_flops_trsm_row};
static const weft_task_class_t getrf_class_col_inv = {
    .name = "col_inv",
    .body = {[WEFT_DEV_CPU] = getrf_cpu_col_inv,
             [WEFT_DEV_EMU] = getrf_cpu_col_inv,
             GETRF_CUDA_BODY(getrf_cuda_col_inv)},
    .flops = getrf_flops_trsm_col};
static const weft_task_class_t getrf_class_fill = {
    .name = "fill", .body = {[WEFT_DEV_CPU] = getrf_cpu_fill}, .flops = NULL};
/* Inserted with accelerators only (-g > 0). Its CPU body does nothing
 * either: where the device cannot hold the tile (a small device_memory_limit)
 * the prefetch falls back to the host instead of failing the run, as the
 * compute classes do. */
static const weft_task_class_t getrf_class_prefetch = {
    .name = "prefetch",
    .body = {[WEFT_DEV_CPU] = getrf_nop, [WEFT_DEV_EMU] = getrf_nop, GETRF_CUDA_BODY(getrf_nop)},
    .flops = NULL};
static const weft_task_class_t getrf_class_info = {
    .name = "info", .body = {[WEFT_DEV_CPU] = getrf_cpu_info}, .flops = NULL};

/* ---- residual kernels (--check) --------------------------------------- */

/* x (m x n, ld m) := the m x n matrix a, or only its upper triangle (zeros
 * below) when upper is set. */
static void getrf_copy(int m, int n, const double *a, int64_t lda, double *x, int upper)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) x[i + (int64_t)j * m] = upper && i > j ? 0.0 : a[i + j * lda];
}

/* The product of a resid task's L and U tiles into x (rows of L x cols of
 * U, ld rows) when at least one is a diagonal tile: a copy of one factor
 * multiplied in place by the other's triangle, which trmm reads alone. */
static void getrf_resid_product(weft_task_t *t, int diag, double *x)
{
    int m = weft_task_rows(t, 0), k = weft_task_cols(t, 0), n = weft_task_cols(t, 1);
    const double *l = weft_task_ptr(t, 0), *u = weft_task_ptr(t, 1);
    int ldl = (int)weft_task_ld(t, 0), ldu = (int)weft_task_ld(t, 1);
    if (diag & GETRF_DIAG_L) { /* m == k: unit lower L times U (its triangle if diagonal) */
        getrf_copy(k, n, u, ldu, x, diag & GETRF_DIAG_U);
        cblas_dtrmm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, k, n, 1.0, l,
                    ldl, x, k);
    } else { /* k == n: L times upper U */
        getrf_copy(m, k, l, ldl, x, 0);
        cblas_dtrmm(CblasColMajor, CblasRight, CblasUpper, CblasNoTrans, CblasNonUnit, m, k, 1.0, u,
                    ldu, x, m);
    }
}

/* flow 0: A[m][k] (L) R, flow 1: A[k][n] (U) R, flow 2: R[m][n] RW; value
 * 0: int diag (GETRF_DIAG_*). R[m][n] -= L[m][k] U[k][n]. */
static int getrf_cpu_resid(weft_task_t *t)
{
    int diag;
    if (weft_task_value_get(t, 0, &diag, sizeof diag) != 0) return -1;
    int m = weft_task_rows(t, 2), n = weft_task_cols(t, 2);
    double *r = weft_task_ptr(t, 2);
    int ldr = (int)weft_task_ld(t, 2);
    if (diag == 0) {
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, weft_task_cols(t, 0), -1.0,
                    weft_task_ptr(t, 0), (int)weft_task_ld(t, 0), weft_task_ptr(t, 1),
                    (int)weft_task_ld(t, 1), 1.0, r, ldr);
        return 0;
    }
    double *x = malloc(sizeof(double) * (size_t)m * (size_t)n);
    if (x == NULL) return -1;
    getrf_resid_product(t, diag, x);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) r[i + (int64_t)j * ldr] -= x[i + (int64_t)j * m];
    free(x);
    return 0;
}

/* ||R[m][n]||_F^2 and ||A0[m][n]||_F^2, A0 regenerated. */
static double getrf_resid_elem(const void *arg, double x, double z, int64_t gi, int64_t gj,
                               double *d, double *y)
{
    const getrf_tile_arg_t *a = arg;
    (void)z;
    *d = x;
    *y = lu_elem(a->seed, a->n, gi, gj);
    return 1.0;
}

/* flow 0: R[m][n] R, flow 1: this rank's sums tile RW; value 0:
 * getrf_tile_arg_t. */
static int getrf_cpu_resid_norm(weft_task_t *t)
{
    getrf_tile_arg_t a;
    if (weft_task_value_get(t, 0, &a, sizeof a) != 0) return -1;
    app_resid_t r = {getrf_resid_elem, &a, a.row0, a.col0, .x = 0, .z = -1, .sums = 1, .col = 0};
    return app_sums_resid(t, &r);
}

/* The O(N^3) part of the check runs where the factors are. */
static const weft_task_class_t getrf_class_resid = {.name = "resid",
                                                    .body = {[WEFT_DEV_CPU] = getrf_cpu_resid,
                                                             [WEFT_DEV_EMU] = getrf_cpu_resid,
                                                             GETRF_CUDA_BODY(getrf_cuda_resid)},
                                                    .flops = getrf_flops_gemm};
static const weft_task_class_t getrf_class_resid_norm = {
    .name = "resid_norm", .body = {[WEFT_DEV_CPU] = getrf_cpu_resid_norm}, .flops = NULL};

#endif /* WEFT_APPS_GETRF_KERNELS_H */
