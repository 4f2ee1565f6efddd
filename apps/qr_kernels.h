/* Tile kernels, cost estimates and task classes of weft-geqrf's
 * factorization (the tile QR of Buttari et al., as PLASMA's dgeqrf, and
 * the triangle-on-triangle kernels of its hierarchical tree, qr_tree.h):
 * GEQRT factors a tile A(h,k) into V and R with its triangular factor
 * T(h,k); GEMQRT applies that Q^T to A(h,j), j > k; TSQRT couples the R in
 * A(h,k) with a full tile A(m,k) (V into A(m,k), T(m,k)) and TSMQR applies
 * it to the pair A(h,j), A(m,j); TTQRT couples the R in A(a,k) with the R
 * in the upper triangle of A(b,k) (V into that triangle, TT(b,k)) and TTMQR
 * applies it to the pair A(a,j), A(b,j).
 *
 * Header-only on purpose: apps/CMakeLists.txt builds every .c file of
 * apps/ as its own program. Only weft-geqrf.c includes this file.
 *
 * Flows of the classes (column-major tiles, shapes from weft_task_rows/cols,
 * so partial tiles need no special case; the inner block size ib is the
 * rows of the T tile, at most the reflectors of the step):
 *   geqrt:  0 A(h,k) RW, 1 T(h,k) W, 2 D(h,k) W (a copy of the factored tile)
 *   gemqrt: 0 D(h,k) R (V), 1 T(h,k) R, 2 C(h,j) RW; value 0 char trans
 *   tsqrt:  0 A(h,k) RW, 1 A(m,k) RW, 2 T(m,k) W
 *   tsmqr:  0 A(m,k) R (V), 1 T(m,k) R, 2 C(h,j) RW, 3 C(m,j) RW; value 0
 *           char trans
 *   ttqrt:  0 A(a,k) RW, 1 A(b,k) RW, 2 TT(b,k) W
 *   ttmqr:  0 A(b,k) R (V in its upper triangle), 1 TT(b,k) R, 2 C(a,j) RW,
 *           3 C(b,j) RW; value 0 char trans
 * gemqrt reads D(h,k), a copy of A(h,k) made by geqrt, rather than A(h,k)
 * itself: the tsqrt and ttqrt tasks rewrite the R part of A(h,k), and
 * reading the tile would make each of them wait for every gemqrt of the
 * row (a write after read on the whole tile, although the V they read is
 * never rewritten). The copy costs one tile move, not a flop count.
 *
 * A head tile of the hierarchical tree may be the last, short tile row (mb
 * < n columns): its GEQRT has mb reflectors, R is mb x n upper trapezoidal,
 * and TTQRT/TTMQR then work on its mb rows (dtpqrt's B with l = mb). With
 * a tall head (mb > n, the last tile column) they work on its top n rows,
 * the only ones the local factorization left non-zero.
 *
 * Bodies: CPU (LAPACKE *_work) for every class, also the emu devices'
 * kernels. CUDA: the updates in qr_cuda.h, the factorizations in
 * qr_cuda_factor.h; ttqrt and ttmqr have none (see their classes). */
#ifndef WEFT_APPS_QR_KERNELS_H
#define WEFT_APPS_QR_KERNELS_H

#include <lapacke.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <weft/weft.h>

#include "qr_cuda.h" /* CUDA bodies, empty without WEFT_APP_HAVE_CUDA */
#include "qr_matrix.h"

#ifdef WEFT_APP_HAVE_CUDA
#define QR_CUDA_BODY(fn) [WEFT_DEV_CUDA] = fn,
#else
#define QR_CUDA_BODY(fn)
#endif

/* What a fill or norm task needs to regenerate its tile: the seed, the
 * matrix (qr_elem's which) and the tile's first row and column. */
typedef struct qr_tile_arg {
    uint64_t seed;
    int64_t which, row0, col0;
} qr_tile_arg_t;

/* ---- LAPACK workspace ------------------------------------------------- */

/* The LAPACKE *_work calls need ib * n doubles of scratch. A body on a
 * device gets the stream's workspace (emu: host memory); a body on a CPU
 * worker uses a buffer of its thread, kept between tasks (no malloc per
 * task) and freed by the key's destructor when the worker exits. */
static pthread_key_t qr_work_key;
static pthread_once_t qr_work_once = PTHREAD_ONCE_INIT;
static int qr_work_key_ok;

