/* cusolver_potrf: the peer of weft-potrf -g 1, cusolverDnDpotrf on one GPU.
 *
 * Usage: cusolver_potrf [-N n] [--seed s] [--nruns r] [--device d]
 *
 * The matrix is the one weft-potrf factorizes: element (i,j) a hash of
 * (seed, max(i,j), min(i,j)) in [-0.5, 0.5), plus N on the diagonal
 * (diagonally dominant, hence SPD); the generator is apps/potrf_matrix.h,
 * shared with weft-potrf. Lower Cholesky,
 * column-major, lda = N, generated once on the host and copied once to the
 * GPU (a pristine copy there, copied device to device before each run).
 * Timed with CUDA events around cusolverDnDpotrf alone (the matrix already
 * in device memory, as weft-potrf's timing starts with its tiles on the
 * devices). One line a run in weft-potrf's format:
 *   [****] TIME(s) <t> : cusolverDnDpotrf N= <n> : <gflops> gflops
 * with gflops = N^3/3 / t, then one line with the host-device copies of the
 * matrix (pageable memory) and the best figure counting them too. Exit 1 on
 * a CUDA error or info != 0.
 *
 * Build: gcc -std=c11 -O2 -I<cuda>/include cusolver_potrf.c -L<cuda>/lib64
 *        -lcusolver -lcudart (or nvcc -O2 cusolver_potrf.c -lcusolver). */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <cusolverDn.h>

#include "../apps/potrf_matrix.h" /* the matrix weft-potrf factorizes */

#define CUDA_OK(call)                                                                              \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "cusolver_potrf: %s failed: %s\n", #call, cudaGetErrorString(e_));     \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

