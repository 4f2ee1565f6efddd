/* Kernels and task classes of weft-geqrf's --check, each run where its
 * tiles live (header-only, included by weft-geqrf.c only).
 *
 * The check applies the computed Q, as the stored V and T tiles hold it,
 * with the factorization's own update classes (gemqrt, tsmqr, ttmqr) in
 * the order of its tree (qr_insert_apply, qr_tree.h):
 * - B := Q^T A0 on a fresh copy A0 of the original: B should be R (the
 *   upper triangle of the factored A, zero below; the TT steps' V in the
 *   heads' upper triangles lies below the global diagonal), so ||B - R||_F =
 *   ||A0 - Q R||_F up to Q's departure from orthogonality;
 * - X := Q^T (Q X0) on a random M x NX block: ||X - X0||_F, which is zero
 *   only when each block H_i = I - V_i T_i V_i^T is orthogonal, i.e. tests
 *   ||I - Q^T Q|| in the directions of X0.
 * Each tile adds its squared norms into its rank's 1 x 4 sums tile
 * (||B - R||^2, ||A0||^2, ||X - X0||^2, ||X0||^2), then the sums are
 * all-reduced over the ranks by tasks (app_sums.h, which also holds the
 * loop of the norm kernels over a tile). */
#ifndef WEFT_APPS_QR_CHECK_H
#define WEFT_APPS_QR_CHECK_H

#include <stdint.h>

#include <weft/weft.h>

#include "app_sums.h"
#include "qr_kernels.h"

#define QR_SUMS 4

/* B - R against A0: R is the upper triangle of the factored matrix z (V
 * below it). */
static double qr_resid_elem(const void *arg, double b, double z, int64_t gi, int64_t gj, double *d,
                            double *y)
{
    const qr_tile_arg_t *a = arg;
    *d = b - (gi <= gj ? z : 0.0);
    *y = qr_elem(a->seed, 0, gi, gj);
    return 1.0;
}

/* Q^T Q X0 - X0 against X0. */
static double qr_orth_elem(const void *arg, double x, double z, int64_t gi, int64_t gj, double *d,
                           double *y)
{
    const qr_tile_arg_t *a = arg;
    (void)z;
    *y = qr_elem(a->seed, 1, gi, gj);
    *d = x - *y;
    return 1.0;
}

/* flow 0: the factored A(m,j) R, flow 1: B(m,j) = (Q^T A0)(m,j) R, flow
 * 2: the rank's sums RW; value 0: qr_tile_arg_t of the tile (which 0). */
static int qr_cpu_resid_norm(weft_task_t *t)
{
    qr_tile_arg_t a;
    if (weft_task_value_get(t, 0, &a, sizeof a) != 0) return -1;
    app_resid_t r = {qr_resid_elem, &a, a.row0, a.col0, .x = 1, .z = 0, .sums = 2, .col = 0};
    return app_sums_resid(t, &r);
}

/* flow 0: X(m,j) = (Q^T Q X0)(m,j) R, flow 1: the rank's sums RW; value
 * 0: qr_tile_arg_t of the tile (which 1). */
static int qr_cpu_orth_norm(weft_task_t *t)
{
    qr_tile_arg_t a;
    if (weft_task_value_get(t, 0, &a, sizeof a) != 0) return -1;
    app_resid_t r = {qr_orth_elem, &a, a.row0, a.col0, .x = 0, .z = -1, .sums = 1, .col = 2};
    return app_sums_resid(t, &r);
}

static const weft_task_class_t qr_class_resid_norm = {
    .name = "resid_norm", .body = {[WEFT_DEV_CPU] = qr_cpu_resid_norm}, .flops = NULL};
static const weft_task_class_t qr_class_orth_norm = {
    .name = "orth_norm", .body = {[WEFT_DEV_CPU] = qr_cpu_orth_norm}, .flops = NULL};

#endif /* WEFT_APPS_QR_CHECK_H */
