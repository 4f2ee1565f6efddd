/* cublas_tile_rate: the ceiling of each kernel of a tiled Cholesky on one
 * GPU. weft-potrf's tasks are POTRF, TRSM, SYRK and GEMM on nb x nb tiles,
 * several at once on a few streams; this times exactly those calls with
 * cuBLAS/cuSOLVER alone (no runtime), and the alternatives a body could
 * use instead, beside one large DGEMM, so that weft-potrf's GPU rate can be
 * read against what its kernels give.
 *
 * Usage: cublas_tile_rate [-t nb] [-n big] [-s maxstreams] [-c count] [-k kernels]
 *   -t  tile size (default 2048)          -n  order of the large DGEMM (16384)
 *   -s  streams tried, 1..s (default 6)   -c  tile calls a measurement (240)
 *   -d  seconds: only the large DGEMM, again and again for that long, one
 *       line a call (does the rate hold under sustained load?)
 *   -k  comma list of kernels (default all):
 *       gemm      C -= A B^T                      (2 nb^3 flops)
 *       syrk      cublasDsyrk, lower              (nb^3)
 *       syrkx     cublasDsyrkx(A, A), lower       (nb^3)
 *       syrk2     two nb/2 SYRKs and one nb/2 x nb/2 x nb GEMM (nb^3 useful)
 *       trsm      cublasDtrsm right, lower, transposed (nb^3)
 *       trmm      cublasDtrmm in place by an inverted factor (nb^3)
 *       trsmgemm  the TRSM as a GEMM by an inverted factor into scratch,
 *                 copied back (nb^3 useful)
 *       trtri     cusolverDnXtrtri, lower: the inverted factor (nb^3 / 3)
 *       potrf     cusolverDnDpotrf, lower         (nb^3 / 3)
 *       gemmbatch cublasDgemmBatched, 16 tile GEMMs a call (2 nb^3 each)
 * The rate printed counts the flops the Cholesky needs from that step (the
 * column above), so the lines of one step compare directly.
 *
 * Each call reads and writes its own tiles (a pool of 3 x 16 tiles cycled
 * through), so caches see a realistic working set. The tiles hold the
 * identity (positive definite, so POTRF runs its whole course). One line per
 * measurement:
 *   RESULT <kernel> tiles nb=<nb> streams=<s> tflops=<r>
 *   RESULT dgemm big n=<n> tflops=<r>
 *   RESULT sustained t=<s since start> n=<n> tflops=<r>   (with -d)
 * Build: gcc -std=c11 -O2 -I<cuda>/include cublas_tile_rate.c
 *        -L<cuda>/lib64 -lcusolver -lcublas -lcudart */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusolverDn.h>

#define PEER_NAME "cublas_tile_rate"
#include "peer_util.h" /* CUDA_OK, SOLVER_OK */

#define POOL 16
#define MAX_STREAMS 16

