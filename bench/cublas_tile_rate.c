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
 *   -r  1: random tiles and matrices instead of the identity and zeros
 *       (the power a GEMM draws, and with it the clock, depends on the
 *       data: zeros flatter the rate)
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
 *       trsmid    the inverted factor as a TRSM of the identity, as
 *                 weft-potrf's trtri task does it (nb^3 / 3 useful)
 *       potrf     cusolverDnDpotrf, lower         (nb^3 / 3)
 *       gemmbatch cublasDgemmBatched, 16 tile GEMMs a call (2 nb^3 each)
 * The rate printed counts the flops the Cholesky needs from that step (the
 * column above), so the lines of one step compare directly.
 *
 * Each call reads and writes its own tiles (a pool of 3 x 16 tiles cycled
 * through), so caches see a realistic working set (set_pools says what
 * they hold). One line per measurement ("random" with -r 1):
 *   RESULT <kernel> tiles nb=<nb> [random] streams=<s> tflops=<r>
 *   RESULT dgemm big n=<n> [random] tflops=<r>
 *   RESULT sustained t=<s since start> n=<n> [random] tflops=<r>   (with -d)
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
    BLAS_OK(cublasDsyrkx(r->blas[k], CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, nb, nb, &mone, r->tile[p],
                         nb, r->tile[p], nb, &one, r->tile[2 * POOL + p], nb));
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
    BLAS_OK(cublasDsyrk(r->blas[k], CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, rest, nb, &mone, a + h, nb,
                        &one, c + h + (size_t)h * nb, nb));
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
                               CUDA_R_64F, r->tile[2 * POOL + p], nb, r->work[k] + 1, r->work_bytes,
                               NULL, 0, (int *)r->work[k]));
    return 0;
}

/* X := L^-1 as weft-potrf's trtri body: the identity (cleared, then the
 * bytes of 1.0 set down the diagonal by 2D memsets), then a TRSM. */
static int call_trsmid(rate_ctx_t *r, int k, int p)
{
    int nb = r->nb;
    double *x = r->tile[2 * POOL + p];
    unsigned char bytes[sizeof one];
    memcpy(bytes, &one, sizeof one);
    size_t col = (size_t)nb * sizeof(double);
    CUDA_OK(cudaMemset2DAsync(x, col, 0, col, nb, r->stream[k]));
    for (size_t i = 0; i < sizeof one; i++)
        if (bytes[i] != 0)
            CUDA_OK(cudaMemset2DAsync((unsigned char *)x + i, col + sizeof(double), bytes[i], 1, nb,
                                      r->stream[k]));
    BLAS_OK(cublasDtrsm(r->blas[k], CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,
                        CUBLAS_DIAG_NON_UNIT, nb, nb, &one, r->tile[p], nb, x, nb));
    return 0;
}

