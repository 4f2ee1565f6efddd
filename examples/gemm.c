/* Example: C += A B on a P x Q grid of ranks, one task per tile product.
 *
 * Every rank holds the whole A, B and C (a small N) and wraps them as tiled
 * matrices: weft uses only the tiles of this rank and moves the others. Each
 * task C(m,n) += A(m,k) B(k,n) runs where C(m,n) lives (WEFT_AFFINITY): on
 * the CPU (cblas_dgemm), on an emu device (the same CPU body) or on a CUDA
 * device (cuBLAS, when built with CUDA). The result is checked against one
 * sequential dgemm, and the tasks this rank ran against the tiles it owns.
 *
 * mpiexec -n 4 ./example_gemm -N 512 -t 128 -P 2 [--weft-device_emu_enabled=2] */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <weft/weft.h>

#include "example_args.h"
#ifdef WEFT_EXAMPLE_HAVE_CUDA
#include <cublas_v2.h>
#endif

/* flows: 0 A(m,k) R, 1 B(k,n) R, 2 C(m,n) RW. */
static int gemm_cpu(weft_task_t *t)
{
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, weft_task_rows(t, 2),
                weft_task_cols(t, 2), weft_task_cols(t, 0), 1.0, weft_task_ptr(t, 0),
                (int)weft_task_ld(t, 0), weft_task_ptr(t, 1), (int)weft_task_ld(t, 1), 1.0,
                weft_task_ptr(t, 2), (int)weft_task_ld(t, 2));
    return 0;
}

#ifdef WEFT_EXAMPLE_HAVE_CUDA
/* The handle is already bound to the task's stream: the body only enqueues
 * the GEMM and returns; a kernel that fails later fails the task through
 * the stream's event. */
static int gemm_cuda(weft_task_t *t)
{
    const double one = 1.0;
    cublasStatus_t st =
        cublasDgemm(weft_task_blas_handle(t), CUBLAS_OP_N, CUBLAS_OP_N, weft_task_rows(t, 2),
                    weft_task_cols(t, 2), weft_task_cols(t, 0), &one, weft_task_ptr(t, 0),
                    (int)weft_task_ld(t, 0), weft_task_ptr(t, 1), (int)weft_task_ld(t, 1), &one,
                    weft_task_ptr(t, 2), (int)weft_task_ld(t, 2));
    if (st != CUBLAS_STATUS_SUCCESS) fprintf(stderr, "cublasDgemm: %d\n", (int)st);
    return st == CUBLAS_STATUS_SUCCESS ? 0 : -1;
}
#define CUDA_BODY [WEFT_DEV_CUDA] = gemm_cuda,
#else
#define CUDA_BODY
#endif

static const weft_task_class_t gemm_class = {.name = "gemm",
                                             .body = {[WEFT_DEV_CPU] = gemm_cpu, CUDA_BODY}};

static void fill(double *x, int n, int seed)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) x[i + (size_t)j * n] = ((i * 7 + j * 3 + seed) % 11) / 11.0;
}

/* Inserts every tile product; returns the number of tasks that run here. */
static int insert_all(weft_taskpool_t *tp, weft_matrix_t *A, weft_matrix_t *B, weft_matrix_t *C,
                      int rank, int *rc)
{
    int nt = weft_matrix_mt(C), mine = 0;
    for (int m = 0; m < nt; m++)
        for (int n = 0; n < nt; n++) {
            mine += weft_matrix_tile_rank(C, m, n) == rank ? nt : 0;
            for (int k = 0; k < nt && *rc == 0; k++)
                *rc = weft_insert_task(tp, &gemm_class, WEFT_R, weft_tile(A, m, k), WEFT_R,
                                       weft_tile(B, k, n), WEFT_RW | WEFT_AFFINITY,
                                       weft_tile(C, m, n), WEFT_PRIORITY, nt - k, 0);
        }
    return mine;
}

/* Largest difference between C and ref over the tiles of this rank. */
static double local_error(weft_matrix_t *C, const double *c, const double *ref, int N, int nb,
                          int rank)
{
    double err = 0;
    for (int j = 0; j < N; j++)
        for (int i = 0; i < N; i++)
            if (weft_matrix_tile_rank(C, i / nb, j / nb) == rank)
                err = fmax(err, fabs(c[i + (size_t)j * N] - ref[i + (size_t)j * N]));
    return err;
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (ctx == NULL) return 1;
    int N = 384, nb = 96, P = 1;
    int bad = example_args("example_gemm", weft_rank(ctx), argc, argv, 3,
                           (const char *const[]){"-N", "-t", "-P"},
                           (const char *const[]){"matrix order", "tile size", "grid rows"},
                           (int *const[]){&N, &nb, &P});
    if (bad == 1) return weft_fini(ctx) != 0;
    /* A refusal still ends weft on every rank (weft_fini), as a failure. */
    if (bad || N < 1 || nb < 1 || P < 1 || weft_nranks(ctx) % P != 0) {
        if (!bad)
            fprintf(stderr, "example_gemm: -N and -t must be >= 1, -P must divide the %d ranks\n",
                    weft_nranks(ctx));
        weft_fini(ctx);
        return 1;
    }
    int rank = weft_rank(ctx), Q = weft_nranks(ctx) / P, rc = 0;
    size_t bytes = (size_t)N * N * sizeof(double);
    double *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes), *ref = malloc(bytes);
    if (!a || !b || !c || !ref) {
        fprintf(stderr, "example_gemm: out of memory\n");
        weft_fini(ctx);
        return 1;
    }
    fill(a, N, 1), fill(b, N, 2), fill(c, N, 3), memcpy(ref, c, bytes);
    weft_matrix_t *A = weft_matrix_wrap(ctx, WEFT_DOUBLE, a, N, N, N, nb, nb, P, Q);
    weft_matrix_t *B = weft_matrix_wrap(ctx, WEFT_DOUBLE, b, N, N, N, nb, nb, P, Q);
    weft_matrix_t *C = weft_matrix_wrap(ctx, WEFT_DOUBLE, c, N, N, N, nb, nb, P, Q);
    if (!A || !B || !C) { /* weft said why */
        if (A) weft_matrix_free(A);
        if (B) weft_matrix_free(B);
        if (C) weft_matrix_free(C);
        weft_fini(ctx);
        return 1;
    }
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "gemm");
    int mine = insert_all(tp, A, B, C, rank, &rc);
    if (rc == 0) rc = weft_taskpool_wait(tp); /* C's tiles are back in c on their owners */
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0, a, N, b, N, 1.0, ref, N);
    double err = local_error(C, c, ref, N, nb, rank);
    long long ran = (long long)weft_taskpool_ntasks_run(tp);
    int ok = rc == 0 && err < 1e-12 * N && ran == mine;
    printf("gemm rank %d: %lld tasks (expected %d), max error %.2e: %s\n", rank, ran, mine, err,
           example_verdict(ctx, rc, &ok));
    weft_taskpool_free(tp);
    weft_matrix_free(A), weft_matrix_free(B), weft_matrix_free(C);
    int fini = weft_fini(ctx);
    free(a), free(b), free(c), free(ref);
    return !ok || fini != 0;
}