typedef struct qr_work_buf {
    size_t bytes;
    double *p;
} qr_work_buf_t;

static void qr_work_free(void *v)
{
    qr_work_buf_t *b = v;
    free(b->p);
    free(b);
}

static void qr_work_key_init(void)
{
    qr_work_key_ok = pthread_key_create(&qr_work_key, qr_work_free) == 0;
}

static double *qr_thread_work(size_t bytes)
{
    pthread_once(&qr_work_once, qr_work_key_init);
    if (!qr_work_key_ok) return NULL;
    qr_work_buf_t *b = pthread_getspecific(qr_work_key);
    if (b == NULL) {
        if ((b = calloc(1, sizeof *b)) == NULL) return NULL;
        if (pthread_setspecific(qr_work_key, b) != 0) {
            free(b);
            return NULL;
        }
    }
    if (b->bytes < bytes) {
        double *p = realloc(b->p, bytes);
        if (p == NULL) return NULL;
        b->p = p;
        b->bytes = bytes;
    }
    return b->p;
}

static double *qr_work(weft_task_t *t, int ib, int n)
{
    size_t bytes = sizeof(double) * (size_t)ib * (size_t)(n > 0 ? n : 1);
    double *w = weft_task_workspace(t, bytes);
    if (w == NULL) w = qr_thread_work(bytes);
    if (w == NULL)
        fprintf(stderr, "weft-geqrf: no memory for a %zu-byte LAPACK workspace\n", bytes);
    return w;
}

static int qr_info_ok(lapack_int info, const char *call)
{
    if (info == 0) return 0;
    fprintf(stderr, "weft-geqrf: %s returned info=%d\n", call, (int)info);
    return -1;
}

#include "qr_cuda_factor.h" /* needs qr_thread_work */

/* The inner block size of a task whose T tile is flow f: T has ib rows. */
static int qr_ib(const weft_task_t *t, int f) { return weft_task_rows(t, f); }

/* ---- cost estimates (LAPACK's leading terms) ------------------------- */

/* The reflectors of a factored tile (flow f): a short head tile (fewer
 * rows than columns) has one a row. */
static int qr_nrefl(const weft_task_t *t, int f)
{
    int m = weft_task_rows(t, f), n = weft_task_cols(t, f);
    return m < n ? m : n;
}

static double qr_flops_geqrt(const weft_task_t *t)
{
    double m = weft_task_rows(t, 0), n = weft_task_cols(t, 0), k = qr_nrefl(t, 0);
    double big = m > n ? m : n;
    return 2.0 * big * k * k - 2.0 * k * k * k / 3.0;
}

static double qr_flops_gemqrt(const weft_task_t *t)
{
    double m = weft_task_rows(t, 2), n = weft_task_cols(t, 2), k = qr_nrefl(t, 0);
    return 4.0 * m * n * k - 2.0 * n * k * k;
}

static double qr_flops_tsqrt(const weft_task_t *t)
{
    double m = weft_task_rows(t, 1), n = weft_task_cols(t, 1);
    return 2.0 * m * n * n;
}

static double qr_flops_tsmqr(const weft_task_t *t)
{
    double m = weft_task_rows(t, 3), n = weft_task_cols(t, 3), k = weft_task_cols(t, 0);
    return 4.0 * m * n * k;
}

/* The triangle-on-triangle kernels do about a third of TSQRT's and half
 * of TSMQR's work on full tiles (V is triangular). */
static double qr_flops_ttqrt(const weft_task_t *t) { return qr_flops_tsqrt(t) / 3.0; }

static double qr_flops_ttmqr(const weft_task_t *t) { return qr_flops_tsmqr(t) / 2.0; }

/* ---- factorization kernels ------------------------------------------- */

static int qr_cpu_geqrt(weft_task_t *t)
{
    int m = weft_task_rows(t, 0), n = weft_task_cols(t, 0), ib = qr_ib(t, 1);
    double *a = weft_task_ptr(t, 0), *w = qr_work(t, ib, n);
    int64_t lda = weft_task_ld(t, 0);
    if (w == NULL) return -1;
    lapack_int info = LAPACKE_dgeqrt_work(LAPACK_COL_MAJOR, m, n, ib, a, (lapack_int)lda,
                                          weft_task_ptr(t, 1), (lapack_int)weft_task_ld(t, 1), w);
    if (qr_info_ok(info, "dgeqrt") != 0) return -1;
    return LAPACKE_dlacpy_work(LAPACK_COL_MAJOR, 'A', m, n, a, (lapack_int)lda, weft_task_ptr(t, 2),
                               (lapack_int)weft_task_ld(t, 2)) == 0
               ? 0
               : -1;
}

