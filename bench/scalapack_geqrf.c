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
 * "check: ||Q^T A - R|| / (||A|| M eps) = <e> : PASSED|FAILED". */
#define _POSIX_C_SOURCE 200809L

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#include "../apps/qr_matrix.h" /* the matrix weft-geqrf factorizes */

/* BLACS and ScaLAPACK (Fortran symbols; no installed header declares them). */
void Cblacs_get(int icontxt, int what, int *val);
void Cblacs_gridinit(int *icontxt, const char *order, int nprow, int npcol);
void Cblacs_gridinfo(int icontxt, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_gridexit(int icontxt);
void Cblacs_exit(int notdone);
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrcproc, const int *nprocs);
void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb,
               const int *irsrc, const int *icsrc, const int *ictxt, const int *lld, int *info);
void pdgeqrf_(const int *m, const int *n, double *a, const int *ia, const int *ja, const int *desca,
              double *tau, double *work, const int *lwork, int *info);
void pdormqr_(const char *side, const char *trans, const int *m, const int *n, const int *k,
              const double *a, const int *ia, const int *ja, const int *desca, const double *tau,
              double *c, const int *ic, const int *jc, const int *descc, double *work,
              const int *lwork, int *info);

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Global index of local index l (0-based) of a block-cyclic dimension. */
static int64_t global_index(int l, int nb, int me, int nprocs)
{
    return ((int64_t)(l / nb) * nprocs + me) * nb + l % nb;
}

typedef struct grid {
    int ctx, nprow, npcol, myrow, mycol;
} grid_t;

/* The local part of the block-cyclic M x N matrix on this rank. */
typedef struct local {
    int m, n, nb, mloc, nloc, lld, desc[9];
    double *a, *tau, *work;
    int lwork;
} local_t;

static void fill(const grid_t *g, uint64_t seed, const local_t *l, double *a)
{
    for (int jl = 0; jl < l->nloc; jl++) {
        int64_t j = global_index(jl, l->nb, g->mycol, g->npcol);
        for (int il = 0; il < l->mloc; il++)
            a[il + (int64_t)jl * l->lld] =
                qr_elem(seed, 0, global_index(il, l->nb, g->myrow, g->nprow), j);
    }
}

/* ||Q^T A0 - R||_F / (||A0||_F M eps) over every rank: Q^T applied to a
 * fresh copy of A0 by pdormqr, R the upper triangle of the factored l->a. */
