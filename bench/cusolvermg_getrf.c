/* cusolvermg_getrf: the peer of weft-getrf -g G on one node, cusolverMgGetrf
 * (CUDA's multi-GPU dense solver, one process) on G GPUs, without pivoting
 * (the IPIV array NULL) unless --pivot is given.
 *
 * Usage: cusolvermg_getrf [-N n] [-T tile] [-G gpus] [--seed s] [--nruns r]
 *                         [--pivot]
 * (defaults N = 8192, T = 1024, G = 2, seed 42, 1 run).
 *
 * The matrix is the one weft-getrf factorizes (apps/lu_matrix.h, diagonally
 * dominant). cusolverMg takes it in a 1 x G grid of devices, 1-D column
 * block cyclic: global column block b (T columns) lives on device b % G as
 * its local block b / G, each device holding an N x (its columns) array,
 * column-major, lda = N. Each device's part is generated on the host (by
 * OpenMP threads) and copied to the device
 * once, into a pristine copy there when the device has room for the matrix
 * twice (restored device to device before each run), else uploaded from the
 * host again before each run; neither copy is timed.
 * Each run is timed with a wall clock around cusolverMgGetrf, which is
 * synchronous, from all devices idle to all devices idle. One line a run in
 * weft-getrf's format:
 *   [****] TIME(s) <t> : cusolverMgGetrf G= <g> T= <tile> N= <n> : <gflops> gflops
 * with gflops = 2 N^3 / 3 / t. Exit 1 on a CUDA or cuSOLVER error, info != 0
 * or bad arguments. (No residual check: info == 0 on this matrix and the
 * rate are what this peer is for; weft-getrf checks its own factor.)
 *
 * Build: gcc -std=c11 -O2 -fopenmp -I<cuda>/include cusolvermg_getrf.c
 *        -L<cuda>/lib64 -lcusolverMg -lcusolver -lcublas -lcudart -lm */
#define _POSIX_C_SOURCE 200809L

/* CUDA 13 marks all of cusolverMg deprecated (in favour of cusolverMp, a
 * multi-process library); it still ships, and it is the vendor's
 * one-process multi-GPU Cholesky, the peer this program measures. Without
 * this, every call is a deprecation warning, an error under -Werror. */
#define DISABLE_CUSOLVERMG_DEPRECATED

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>
#include <cusolverMg.h>

#include "../apps/lu_matrix.h" /* the matrix weft-getrf factorizes */
#define PEER_NAME "cusolvermg_getrf"
#include "peer_util.h" /* CUDA_OK, SOLVER_OK, parse_u64 */

#define MG_MAX_GPUS 64

/* The command line. */
typedef struct mg_opts {
    int64_t n, t;
    uint64_t seed;
    int g, nruns, pivot;
} mg_opts_t;

/* The matrix on the G devices and the solver's state. Every device holds
 * lcols columns: its share of the column blocks rounded up to the largest
 * share, whole tiles, as NVIDIA's samples allocate. */
typedef struct mg {
    int g, ids[MG_MAX_GPUS];
    int64_t n, t, lcols;
    uint64_t seed;
    double *h[MG_MAX_GPUS];  /* each device's columns, on the host */
    double *d[MG_MAX_GPUS];  /* the matrix factorized */
    double *d0[MG_MAX_GPUS]; /* its pristine copy; NULL: none, upload h */
    double *work[MG_MAX_GPUS];
    int *ipiv[MG_MAX_GPUS]; /* --pivot: the pivots of each device's columns */
    int pivot;
    int64_t lwork; /* doubles of workspace a device */
    cusolverMgHandle_t handle;
    cudaLibMgGrid_t grid;
    cudaLibMgMatrixDesc_t desc;
} mg_t;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Bytes of one device's part. */
static size_t local_bytes(const mg_t *m)
{
    return (size_t)m->n * (size_t)m->lcols * sizeof(double);
}

/* Device p's part of the matrix into m->h[p]: local column lc is column
 * lc % T of local block lc / T, that is of global block (lc / T) G + p.
 * Columns past N (the end of the last tile, a device with one block fewer)
 * are zeros. A column a thread: N^2/2 hashes over all the devices. */
