/* What the ScaLAPACK peers of the weft apps (scalapack_potrf.c, _getrf.c,
 * _geqrf.c, _dense.c) share: the BLACS and ScaLAPACK declarations they all
 * call, the command line (-N -t -P -Q --nruns, and where a peer takes
 * them -M --nrhs --seed --check), the BLACS grid, a block-cyclic matrix
 * each rank generates its part of, the runs timed between two barriers
 * with the apps' "[****]" line, and the check by a solve of A x = A 1.
 * Define PEER_NAME (the program's name) before including it. Header-only,
 * plain C with MPI. */
#ifndef WEFT_BENCH_PEER_SCALAPACK_H
#define WEFT_BENCH_PEER_SCALAPACK_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#ifndef PEER_NAME
#error "define PEER_NAME before including peer_scalapack.h"
#endif

/* BLACS and ScaLAPACK (Fortran symbols; no installed header declares them). */
void Cblacs_get(int icontxt, int what, int *val);
void Cblacs_gridinit(int *icontxt, const char *order, int nprow, int npcol);
void Cblacs_gridinfo(int icontxt, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_gridexit(int icontxt);
void Cblacs_exit(int notdone);
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrcproc, const int *nprocs);
void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb,
               const int *irsrc, const int *icsrc, const int *ictxt, const int *lld, int *info);

/* ---- command line -------------------------------------------------------- */

enum { PEER_M = 1, PEER_NRHS = 2, PEER_SEED = 4, PEER_CHECK = 8 }; /* optional flags */

typedef struct peer_opts {
    long long m, n, nb, p, q, nruns, nrhs, seed;
    int check;
} peer_opts_t;

/* The flags of argv[first..] into o, those of the mask among the optional
 * ones; values are non-negative integers. 0, or -1 for a malformed line. */
static inline int peer_parse(int argc, char **argv, int first, unsigned mask, peer_opts_t *o)
{
    const char *names[] = {"-N", "-t", "-P", "-Q", "--nruns", "-M", "--nrhs", "--seed"};
    long long *dst[] = {&o->n, &o->nb, &o->p, &o->q, &o->nruns, &o->m, &o->nrhs, &o->seed};
    const unsigned need[] = {0, 0, 0, 0, 0, PEER_M, PEER_NRHS, PEER_SEED};
    for (int i = first; i < argc; i++) {
        if ((mask & PEER_CHECK) && strcmp(argv[i], "--check") == 0) {
            o->check = 1;
            continue;
        }
        int f = 0;
        while (f < 8 && (strcmp(argv[i], names[f]) != 0 || (need[f] & ~mask) != 0)) f++;
        char *end = NULL;
        if (f == 8 || i + 1 >= argc) return -1;
        long long v = strtoll(argv[++i], &end, 10);
        if (*end != '\0' || end == argv[i] || v < 0) return -1;
        *dst[f] = v;
    }
    return 0;
}

/* The usage line on rank 0 (args: what follows the program's name), then
 * MPI_Finalize; main returns 2 after it. */
static inline int peer_usage(const char *argv0, const char *args)
{
    int rank = 0, nranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (rank == 0)
        fprintf(stderr, "usage: mpiexec -n <ranks> %s %s  (P*Q = ranks = %d)\n", argv0, args,
                nranks);
    MPI_Finalize();
    return 2;
}

/* The command line of a peer factorizing a square matrix (scalapack_potrf,
 * _getrf), o holding its defaults: 0, or main's 2 after the usage line. */
static inline int peer_square_opts(int argc, char **argv, peer_opts_t *o)
{
    int nranks = 1, bad = peer_parse(argc, argv, 1, PEER_SEED | PEER_CHECK, o) != 0;
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (o->q < 0 && o->p > 0) o->q = nranks / o->p;
    if (bad || o->n < 1 || o->n > INT32_MAX / 2 || o->nb < 1 || o->nb > o->n || o->nruns < 1 ||
        o->p < 1 || o->p * o->q != nranks)
        return peer_usage(argv[0],
                          "[-N n] [-t nb <= n] [-P p] [-Q q] [--seed s] [--nruns r] [--check]");
    return 0;
}

/* ---- grid and matrices --------------------------------------------------- */

typedef struct peer_grid {
    int ctx, nprow, npcol, myrow, mycol;
} peer_grid_t;

static inline void peer_grid_init(peer_grid_t *g, int p, int q)
{
    Cblacs_get(0, 0, &g->ctx);
    Cblacs_gridinit(&g->ctx, "Row", p, q);
    Cblacs_gridinfo(g->ctx, &g->nprow, &g->npcol, &g->myrow, &g->mycol);
}

/* The grid released, BLACS and MPI finalized; returns rc. */
static inline int peer_grid_exit(const peer_grid_t *g, int rc)
{
    Cblacs_gridexit(g->ctx);
    Cblacs_exit(1);
    MPI_Finalize();
    return rc;
}

/* Global index of local index l (0-based) of a block-cyclic dimension. */
static inline int64_t peer_global(int l, int nb, int me, int nprocs)
{
    return ((int64_t)(l / nb) * nprocs + me) * nb + l % nb;
}

