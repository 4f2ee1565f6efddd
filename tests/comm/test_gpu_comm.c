/* GPU-aware communication on emulated devices, every transport in turn:
 * A (a user LAPACK-layout matrix, strided) is filled by tasks on each
 * rank's devices, then C(i,j) += A(i,k) A(j,k)^T reads tiles produced on
 * devices of other ranks. The same run is repeated with gpu-aware off and
 * each transport forced; the checksums must be bit-identical and the
 * counters must show the path taken:
 *   off:    no byte leaves from or lands in device memory;
 *   mpi:    device to device through MPI, nothing staged;
 *   ipc:    pulled from the peer's mapped zone, nothing staged;
 *   staged: through host bounce buffers;
 *   split:  auto with comm_node_split=rank (every rank its own node): no
 *           ipc; emu goes by mpi, CUDA by nccl when built, else staged;
 *   nccl:   CUDA: by nccl, nothing staged; emu: nccl cannot reach it and
 *           the choice falls back (a warning), nothing by nccl.
 * Usage: test_gpu_comm <nb> (tile size: 40 takes the eager path for
 * host tiles, 100 the rendezvous). */
#include <cblas.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weft/weft.h"

#ifdef WEFT_TEST_CUDA
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#endif

static int fill_body(weft_task_t *t)
{
    double *a = weft_task_ptr(t, 0);
    int64_t ld = weft_task_ld(t, 0);
    int ij[2];
    weft_task_value(t, 0, ij);
    for (int j = 0; j < weft_task_cols(t, 0); j++)
        for (int i = 0; i < weft_task_rows(t, 0); i++)
            a[i + j * ld] = (double)((ij[0] * 131 + ij[1] * 71 + i * 7 + j * 3) % 97) / 97.0 - 0.5;
    return 0;
}

static int zero_body(weft_task_t *t)
{
    double *c = weft_task_ptr(t, 0);
    int64_t ld = weft_task_ld(t, 0);
    for (int j = 0; j < weft_task_cols(t, 0); j++)
        memset(c + j * ld, 0, sizeof(double) * (size_t)weft_task_rows(t, 0));
    return 0;
}

static int gemm_body(weft_task_t *t)
{
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, weft_task_rows(t, 0), weft_task_cols(t, 0),
                weft_task_cols(t, 1), 1.0, weft_task_ptr(t, 1), (int)weft_task_ld(t, 1),
                weft_task_ptr(t, 2), (int)weft_task_ld(t, 2), 1.0, weft_task_ptr(t, 0),
                (int)weft_task_ld(t, 0));
    return 0;
}

#ifdef WEFT_TEST_CUDA
/* The same kernels on a GPU: fill computed on the host and copied in on
 * the task's stream (the tile is small), zero by cudaMemset2DAsync, gemm by
 * cuBLAS. */
static int fill_cuda(weft_task_t *t)
{
    int rows = weft_task_rows(t, 0), cols = weft_task_cols(t, 0), ij[2];
    weft_task_value(t, 0, ij);
    double *h = malloc(sizeof *h * (size_t)rows * (size_t)cols);
    if (!h) return -1;
    for (int j = 0; j < cols; j++)
        for (int i = 0; i < rows; i++)
            h[i + j * rows] =
                (double)((ij[0] * 131 + ij[1] * 71 + i * 7 + j * 3) % 97) / 97.0 - 0.5;
    cudaStream_t s = weft_task_stream(t);
    int rc = cudaMemcpy2DAsync(weft_task_ptr(t, 0), sizeof(double) * (size_t)weft_task_ld(t, 0), h,
                               sizeof(double) * (size_t)rows, sizeof(double) * (size_t)rows, cols,
                               cudaMemcpyHostToDevice, s) == cudaSuccess &&
                     cudaStreamSynchronize(s) == cudaSuccess
                 ? 0
                 : -1;
    free(h);
    return rc;
}

static int zero_cuda(weft_task_t *t)
{
    return cudaMemset2DAsync(weft_task_ptr(t, 0), sizeof(double) * (size_t)weft_task_ld(t, 0), 0,
                             sizeof(double) * (size_t)weft_task_rows(t, 0), weft_task_cols(t, 0),
                             weft_task_stream(t)) == cudaSuccess
               ? 0
               : -1;
}

