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
 *        -L<cuda>/lib64 -lcusolverMg -lcusolver -lcublas -lcudart -lm
 * All but the routine and its matrix is bench/peer_mg.h's. */
#define _POSIX_C_SOURCE 200809L

/* CUDA 13 marks all of cusolverMg deprecated (in favour of cusolverMp, a
 * multi-process library); it still ships, and it is the vendor's
 * one-process multi-GPU Cholesky, the peer this program measures. Without
 * this, every call is a deprecation warning, an error under -Werror. */
#define DISABLE_CUSOLVERMG_DEPRECATED

#include <stdint.h>

#include "../apps/lu_matrix.h" /* the matrix weft-getrf factorizes */
#define PEER_NAME "cusolvermg_getrf"
#include "peer_mg.h" /* the matrix on the devices, runs, command line */

static void column(const mg_t *m, int64_t j, double *c)
{
    for (int64_t i = 0; i < m->n; i++) c[i] = lu_elem(m->seed, m->n, i, j);
}

/* --pivot (m->flag): the pivots of each device's columns. */
static int buffers(mg_t *m)
{
    for (int p = 0; p < m->g && m->flag; p++) {
        CUDA_OK(cudaSetDevice(m->ids[p]));
        CUDA_OK(cudaMalloc((void **)&m->ipiv[p], (size_t)m->lcols * sizeof(int)));
    }
    SOLVER_OK(cusolverMgGetrf_bufferSize(m->handle, (int)m->n, (int)m->n, (void **)m->d, 1, 1,
                                         m->desc, m->flag ? m->ipiv : NULL, CUDA_R_64F, &m->lwork));
    return 0;
}

static cusolverStatus_t call(mg_t *m, int *info)
{
    return cusolverMgGetrf(m->handle, (int)m->n, (int)m->n, (void **)m->d, 1, 1, m->desc,
                           m->flag ? m->ipiv : NULL, CUDA_R_64F, (void **)m->work, m->lwork, info);
}

static const char *banner(const mg_t *m)
{
    return m->flag ? ", partial pivoting" : ", no pivoting";
}

static const peer_mg_ops_t getrf_ops = {
    .routine = "cusolverMgGetrf",
    .flag = "--pivot",
    .usage = "[-N n] [-T tile] [-G gpus] [--seed s] [--nruns r] [--pivot]",
    .flops_n3 = 2.0 / 3.0,
    .positive_info = "a zero pivot",
    .column = column,
    .buffers = buffers,
    .call = call,
    .banner = banner,
};

int main(int argc, char **argv) { return peer_mg_main(argc, argv, &getrf_ops); }
