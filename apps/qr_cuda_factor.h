/* CUDA bodies of weft-geqrf's factorization classes, GEQRT and TSQRT, with
 * the tiles in LAPACK's dgeqrt/dtpqrt layout so that the update classes,
 * on either side, read them unchanged.
 *
 * cuSOLVER has no geqrt nor tpqrt, but it has what they are made of:
 * cusolverDnDgeqrf leaves V below the diagonal and tau, and
 * cusolverDnXlarft turns a block of ib reflectors and their tau into the
 * ib x ib triangle T_i. dgeqrt's T tile is exactly those triangles side by
 * side (the diagonal blocks of the whole step's T), so one larft per inner
 * block gives the same T tile.
 *
 * TSQRT factors [R; B] with R the upper triangle of A(k,k), whose strict
 * lower part holds GEQRT's V and must survive. The body stacks [triu(R); B]
 * in workspace, runs geqrf on the stack and copies R and V2 back. Below R's
 * diagonal the stack holds exact zeros, and Householder steps keep them
 * zero (each reflector touches one row of the top block), so the top of
 * every reflector is e_i: the stored V2 with an implicit identity on top is
 * dtpqrt's V. geqrf does ~1.6x tpqrt's flops on the stack, a price the GPU
 * pays faster than a host core does tpqrt.
 *
 * Only enqueues work on the task's stream; never waits. Included by
 * qr_kernels.h after its host scratch helper (larft may want host memory). */
#ifndef WEFT_APPS_QR_CUDA_FACTOR_H
#define WEFT_APPS_QR_CUDA_FACTOR_H

#ifdef WEFT_APP_HAVE_CUDA

#include <cuda_runtime_api.h>
#include <cusolverDn.h>
#include <stdint.h>

/* Device scratch carved from the task's workspace, each piece 256-byte
 * aligned. */
typedef struct qr_cuda_ws {
    size_t used;
    char *base;
} qr_cuda_ws_t;

static size_t qr_cuda_round(size_t bytes) { return (bytes + 255) & ~(size_t)255; }

static void *qr_cuda_take(qr_cuda_ws_t *w, size_t bytes)
{
    void *p = w->base + w->used;
    w->used += qr_cuda_round(bytes);
    return p;
}

static int qr_cuda_solver_ok(cusolverStatus_t st, const char *call)
{
    if (st == CUSOLVER_STATUS_SUCCESS) return 0;
    fprintf(stderr, "weft-geqrf: %s failed: cuSOLVER status %d\n", call, (int)st);
    return -1;
}

static int qr_cuda_rt_ok(cudaError_t e, const char *call)
{
    if (e == cudaSuccess) return 0;
    fprintf(stderr, "weft-geqrf: %s failed: %s\n", call, cudaGetErrorString(e));
    return -1;
}

/* geqrf of a rows x k panel a in place, then the T tile (ib rows) of its
 * reflectors. qr_cuda_panel_sizes asks cuSOLVER once a task for the
 * scratch geqrf and the largest larft (the first block: most rows) need;
 * tau, devInfo and that scratch then come from ws, whose caller has room
 * for qr_cuda_panel_bytes. */
typedef struct qr_cuda_panel {
    cusolverDnHandle_t h;
    cusolverDnParams_t prm;
    double *a;
    int rows, k, lda;
    double *t;
    int ib, ldt;
    int lwork;          /* geqrf's work, in doubles */
    size_t ldev, lhost; /* larft's device and host bytes */
} qr_cuda_panel_t;

static int qr_cuda_panel_sizes(qr_cuda_panel_t *p)
{
    int64_t bi = p->k < p->ib ? p->k : p->ib;
    const double *tau_probe = p->a; /* the size queries read no data */
    if (qr_cuda_solver_ok(cusolverDnDgeqrf_bufferSize(p->h, p->rows, p->k, p->a, p->lda, &p->lwork),
                          "cusolverDnDgeqrf_bufferSize") != 0)
        return -1;
    return qr_cuda_solver_ok(
        cusolverDnXlarft_bufferSize(p->h, p->prm, CUBLAS_DIRECT_FORWARD, CUBLAS_STOREV_COLUMNWISE,
                                    p->rows, bi, CUDA_R_64F, p->a, p->lda, CUDA_R_64F, tau_probe,
                                    CUDA_R_64F, p->t, p->ldt, CUDA_R_64F, &p->ldev, &p->lhost),
        "cusolverDnXlarft_bufferSize");
}

static size_t qr_cuda_panel_bytes(const qr_cuda_panel_t *p)
{
    return qr_cuda_round(sizeof(double) * (size_t)p->k) + qr_cuda_round(sizeof(int)) +
           qr_cuda_round(sizeof(double) * (size_t)p->lwork) + qr_cuda_round(p->ldev);
}

