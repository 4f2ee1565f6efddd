/* scalapack_potrf: the distributed peer of weft-potrf, ScaLAPACK's pdpotrf
 * on a P x Q BLACS grid (default 1 x ranks).
 *
 * Usage: mpiexec -n <ranks> scalapack_potrf [-N n] [-t nb] [-P p] [-Q q]
 *                                           [--seed s] [--nruns r] [--check]
 *
 * The matrix is the one weft-potrf factorizes: element (i,j) a hash of
 * (seed, max(i,j), min(i,j)) in [-0.5, 0.5), plus N on the diagonal
 * (diagonally dominant, hence SPD); the generator is apps/potrf_matrix.h,
 * shared with weft-potrf. Each rank generates its own block-cyclic part (nothing is
 * scattered). Lower Cholesky. Only pdpotrf is timed, between two barriers;
 * the matrix is regenerated for each run. Prints one line a run on rank 0,
 * in weft-potrf's format:
 *   [****] TIME(s) <t> : pdpotrf PxQ= <p> <q> NB= <nb> N= <n> : <gflops> gflops
 * with gflops = N^3/3 / t. --check solves A x = A 1 with pdpotrs after the
 * last run and prints "check: max |x - 1| = <e> : PASSED|FAILED". The
 * grid, runs and check are bench/peer_scalapack.h's. */
#define _POSIX_C_SOURCE 200809L
#define PEER_NAME "scalapack_potrf"

#include <stdint.h>

#include "../apps/potrf_matrix.h" /* the matrix weft-potrf factorizes */
#include "peer_scalapack.h"

void pdpotrf_(const char *uplo, const int *n, double *a, const int *ia, const int *ja,
              const int *desca, int *info);
void pdpotrs_(const char *uplo, const int *n, const int *nrhs, const double *a, const int *ia,
              const int *ja, const int *desca, double *b, const int *ib, const int *jb,
              const int *descb, int *info);

typedef struct potrf_run {
    const peer_grid_t *g;
    peer_mat_t a;
    uint64_t seed;
} potrf_run_t;

static double elem(const void *arg, int64_t i, int64_t j)
{
    const potrf_run_t *x = arg;
    return potrf_elem(x->seed, x->a.n, i, j);
}

static void fill(void *arg)
{
    potrf_run_t *x = arg;
    peer_mat_fill(x->g, &x->a, x->a.a, elem, x);
}

static int factorize(void *arg)
{
    potrf_run_t *x = arg;
    int one = 1, info = 0;
    pdpotrf_("L", &x->a.n, x->a.a, &one, &one, x->a.desc, &info);
    return info;
}

static int solve(const void *arg, double *b, const int *descb)
{
    const peer_mat_t *a = &((const potrf_run_t *)arg)->a;
    int one = 1, info = 0;
    pdpotrs_("L", &a->n, &one, a->a, &one, &one, a->desc, b, &one, &one, descb, &info);
    return info;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    peer_opts_t o = {.n = 8192, .nb = 128, .p = 1, .q = -1, .nruns = 1, .seed = 42};
    if (peer_square_opts(argc, argv, &o) != 0) return 2;
    peer_grid_t g;
    peer_grid_init(&g, (int)o.p, (int)o.q);
    potrf_run_t x = {.g = &g, .seed = (uint64_t)o.seed};
    if (peer_mat_init(&g, &x.a, (int)o.n, (int)o.n, (int)o.nb) != 0) {
        fprintf(stderr, PEER_NAME ": rank %d: descinit failed or no memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    double n = (double)o.n;
    peer_run_t run = {"pdpotrf", x.a.n, x.a.nb, n * n * n / 3.0, fill, factorize, &x};
    int rc = peer_timed_runs(&g, &run, o.nruns);
    if (rc == 0 && o.check) rc = peer_check_solve(&g, &x.a, elem, solve, &x);
    free(x.a.a);
    return peer_grid_exit(&g, rc);
}