static int gemm_cuda(weft_task_t *t)
{
    const double one = 1.0;
    return cublasDgemm(weft_task_blas_handle(t), CUBLAS_OP_N, CUBLAS_OP_T, weft_task_rows(t, 0),
                       weft_task_cols(t, 0), weft_task_cols(t, 1), &one, weft_task_ptr(t, 1),
                       (int)weft_task_ld(t, 1), weft_task_ptr(t, 2), (int)weft_task_ld(t, 2), &one,
                       weft_task_ptr(t, 0), (int)weft_task_ld(t, 0)) == CUBLAS_STATUS_SUCCESS
               ? 0
               : -1;
}
#define CUDA_BODY(fn) fn
#else
#define CUDA_BODY(fn) NULL
#endif

static const weft_task_class_t fill_cls = {
    .name = "fill", .body = {[WEFT_DEV_CPU] = fill_body, [WEFT_DEV_CUDA] = CUDA_BODY(fill_cuda)}};
static const weft_task_class_t zero_cls = {
    .name = "zero", .body = {[WEFT_DEV_CPU] = zero_body, [WEFT_DEV_CUDA] = CUDA_BODY(zero_cuda)}};
static const weft_task_class_t gemm_cls = {
    .name = "gemm", .body = {[WEFT_DEV_CPU] = gemm_body, [WEFT_DEV_CUDA] = CUDA_BODY(gemm_cuda)}};

typedef struct {
    const char *name, *aware, *transport, *split;
} mode_t_;

static int on_cuda;

static uint64_t checksum(weft_matrix_t *C)
{
    uint64_t h = 1469598103934665603ULL;
    for (int j = 0; j < weft_matrix_nt(C); j++)
        for (int i = 0; i < weft_matrix_mt(C); i++) {
            int64_t ld;
            const double *c = weft_data_host_ptr(weft_tile(C, i, j), &ld);
            if (!c) continue; /* not this rank's */
            for (int jj = 0; jj < weft_matrix_tile_cols(C, j); jj++)
                for (int ii = 0; ii < weft_matrix_tile_rows(C, i); ii++) {
                    uint64_t bits;
                    memcpy(&bits, &c[ii + jj * ld], sizeof bits);
                    h = (h ^ bits) * 1099511628211ULL;
                }
        }
    return h;
}

static long evictions;

/* Evictions of all devices of the rank (GPU-only copies under a tight
 * memory limit must be written back, never lost). */
static long count_evictions(weft_context_t *ctx)
{
    long n = 0;
    for (int d = 1; d <= weft_ndevices(ctx); d++) {
        weft_device_counters_t dc;
        if (weft_device_counters_get(ctx, d, &dc) == 0) n += dc.evictions;
    }
    return n;
}

static int run(const mode_t_ *mode, int nb, uint64_t *sum, weft_stats_t *st)
{
    setenv("WEFT_COMM_GPU_AWARE", mode->aware, 1);
    setenv("WEFT_COMM_TRANSPORT", mode->transport, 1);
    setenv("WEFT_COMM_NODE_SPLIT", mode->split, 1);
    int argc = 1;
    char *args[] = {"test_gpu_comm", NULL}, **argv = args;
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 1;
    int Q = weft_nranks(ctx), n = 4 * nb + 13, nt;
    int64_t lda = n + 7;
    double *user = calloc((size_t)lda * (size_t)n, sizeof *user);
    weft_matrix_t *A = weft_matrix_wrap(ctx, WEFT_DOUBLE, user, lda, n, n, nb, nb, 1, Q);
    weft_matrix_t *C = weft_matrix_new(ctx, WEFT_DOUBLE, n, n, nb, nb, 1, Q);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "gpu-comm");
    int rc = 0;
    nt = weft_matrix_nt(A);
    for (int j = 0; j < nt; j++)
        for (int i = 0; i < nt; i++) {
            int ij[2] = {i, j};
            rc |= weft_insert_task(tp, &fill_cls, WEFT_W | WEFT_AFFINITY, weft_tile(A, i, j),
                                   WEFT_VALUE, ij, sizeof ij, 0);
            rc |= weft_insert_task(tp, &zero_cls, WEFT_W | WEFT_AFFINITY, weft_tile(C, i, j), 0);
        }
    for (int k = 0; k < nt; k++)
        for (int j = 0; j < nt; j++)
            for (int i = 0; i < nt; i++)
                rc |= weft_insert_task(tp, &gemm_cls, WEFT_RW | WEFT_AFFINITY, weft_tile(C, i, j),
                                       WEFT_R, weft_tile(A, i, k), WEFT_R, weft_tile(A, j, k), 0);
    rc |= weft_taskpool_wait(tp);
    *sum = checksum(C);
    rc |= weft_stats_get(ctx, st);
    evictions = count_evictions(ctx);
    weft_taskpool_free(tp);
    weft_matrix_free(A);
    weft_matrix_free(C);
    rc |= weft_fini(ctx);
    free(user);
    return rc != 0;
}