/* T_i of each inner block i into columns i*ib.. of the T tile, as dgeqrt
 * and dtpqrt store them. */
static int qr_cuda_larft_blocks(const qr_cuda_panel_t *p, const double *tau, void *dwork)
{
    void *hwork = p->lhost > 0 ? qr_thread_work(p->lhost) : NULL;
    if (p->lhost > 0 && hwork == NULL) {
        fprintf(stderr, "weft-geqrf: larft needs %zu bytes of host scratch\n", p->lhost);
        return -1;
    }
    for (int64_t r0 = 0; r0 < p->k; r0 += p->ib) {
        int64_t bi = p->k - r0 < p->ib ? p->k - r0 : p->ib;
        if (qr_cuda_solver_ok(cusolverDnXlarft(p->h, p->prm, CUBLAS_DIRECT_FORWARD,
                                               CUBLAS_STOREV_COLUMNWISE, p->rows - r0, bi,
                                               CUDA_R_64F, p->a + r0 + r0 * p->lda, p->lda,
                                               CUDA_R_64F, tau + r0, CUDA_R_64F, p->t + r0 * p->ldt,
                                               p->ldt, CUDA_R_64F, dwork, p->ldev, hwork, p->lhost),
                              "cusolverDnXlarft") != 0)
            return -1;
    }
    return 0;
}

static int qr_cuda_panel_factor(const qr_cuda_panel_t *p, qr_cuda_ws_t *ws)
{
    double *tau = qr_cuda_take(ws, sizeof(double) * (size_t)p->k);
    int *info = qr_cuda_take(ws, sizeof(int));
    double *work = qr_cuda_take(ws, sizeof(double) * (size_t)p->lwork);
    void *larft_dev = qr_cuda_take(ws, p->ldev);
    if (qr_cuda_solver_ok(
            cusolverDnDgeqrf(p->h, p->rows, p->k, p->a, p->lda, tau, work, p->lwork, info),
            "cusolverDnDgeqrf") != 0)
        return -1;
    return qr_cuda_larft_blocks(p, tau, larft_dev);
}

static void *qr_cuda_ws(weft_task_t *t, size_t bytes, const char *what)
{
    return app_cuda_workspace("weft-geqrf", t, bytes, what);
}

/* flows: 0 A(k,k) RW, 1 T(k,k) W, 2 D(k) W (a copy of the factored tile). */
static int qr_cuda_geqrt(weft_task_t *t)
{
    cusolverDnParams_t prm;
    if (qr_cuda_solver_ok(cusolverDnCreateParams(&prm), "cusolverDnCreateParams") != 0) return -1;
    int m = weft_task_rows(t, 0), n = weft_task_cols(t, 0);
    qr_cuda_panel_t p = {.h = (cusolverDnHandle_t)weft_task_solver_handle(t),
                         .prm = prm,
                         .a = weft_task_ptr(t, 0),
                         .rows = m,
                         .k = m < n ? m : n,
                         .lda = qr_cuda_ld(t, 0),
                         .t = weft_task_ptr(t, 1),
                         .ib = weft_task_rows(t, 1),
                         .ldt = qr_cuda_ld(t, 1)};
    int rc = qr_cuda_panel_sizes(&p);
    qr_cuda_ws_t ws = {0, NULL};
    if (rc == 0) ws.base = qr_cuda_ws(t, qr_cuda_panel_bytes(&p), "geqrt");
    if (rc == 0 && ws.base == NULL) rc = -1;
    if (rc == 0) rc = qr_cuda_panel_factor(&p, &ws);
    if (rc == 0)
        rc = qr_cuda_rt_ok(
            cudaMemcpy2DAsync(weft_task_ptr(t, 2), sizeof(double) * (size_t)weft_task_ld(t, 2), p.a,
                              sizeof(double) * (size_t)p.lda, sizeof(double) * (size_t)m, (size_t)n,
                              cudaMemcpyDeviceToDevice, (cudaStream_t)weft_task_stream(t)),
            "cudaMemcpy2DAsync (D copy)");
    cusolverDnDestroyParams(prm);
    return rc;
}

/* Moves of TSQRT between the tiles and the stack S = [triu(R); B] (ld s->lds). */
typedef struct qr_cuda_stack {
    cublasHandle_t bh;
    cudaStream_t st;
    double *r, *b, *s, *packed;
    int n, mb, ldr, ldb, lds;
} qr_cuda_stack_t;