static double check(const grid_t *g, uint64_t seed, local_t *l)
{
    int one = 1, info = 0, lwork = -1;
    size_t elems = (size_t)l->lld * (size_t)(l->nloc > 0 ? l->nloc : 1);
    double *c = malloc(sizeof(double) * elems), q = 0.0, s[2] = {0.0, 0.0}, all[2];
    if (c == NULL) return INFINITY;
    fill(g, seed, l, c);
    pdormqr_("L", "T", &l->m, &l->n, &l->n, l->a, &one, &one, l->desc, l->tau, c, &one, &one,
             l->desc, &q, &lwork, &info);
    lwork = (int)q + 1;
    double *work = malloc(sizeof(double) * (size_t)lwork);
    if (work != NULL && info == 0)
        pdormqr_("L", "T", &l->m, &l->n, &l->n, l->a, &one, &one, l->desc, l->tau, c, &one, &one,
                 l->desc, work, &lwork, &info);
    for (int jl = 0; jl < l->nloc && info == 0 && work != NULL; jl++) {
        int64_t j = global_index(jl, l->nb, g->mycol, g->npcol);
        for (int il = 0; il < l->mloc; il++) {
            int64_t i = global_index(il, l->nb, g->myrow, g->nprow), at = il + (int64_t)jl * l->lld;
            double r = i <= j ? l->a[at] : 0.0, d = c[at] - r, y = qr_elem(seed, 0, i, j);
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

typedef struct opts {
    long long m, n, nb, p, q, nruns;
    uint64_t seed;
    int check;
} opts_t;

static int parse(int argc, char **argv, opts_t *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--check") == 0) {
            o->check = 1;
            continue;
        }
        if (v == NULL) return -1;
        char *end = NULL;
        long long x = strtoll(v, &end, 10);
        if (end == v || *end != '\0' || x < 0) return -1;
        if (strcmp(a, "-M") == 0)
            o->m = x;
        else if (strcmp(a, "-N") == 0)
            o->n = x;
        else if (strcmp(a, "-t") == 0)
            o->nb = x;
        else if (strcmp(a, "-P") == 0)
            o->p = x;
        else if (strcmp(a, "-Q") == 0)
            o->q = x;
        else if (strcmp(a, "--nruns") == 0)
            o->nruns = x;
        else if (strcmp(a, "--seed") == 0)
            o->seed = (uint64_t)x;
        else
            return -1;
        i++;
    }
    return 0;
}

/* The local arrays and pdgeqrf's workspace (queried once); 0 or -1. */
static int setup(const grid_t *g, local_t *l)
{
    int zero = 0, one = 1, info = 0, lwork = -1;
    l->mloc = numroc_(&l->m, &l->nb, &g->myrow, &zero, &g->nprow);
    l->nloc = numroc_(&l->n, &l->nb, &g->mycol, &zero, &g->npcol);
    l->lld = l->mloc > 1 ? l->mloc : 1;
    descinit_(l->desc, &l->m, &l->n, &l->nb, &l->nb, &zero, &zero, &g->ctx, &l->lld, &info);
    l->a = malloc(sizeof(double) * (size_t)l->lld * (size_t)(l->nloc > 0 ? l->nloc : 1));
    l->tau = malloc(sizeof(double) * (size_t)(l->nloc > 0 ? l->nloc : 1));
    if (info != 0 || l->a == NULL || l->tau == NULL) return -1;
    double q = 0.0;
    pdgeqrf_(&l->m, &l->n, l->a, &one, &one, l->desc, l->tau, &q, &lwork, &info);
    l->lwork = (int)q + 1;
    l->work = malloc(sizeof(double) * (size_t)l->lwork);
    return info == 0 && l->work != NULL ? 0 : -1;
}

static int timed_runs(const grid_t *g, uint64_t seed, local_t *l, long long nruns)
{
    int rank = 0, one = 1, info = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (long long r = 0; r < nruns; r++) {
        fill(g, seed, l, l->a);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = now_s();
        pdgeqrf_(&l->m, &l->n, l->a, &one, &one, l->desc, l->tau, l->work, &l->lwork, &info);
        MPI_Barrier(MPI_COMM_WORLD);
        double t = now_s() - t0, m = l->m, n = l->n;
        if (info != 0) {
            if (rank == 0) fprintf(stderr, "scalapack_geqrf: pdgeqrf info = %d\n", info);
            return 1;
        }
        if (rank == 0)
            printf("[****] TIME(s) %.6f : pdgeqrf PxQ= %d %d NB= %d N= %d : %.2f gflops\n", t,
                   g->nprow, g->npcol, l->nb, l->n, (2 * m * n * n - 2 * n * n * n / 3) / t * 1e-9);
        fflush(stdout);
    }
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, nranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    opts_t o = {.m = -1, .n = 4096, .nb = 64, .p = -1, .q = 1, .nruns = 1, .seed = 42};
    int bad = parse(argc, argv, &o) != 0;
    if (o.m < 0) o.m = o.n;
    if (o.p < 0 && o.q > 0) o.p = nranks / o.q;
    if (bad || o.n < 1 || o.m < o.n || o.m > INT32_MAX / 2 || o.nb < 1 || o.nruns < 1 || o.p < 1 ||
        o.q < 1 || o.p * o.q != nranks) {
        if (rank == 0)
            fprintf(stderr,
                    "usage: mpiexec -n <ranks> %s [-M m >= n] [-N n] [-t nb] [-P p] [-Q q] "
                    "[--seed s] [--nruns r] [--check]  (P*Q = ranks = %d)\n",
                    argv[0], nranks);
        MPI_Finalize();
        return 2;
    }
    grid_t g;
    Cblacs_get(0, 0, &g.ctx);
    Cblacs_gridinit(&g.ctx, "Row", (int)o.p, (int)o.q);
    Cblacs_gridinfo(g.ctx, &g.nprow, &g.npcol, &g.myrow, &g.mycol);
    local_t l = {.m = (int)o.m, .n = (int)o.n, .nb = (int)o.nb};
    if (setup(&g, &l) != 0) {
        fprintf(stderr, "scalapack_geqrf: rank %d: descinit or workspace query failed\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int rc = timed_runs(&g, o.seed, &l, o.nruns);
    if (rc == 0 && o.check) {
        double e = check(&g, o.seed, &l);
        int passed = e < 60.0;
        if (rank == 0)
            printf("check: ||Q^T A - R|| / (||A|| M eps) = %.3e : %s\n", e,
                   passed ? "PASSED" : "FAILED");
        rc = !passed;
    }
    free(l.work);
    free(l.tau);
    free(l.a);
    Cblacs_gridexit(g.ctx);
    Cblacs_exit(1);
    MPI_Finalize();
    return rc;
}
