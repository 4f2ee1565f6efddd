/* scalapack_geqrf: the distributed peer of weft-geqrf, ScaLAPACK's pdgeqrf
 * on a P x Q BLACS grid (default P = ranks, Q = 1).
 *
 * Usage: mpiexec -n <ranks> scalapack_geqrf [-M m] [-N n] [-t nb] [-P p] [-Q q]
 *                                           [--seed s] [--nruns r] [--check]
 *
 * The matrix is the one weft-geqrf factorizes (apps/qr_matrix.h, matrix 0
 * of the seed), each rank generating its own block-cyclic part. Only
 * pdgeqrf is timed, between two barriers (its workspace is queried and
 * allocated before); the matrix is regenerated for each run. One line a
 * run on rank 0, in weft-geqrf's format:
 *   [****] TIME(s) <t> : pdgeqrf PxQ= <p> <q> NB= <nb> N= <n> : <gflops> gflops
 * with gflops = (2 M N^2 - 2 N^3 / 3) / t. --check applies Q^T (pdormqr) to
 * the original after the last run and prints
 * "check: ||Q^T A - R|| / (||A|| M eps) = <e> : PASSED|FAILED". The grid
 * and the runs are bench/peer_scalapack.h's. */
#define _POSIX_C_SOURCE 200809L
#define PEER_NAME "scalapack_geqrf"

#include <float.h>
#include <stdint.h>

#include "../apps/qr_matrix.h" /* the matrix weft-geqrf factorizes */
#include "peer_scalapack.h"

void pdgeqrf_(const int *m, const int *n, double *a, const int *ia, const int *ja, const int *desca,
              double *tau, double *work, const int *lwork, int *info);
void pdormqr_(const char *side, const char *trans, const int *m, const int *n, const int *k,
              const double *a, const int *ia, const int *ja, const int *desca, const double *tau,
              double *c, const int *ic, const int *jc, const int *descc, double *work,
              const int *lwork, int *info);

/* The matrix, pdgeqrf's tau and workspace on this rank. */
typedef struct geqrf_run {
    const peer_grid_t *g;
    peer_mat_t a;
    double *tau, *work;
    int lwork;
    uint64_t seed;
} geqrf_run_t;

static double elem(const void *arg, int64_t i, int64_t j)
{
    return qr_elem(((const geqrf_run_t *)arg)->seed, 0, i, j);
}

static void fill(void *arg)
{
    geqrf_run_t *x = arg;
    peer_mat_fill(x->g, &x->a, x->a.a, elem, x);
}

static int factorize(void *arg)
{
    geqrf_run_t *x = arg;
    int one = 1, info = 0;
    pdgeqrf_(&x->a.m, &x->a.n, x->a.a, &one, &one, x->a.desc, x->tau, x->work, &x->lwork, &info);
    return info;
}

/* ||Q^T A0 - R||_F / (||A0||_F M eps) over every rank: Q^T applied to a
 * fresh copy of A0 by pdormqr, R the upper triangle of the factored A. */
static double check(const geqrf_run_t *x)
{
    const peer_grid_t *g = x->g;
    const peer_mat_t *l = &x->a;
    int one = 1, info = 0, lwork = -1;
    size_t elems = (size_t)l->lld * (size_t)(l->nloc > 0 ? l->nloc : 1);
    double *c = malloc(sizeof(double) * elems), q = 0.0, s[2] = {0.0, 0.0}, all[2];
    if (c == NULL) return INFINITY;
    peer_mat_fill(g, l, c, elem, x);
    pdormqr_("L", "T", &l->m, &l->n, &l->n, l->a, &one, &one, l->desc, x->tau, c, &one, &one,
             l->desc, &q, &lwork, &info);
    lwork = (int)q + 1;
    double *work = malloc(sizeof(double) * (size_t)lwork);
    if (work != NULL && info == 0)
        pdormqr_("L", "T", &l->m, &l->n, &l->n, l->a, &one, &one, l->desc, x->tau, c, &one, &one,
                 l->desc, work, &lwork, &info);
    for (int jl = 0; jl < l->nloc && info == 0 && work != NULL; jl++) {
        int64_t j = peer_global(jl, l->nb, g->mycol, g->npcol);
        for (int il = 0; il < l->mloc; il++) {
            int64_t i = peer_global(il, l->nb, g->myrow, g->nprow), at = il + (int64_t)jl * l->lld;
            double r = i <= j ? l->a[at] : 0.0, d = c[at] - r, y = qr_elem(x->seed, 0, i, j);
            s[0] += d * d;
            s[1] += y * y;
        }
    }
    if (work == NULL || info != 0) s[0] = INFINITY;
    free(work);
    free(c);
    MPI_Allreduce(s, all, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return sqrt(all[0]) / (sqrt(all[1]) * (double)l->m * DBL_EPSILON);
}

/* The local arrays and pdgeqrf's workspace (queried once); 0 or -1. */
static int setup(geqrf_run_t *x, int m, int n, int nb)
{
    int one = 1, info = 0, lwork = -1;
    if (peer_mat_init(x->g, &x->a, m, n, nb) != 0) return -1;
    x->tau = malloc(sizeof(double) * (size_t)(x->a.nloc > 0 ? x->a.nloc : 1));
    if (x->tau == NULL) return -1;
    double q = 0.0;
    pdgeqrf_(&x->a.m, &x->a.n, x->a.a, &one, &one, x->a.desc, x->tau, &q, &lwork, &info);
    x->lwork = (int)q + 1;
    x->work = malloc(sizeof(double) * (size_t)x->lwork);
    return info == 0 && x->work != NULL ? 0 : -1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, nranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    peer_opts_t o = {.m = -1, .n = 4096, .nb = 64, .p = -1, .q = 1, .nruns = 1, .seed = 42};
    int bad = peer_parse(argc, argv, 1, PEER_M | PEER_SEED | PEER_CHECK, &o) != 0;
    if (o.m < 0) o.m = o.n;
    if (o.p < 0 && o.q > 0) o.p = nranks / o.q;
    if (bad || o.n < 1 || o.m < o.n || o.m > INT32_MAX / 2 || o.nb < 1 || o.nruns < 1 || o.p < 1 ||
        o.q < 1 || o.p * o.q != nranks)
        return peer_usage(argv[0], "[-M m >= n] [-N n] [-t nb] [-P p] [-Q q] [--seed s] "
                                   "[--nruns r] [--check]");
    peer_grid_t g;
    peer_grid_init(&g, (int)o.p, (int)o.q);
    geqrf_run_t x = {.g = &g, .seed = (uint64_t)o.seed};
    if (setup(&x, (int)o.m, (int)o.n, (int)o.nb) != 0) {
        fprintf(stderr, PEER_NAME ": rank %d: descinit or workspace query failed\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    double m = (double)o.m, n = (double)o.n;
    peer_run_t run = {"pdgeqrf", x.a.n,     x.a.nb, 2 * m * n * n - 2 * n * n * n / 3,
                      fill,      factorize, &x};
    int rc = peer_timed_runs(&g, &run, o.nruns);
    if (rc == 0 && o.check) {
        double e = check(&x);
        int passed = e < 60.0;
        if (rank == 0)
            printf("check: ||Q^T A - R|| / (||A|| M eps) = %.3e : %s\n", e,
                   passed ? "PASSED" : "FAILED");
        rc = !passed;
    }
    free(x.work);
    free(x.tau);
    free(x.a.a);
    return peer_grid_exit(&g, rc);
}