static void mg_fill(const mg_t *m, int p)
{
    int64_t n = m->n, t = m->t;
    double *h = m->h[p];
#pragma omp parallel for schedule(dynamic, 16)
    for (int64_t lc = 0; lc < m->lcols; lc++) {
        int64_t j = ((lc / t) * m->g + p) * t + lc % t; /* its global column */
        double *c = h + lc * n;
        for (int64_t i = 0; i < n; i++) c[i] = j < n ? lu_elem(m->seed, n, i, j) : 0.0;
    }
}

/* The host copies of all G parts; 1 after a message when memory is short. */
static int mg_host(mg_t *m)
{
    for (int p = 0; p < m->g; p++) {
        m->h[p] = malloc(local_bytes(m));
        if (m->h[p] == NULL) {
            fprintf(stderr, "cusolvermg_getrf: cannot allocate %zu bytes of host memory\n",
                    local_bytes(m));
            return 1;
        }
        mg_fill(m, p);
    }
    return 0;
}

/* Peer access between every pair of the G devices, so that cusolverMg's
 * transfers go device to device; a pair without it is reported, and left
 * to whatever path the library takes then. */
static int mg_peer(const mg_t *m)
{
    for (int p = 0; p < m->g; p++) {
        CUDA_OK(cudaSetDevice(m->ids[p]));
        for (int q = 0; q < m->g; q++) {
            int ok = 0;
            if (q == p) continue;
            CUDA_OK(cudaDeviceCanAccessPeer(&ok, m->ids[p], m->ids[q]));
            if (!ok) {
                fprintf(stderr, "cusolvermg_getrf: GPU %d has no peer access to GPU %d\n",
                        m->ids[p], m->ids[q]);
                continue;
            }
            cudaError_t e = cudaDeviceEnablePeerAccess(m->ids[q], 0);
            if (e == cudaErrorPeerAccessAlreadyEnabled)
                (void)cudaGetLastError(); /* enabled before us: fine, clear it */
            else
                CUDA_OK(e);
        }
    }
    return 0;
}

/* The pristine copies, allocated last so that they only take what the run
 * leaves; a device without room gets none (d0[p] = NULL), and a line says
 * how many devices will have the matrix uploaded from the host. */
static int mg_pristine(mg_t *m)
{
    int missing = 0;
    for (int p = 0; p < m->g; p++) {
        CUDA_OK(cudaSetDevice(m->ids[p]));
        cudaError_t e = cudaMalloc((void **)&m->d0[p], local_bytes(m));
        if (e == cudaSuccess) continue;
        if (e != cudaErrorMemoryAllocation) CUDA_OK(e);
        (void)cudaGetLastError(); /* clear the failed allocation's error */
        m->d0[p] = NULL;
        missing++;
    }
    if (missing > 0)
        printf("cusolvermg_getrf: no room for a pristine copy (%.1f GB) on %d of %d GPUs: their "
               "part is uploaded from the host before each run (untimed)\n",
               (double)local_bytes(m) * 1e-9, missing, m->g);
    return 0;
}