#define SOLVER_OK(call)                                                                            \
    do {                                                                                           \
        cusolverStatus_t s_ = (call);                                                              \
        if (s_ != CUSOLVER_STATUS_SUCCESS) {                                                       \
            fprintf(stderr, "cusolver_potrf: %s failed: status %d\n", #call, (int)s_);             \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

/* The device state of the timed runs. */
typedef struct potrf_dev {
    cusolverDnHandle_t solver;
    cudaStream_t stream;
    double *d, *d0, *work; /* matrix, its pristine copy, cuSOLVER workspace */
    int *dinfo;
    int lwork;
    cudaEvent_t e1, e2;
} potrf_dev_t;

/* nruns factorizations of a fresh copy of d0, each timed with events
 * around cusolverDnDpotrf alone; the best time in *best. */
static int timed_runs(const potrf_dev_t *p, int64_t n, size_t bytes, int nruns, double *best)
{
    double nn = (double)n, flops = nn * nn * nn / 3.0;
    for (int r = 0; r < nruns; r++) {
        CUDA_OK(cudaMemcpyAsync(p->d, p->d0, bytes, cudaMemcpyDeviceToDevice, p->stream));
        CUDA_OK(cudaEventRecord(p->e1, p->stream));
        SOLVER_OK(cusolverDnDpotrf(p->solver, CUBLAS_FILL_MODE_LOWER, (int)n, p->d, (int)n, p->work,
                                   p->lwork, p->dinfo));
        CUDA_OK(cudaEventRecord(p->e2, p->stream));
        int info = -1;
        CUDA_OK(cudaMemcpyAsync(&info, p->dinfo, sizeof info, cudaMemcpyDeviceToHost, p->stream));
        CUDA_OK(cudaStreamSynchronize(p->stream));
        if (info != 0) {
            fprintf(stderr, "cusolver_potrf: cusolverDnDpotrf info = %d\n", info);
            return 1;
        }
        float ms = 0.0f;
        CUDA_OK(cudaEventElapsedTime(&ms, p->e1, p->e2));
        double t = ms * 1e-3;
        if (t < *best) *best = t;
        printf("[****] TIME(s) %.6f : cusolverDnDpotrf N= %lld : %.2f gflops\n", t, (long long)n,
               flops / t * 1e-9);
        fflush(stdout);
    }
    return 0;
}

/* The test matrix in host memory, lower triangle only (dpotrf('L') never
 * reads the upper one); NULL after a message when memory is short. */
static double *host_matrix(int64_t n, uint64_t seed)
{
    size_t bytes = (size_t)n * (size_t)n * sizeof(double);
    double *h = malloc(bytes);
    if (h == NULL) {
        fprintf(stderr, "cusolver_potrf: cannot allocate %zu bytes of host memory\n", bytes);
        return NULL;
    }
    for (int64_t j = 0; j < n; j++) {
        for (int64_t i = 0; i < j; i++) h[i + j * n] = 0.0;
        for (int64_t i = j; i < n; i++) h[i + j * n] = potrf_elem(seed, n, i, j);
    }
    return h;
}

static int run(int64_t n, uint64_t seed, int nruns, int device)
{
    size_t bytes = (size_t)n * (size_t)n * sizeof(double);
    double *h = host_matrix(n, seed), *d = NULL, *d0 = NULL;
    if (h == NULL) return 1;
    CUDA_OK(cudaSetDevice(device));
    struct cudaDeviceProp prop;
    CUDA_OK(cudaGetDeviceProperties(&prop, device));
    cusolverDnHandle_t solver;
    cudaStream_t stream;
    SOLVER_OK(cusolverDnCreate(&solver));
    CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    SOLVER_OK(cusolverDnSetStream(solver, stream));
    CUDA_OK(cudaMalloc((void **)&d, bytes));
    CUDA_OK(cudaMalloc((void **)&d0, bytes));
    int lwork = 0, *dinfo = NULL;
    double *work = NULL;
    SOLVER_OK(
        cusolverDnDpotrf_bufferSize(solver, CUBLAS_FILL_MODE_LOWER, (int)n, d, (int)n, &lwork));
    CUDA_OK(cudaMalloc((void **)&work, (size_t)lwork * sizeof(double) + 256));
    CUDA_OK(cudaMalloc((void **)&dinfo, sizeof(int)));
    cudaEvent_t e0, e1, e2, e3;
    CUDA_OK(cudaEventCreate(&e0));
    CUDA_OK(cudaEventCreate(&e1));
    CUDA_OK(cudaEventCreate(&e2));
    CUDA_OK(cudaEventCreate(&e3));
    printf("cusolver_potrf: %s, N= %lld, lwork %d doubles\n", prop.name, (long long)n, lwork);
    CUDA_OK(cudaEventRecord(e0, stream));
    CUDA_OK(cudaMemcpyAsync(d0, h, bytes, cudaMemcpyHostToDevice, stream));
    CUDA_OK(cudaEventRecord(e1, stream));
    CUDA_OK(cudaStreamSynchronize(stream));
    float ms_h2d = 0.0f;
    CUDA_OK(cudaEventElapsedTime(&ms_h2d, e0, e1));
    double nn = (double)n, flops = nn * nn * nn / 3.0, best = 1e300;
    potrf_dev_t pd = {solver, stream, d, d0, work, dinfo, lwork, e1, e2};
    if (timed_runs(&pd, n, bytes, nruns, &best) != 0) return 1;
    CUDA_OK(cudaEventRecord(e2, stream));
    CUDA_OK(cudaMemcpyAsync(h, d, bytes, cudaMemcpyDeviceToHost, stream));
    CUDA_OK(cudaEventRecord(e3, stream));
    CUDA_OK(cudaStreamSynchronize(stream));
    float ms_d2h = 0.0f;
    CUDA_OK(cudaEventElapsedTime(&ms_d2h, e2, e3));
    double t_all = best + (ms_h2d + ms_d2h) * 1e-3;
    printf("cusolver_potrf: copies H2D %.3f s, D2H %.3f s (%.1f GB/s each way); best run with "
           "them: %.6f s, %.2f gflops\n",
           ms_h2d * 1e-3, ms_d2h * 1e-3, (double)bytes * 2e-6 / (ms_h2d + ms_d2h), t_all,
           flops / t_all * 1e-9);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaEventDestroy(e2);
    cudaEventDestroy(e3);
    cudaFree(dinfo);
    cudaFree(work);
    cudaFree(d);
    cudaFree(d0);
    cusolverDnDestroy(solver);
    cudaStreamDestroy(stream);
    free(h);
    return 0;
}

int main(int argc, char **argv)
{
    int64_t n = 8192;
    uint64_t seed = 42;
    int nruns = 1, device = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "-N") == 0)
            n = atoll(argv[i + 1]);
        else if (strcmp(argv[i], "--seed") == 0)
            seed = strtoull(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--nruns") == 0)
            nruns = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--device") == 0)
            device = atoi(argv[i + 1]);
        else
            n = -1;
    }
    if (n < 1 || n > 2147483647 || nruns < 1 || device < 0 || argc % 2 == 0) {
        fprintf(stderr, "usage: %s [-N n] [--seed s] [--nruns r] [--device d]\n", argv[0]);
        return 2;
    }
    return run(n, seed, nruns, device);
}
