/* Kernels and task classes of weft-geqrf's --check, each run where its
 * tiles live (header-only, included by weft-geqrf.c only).
 *
 * The check applies the computed Q, as the stored V and T tiles hold it,
 * with the factorization's own update classes (gemqrt, tsmqr):
 * - B := Q^T A0 on a fresh copy A0 of the original: B should be R (the
 *   upper triangle of the factored A, zero below), so ||B - R||_F =
 *   ||A0 - Q R||_F up to Q's departure from orthogonality;
 * - X := Q^T (Q X0) on a random M x NX block: ||X - X0||_F, which is zero
 *   only when each block H_i = I - V_i T_i V_i^T is orthogonal, i.e. tests
 *   ||I - Q^T Q|| in the directions of X0.
 * Each tile adds its squared norms into its rank's 1 x 4 sums tile
 * (||B - R||^2, ||A0||^2, ||X - X0||^2, ||X0||^2), then the sums are
 * all-reduced over the ranks by tasks. */
#ifndef WEFT_APPS_QR_CHECK_H
#define WEFT_APPS_QR_CHECK_H

#include <stdint.h>

#include <weft/weft.h>

#include "qr_kernels.h"

#define QR_SUMS 4

/* flow 0: the factored A(m,j) R, flow 1: B(m,j) = (Q^T A0)(m,j) R, flow
 * 2: the rank's sums RW; value 0: qr_tile_arg_t of the tile (which 0). */
static int qr_cpu_resid_norm(weft_task_t *t)
{
    qr_tile_arg_t a;
    if (weft_task_value_get(t, 0, &a, sizeof a) != 0) return -1;
    const double *r = weft_task_ptr(t, 0), *b = weft_task_ptr(t, 1);
    int64_t ldr = weft_task_ld(t, 0), ldb = weft_task_ld(t, 1);
    int rows = weft_task_rows(t, 1), cols = weft_task_cols(t, 1);
    double d2 = 0.0, a2 = 0.0;
    for (int j = 0; j < cols; j++) {
        for (int i = 0; i < rows; i++) {
            /* R is the upper triangle of the factored matrix; V below it */
            double rij = a.row0 + i <= a.col0 + j ? r[i + j * ldr] : 0.0;
            double d = b[i + j * ldb] - rij;
            double y = qr_elem(a.seed, 0, a.row0 + i, a.col0 + j);
            d2 += d * d;
            a2 += y * y;
        }
    }
    double *s = weft_task_ptr(t, 2);
    int64_t lds = weft_task_ld(t, 2);
    s[0] += d2;
    s[lds] += a2;
    return 0;
}

/* flow 0: X(m,j) = (Q^T Q X0)(m,j) R, flow 1: the rank's sums RW; value
 * 0: qr_tile_arg_t of the tile (which 1). */
static int qr_cpu_orth_norm(weft_task_t *t)
{
    qr_tile_arg_t a;
    if (weft_task_value_get(t, 0, &a, sizeof a) != 0) return -1;
    const double *x = weft_task_ptr(t, 0);
    int64_t ld = weft_task_ld(t, 0);
    int rows = weft_task_rows(t, 0), cols = weft_task_cols(t, 0);
    double d2 = 0.0, x2 = 0.0;
    for (int j = 0; j < cols; j++) {
        for (int i = 0; i < rows; i++) {
            double y = qr_elem(a.seed, 1, a.row0 + i, a.col0 + j), d = x[i + j * ld] - y;
            d2 += d * d;
            x2 += y * y;
        }
    }
    double *s = weft_task_ptr(t, 1);
    int64_t lds = weft_task_ld(t, 1);
    s[2 * lds] += d2;
    s[3 * lds] += x2;
    return 0;
}

/* flow 0: a 1 x 4 sums tile W: zeroes it. */
static int qr_cpu_sum_zero(weft_task_t *t)
{
    double *s = weft_task_ptr(t, 0);
    for (int c = 0; c < QR_SUMS; c++) s[c * weft_task_ld(t, 0)] = 0.0;
    return 0;
}

/* flow 0: a sums tile R, flow 1: another RW (value 0 int add = 1) or W
 * (add = 0): adds the first to it, or copies it. */
static int qr_cpu_sum_merge(weft_task_t *t)
{
    int add;
    if (weft_task_value_get(t, 0, &add, sizeof add) != 0) return -1;
    const double *x = weft_task_ptr(t, 0);
    double *y = weft_task_ptr(t, 1);
    int64_t ldx = weft_task_ld(t, 0), ldy = weft_task_ld(t, 1);
    for (int c = 0; c < QR_SUMS; c++) y[c * ldy] = (add ? y[c * ldy] : 0.0) + x[c * ldx];
    return 0;
}

static const weft_task_class_t qr_class_resid_norm = {
    .name = "resid_norm", .body = {[WEFT_DEV_CPU] = qr_cpu_resid_norm}, .flops = NULL};
static const weft_task_class_t qr_class_orth_norm = {
    .name = "orth_norm", .body = {[WEFT_DEV_CPU] = qr_cpu_orth_norm}, .flops = NULL};
static const weft_task_class_t qr_class_sum_zero = {
    .name = "sum_zero", .body = {[WEFT_DEV_CPU] = qr_cpu_sum_zero}, .flops = NULL};
static const weft_task_class_t qr_class_sum_merge = {
    .name = "sum_merge", .body = {[WEFT_DEV_CPU] = qr_cpu_sum_merge}, .flops = NULL};

#endif /* WEFT_APPS_QR_CHECK_H */