static int qr_cpu_gemqrt(weft_task_t *t)
{
    char trans;
    if (weft_task_value_get(t, 0, &trans, sizeof trans) != 0) return -1;
    int m = weft_task_rows(t, 2), n = weft_task_cols(t, 2), k = qr_nrefl(t, 0);
    int ib = qr_ib(t, 1);
    double *w = qr_work(t, ib, n);
    if (w == NULL) return -1;
    lapack_int info = LAPACKE_dgemqrt_work(LAPACK_COL_MAJOR, 'L', trans, m, n, k, ib,
                                           weft_task_ptr(t, 0), (lapack_int)weft_task_ld(t, 0),
                                           weft_task_ptr(t, 1), (lapack_int)weft_task_ld(t, 1),
                                           weft_task_ptr(t, 2), (lapack_int)weft_task_ld(t, 2), w);
    return qr_info_ok(info, "dgemqrt");
}

/* B (m x n, flow 1) stacked under the triangle of A (flow 0), factored by
 * dtpqrt into V in B and T (flow 2): l = 0 for a full B (TS), l = m for
 * an upper trapezoidal one (TT). */
static int qr_tpqrt(weft_task_t *t, int m, int l, const char *call)
{
    int n = weft_task_cols(t, 1), ib = qr_ib(t, 2);
    double *w = qr_work(t, ib, n);
    if (w == NULL) return -1;
    lapack_int info = LAPACKE_dtpqrt_work(LAPACK_COL_MAJOR, m, n, l, ib, weft_task_ptr(t, 0),
                                          (lapack_int)weft_task_ld(t, 0), weft_task_ptr(t, 1),
                                          (lapack_int)weft_task_ld(t, 1), weft_task_ptr(t, 2),
                                          (lapack_int)weft_task_ld(t, 2), w);
    return qr_info_ok(info, call);
}

/* (C1, C2) := op(Q) (C1, C2) by dtpmqrt, with V (flow 0) and T (flow 1)
 * of a qr_tpqrt, C1 flow 2, the m x n rows of C2 flow 3 (value 0: trans):
 * l as there. */
static int qr_tpmqrt(weft_task_t *t, int m, int l, const char *call)
{
    char trans;
    if (weft_task_value_get(t, 0, &trans, sizeof trans) != 0) return -1;
    int n = weft_task_cols(t, 3), k = weft_task_cols(t, 0), ib = qr_ib(t, 1);
    double *w = qr_work(t, ib, n);
    if (w == NULL) return -1;
    lapack_int info = LAPACKE_dtpmqrt_work(LAPACK_COL_MAJOR, 'L', trans, m, n, k, l, ib,
                                           weft_task_ptr(t, 0), (lapack_int)weft_task_ld(t, 0),
                                           weft_task_ptr(t, 1), (lapack_int)weft_task_ld(t, 1),
                                           weft_task_ptr(t, 2), (lapack_int)weft_task_ld(t, 2),
                                           weft_task_ptr(t, 3), (lapack_int)weft_task_ld(t, 3), w);
    return qr_info_ok(info, call);
}

static int qr_cpu_tsqrt(weft_task_t *t) { return qr_tpqrt(t, weft_task_rows(t, 1), 0, "dtpqrt"); }

static int qr_cpu_tsmqr(weft_task_t *t) { return qr_tpmqrt(t, weft_task_rows(t, 3), 0, "dtpmqrt"); }

/* The rows of A(b,k) and of C(b,j) that a TT step touches: the R of the
 * head's own factorization, min(rows, n) of them (see the top). */
static int qr_tt_rows(const weft_task_t *t, int f, int n)
{
    int m = weft_task_rows(t, f);
    return m < n ? m : n;
}

/* dtpqrt with B upper trapezoidal in its l = M rows: it reads and writes
 * only B's upper triangle, so GEQRT's V below it survives. */
static int qr_cpu_ttqrt(weft_task_t *t)
{
    int l = qr_tt_rows(t, 1, weft_task_cols(t, 1));
    return qr_tpqrt(t, l, l, "dtpqrt (tt)");
}