#define BLAS_OK(call)                                                                              \
    do {                                                                                           \
        cublasStatus_t s_ = (call);                                                                \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                         \
            fprintf(stderr, PEER_NAME ": %s failed: %s\n", #call, cublasGetStatusString(s_));      \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

typedef struct rate_ctx {
    cudaStream_t stream[MAX_STREAMS];
    cublasHandle_t blas[MAX_STREAMS];
    cusolverDnHandle_t solver[MAX_STREAMS];
    double *work[MAX_STREAMS]; /* potrf/trtri workspace + devInfo, a stream */
    size_t work_bytes;         /* of each work[k], after its devInfo double */
    int lwork;
    double *scratch[MAX_STREAMS]; /* a tile a stream (trsmgemm) */
    double **batch;               /* device array: POOL A, POOL B, POOL C */
    double *tile[3 * POOL];
    int nb;
} rate_ctx_t;

/* One tile call of a kernel on stream k with the pool's tiles p. */
typedef int (*tile_fn)(rate_ctx_t *r, int k, int p);

static const double one = 1.0, mone = -1.0;

static int call_gemm(rate_ctx_t *r, int k, int p)
{
    int nb = r->nb;
    BLAS_OK(cublasDgemm(r->blas[k], CUBLAS_OP_N, CUBLAS_OP_T, nb, nb, nb, &mone, r->tile[p], nb,
                        r->tile[POOL + p], nb, &one, r->tile[2 * POOL + p], nb));
    return 0;
}

static int call_syrk(rate_ctx_t *r, int k, int p)
{
    int nb = r->nb;
    BLAS_OK(cublasDsyrk(r->blas[k], CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, nb, nb, &mone, r->tile[p],
                        nb, &one, r->tile[2 * POOL + p], nb));
    return 0;
}

static int call_syrkx(rate_ctx_t *r, int k, int p)
{
    int nb = r->nb;
    BLAS_OK(cublasDsyrkx(r->blas[k], CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, nb, nb, &mone,
                         r->tile[p], nb, r->tile[p], nb, &one, r->tile[2 * POOL + p], nb));
    return 0;
}

/* The lower triangle of C -= A A^T as [S1 0; G S2]: S1, S2 SYRKs of order
 * h, G the h x (nb - h) block below S1 by one GEMM. */
static int call_syrk2(rate_ctx_t *r, int k, int p)
{
    int nb = r->nb, h = nb / 2, rest = nb - h;
    double *a = r->tile[p], *c = r->tile[2 * POOL + p];
    BLAS_OK(cublasDsyrk(r->blas[k], CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, h, nb, &mone, a, nb, &one,
                        c, nb));
    BLAS_OK(cublasDgemm(r->blas[k], CUBLAS_OP_N, CUBLAS_OP_T, rest, h, nb, &mone, a + h, nb, a, nb,
                        &one, c + h, nb));
    BLAS_OK(cublasDsyrk(r->blas[k], CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, rest, nb, &mone, a + h,
                        nb, &one, c + h + (size_t)h * nb, nb));
    return 0;
}

static int call_trsm(rate_ctx_t *r, int k, int p)
{
    int nb = r->nb;
    BLAS_OK(cublasDtrsm(r->blas[k], CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T,
                        CUBLAS_DIAG_NON_UNIT, nb, nb, &one, r->tile[p], nb, r->tile[2 * POOL + p],
                        nb));
    return 0;
}

/* B := B L^-T as B (L^-1)^T with the inverse given: in place (C = B). */
static int call_trmm(rate_ctx_t *r, int k, int p)
{
    int nb = r->nb;
    double *b = r->tile[2 * POOL + p];
    BLAS_OK(cublasDtrmm(r->blas[k], CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T,
                        CUBLAS_DIAG_NON_UNIT, nb, nb, &one, r->tile[p], nb, b, nb, b, nb));
    return 0;
}

/* B := B L^-T as X = B (L^-1)^T by one GEMM into the stream's scratch tile,
 * then copied back onto B. */
static int call_trsmgemm(rate_ctx_t *r, int k, int p)
{
    int nb = r->nb;
    const double zero = 0.0;
    double *b = r->tile[2 * POOL + p];
    BLAS_OK(cublasDgemm(r->blas[k], CUBLAS_OP_N, CUBLAS_OP_T, nb, nb, nb, &one, b, nb, r->tile[p],
                        nb, &zero, r->scratch[k], nb));
    CUDA_OK(cudaMemcpyAsync(b, r->scratch[k], (size_t)nb * (size_t)nb * sizeof(double),
                            cudaMemcpyDeviceToDevice, r->stream[k]));
    return 0;
}

static int call_trtri(rate_ctx_t *r, int k, int p)
{
    int nb = r->nb;
    SOLVER_OK(cusolverDnXtrtri(r->solver[k], CUBLAS_FILL_MODE_LOWER, CUBLAS_DIAG_NON_UNIT, nb,
                               CUDA_R_64F, r->tile[2 * POOL + p], nb, r->work[k] + 1,
                               r->work_bytes, NULL, 0, (int *)r->work[k]));
    return 0;
}

/* All POOL tile GEMMs of the pool in one batched call (p unused). */
static int call_gemmbatch(rate_ctx_t *r, int k, int p)
{
    (void)p;
    int nb = r->nb;
    BLAS_OK(cublasDgemmBatched(r->blas[k], CUBLAS_OP_N, CUBLAS_OP_T, nb, nb, nb, &mone,
                               (const double *const *)r->batch, nb,
                               (const double *const *)r->batch + POOL, nb, &one,
                               r->batch + 2 * POOL, nb, POOL));
    return 0;
}

static int call_potrf(rate_ctx_t *r, int k, int p)
{
    int nb = r->nb;
    SOLVER_OK(cusolverDnDpotrf(r->solver[k], CUBLAS_FILL_MODE_LOWER, nb, r->tile[2 * POOL + p], nb,
                               r->work[k] + 1, r->lwork, (int *)r->work[k]));
    return 0;
}

typedef struct kernel {
    const char *name;
    tile_fn call;
    double flops_per_nb3; /* the Cholesky's flops of one call, in nb^3 */
} kernel_t;

static const kernel_t kernels[] = {
    {"gemm", call_gemm, 2.0},
    {"syrk", call_syrk, 1.0},
    {"syrkx", call_syrkx, 1.0},
    {"syrk2", call_syrk2, 1.0},
    {"trsm", call_trsm, 1.0},
    {"trmm", call_trmm, 1.0},
    {"trsmgemm", call_trsmgemm, 1.0},
    {"trtri", call_trtri, 1.0 / 3.0},
    {"potrf", call_potrf, 1.0 / 3.0},
    {"gemmbatch", call_gemmbatch, 2.0 * POOL},
};
#define NKERNELS ((int)(sizeof kernels / sizeof kernels[0]))

/* count calls of kern dealt round robin over s streams, timed with events
 * on stream 0 after joining the others; the rate in *tflops. */
static int time_tiles(rate_ctx_t *r, const kernel_t *kern, int s, int count, double *tflops)
{
    cudaEvent_t e0, e1, done[MAX_STREAMS];
    CUDA_OK(cudaEventCreate(&e0));
    CUDA_OK(cudaEventCreate(&e1));
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaEventRecord(e0, r->stream[0]));
    for (int k = 1; k < s; k++) CUDA_OK(cudaStreamWaitEvent(r->stream[k], e0, 0));
    for (int i = 0; i < count; i++)
        if (kern->call(r, i % s, i % POOL) != 0) return 1;
    for (int k = 1; k < s; k++) {
        CUDA_OK(cudaEventCreate(&done[k]));
        CUDA_OK(cudaEventRecord(done[k], r->stream[k]));
        CUDA_OK(cudaStreamWaitEvent(r->stream[0], done[k], 0));
    }
    CUDA_OK(cudaEventRecord(e1, r->stream[0]));
    CUDA_OK(cudaEventSynchronize(e1));
    float ms = 0.0f;
    CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
    double nb = r->nb;
    *tflops = kern->flops_per_nb3 * nb * nb * nb * count / (ms * 1e-3) * 1e-12;
    for (int k = 1; k < s; k++) CUDA_OK(cudaEventDestroy(done[k]));
    CUDA_OK(cudaEventDestroy(e0));
    CUDA_OK(cudaEventDestroy(e1));
    return 0;
}

/* One n x n x n DGEMM (after one untimed call), its rate in *tflops. */
static int time_big(cublasHandle_t h, cudaStream_t st, int n, double *tflops)
{
    size_t bytes = (size_t)n * (size_t)n * sizeof(double);
    double *a = NULL, *b = NULL, *c = NULL;
    CUDA_OK(cudaMalloc((void **)&a, bytes));
    CUDA_OK(cudaMalloc((void **)&b, bytes));
    CUDA_OK(cudaMalloc((void **)&c, bytes));
    CUDA_OK(cudaMemsetAsync(a, 0, bytes, st));
    CUDA_OK(cudaMemsetAsync(b, 0, bytes, st));
    CUDA_OK(cudaMemsetAsync(c, 0, bytes, st));
    cudaEvent_t e0, e1;
    CUDA_OK(cudaEventCreate(&e0));
    CUDA_OK(cudaEventCreate(&e1));
    for (int rep = 0; rep < 2; rep++) {
        CUDA_OK(cudaEventRecord(e0, st));
        BLAS_OK(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, n, n, n, &one, a, n, b, n, &one, c, n));
        CUDA_OK(cudaEventRecord(e1, st));
    }
    CUDA_OK(cudaEventSynchronize(e1));
    float ms = 0.0f;
    CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
    *tflops = 2.0 * (double)n * n * n / (ms * 1e-3) * 1e-12;
    CUDA_OK(cudaEventDestroy(e0));
    CUDA_OK(cudaEventDestroy(e1));
    CUDA_OK(cudaFree(a));
    CUDA_OK(cudaFree(b));
    CUDA_OK(cudaFree(c));
    return 0;
}