/* Handle, grid, descriptor, matrix, workspace, pristine copies. */
static int mg_setup(mg_t *m)
{
    SOLVER_OK(cusolverMgCreate(&m->handle));
    SOLVER_OK(cusolverMgDeviceSelect(m->handle, m->g, m->ids));
    if (mg_peer(m) != 0) return 1;
    SOLVER_OK(
        cusolverMgCreateDeviceGrid(&m->grid, 1, m->g, m->ids, CUDALIBMG_GRID_MAPPING_COL_MAJOR));
    SOLVER_OK(cusolverMgCreateMatrixDesc(&m->desc, m->n, m->n, m->n, m->t, CUDA_R_64F, m->grid));
    for (int p = 0; p < m->g; p++) {
        CUDA_OK(cudaSetDevice(m->ids[p]));
        CUDA_OK(cudaMalloc((void **)&m->d[p], local_bytes(m)));
    }
    for (int p = 0; p < m->g && m->pivot; p++) {
        CUDA_OK(cudaSetDevice(m->ids[p]));
        CUDA_OK(cudaMalloc((void **)&m->ipiv[p], (size_t)m->lcols * sizeof(int)));
    }
    SOLVER_OK(cusolverMgGetrf_bufferSize(m->handle, (int)m->n, (int)m->n, (void **)m->d, 1, 1,
                                         m->desc, m->pivot ? m->ipiv : NULL, CUDA_R_64F,
                                         &m->lwork));
    for (int p = 0; p < m->g; p++) {
        CUDA_OK(cudaSetDevice(m->ids[p]));
        CUDA_OK(cudaMalloc((void **)&m->work[p], (size_t)m->lwork * sizeof(double)));
    }
    if (mg_pristine(m) != 0) return 1;
    for (int p = 0; p < m->g; p++) {
        if (m->d0[p] == NULL) continue;
        CUDA_OK(cudaSetDevice(m->ids[p]));
        CUDA_OK(cudaMemcpy(m->d0[p], m->h[p], local_bytes(m), cudaMemcpyHostToDevice));
    }
    return 0;
}

/* What mg_setup and mg_host made, also when they stopped half way (m was
 * zeroed first). */
static void mg_free(mg_t *m)
{
    for (int p = 0; p < m->g; p++) {
        cudaSetDevice(m->ids[p]);
        cudaFree(m->d[p]);
        cudaFree(m->d0[p]);
        cudaFree(m->work[p]);
        cudaFree(m->ipiv[p]);
        free(m->h[p]);
    }
    if (m->desc != NULL) cusolverMgDestroyMatrixDesc(m->desc);
    if (m->grid != NULL) cusolverMgDestroyGrid(m->grid);
    if (m->handle != NULL) cusolverMgDestroy(m->handle);
}

/* All G devices idle. */
static int mg_sync(const mg_t *m)
{
    for (int p = 0; p < m->g; p++) {
        CUDA_OK(cudaSetDevice(m->ids[p]));
        CUDA_OK(cudaDeviceSynchronize());
    }
    return 0;
}

/* The matrix to factorize into every d[p]: from d0[p], or from the host. */
static int mg_restore(const mg_t *m)
{
    for (int p = 0; p < m->g; p++) {
        CUDA_OK(cudaSetDevice(m->ids[p]));
        if (m->d0[p] != NULL)
            CUDA_OK(cudaMemcpy(m->d[p], m->d0[p], local_bytes(m), cudaMemcpyDeviceToDevice));
        else
            CUDA_OK(cudaMemcpy(m->d[p], m->h[p], local_bytes(m), cudaMemcpyHostToDevice));
    }
    return 0;
}

/* One factorization, its wall time in *t: the devices are idle before the
 * clock starts, and all idle again before it stops. */
static int mg_run(mg_t *m, double *t)
{
    int info = 0;
    if (mg_sync(m) != 0) return 1;
    double t0 = now_s();
    SOLVER_OK(cusolverMgGetrf(m->handle, (int)m->n, (int)m->n, (void **)m->d, 1, 1, m->desc,
                              m->pivot ? m->ipiv : NULL, CUDA_R_64F, (void **)m->work, m->lwork,
                              &info));
    if (mg_sync(m) != 0) return 1;
    *t = now_s() - t0;
    if (info != 0) {
        fprintf(stderr, "cusolvermg_getrf: cusolverMgGetrf info = %d (%s)\n", info,
                info < 0 ? "a bad argument" : "a zero pivot");
        return 1;
    }
    return 0;
}

static int mg_runs(mg_t *m, const mg_opts_t *o)
{
    double nn = (double)m->n, flops = 2.0 * nn * nn * nn / 3.0;
    for (int r = 0; r < o->nruns; r++) {
        double t = 0.0;
        if (mg_restore(m) != 0 || mg_run(m, &t) != 0) return 1;
        printf("[****] TIME(s) %.6f : cusolverMgGetrf G= %d T= %lld N= %lld : %.2f gflops\n", t,
               m->g, (long long)m->t, (long long)m->n, flops / t * 1e-9);
        fflush(stdout);
    }
    return 0;
}

