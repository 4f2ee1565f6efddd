/* The operands, task bodies and task classes of weft-gemm-stress: tiles
 * generated from a seed (so that any rank can regenerate any of them), the
 * GEMM step C := A * Cprev + B on the CPU and on CUDA, and the check's
 * recomputation and error reduction.
 *
 * Header-only on purpose: apps/CMakeLists.txt builds every .c file of
 * apps/ as its own program, so the pieces of weft-gemm-stress kept apart
 * live here as static functions; weft-gemm-stress.c includes it. */
#ifndef WEFT_APPS_GEMM_STRESS_KERNELS_H
#define WEFT_APPS_GEMM_STRESS_KERNELS_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <weft/weft.h>

#ifdef WEFT_APP_HAVE_CUDA
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#endif

#define GS_NAME "weft-gemm-stress"
/* Largest accepted relative Frobenius error of a chain against its CBLAS
 * recomputation (the same operations in the same order agree to rounding;
 * an accelerator BLAS may sum in another order). */
#define GS_ERROR_MAX 1e-10

/* ---- the generated operands ------------------------------------------ */

enum { GS_GEN_A = 1, GS_GEN_B = 2, GS_GEN_C0 = 3 };

/* What a fill (or check) task needs to regenerate a tile: which operand,
 * of which chain and step, from which seed, and the tile order. */
typedef struct gs_tile_arg {
    uint64_t seed;
    int32_t which; /* GS_GEN_* */
    int32_t chain, step;
    int32_t nb;
    int32_t depth; /* check tasks only: steps of the chain */
} gs_tile_arg_t;

static uint64_t gs_mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Element (i, j) of an operand: a counter-based hash mapped to [-0.5, 0.5).
 * A is scaled by sqrt(12 / nb) (entries of variance 1/nb) so that the
 * product keeps the magnitude of C along a chain of any depth. */
static void gs_generate(const gs_tile_arg_t *a, double *p, int64_t ld)
{
    uint64_t base =
        gs_mix64(gs_mix64(gs_mix64(gs_mix64(a->seed) + (uint64_t)a->which) + (uint64_t)a->chain) +
                 (uint64_t)a->step);
    double scale = a->which == GS_GEN_A ? sqrt(12.0 / (double)a->nb) : 1.0;
    for (int j = 0; j < a->nb; j++)
        for (int i = 0; i < a->nb; i++) {
            uint64_t h = gs_mix64(base + (uint64_t)j * (uint64_t)a->nb + (uint64_t)i);
            p[i + j * ld] = scale * ((double)(h >> 11) * 0x1.0p-53 - 0.5);
        }
}

/* C := A * Cprev + B, all nb x nb column-major. */
static void gs_step(int nb, const double *a, int64_t lda, const double *cprev, int64_t ldp,
                    const double *b, int64_t ldb, double *c, int64_t ldc)
{
    for (int j = 0; j < nb; j++) memcpy(c + j * ldc, b + j * ldb, sizeof(double) * (size_t)nb);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, nb, nb, nb, 1.0, a, (int)lda, cprev,
                (int)ldp, 1.0, c, (int)ldc);
}

/* ---- task bodies (CPU) ------------------------------------------------ */

static double gs_flops_step(const weft_task_t *t)
{
    double n = weft_task_rows(t, 3);
    return 2.0 * n * n * n;
}

/* flow 0: a tile W; value 0: gs_tile_arg_t. */
static int gs_cpu_fill(weft_task_t *t)
{
    gs_tile_arg_t a;
    weft_task_value(t, 0, &a);
    if (weft_task_rows(t, 0) != a.nb || weft_task_cols(t, 0) != a.nb) return -1;
    gs_generate(&a, weft_task_ptr(t, 0), weft_task_ld(t, 0));
    return 0;
}

/* flow 0: A R, flow 1: C[s-1] R, flow 2: B R, flow 3: C[s] W. */
static int gs_cpu_step(weft_task_t *t)
{
    gs_step(weft_task_rows(t, 3), weft_task_ptr(t, 0), weft_task_ld(t, 0), weft_task_ptr(t, 1),
            weft_task_ld(t, 1), weft_task_ptr(t, 2), weft_task_ld(t, 2), weft_task_ptr(t, 3),
            weft_task_ld(t, 3));
    return 0;
}

/* flow 0: the final C of a chain R, flow 1: this rank's error tile RW
 * (2 x 1: the largest relative error, the chains checked into it); value
 * 0: gs_tile_arg_t of the chain (which, step unused). Recomputes the
 * chain with CBLAS, raises the error to its relative error and counts
 * itself, so that a check task that did not run is seen. */
