/* scalapack_getrf: the distributed peer of weft-getrf, ScaLAPACK's pdgetrf
 * on a P x Q BLACS grid (default 1 x ranks). pdgetrf PIVOTS (partial row
 * pivoting, ScaLAPACK has no LU without it): it does the search and the row
 * swaps that weft-getrf skips, on the same diagonally dominant matrix,
 * where the pivots it picks are the diagonal ones anyway.
 *
 * Usage: mpiexec -n <ranks> scalapack_getrf [-N n] [-t nb] [-P p] [-Q q]
 *                                           [--seed s] [--nruns r] [--check]
 *
 * The matrix is weft-getrf's (apps/lu_matrix.h); each rank generates its
 * block-cyclic part, nothing is scattered, and it is regenerated before
 * each run. Only pdgetrf is timed, between two barriers. One line a run on
 * rank 0, in weft-getrf's format, with gflops = 2 N^3 / 3 / time:
 *   [****] TIME(s) <t> : pdgetrf PxQ= <p> <q> NB= <nb> N= <n> : <gflops> gflops
 * --check solves A x = A 1 with pdgetrs after the last run and prints
 * "check: max |x - 1| = <e> : PASSED|FAILED". The grid, runs and check
 * are bench/peer_scalapack.h's. */
#define _POSIX_C_SOURCE 200809L
#define PEER_NAME "scalapack_getrf"

#include <stdint.h>

#include "../apps/lu_matrix.h" /* the matrix weft-getrf factorizes */
#include "peer_scalapack.h"

void pdgetrf_(const int *m, const int *n, double *a, const int *ia, const int *ja, const int *desca,
              int *ipiv, int *info);
void pdgetrs_(const char *trans, const int *n, const int *nrhs, const double *a, const int *ia,
              const int *ja, const int *desca, const int *ipiv, double *b, const int *ib,
              const int *jb, const int *descb, int *info);

typedef struct getrf_run {
    const peer_grid_t *g;
    peer_mat_t a;
    int *ipiv;
    uint64_t seed;
} getrf_run_t;

static double elem(const void *arg, int64_t i, int64_t j)
{
    const getrf_run_t *x = arg;
    return lu_elem(x->seed, x->a.n, i, j);
}

static void fill(void *arg)
{
    getrf_run_t *x = arg;
    peer_mat_fill(x->g, &x->a, x->a.a, elem, x);
}

static int factorize(void *arg)
{
    getrf_run_t *x = arg;
    int one = 1, info = 0;
    pdgetrf_(&x->a.n, &x->a.n, x->a.a, &one, &one, x->a.desc, x->ipiv, &info);
    return info;
}

static int solve(const void *arg, double *b, const int *descb)
{
    const peer_mat_t *a = &((const getrf_run_t *)arg)->a;
    int one = 1, info = 0;
    pdgetrs_("N", &a->n, &one, a->a, &one, &one, a->desc, ((const getrf_run_t *)arg)->ipiv, b, &one,
             &one, descb, &info);
    return info;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    peer_opts_t o = {.n = 6144, .nb = 128, .p = 1, .q = -1, .nruns = 1, .seed = 42};
    if (peer_square_opts(argc, argv, &o) != 0) return 2;
    peer_grid_t g;
    peer_grid_init(&g, (int)o.p, (int)o.q);
    getrf_run_t x = {.g = &g, .seed = (uint64_t)o.seed};
    int rc = peer_mat_init(&g, &x.a, (int)o.n, (int)o.n, (int)o.nb);
    x.ipiv = malloc(sizeof(int) * (size_t)(x.a.mloc + x.a.nb));
    if (rc != 0 || x.ipiv == NULL) {
        fprintf(stderr, PEER_NAME ": descinit failed or no memory\n");
        rc = 1;
    }
    double n = (double)o.n;
    peer_run_t run = {"pdgetrf", x.a.n, x.a.nb, 2.0 * n * n * n / 3.0, fill, factorize, &x};
    if (rc == 0) rc = peer_timed_runs(&g, &run, o.nruns);
    if (rc == 0 && o.check) rc = peer_check_solve(&g, &x.a, elem, solve, &x);
    free(x.a.a);
    free(x.ipiv);
    return peer_grid_exit(&g, rc);
}