/* dtpmqrt with V upper trapezoidal (l = M): only V's upper triangle is
 * read, and only the top l rows of C(b,j) change. */
static int qr_cpu_ttmqr(weft_task_t *t)
{
    int l = qr_tt_rows(t, 3, weft_task_cols(t, 0));
    return qr_tpmqrt(t, l, l, "dtpmqrt (tt)");
}

/* flow 0: a tile W; value 0: qr_tile_arg_t. */
static int qr_cpu_fill(weft_task_t *t)
{
    qr_tile_arg_t a;
    if (weft_task_value_get(t, 0, &a, sizeof a) != 0) return -1;
    double *p = weft_task_ptr(t, 0);
    int64_t ld = weft_task_ld(t, 0);
    int rows = weft_task_rows(t, 0), cols = weft_task_cols(t, 0);
    for (int j = 0; j < cols; j++)
        for (int i = 0; i < rows; i++)
            p[i + j * ld] = qr_elem(a.seed, (int)a.which, a.row0 + i, a.col0 + j);
    return 0;
}

/* flow 0: a tile R on its home device: only makes weft copy it there
 * before the timing starts. */
static int qr_nop(weft_task_t *t)
{
    (void)t;
    return 0;
}

static const weft_task_class_t qr_class_geqrt = {
    .name = "geqrt",
    .body =
        {[WEFT_DEV_CPU] = qr_cpu_geqrt, [WEFT_DEV_EMU] = qr_cpu_geqrt, QR_CUDA_BODY(qr_cuda_geqrt)},
    .flops = qr_flops_geqrt};
static const weft_task_class_t qr_class_tsqrt = {
    .name = "tsqrt",
    .body =
        {[WEFT_DEV_CPU] = qr_cpu_tsqrt, [WEFT_DEV_EMU] = qr_cpu_tsqrt, QR_CUDA_BODY(qr_cuda_tsqrt)},
    .flops = qr_flops_tsqrt};
static const weft_task_class_t qr_class_gemqrt = {.name = "gemqrt",
                                                  .body = {[WEFT_DEV_CPU] = qr_cpu_gemqrt,
                                                           [WEFT_DEV_EMU] = qr_cpu_gemqrt,
                                                           QR_CUDA_BODY(qr_cuda_gemqrt)},
                                                  .flops = qr_flops_gemqrt};
static const weft_task_class_t qr_class_tsmqr = {
    .name = "tsmqr",
    .body =
        {[WEFT_DEV_CPU] = qr_cpu_tsmqr, [WEFT_DEV_EMU] = qr_cpu_tsmqr, QR_CUDA_BODY(qr_cuda_tsmqr)},
    .flops = qr_flops_tsmqr};
/* The TT classes have CPU bodies only, and their tasks are inserted with
 * the host as device hint (qr_tree.h): cuSOLVER has no tpqrt, and the
 * TSQRT stack of qr_cuda_factor.h would need R_b masked on its way in and
 * out, a GPU path no machine here can test; a panel has P - 1 TT steps
 * against the TS chain's tiles. With accelerators they run on the host
 * cores, weft moving their tiles; the hint holds on emu devices too (which
 * would otherwise run CPU bodies), so the emu tests take the path a CUDA
 * run takes: host tasks on device-resident tiles. */
static const weft_task_class_t qr_class_ttqrt = {
    .name = "ttqrt", .body = {[WEFT_DEV_CPU] = qr_cpu_ttqrt}, .flops = qr_flops_ttqrt};
static const weft_task_class_t qr_class_ttmqr = {
    .name = "ttmqr", .body = {[WEFT_DEV_CPU] = qr_cpu_ttmqr}, .flops = qr_flops_ttmqr};
static const weft_task_class_t qr_class_fill = {
    .name = "fill", .body = {[WEFT_DEV_CPU] = qr_cpu_fill}, .flops = NULL};
/* Inserted with accelerators only (-g > 0). Its CPU body does nothing
 * either: where the device cannot hold the tile (a small device_memory_limit)
 * the prefetch falls back to the host instead of failing the run, as the
 * compute classes do. */
static const weft_task_class_t qr_class_prefetch = {
    .name = "prefetch",
    .body = {[WEFT_DEV_CPU] = qr_nop, [WEFT_DEV_EMU] = qr_nop, QR_CUDA_BODY(qr_nop)},
    .flops = NULL};

#endif /* WEFT_APPS_QR_KERNELS_H */
