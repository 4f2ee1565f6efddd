/* CUDA bodies of weft-geqrf's four classes (compiled with
 * WEFT_APP_HAVE_CUDA): the updates GEMQRT and TSMQR by cuBLAS, the
 * factorizations GEQRT and TSQRT by cusolverDnDgeqrf and cusolverDnXlarft
 * (qr_cuda_factor.h). Tiles keep LAPACK's layout, so a tile factored on a
 * GPU can be updated on a CPU and the other way round.
 *
 * LAPACK's dgeqrt/dtpqrt store Q as blocks of ib reflectors, block i
 * being H_i = I - V_i T_i V_i^T with T_i the ib x ib upper triangle in
 * columns i*ib.. of the T tile. Q^T C applies H_1^T, H_2^T, ... in turn
 * (trans 'T'), Q C the blocks in reverse order (trans 'N'); each block is
 * the compact-WY update C -= V_i op(T_i) (V_i^T C) in a few GEMM/TRMM
 * calls on the scratch W (ib x n) of the task's stream workspace. Every
 * call is enqueued on the stream weft set on the task's cuBLAS handle; the
 * body never waits. */
#ifndef WEFT_APPS_QR_CUDA_H
#define WEFT_APPS_QR_CUDA_H

#ifdef WEFT_APP_HAVE_CUDA

#include <cublas_v2.h>
#include <limits.h>
#include <stdio.h>

#include <weft/weft.h>

#include "app_cuda.h"

/* One step's cuBLAS status; the first failure is printed and sticks. */
typedef struct qr_cuda_ctx {
    cublasHandle_t h;
    cublasOperation_t op_t; /* op(T_i): T_i^T for Q^T, T_i for Q */
    int failed;
} qr_cuda_ctx_t;

static void qr_cuda_ok(qr_cuda_ctx_t *c, cublasStatus_t st, const char *call)
{
    if (st == CUBLAS_STATUS_SUCCESS || c->failed) return;
    fprintf(stderr, "weft-geqrf: %s failed: %s\n", call, cublasGetStatusString(st));
    c->failed = 1;
}

static int qr_cuda_ld(const weft_task_t *t, int f)
{
    int64_t ld = weft_task_ld(t, f);
    return ld > INT_MAX ? INT_MAX : (int)ld;
}

/* The task's trans value as the op applied to each T_i; -1 on error. */
static int qr_cuda_begin(weft_task_t *t, qr_cuda_ctx_t *c)
{
    char trans;
    if (weft_task_value_get(t, 0, &trans, sizeof trans) != 0) return -1;
    c->h = (cublasHandle_t)weft_task_blas_handle(t);
    c->op_t = trans == 'T' ? CUBLAS_OP_T : CUBLAS_OP_N;
    c->failed = 0;
    return 0;
}

static double *qr_cuda_scratch(weft_task_t *t, int ib, int n)
{
    return app_cuda_workspace("weft-geqrf", t, sizeof(double) * (size_t)ib * (size_t)n,
                              "an update");
}

/* Block of GEMQRT: V = [vt; vb] (vt ib x ib unit lower, vb r x ib), C =
 * [ct; cb] (ib x n, r x n), w ib x n:
 * C -= V op(T) V^T C. */
typedef struct qr_cuda_blk {
    const double *vt, *vb, *tt;
    double *ct, *cb;
    int ldv, ldt, ldc, ib, r, n;
} qr_cuda_blk_t;

static void qr_cuda_gemqrt_block(qr_cuda_ctx_t *c, const qr_cuda_blk_t *b, double *w)
{
    const double one = 1.0, mone = -1.0, zero = 0.0;
    int ib = b->ib, n = b->n;
    qr_cuda_ok(c,
               cublasDgeam(c->h, CUBLAS_OP_N, CUBLAS_OP_N, ib, n, &one, b->ct, b->ldc, &zero, w, ib,
                           w, ib),
               "cublasDgeam (copy)");
    qr_cuda_ok(c,
               cublasDtrmm(c->h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T,
                           CUBLAS_DIAG_UNIT, ib, n, &one, b->vt, b->ldv, w, ib, w, ib),
               "cublasDtrmm (V1^T C1)");
    if (b->r > 0)
        qr_cuda_ok(c,
                   cublasDgemm(c->h, CUBLAS_OP_T, CUBLAS_OP_N, ib, n, b->r, &one, b->vb, b->ldv,
                               b->cb, b->ldc, &one, w, ib),
                   "cublasDgemm (V2^T C2)");
    qr_cuda_ok(c,
               cublasDtrmm(c->h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, c->op_t,
                           CUBLAS_DIAG_NON_UNIT, ib, n, &one, b->tt, b->ldt, w, ib, w, ib),
               "cublasDtrmm (op(T) W)");
    if (b->r > 0)
        qr_cuda_ok(c,
                   cublasDgemm(c->h, CUBLAS_OP_N, CUBLAS_OP_N, b->r, n, ib, &mone, b->vb, b->ldv, w,
                               ib, &one, b->cb, b->ldc),
                   "cublasDgemm (C2 -= V2 W)");
    qr_cuda_ok(c,
               cublasDtrmm(c->h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,
                           CUBLAS_DIAG_UNIT, ib, n, &one, b->vt, b->ldv, w, ib, w, ib),
               "cublasDtrmm (V1 W)");
    qr_cuda_ok(c,
               cublasDgeam(c->h, CUBLAS_OP_N, CUBLAS_OP_N, ib, n, &one, b->ct, b->ldc, &mone, w, ib,
                           b->ct, b->ldc),
               "cublasDgeam (C1 -= W)");
}