/* All POOL tile GEMMs of the pool in one batched call (p unused). */
static int call_gemmbatch(rate_ctx_t *r, int k, int p)
{
    (void)p;
    int nb = r->nb;
    BLAS_OK(cublasDgemmBatched(
        r->blas[k], CUBLAS_OP_N, CUBLAS_OP_T, nb, nb, nb, &mone, (const double *const *)r->batch,
        nb, (const double *const *)r->batch + POOL, nb, &one, r->batch + 2 * POOL, nb, POOL));
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
    {"trsmid", call_trsmid, 1.0 / 3.0},
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

/* Random doubles in [-1, 1) from a 64-bit xorshift: reproducible, no
 * library. */
static double next_random(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return (double)(*x >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

/* count doubles of device memory: zeros, or (-r) random values copied up
 * in chunks of one random host block. */
static int fill_big(double *dev, size_t count, int random, cudaStream_t st)
{
    if (!random) {
        CUDA_OK(cudaMemsetAsync(dev, 0, count * sizeof(double), st));
        return 0;
    }
    size_t chunk = (size_t)8 << 20;
    double *host = malloc(chunk * sizeof *host);
    if (host == NULL) return 1;
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < chunk; i++) host[i] = next_random(&x);
    for (size_t at = 0; at < count; at += chunk) {
        size_t n = count - at < chunk ? count - at : chunk;
        if (cudaMemcpy(dev + at, host, n * sizeof(double), cudaMemcpyHostToDevice) != cudaSuccess) {
            free(host);
            fprintf(stderr, PEER_NAME ": filling the large matrices failed\n");
            return 1;
        }
    }
    free(host);
    return 0;
}

/* The large DGEMM: n x n matrices a, b, c, filled once (zeros or -r). */
typedef struct big {
    double *a, *b, *c;
    int n;
} big_t;

static int big_setup(big_t *g, int n, int random, cudaStream_t st)
{
    size_t count = (size_t)n * (size_t)n;
    memset(g, 0, sizeof *g);
    g->n = n;
    CUDA_OK(cudaMalloc((void **)&g->a, count * sizeof(double)));
    CUDA_OK(cudaMalloc((void **)&g->b, count * sizeof(double)));
    CUDA_OK(cudaMalloc((void **)&g->c, count * sizeof(double)));
    if (fill_big(g->a, count, random, st) != 0 || fill_big(g->b, count, random, st) != 0 ||
        fill_big(g->c, count, 0, st) != 0)
        return 1;
    CUDA_OK(cudaStreamSynchronize(st));
    return 0;
}

static void big_free(big_t *g)
{
    cudaFree(g->a);
    cudaFree(g->b);
    cudaFree(g->c);
}

/* One timed n x n x n DGEMM, its rate in *tflops. */
static int big_time(const big_t *g, cublasHandle_t h, cudaStream_t st, double *tflops)
{
    int n = g->n;
    cudaEvent_t e0, e1;
    CUDA_OK(cudaEventCreate(&e0));
    CUDA_OK(cudaEventCreate(&e1));
    CUDA_OK(cudaEventRecord(e0, st));
    BLAS_OK(
        cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, n, n, n, &one, g->a, n, g->b, n, &one, g->c, n));
    CUDA_OK(cudaEventRecord(e1, st));
    CUDA_OK(cudaEventSynchronize(e1));
    float ms = 0.0f;
    CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
    *tflops = 2.0 * (double)n * n * n / (ms * 1e-3) * 1e-12;
    CUDA_OK(cudaEventDestroy(e0));
    CUDA_OK(cudaEventDestroy(e1));
    return 0;
}

/* The large DGEMM: one untimed call, then timed calls, one line each, for
 * `seconds` (0: one timed call; longer runs show whether clocks and power
 * hold the rate under sustained load). */
static int time_big(cublasHandle_t h, cudaStream_t st, int n, int random, double seconds)
{
    big_t g;
    double tf = 0.0, t = 0.0;
    if (big_setup(&g, n, random, st) != 0 || big_time(&g, h, st, &tf) != 0) return 1;
    do {
        if (big_time(&g, h, st, &tf) != 0) return 1;
        t += 2.0 * (double)n * n * n / (tf * 1e12);
        if (seconds > 0.0)
            printf("RESULT sustained t=%.2f n=%d%s tflops=%.2f\n", t, n, random ? " random" : "",
                   tf);
        else
            printf("RESULT dgemm big n=%d%s tflops=%.2f\n", n, random ? " random" : "", tf);
        fflush(stdout);
    } while (t < seconds);
    big_free(&g);
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

/* The pools' starting values: A and B tiles the identity, or (-r) random
 * values with nb added down the diagonal (well conditioned for the TRSMs,
 * which read A as a factor); C tiles the identity, set again before each
 * kernel (POTRF and TRTRI need them positive definite / triangular). */
static int set_pools(rate_ctx_t *r, int random, int c_only)
{
    int nb = r->nb;
    size_t count = (size_t)nb * (size_t)nb;
    double *host = malloc(count * sizeof *host), *ones = malloc((size_t)nb * sizeof *ones);
    int rc = host == NULL || ones == NULL;
    for (int i = 0; i < nb && !rc; i++) ones[i] = 1.0;
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int i = c_only ? 2 * POOL : 0; i < 3 * POOL && !rc; i++) {
        if (!random || i >= 2 * POOL) {
            rc = set_identity(r->tile[i], nb, ones);
            continue;
        }
        for (size_t e = 0; e < count; e++) host[e] = next_random(&x);
        for (int d = 0; d < nb; d++) host[(size_t)d * nb + d] += nb;
        rc = cudaMemcpy(r->tile[i], host, count * sizeof(double), cudaMemcpyHostToDevice) !=
             cudaSuccess;
    }
    free(host);
    free(ones);
    if (rc) fprintf(stderr, PEER_NAME ": setting the tile pools failed\n");
    return rc;
}

/* Streams, handles, potrf workspaces and the tile pool. */
static int setup(rate_ctx_t *r, int nb, int smax, int random)
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
    for (int i = 0; i < 3 * POOL; i++)
        CUDA_OK(cudaMalloc((void **)&r->tile[i], (size_t)nb * (size_t)nb * sizeof(double)));
    if (set_pools(r, random, 0) != 0) return 1;
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

typedef struct rate_opts {
    int nb, big, smax, count, random, on[NKERNELS];
    double sustain;
} rate_opts_t;

static int parse(int argc, char **argv, rate_opts_t *o)
{
    *o = (rate_opts_t){.nb = 2048, .big = 16384, .smax = 6, .count = 240};
    for (int i = 0; i < NKERNELS; i++) o->on[i] = 1;
    for (int i = 1; i + 1 < argc; i += 2) {
        int v = atoi(argv[i + 1]);
        if (strcmp(argv[i], "-t") == 0)
            o->nb = v;
        else if (strcmp(argv[i], "-n") == 0)
            o->big = v;
        else if (strcmp(argv[i], "-s") == 0)
            o->smax = v;
        else if (strcmp(argv[i], "-c") == 0)
            o->count = v;
        else if (strcmp(argv[i], "-r") == 0)
            o->random = v;
        else if (strcmp(argv[i], "-d") == 0)
            o->sustain = atof(argv[i + 1]);
        else if (strcmp(argv[i], "-k") == 0) {
            if (parse_kernels(argv[i + 1], o->on) != 0) return -1;
        } else
            return -1;
    }
    if (argc % 2 == 0 || o->nb < 2 || o->big < 1 || o->smax < 1 || o->smax > MAX_STREAMS ||
        o->count < 1 || o->sustain < 0.0 || o->random < 0 || o->random > 1)
        return -1;
    return 0;
}

int main(int argc, char **argv)
{
    rate_opts_t o;
    if (parse(argc, argv, &o) != 0) {
        fprintf(stderr,
                "usage: %s [-t nb] [-n big] [-s maxstreams (1..%d)] [-c count] [-r 0|1] "
                "[-d seconds] "
                "[-k gemm,syrk,syrkx,syrk2,trsm,trmm,trsmgemm,trtri,trsmid,potrf,gemmbatch]\n",
                argv[0], MAX_STREAMS);
        return 2;
    }
    rate_ctx_t r;
    if (setup(&r, o.nb, o.smax, o.random) != 0) return 1;
    if (o.sustain > 0.0) return time_big(r.blas[0], r.stream[0], o.big, o.random, o.sustain);
    double tf = 0.0;
    const char *data = o.random ? " random" : "";
    for (int i = 0; i < NKERNELS; i++) {
        if (!o.on[i]) continue;
        if (set_pools(&r, o.random, 1) != 0) return 1;
        if (time_tiles(&r, &kernels[i], 1, POOL, &tf) != 0) return 1; /* warm-up */
        for (int s = 1; s <= o.smax; s++) {
            if (time_tiles(&r, &kernels[i], s, o.count, &tf) != 0) return 1;
            printf("RESULT %s tiles nb=%d%s streams=%d tflops=%.2f\n", kernels[i].name, o.nb, data,
                   s, tf);
            fflush(stdout);
        }
    }
    return time_big(r.blas[0], r.stream[0], o.big, o.random, 0.0);
}
