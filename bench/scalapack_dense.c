/* scalapack_dense: the distributed peers of weft-gemm and weft-posv,
 * ScaLAPACK's pdgemm and pdposv on a P x Q BLACS grid.
 *
 * Usage: mpiexec -n <ranks> scalapack_dense gemm|posv [-N n] [-t nb] [-P p]
 *                                           [-Q q] [--nrhs r] [--nruns k]
 *
 * The matrices are those of the weft apps: gemm C = 0.5 A B - 0.25 C with
 * N x N matrices of apps/dense_matrix.h (seeds as weft-gemm's first run);
 * posv A of apps/potrf_matrix.h and B (N x NRHS) of dense_matrix.h. Each
 * rank generates its own block-cyclic part; only the ScaLAPACK call is
 * timed, between two barriers, and rank 0 prints a line in the apps'
 * format (gflops: 2 N^3 for gemm, N^3/3 + 2 N^2 NRHS for posv). The grid
 * and the runs are bench/peer_scalapack.h's. */
#define _POSIX_C_SOURCE 200809L
#define PEER_NAME "scalapack_dense"

#include <stdint.h>
#include <string.h>

#include "../apps/dense_matrix.h"
#include "peer_scalapack.h"

void pdgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
             const double *alpha, const double *a, const int *ia, const int *ja, const int *desca,
             const double *b, const int *ib, const int *jb, const int *descb, const double *beta,
             double *c, const int *ic, const int *jc, const int *descc);
void pdposv_(const char *uplo, const int *n, const int *nrhs, double *a, const int *ia,
             const int *ja, const int *desca, double *b, const int *ib, const int *jb,
             const int *descb, int *info);

/* The matrices of one op: gemm A, B, C; posv A, B. */
typedef struct dense_run {
    const peer_grid_t *g;
    int posv;
    peer_mat_t m[3];
} dense_run_t;

typedef struct dense_gen {
    uint64_t seed;
    int spd, n; /* spd: weft-posv's A, of order n; else dense_elem(seed) */
} dense_gen_t;

static double elem(const void *arg, int64_t i, int64_t j)
{
    const dense_gen_t *e = arg;
    return e->spd ? potrf_elem(e->seed, e->n, i, j) : dense_elem(e->seed, i, j);
}

/* The seeds of weft-gemm's and weft-posv's first run. */
static void fill(void *arg)
{
    dense_run_t *x = arg;
    uint64_t seed = 42;
    for (int i = 0; i < (x->posv ? 2 : 3); i++) {
        dense_gen_t e = {dense_seed(seed, (uint64_t)i), 0, x->m[i].m};
        if (x->posv && i == 0) e = (dense_gen_t){seed, 1, x->m[0].m};
        peer_mat_fill(x->g, &x->m[i], x->m[i].a, elem, &e);
    }
}

static int call(void *arg)
{
    dense_run_t *x = arg;
    peer_mat_t *m = x->m;
    int one = 1, info = 0;
    double alpha = 0.5, beta = -0.25;
    if (x->posv)
        pdposv_("L", &m[0].n, &m[1].n, m[0].a, &one, &one, m[0].desc, m[1].a, &one, &one, m[1].desc,
                &info);
    else
        pdgemm_("N", "N", &m[0].m, &m[1].n, &m[0].n, &alpha, m[0].a, &one, &one, m[0].desc, m[1].a,
                &one, &one, m[1].desc, &beta, m[2].a, &one, &one, m[2].desc);
    return info;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int nranks = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    peer_opts_t o = {.n = 4096, .nb = 128, .p = 1, .q = -1, .nrhs = 256, .nruns = 1};
    int posv = argc > 1 && strcmp(argv[1], "posv") == 0;
    int bad = argc < 2 || (!posv && strcmp(argv[1], "gemm") != 0) ||
              peer_parse(argc, argv, 2, PEER_NRHS, &o) != 0;
    if (o.q < 0 && o.p > 0) o.q = nranks / o.p;
    if (bad || o.n < 1 || o.n > INT32_MAX / 2 || o.nb < 1 || o.p < 1 || o.p * o.q != nranks ||
        o.nrhs < 1 || o.nrhs > INT32_MAX / 2 || o.nruns < 1)
        return peer_usage(argv[0], "gemm|posv [-N n] [-t nb] [-P p] [-Q q] [--nrhs r] "
                                   "[--nruns k]");
    peer_grid_t g;
    peer_grid_init(&g, (int)o.p, (int)o.q);
    dense_run_t x = {.g = &g, .posv = posv};
    int n = (int)o.n, nb = (int)o.nb;
    for (int i = 0; i < (posv ? 2 : 3); i++)
        if (peer_mat_init(&g, &x.m[i], n, posv && i == 1 ? (int)o.nrhs : n, nb) != 0)
            MPI_Abort(MPI_COMM_WORLD, 1);
    double nn = (double)n;
    double flops = posv ? nn * nn * nn / 3.0 + 2.0 * nn * nn * (double)o.nrhs : 2.0 * nn * nn * nn;
    peer_run_t run = {posv ? "pdposv" : "pdgemm", n, nb, flops, fill, call, &x};
    int rc = peer_timed_runs(&g, &run, o.nruns);
    for (int i = 0; i < 3; i++) free(x.m[i].a);
    return peer_grid_exit(&g, rc);
}