/* The large DGEMM timed call by call for the given seconds (sustained
 * load: clocks and power settle), one line a call. */
static int time_sustained(cublasHandle_t h, cudaStream_t st, int n, double seconds)
{
    double tf = 0.0, t = 0.0;
    while (t < seconds) {
        if (time_big(h, st, n, &tf) != 0) return 1;
        t += 2.0 * (double)n * n * n / (tf * 1e12) * 2.0; /* both calls of time_big */
        printf("RESULT sustained t=%.2f n=%d tflops=%.2f\n", t, n, tf);
        fflush(stdout);
    }
    return 0;
}

/* Tiles to the identity: zeros, then ones copied onto the diagonal (a
 * pitch of nb + 1 doubles walks it). */
static int set_identity(double *tile, int nb, const double *ones)
{
    CUDA_OK(cudaMemset(tile, 0, (size_t)nb * (size_t)nb * sizeof(double)));
    CUDA_OK(cudaMemcpy2D(tile, ((size_t)nb + 1) * sizeof(double), ones, sizeof(double),
                         sizeof(double), (size_t)nb, cudaMemcpyHostToDevice));
    return 0;
}

/* Streams, handles, potrf workspaces and the tile pool. */
static int setup(rate_ctx_t *r, int nb, int smax)
{
    memset(r, 0, sizeof *r);
    r->nb = nb;
    for (int k = 0; k < smax; k++) {
        CUDA_OK(cudaStreamCreateWithFlags(&r->stream[k], cudaStreamNonBlocking));
        BLAS_OK(cublasCreate(&r->blas[k]));
        BLAS_OK(cublasSetStream(r->blas[k], r->stream[k]));
        SOLVER_OK(cusolverDnCreate(&r->solver[k]));
        SOLVER_OK(cusolverDnSetStream(r->solver[k], r->stream[k]));
    }
    double *ones = malloc((size_t)nb * sizeof *ones);
    if (ones == NULL) return 1;
    for (int i = 0; i < nb; i++) ones[i] = 1.0;
    for (int i = 0; i < 3 * POOL; i++) {
        CUDA_OK(cudaMalloc((void **)&r->tile[i], (size_t)nb * (size_t)nb * sizeof(double)));
        if (set_identity(r->tile[i], nb, ones) != 0) return 1;
    }
    free(ones);
    SOLVER_OK(cusolverDnDpotrf_bufferSize(r->solver[0], CUBLAS_FILL_MODE_LOWER, nb, r->tile[0], nb,
                                          &r->lwork));
    size_t tri_dev = 0, tri_host = 0;
    SOLVER_OK(cusolverDnXtrtri_bufferSize(r->solver[0], CUBLAS_FILL_MODE_LOWER,
                                          CUBLAS_DIAG_NON_UNIT, nb, CUDA_R_64F, r->tile[0], nb,
                                          &tri_dev, &tri_host));
    if (tri_host != 0) {
        fprintf(stderr, PEER_NAME ": cusolverDnXtrtri wants %zu bytes of host workspace\n",
                tri_host);
        return 1;
    }
    r->work_bytes = (size_t)r->lwork * sizeof(double);
    if (tri_dev > r->work_bytes) r->work_bytes = tri_dev;
    for (int k = 0; k < smax; k++) {
        CUDA_OK(cudaMalloc((void **)&r->work[k], r->work_bytes + sizeof(double)));
        CUDA_OK(cudaMalloc((void **)&r->scratch[k], (size_t)nb * (size_t)nb * sizeof(double)));
    }
    CUDA_OK(cudaMalloc((void **)&r->batch, 3 * POOL * sizeof(double *)));
    CUDA_OK(cudaMemcpy(r->batch, r->tile, 3 * POOL * sizeof(double *), cudaMemcpyHostToDevice));
    return 0;
}