/* Every byte received is counted under one transport, eager tiles (inline
 * in their activation) under host: they were counted under none. */
static int counted_once(const weft_stats_t *s)
{
    return s->net_bytes_host + s->net_bytes_mpi + s->net_bytes_ipc + s->net_bytes_staged_transport +
               s->net_bytes_nccl ==
           s->net_bytes_received;
}

static int check_path(const mode_t_ *m, const weft_stats_t *s)
{
    if (strcmp(m->aware, "off") == 0)
        return s->net_bytes_from_device == 0 && s->net_bytes_into_device == 0;
    int moved = s->net_bytes_from_device > 0 && s->net_bytes_into_device > 0;
    if (strcmp(m->transport, "mpi") == 0)
        return moved && s->net_bytes_staged == 0 && s->net_bytes_mpi > 0;
    if (strcmp(m->transport, "ipc") == 0)
        return moved && s->net_bytes_staged == 0 && s->net_bytes_ipc > 0;
    if (strcmp(m->transport, "staged") == 0) return moved && s->net_bytes_staged > 0;
#ifdef WEFT_TEST_NCCL
    int nccl_built = 1;
#else
    int nccl_built = 0;
#endif
    if (strcmp(m->transport, "nccl") == 0)
        return on_cuda ? moved && s->net_bytes_nccl > 0 && s->net_bytes_staged == 0
                       : moved && s->net_bytes_nccl == 0;
    if (strcmp(m->split, "rank") == 0) {
        int ok = moved && s->net_bytes_ipc == 0;
        if (!on_cuda) return ok && s->net_bytes_mpi > 0;
        return ok && (nccl_built ? s->net_bytes_nccl > 0 : s->net_bytes_staged > 0);
    }
    return moved && s->net_bytes_staged == 0; /* auto: a transport exists on one node */
}

int main(int argc, char **argv)
{
    int provided, nb = argc > 1 ? atoi(argv[1]) : 100;
    /* Under a tight memory limit copies are evicted to host before they are
     * sent, so which path a byte takes is not fixed: check results only. */
    int check_paths = !(argc > 2 && strcmp(argv[2], "evict") == 0);
    /* The test owns MPI so that several weft contexts can run in turn. */
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (!getenv("WEFT_DEVICE_EMU_ENABLED")) setenv("WEFT_DEVICE_EMU_ENABLED", "2", 1);
    static const mode_t_ modes[] = {
        {"off", "off", "auto", "host"},     {"auto", "on", "auto", "host"},
        {"mpi", "on", "mpi", "host"},       {"ipc", "on", "ipc", "host"},
        {"staged", "on", "staged", "host"}, {"split", "on", "auto", "rank"},
        {"nccl", "on", "nccl", "host"}};
    uint64_t ref = 0;
    int bad = 0;
    /* On CUDA, MPI reads device memory only when it is GPU-aware. */
    const char *cuda = getenv("WEFT_DEVICE_CUDA_ENABLED");
    const char *mpidev = getenv("WEFT_COMM_MPI_DEVICE");
    on_cuda = cuda && atoi(cuda) != 0;
    int skip_mpi = on_cuda && !(mpidev && strcmp(mpidev, "yes") == 0);
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        if (skip_mpi && strcmp(modes[i].name, "mpi") == 0) continue;
        uint64_t sum = 0;
        weft_stats_t st = {0};
        int failed = run(&modes[i], nb, &sum, &st);
        if (i == 0) ref = sum;
        int path = (!check_paths || check_path(&modes[i], &st)) && counted_once(&st);
        printf("rank %d nb %d %-6s checksum %016llx from-device %lld into-device %lld staged %lld "
               "mpi %lld ipc %lld staged-transport %lld nccl %lld host %lld evictions %ld: %s\n",
               rank, nb, modes[i].name, (unsigned long long)sum,
               (long long)st.net_bytes_from_device, (long long)st.net_bytes_into_device,
               (long long)st.net_bytes_staged, (long long)st.net_bytes_mpi,
               (long long)st.net_bytes_ipc, (long long)st.net_bytes_staged_transport,
               (long long)st.net_bytes_nccl, (long long)st.net_bytes_host, evictions,
               !failed && sum == ref && path ? "ok" : "WRONG");
        bad |= failed || sum != ref || !path;
    }
    printf("test_gpu_comm rank %d: %s\n", rank, bad ? "FAILED" : "PASSED");
    MPI_Finalize();
    return bad;
}