static int gs_cpu_check(weft_task_t *t)
{
    gs_tile_arg_t a;
    weft_task_value(t, 0, &a);
    int nb = a.nb;
    size_t n2 = (size_t)nb * (size_t)nb;
    double *buf = malloc(sizeof(double) * 4 * n2);
    if (buf == NULL) return -1;
    double *ta = buf, *tb = buf + n2, *c = buf + 2 * n2, *next = buf + 3 * n2;
    gs_tile_arg_t g = a;
    g.which = GS_GEN_C0;
    g.step = 0;
    gs_generate(&g, c, nb);
    for (int s = 1; s <= a.depth; s++) {
        g.step = s;
        g.which = GS_GEN_A;
        gs_generate(&g, ta, nb);
        g.which = GS_GEN_B;
        gs_generate(&g, tb, nb);
        gs_step(nb, ta, nb, c, nb, tb, nb, next, nb);
        double *swap = c;
        c = next;
        next = swap;
    }
    const double *got = weft_task_ptr(t, 0);
    int64_t ld = weft_task_ld(t, 0);
    double d2 = 0.0, r2 = 0.0;
    for (int j = 0; j < nb; j++)
        for (int i = 0; i < nb; i++) {
            double r = c[i + (size_t)j * (size_t)nb], d = got[i + j * ld] - r;
            d2 += d * d;
            r2 += r * r;
        }
    free(buf);
    double err = sqrt(d2) / (r2 > 0.0 ? sqrt(r2) : 1.0);
    if (!(err <= GS_ERROR_MAX)) {
        fprintf(stderr, GS_NAME ": chain %d: relative error %.3e > %.0e\n", (int)a.chain, err,
                GS_ERROR_MAX);
        if (isnan(err)) err = INFINITY;
    }
    double *e = weft_task_ptr(t, 1);
    if (err > e[0]) e[0] = err;
    e[1] += 1;
    return 0;
}

/* flow 0: an error tile W: no error, no chain checked. */
static int gs_cpu_err_zero(weft_task_t *t)
{
    double *e = weft_task_ptr(t, 0);
    e[0] = e[1] = 0.0;
    return 0;
}

/* flow 0: an error tile R, flow 1: another RW: keeps the larger error and
 * adds the chains checked. */
static int gs_cpu_err_max(weft_task_t *t)
{
    const double *x = weft_task_ptr(t, 0);
    double *y = weft_task_ptr(t, 1);
    if (x[0] > y[0]) y[0] = x[0];
    y[1] += x[1];
    return 0;
}

/* flow 0: an error tile R, flow 1: another W: copies the first. */
static int gs_cpu_err_copy(weft_task_t *t)
{
    const double *x = weft_task_ptr(t, 0);
    double *y = weft_task_ptr(t, 1);
    y[0] = x[0];
    y[1] = x[1];
    return 0;
}

#ifdef WEFT_APP_HAVE_CUDA
/* The CUDA body of a step, flows as gs_cpu_step's: C[s] := B on the task's
 * stream, then C[s] += A * C[s-1] with cublasDgemm; enqueued only. */
static int gs_cuda_step(weft_task_t *t)
{
    int nb = weft_task_rows(t, 3);
    cudaStream_t stream = (cudaStream_t)weft_task_stream(t);
    cudaError_t err = cudaMemcpy2DAsync(
        weft_task_ptr(t, 3), sizeof(double) * (size_t)weft_task_ld(t, 3), weft_task_ptr(t, 2),
        sizeof(double) * (size_t)weft_task_ld(t, 2), sizeof(double) * (size_t)nb, (size_t)nb,
        cudaMemcpyDeviceToDevice, stream);
    if (err != cudaSuccess) {
        fprintf(stderr, GS_NAME ": cudaMemcpy2DAsync failed: %s\n", cudaGetErrorString(err));
        return -1;
    }
    const double one = 1.0;
    cublasStatus_t st =
        cublasDgemm((cublasHandle_t)weft_task_blas_handle(t), CUBLAS_OP_N, CUBLAS_OP_N, nb, nb, nb,
                    &one, weft_task_ptr(t, 0), (int)weft_task_ld(t, 0), weft_task_ptr(t, 1),
                    (int)weft_task_ld(t, 1), &one, weft_task_ptr(t, 3), (int)weft_task_ld(t, 3));
    if (st != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, GS_NAME ": cublasDgemm failed: %s\n", cublasGetStatusString(st));
        return -1;
    }
    return 0;
}
#define GS_CUDA_BODY(fn) [WEFT_DEV_CUDA] = fn,
#else
#define GS_CUDA_BODY(fn)
#endif

static const weft_task_class_t gs_class_fill = {
    .name = "gs_fill", .body = {[WEFT_DEV_CPU] = gs_cpu_fill}, .flops = NULL};
/* -g 0: the host, or any accelerator the parameters opened. */
static const weft_task_class_t gs_class_step = {
    .name = "gs_step",
    .body =
        {[WEFT_DEV_CPU] = gs_cpu_step, [WEFT_DEV_EMU] = gs_cpu_step, GS_CUDA_BODY(gs_cuda_step)},
    .flops = gs_flops_step};
/* -g N > 0: accelerators only. */
static const weft_task_class_t gs_class_step_dev = {
    .name = "gs_step",
    .body = {[WEFT_DEV_EMU] = gs_cpu_step, GS_CUDA_BODY(gs_cuda_step)},
    .flops = gs_flops_step};
static const weft_task_class_t gs_class_check = {
    .name = "gs_check", .body = {[WEFT_DEV_CPU] = gs_cpu_check}, .flops = NULL};
static const weft_task_class_t gs_class_err_zero = {
    .name = "gs_err_zero", .body = {[WEFT_DEV_CPU] = gs_cpu_err_zero}, .flops = NULL};
static const weft_task_class_t gs_class_err_max = {
    .name = "gs_err_max", .body = {[WEFT_DEV_CPU] = gs_cpu_err_max}, .flops = NULL};
static const weft_task_class_t gs_class_err_copy = {
    .name = "gs_err_copy", .body = {[WEFT_DEV_CPU] = gs_cpu_err_copy}, .flops = NULL};

#endif