/* The kernels named in a comma list, as flags in on[]; -1 on an unknown. */
static int parse_kernels(char *list, int on[NKERNELS])
{
    memset(on, 0, NKERNELS * sizeof on[0]);
    for (char *tok = strtok(list, ","); tok != NULL; tok = strtok(NULL, ",")) {
        int i = 0;
        while (i < NKERNELS && strcmp(kernels[i].name, tok) != 0) i++;
        if (i == NKERNELS) {
            fprintf(stderr, PEER_NAME ": unknown kernel '%s'\n", tok);
            return -1;
        }
        on[i] = 1;
    }
    return 0;
}

static int parse(int argc, char **argv, int *nb, int *big, int *smax, int *count, int on[NKERNELS],
                 double *sustain)
{
    for (int i = 0; i < NKERNELS; i++) on[i] = 1;
    for (int i = 1; i + 1 < argc; i += 2) {
        int v = atoi(argv[i + 1]);
        if (strcmp(argv[i], "-t") == 0)
            *nb = v;
        else if (strcmp(argv[i], "-n") == 0)
            *big = v;
        else if (strcmp(argv[i], "-s") == 0)
            *smax = v;
        else if (strcmp(argv[i], "-c") == 0)
            *count = v;
        else if (strcmp(argv[i], "-d") == 0)
            *sustain = atof(argv[i + 1]);
        else if (strcmp(argv[i], "-k") == 0) {
            if (parse_kernels(argv[i + 1], on) != 0) return -1;
        } else
            return -1;
    }
    if (argc % 2 == 0 || *nb < 2 || *big < 1 || *smax < 1 || *smax > MAX_STREAMS || *count < 1 ||
        *sustain < 0.0)
        return -1;
    return 0;
}