static int qr_cuda_stack_in(const qr_cuda_stack_t *s)
{
    const double one = 1.0, zero = 0.0;
    size_t col = sizeof(double) * (size_t)s->lds;
    if (qr_cuda_rt_ok(
            cudaMemset2DAsync(s->s, col, 0, sizeof(double) * (size_t)s->n, (size_t)s->n, s->st),
            "cudaMemset2DAsync (stack)") != 0)
        return -1;
    qr_cuda_ctx_t c = {.h = s->bh, .failed = 0};
    qr_cuda_ok(&c, cublasDtrttp(s->bh, CUBLAS_FILL_MODE_UPPER, s->n, s->r, s->ldr, s->packed),
               "cublasDtrttp (R in)");
    qr_cuda_ok(&c, cublasDtpttr(s->bh, CUBLAS_FILL_MODE_UPPER, s->n, s->packed, s->s, s->lds),
               "cublasDtpttr (R in)");
    qr_cuda_ok(&c,
               cublasDgeam(s->bh, CUBLAS_OP_N, CUBLAS_OP_N, s->mb, s->n, &one, s->b, s->ldb, &zero,
                           s->s + s->n, s->lds, s->s + s->n, s->lds),
               "cublasDgeam (B in)");
    return c.failed ? -1 : 0;
}

/* R back into the upper triangle of A(k,k) only (its strict lower part is
 * GEQRT's V), V2 into B. */
static int qr_cuda_stack_out(const qr_cuda_stack_t *s)
{
    const double one = 1.0, zero = 0.0;
    qr_cuda_ctx_t c = {.h = s->bh, .failed = 0};
    qr_cuda_ok(&c, cublasDtrttp(s->bh, CUBLAS_FILL_MODE_UPPER, s->n, s->s, s->lds, s->packed),
               "cublasDtrttp (R out)");
    qr_cuda_ok(&c, cublasDtpttr(s->bh, CUBLAS_FILL_MODE_UPPER, s->n, s->packed, s->r, s->ldr),
               "cublasDtpttr (R out)");
    qr_cuda_ok(&c,
               cublasDgeam(s->bh, CUBLAS_OP_N, CUBLAS_OP_N, s->mb, s->n, &one, s->s + s->n, s->lds,
                           &zero, s->b, s->ldb, s->b, s->ldb),
               "cublasDgeam (V2 out)");
    return c.failed ? -1 : 0;
}

/* flows: 0 A(k,k) RW (R above the diagonal), 1 A(m,k) RW, 2 T(m,k) W. */
static int qr_cuda_tsqrt(weft_task_t *t)
{
    cusolverDnParams_t prm;
    if (qr_cuda_solver_ok(cusolverDnCreateParams(&prm), "cusolverDnCreateParams") != 0) return -1;
    int n = weft_task_cols(t, 1), mb = weft_task_rows(t, 1);
    qr_cuda_stack_t s = {.bh = (cublasHandle_t)weft_task_blas_handle(t),
                         .st = (cudaStream_t)weft_task_stream(t),
                         .r = weft_task_ptr(t, 0),
                         .b = weft_task_ptr(t, 1),
                         .n = n,
                         .mb = mb,
                         .ldr = qr_cuda_ld(t, 0),
                         .ldb = qr_cuda_ld(t, 1),
                         .lds = n + mb};
    qr_cuda_panel_t p = {.h = (cusolverDnHandle_t)weft_task_solver_handle(t),
                         .prm = prm,
                         .a = s.b, /* stands in for the stack in the size queries */
                         .rows = n + mb,
                         .k = n,
                         .lda = s.lds,
                         .t = weft_task_ptr(t, 2),
                         .ib = weft_task_rows(t, 2),
                         .ldt = qr_cuda_ld(t, 2)};
    size_t stack = sizeof(double) * (size_t)s.lds * (size_t)n,
           packed = sizeof(double) * ((size_t)n * (size_t)(n + 1) / 2);
    int rc = qr_cuda_panel_sizes(&p);
    qr_cuda_ws_t ws = {0, NULL};
    if (rc == 0)
        ws.base = qr_cuda_ws(
            t, qr_cuda_round(stack) + qr_cuda_round(packed) + qr_cuda_panel_bytes(&p), "tsqrt");
    if (rc == 0 && ws.base == NULL) rc = -1;
    if (rc == 0) {
        p.a = s.s = qr_cuda_take(&ws, stack);
        s.packed = qr_cuda_take(&ws, packed);
        rc = qr_cuda_stack_in(&s);
    }
    if (rc == 0) rc = qr_cuda_panel_factor(&p, &ws);
    if (rc == 0) rc = qr_cuda_stack_out(&s);
    cusolverDnDestroyParams(prm);
    return rc;
}

#endif /* WEFT_APP_HAVE_CUDA */
#endif /* WEFT_APPS_QR_CUDA_FACTOR_H */