/* flows: 0 D(h,k) R (V), 1 T R, 2 C(h,j) RW; value 0 char trans. A short
 * head tile (fewer rows than columns, qr_tree.h) has one reflector a row. */
static int qr_cuda_gemqrt(weft_task_t *t)
{
    qr_cuda_ctx_t c;
    if (qr_cuda_begin(t, &c) != 0) return -1;
    int m = weft_task_rows(t, 2), n = weft_task_cols(t, 2), k = weft_task_cols(t, 0);
    if (weft_task_rows(t, 0) < k) k = weft_task_rows(t, 0);
    int ib = weft_task_rows(t, 1), ldv = qr_cuda_ld(t, 0), ldt = qr_cuda_ld(t, 1);
    int ldc = qr_cuda_ld(t, 2), nblk = (k + ib - 1) / ib;
    const double *v = weft_task_ptr(t, 0), *tt = weft_task_ptr(t, 1);
    double *cm = weft_task_ptr(t, 2), *w = qr_cuda_scratch(t, ib, n);
    if (w == NULL) return -1;
    for (int s = 0; s < nblk && !c.failed; s++) {
        int i = c.op_t == CUBLAS_OP_T ? s : nblk - 1 - s, r0 = i * ib;
        int bi = k - r0 < ib ? k - r0 : ib;
        qr_cuda_blk_t b = {.vt = v + r0 + (size_t)r0 * ldv,
                           .vb = v + r0 + bi + (size_t)r0 * ldv,
                           .tt = tt + (size_t)r0 * ldt,
                           .ct = cm + r0,
                           .cb = cm + r0 + bi,
                           .ldv = ldv,
                           .ldt = ldt,
                           .ldc = ldc,
                           .ib = bi,
                           .r = m - r0 - bi,
                           .n = n};
        qr_cuda_gemqrt_block(&c, &b, w);
    }
    return c.failed ? -1 : 0;
}

/* flows: 0 A(m,k) R (V, full), 1 T R, 2 C(k,j) RW, 3 C(m,j) RW; value 0
 * char trans. Block i: V_i = [E_i; vb_i] with E_i the rows i*ib.. of
 * C(k,j): W = C(k,j)_i + vb_i^T C(m,j); W = op(T_i) W; C(k,j)_i -= W;
 * C(m,j) -= vb_i W. */
static int qr_cuda_tsmqr(weft_task_t *t)
{
    const double one = 1.0, mone = -1.0, zero = 0.0;
    qr_cuda_ctx_t c;
    if (qr_cuda_begin(t, &c) != 0) return -1;
    int m = weft_task_rows(t, 3), n = weft_task_cols(t, 3), k = weft_task_cols(t, 0);
    int ib = weft_task_rows(t, 1), ldv = qr_cuda_ld(t, 0), ldt = qr_cuda_ld(t, 1);
    int lda = qr_cuda_ld(t, 2), ldb = qr_cuda_ld(t, 3), nblk = (k + ib - 1) / ib;
    const double *v = weft_task_ptr(t, 0), *tt = weft_task_ptr(t, 1);
    double *a = weft_task_ptr(t, 2), *bm = weft_task_ptr(t, 3), *w = qr_cuda_scratch(t, ib, n);
    if (w == NULL) return -1;
    for (int s = 0; s < nblk && !c.failed; s++) {
        int i = c.op_t == CUBLAS_OP_T ? s : nblk - 1 - s, r0 = i * ib;
        int bi = k - r0 < ib ? k - r0 : ib;
        const double *vb = v + (size_t)r0 * ldv;
        qr_cuda_ok(&c,
                   cublasDgeam(c.h, CUBLAS_OP_N, CUBLAS_OP_N, bi, n, &one, a + r0, lda, &zero, w,
                               bi, w, bi),
                   "cublasDgeam (copy)");
        qr_cuda_ok(&c,
                   cublasDgemm(c.h, CUBLAS_OP_T, CUBLAS_OP_N, bi, n, m, &one, vb, ldv, bm, ldb,
                               &one, w, bi),
                   "cublasDgemm (V^T B)");
        qr_cuda_ok(&c,
                   cublasDtrmm(c.h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, c.op_t,
                               CUBLAS_DIAG_NON_UNIT, bi, n, &one, tt + (size_t)r0 * ldt, ldt, w, bi,
                               w, bi),
                   "cublasDtrmm (op(T) W)");
        qr_cuda_ok(&c,
                   cublasDgeam(c.h, CUBLAS_OP_N, CUBLAS_OP_N, bi, n, &one, a + r0, lda, &mone, w,
                               bi, a + r0, lda),
                   "cublasDgeam (A -= W)");
        qr_cuda_ok(&c,
                   cublasDgemm(c.h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, bi, &mone, vb, ldv, w, bi, &one,
                               bm, ldb),
                   "cublasDgemm (B -= V W)");
    }
    return c.failed ? -1 : 0;
}

#endif /* WEFT_APP_HAVE_CUDA */
#endif /* WEFT_APPS_QR_CUDA_H */