int main(int argc, char **argv)
{
    int nb = 2048, big = 16384, smax = 6, count = 240, on[NKERNELS];
    double sustain = 0.0;
    if (parse(argc, argv, &nb, &big, &smax, &count, on, &sustain) != 0) {
        fprintf(stderr,
                "usage: %s [-t nb] [-n big] [-s maxstreams (1..%d)] [-c count] [-d seconds] "
                "[-k gemm,syrk,syrkx,syrk2,trsm,trmm,trsmgemm,trtri,potrf,gemmbatch]\n",
                argv[0], MAX_STREAMS);
        return 2;
    }
    rate_ctx_t r;
    if (setup(&r, nb, smax) != 0) return 1;
    if (sustain > 0.0) return time_sustained(r.blas[0], r.stream[0], big, sustain);
    double tf = 0.0;
    for (int i = 0; i < NKERNELS; i++) {
        if (!on[i]) continue;
        if (time_tiles(&r, &kernels[i], 1, POOL, &tf) != 0) return 1; /* warm-up */
        for (int s = 1; s <= smax; s++) {
            if (time_tiles(&r, &kernels[i], s, count, &tf) != 0) return 1;
            printf("RESULT %s tiles nb=%d streams=%d tflops=%.2f\n", kernels[i].name, nb, s, tf);
            fflush(stdout);
        }
    }
    if (time_big(r.blas[0], r.stream[0], big, &tf) != 0) return 1;
    printf("RESULT dgemm big n=%d tflops=%.2f\n", big, tf);
    return 0;
}