/* What runs: the GPUs, the sizes, the workspace. */
static int mg_banner(const mg_t *m)
{
    struct cudaDeviceProp prop;
    CUDA_OK(cudaGetDeviceProperties(&prop, m->ids[0]));
    printf("cusolvermg_getrf: %d x %s, N= %lld, T= %lld, lwork %lld doubles a GPU, %s\n", m->g,
           prop.name, (long long)m->n, (long long)m->t, (long long)m->lwork,
           m->pivot ? "partial pivoting" : "no pivoting");
    fflush(stdout);
    return 0;
}

static int run(const mg_opts_t *o)
{
    mg_t m;
    memset(&m, 0, sizeof m);
    m.g = o->g, m.n = o->n, m.t = o->t, m.seed = o->seed, m.pivot = o->pivot;
    int64_t nblocks = (m.n + m.t - 1) / m.t;
    m.lcols = (nblocks + m.g - 1) / m.g * m.t;
    for (int p = 0; p < m.g; p++) m.ids[p] = p;
    int rc = mg_host(&m);
    if (rc == 0) rc = mg_setup(&m);
    if (rc == 0) rc = mg_banner(&m);
    if (rc == 0) rc = mg_runs(&m, o);
    mg_free(&m);
    return rc;
}

/* The options into o; -1 after a message on an unknown option, a missing
 * or bad value. */
static int parse(int argc, char **argv, mg_opts_t *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        uint64_t v = 0;
        if (strcmp(a, "--pivot") == 0) {
            o->pivot = 1;
            continue;
        }
        if (strcmp(a, "-N") && strcmp(a, "-T") && strcmp(a, "-G") && strcmp(a, "--seed") &&
            strcmp(a, "--nruns")) {
            fprintf(stderr, "cusolvermg_getrf: unknown option '%s'\n", a);
            return -1;
        }
        if (i + 1 >= argc || parse_u64(argv[i + 1], &v) != 0 ||
            (strcmp(a, "--seed") != 0 && v > INT32_MAX)) {
            fprintf(stderr, "cusolvermg_getrf: %s needs a whole number up to %s\n", a,
                    strcmp(a, "--seed") == 0 ? "2^64-1" : "2^31-1");
            return -1;
        }
        i++;
        if (strcmp(a, "--seed") == 0) o->seed = v;
        if (strcmp(a, "-N") == 0) o->n = (int64_t)v;
        if (strcmp(a, "-T") == 0) o->t = (int64_t)v;
        if (strcmp(a, "-G") == 0) o->g = (int)v;
        if (strcmp(a, "--nruns") == 0) o->nruns = (int)v;
    }
    return 0;
}

/* No more GPUs than present (nor than MG_MAX_GPUS); 0 after a message. */
static int gpus_present(int g)
{
    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess) {
        fprintf(stderr, "cusolvermg_getrf: cannot count the GPUs: %s\n", cudaGetErrorString(e));
        return 0;
    }
    if (g > ndev || g > MG_MAX_GPUS) {
        fprintf(stderr, "cusolvermg_getrf: -G %d, but %d GPUs present (and at most %d)\n", g, ndev,
                MG_MAX_GPUS);
        return 0;
    }
    return 1;
}

int main(int argc, char **argv)
{
    mg_opts_t o = {.n = 8192, .t = 1024, .seed = 42, .g = 2, .nruns = 1, .pivot = 0};
    int ok = parse(argc, argv, &o) == 0;
    if (ok && (o.n < 1 || o.t < 1 || o.g < 1 || o.nruns < 1)) {
        fprintf(stderr, "cusolvermg_getrf: N, T, G and r must be at least 1\n");
        ok = 0;
    }
    if (!ok) {
        fprintf(stderr, "usage: %s [-N n] [-T tile] [-G gpus] [--seed s] [--nruns r] [--pivot]\n",
                argv[0]);
        return 1;
    }
    return gpus_present(o.g) ? run(&o) : 1;
}