/* This rank's part of a block-cyclic m x n matrix in nb x nb blocks. */
typedef struct peer_mat {
    int m, n, nb, mloc, nloc, lld, desc[9];
    double *a;
} peer_mat_t;

/* Descriptor and local array; 0, or -1 (descinit's info or no memory). */
static inline int peer_mat_init(const peer_grid_t *g, peer_mat_t *d, int m, int n, int nb)
{
    int zero = 0, info = 0;
    d->m = m;
    d->n = n;
    d->nb = nb;
    d->mloc = numroc_(&m, &nb, &g->myrow, &zero, &g->nprow);
    d->nloc = numroc_(&n, &nb, &g->mycol, &zero, &g->npcol);
    d->lld = d->mloc > 1 ? d->mloc : 1;
    descinit_(d->desc, &m, &n, &nb, &nb, &zero, &zero, &g->ctx, &d->lld, &info);
    d->a = malloc(sizeof(double) * (size_t)d->lld * (size_t)(d->nloc > 0 ? d->nloc : 1));
    return info != 0 || d->a == NULL ? -1 : 0;
}

/* Element (i, j) of a generated matrix, arg its parameters. */
typedef double (*peer_elem_fn)(const void *arg, int64_t i, int64_t j);

/* Fills a (d's local layout, d->a or a copy) with the generated matrix. */
static inline void peer_mat_fill(const peer_grid_t *g, const peer_mat_t *d, double *a,
                                 peer_elem_fn elem, const void *arg)
{
    for (int jl = 0; jl < d->nloc; jl++) {
        int64_t j = peer_global(jl, d->nb, g->mycol, g->npcol);
        for (int il = 0; il < d->mloc; il++)
            a[il + (int64_t)jl * d->lld] = elem(arg, peer_global(il, d->nb, g->myrow, g->nprow), j);
    }
}

/* ---- timed runs and the check ------------------------------------------- */

static inline double peer_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One run of a peer: fill regenerates its matrices, call runs the timed
 * ScaLAPACK routine and returns its info. */
typedef struct peer_run {
    const char *op; /* "pdpotrf" */
    int n, nb;      /* of the line */
    double flops;
    void (*fill)(void *arg);
    int (*call)(void *arg);
    void *arg;
} peer_run_t;

/* nruns runs, each timed between two barriers and printed by rank 0 in
 * the apps' format; 0, or 1 when the routine failed (info named). */
static inline int peer_timed_runs(const peer_grid_t *g, const peer_run_t *r, long long nruns)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (long long k = 0; k < nruns; k++) {
        r->fill(r->arg);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = peer_now();
        int info = r->call(r->arg);
        MPI_Barrier(MPI_COMM_WORLD);
        double t = peer_now() - t0;
        if (info != 0) {
            if (rank == 0) fprintf(stderr, PEER_NAME ": %s info = %d\n", r->op, info);
            return 1;
        }
        if (rank == 0)
            printf("[****] TIME(s) %.6f : %s PxQ= %d %d NB= %d N= %d : %.2f gflops\n", t, r->op,
                   g->nprow, g->npcol, r->nb, r->n, r->flops / t * 1e-9);
        fflush(stdout);
    }
    return 0;
}

/* Solves the factored A x = b for b = A 1 (A regenerated by elem) with
 * solve (b's descriptor given; returns info), both given arg, and prints
 * on rank 0
 * "check: max |x - 1| = <e> : PASSED|FAILED". 0 when passed, else 1. */
static inline int peer_check_solve(const peer_grid_t *g, const peer_mat_t *a, peer_elem_fn elem,
                                   int (*solve)(const void *arg, double *b, const int *descb),
                                   const void *arg)
{
    int zero = 0, one = 1, info = 0, rank = 0, descb[9];
    descinit_(descb, &a->n, &one, &a->nb, &a->nb, &zero, &zero, &g->ctx, &a->lld, &info);
    double *b = calloc((size_t)a->lld, sizeof *b), err = 0.0, all = 0.0;
    int bad = info != 0 || b == NULL;
    if (bad) fprintf(stderr, PEER_NAME ": cannot set up the check (info %d)\n", info);
    if (!bad && g->mycol == 0) /* b lives on process column 0 */
        for (int il = 0; il < a->mloc; il++) {
            int64_t i = peer_global(il, a->nb, g->myrow, g->nprow);
            for (int64_t j = 0; j < a->n; j++) b[il] += elem(arg, i, j);
        }
    if (!bad) bad = solve(arg, b, descb) != 0;
    for (int il = 0; !bad && g->mycol == 0 && il < a->mloc; il++)
        if (!(fabs(b[il] - 1.0) <= err)) err = fabs(b[il] - 1.0);
    if (bad) err = INFINITY;
    free(b);
    MPI_Allreduce(&err, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int passed = all < 1e-8;
    if (rank == 0) printf("check: max |x - 1| = %.3e : %s\n", all, passed ? "PASSED" : "FAILED");
    return !passed;
}

#endif
