/* weft-posv: solves A X = B for NRHS right-hand sides, A symmetric positive
 * definite, by the tiled Cholesky factorization A = L L^T of weft-potrf
 * (its task graph, kernels and classes: potrf_dag.h) followed by the
 * forward solve L Y = B and the backward solve L^T X = Y, in place on B.
 *
 * A is weft-potrf's test matrix (apps/potrf_matrix.h), B an N x NRHS
 * matrix of dense_matrix.h, both tiled nb x nb and 2D block-cyclic on the
 * P x Q grid: B's block row of NRHS/nb tiles sits on the grid like A's
 * first tile columns. The factorization and the solves are timed together
 * (one taskpool: the solves start as soon as the columns of L they need are
 * done) and reported as dposv with LAPACK's flop count N^3/3 + 2 N^2 NRHS.
 *
 * --check: R = B0 - A0 X by tasks where the tiles of R (B's layout) live,
 * A0 and B0 regenerated, then ||R||_F / (||A||_F ||X||_F N eps) reduced
 * with tasks; it must stay under POSV_RESIDUAL_MAX. Public API only. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <lapacke.h>
#include <weft/weft.h>

#include "app_cli.h"
#include "app_devices.h"
#include "app_sums.h"
#include "dense_tiles.h"
#include "posv_kernels.h"
#include "potrf_dag.h"

#define POSV_NAME "weft-posv"
#define POSV_RESIDUAL_MAX 60.0
#define POSV_NT_MAX (1 << 16)

typedef struct posv_opts {
    int64_t n, nrhs, nb, p, q, g, cores, nruns, seed;
    int64_t trsm_inv; /* of the factorization; -1: 2 with -g > 0, else 0 */
    int check;
} posv_opts_t;

static const posv_opts_t posv_defaults = {.n = 4096,
                                          .nrhs = 256,
                                          .nb = 256,
                                          .p = 1,
                                          .q = 1,
                                          .g = 0,
                                          .cores = -1,
                                          .nruns = 1,
                                          .seed = 42,
                                          .trsm_inv = -1};

static void posv_usage(FILE *out)
{
    fprintf(out,
            "usage: weft-posv [options] [--weft-<param>=<value> ...]\n"
            "  -N <n>        order of A (default %lld)\n"
            "  --nrhs <r>    right-hand sides, columns of B (default %lld)\n"
            "  -t <nb>       tile size (default %lld)\n"
            "  -P <p>, -Q <q>  process grid, P*Q = ranks (default 1 x 1)\n"
            "  -g <n>        accelerators a rank uses, of the type --weft-device_type names\n"
            "                (cuda by default, or emu; default 0: CPU only)\n"
            "  -c <cores>    worker cores a rank (sets WEFT_CORES before weft_init)\n"
            "  --seed <s>    seed of A and B (default %lld)\n"
            "  --nruns <r>   generate and solve r times, one line each (default 1)\n"
            "  --trsm-inv <m> the factorization's panel as weft-potrf's (default 2 with\n"
            "                -g > 0, 0 without)\n"
            "  --check       check ||A X - B|| / (||A|| ||X|| N eps) < %g\n"
            "  --probe-gpus  print 'cuda_devices= <n>', the CUDA devices weft finds, and exit\n"
            "  -h, --help    this help; weft-info lists the --weft-* parameters\n",
            (long long)posv_defaults.n, (long long)posv_defaults.nrhs, (long long)posv_defaults.nb,
            (long long)posv_defaults.seed, POSV_RESIDUAL_MAX);
}

static const app_flag_t posv_flags[] = {
    {"-N", offsetof(posv_opts_t, n), 1, INT32_MAX},
    {"--nrhs", offsetof(posv_opts_t, nrhs), 1, INT32_MAX},
    {"-t", offsetof(posv_opts_t, nb), 1, INT32_MAX / 2},
    {"-P", offsetof(posv_opts_t, p), 1, 1 << 20},
    {"-Q", offsetof(posv_opts_t, q), 1, 1 << 20},
    {"-g", offsetof(posv_opts_t, g), 0, 1024},
    {"-c", offsetof(posv_opts_t, cores), 1, 4096},
    {"--seed", offsetof(posv_opts_t, seed), 0, INT64_MAX},
    {"--nruns", offsetof(posv_opts_t, nruns), 1, 1000000},
    {"--trsm-inv", offsetof(posv_opts_t, trsm_inv), 0, 2},
};

/* cusolverDnDpotrf's work array and the check's scratch, as weft-potrf. */
static const app_cli_t posv_cli = {.prog = POSV_NAME,
                                   .flags = posv_flags,
                                   .nflags = sizeof posv_flags / sizeof posv_flags[0],
                                   .usage = posv_usage,
                                   .nb = 256,
                                   .workspace_tiles = 2.5};

static int posv_validate(weft_context_t *ctx, posv_opts_t *o, appdev_t *dev, int verbose)
{
    if (o->trsm_inv < 0) o->trsm_inv = o->g > 0 ? 2 : 0;
    if (app_cli_grid(POSV_NAME, o->p, o->q, weft_nranks(ctx), verbose) != 0) return -1;
    if ((o->n + o->nb - 1) / o->nb > POSV_NT_MAX || (o->nrhs + o->nb - 1) / o->nb > POSV_NT_MAX) {
        if (verbose)
            fprintf(stderr, POSV_NAME ": more than %d tiles in a dimension; use a larger -t\n",
                    POSV_NT_MAX);
        return -1;
    }
    dev->g = o->g;
    return appdev_check(ctx, dev);
}

/* ---- task insertion ------------------------------------------------------ */

static int posv_finish(weft_taskpool_t *tp, int insert_rc, const char *what, int verbose)
{
    int rc = weft_taskpool_wait(tp);
    if (insert_rc < 0) rc = insert_rc;
    if (rc < 0 && verbose) fprintf(stderr, POSV_NAME ": %s failed: %s\n", what, weft_strerror(rc));
    return rc;
}

/* One fill task a tile of B (and a prefetch with accelerators). */
static int posv_insert_fill_b(weft_taskpool_t *tp, weft_matrix_t *B, uint64_t seed, int64_t nb,
                              int prefetch)
{
    int rc = 0;
    for (int j = 0; j < weft_matrix_nt(B) && rc >= 0; j++)
        for (int i = 0; i < weft_matrix_mt(B) && rc >= 0; i++) {
            dense_tile_arg_t arg = {.seed = seed, .row0 = i * nb, .col0 = j * nb};
            rc = weft_insert_task(tp, &dense_class_fill, WEFT_W | WEFT_AFFINITY, weft_tile(B, i, j),
                                  WEFT_VALUE, &arg, sizeof arg, 0);
            if (rc >= 0 && prefetch)
                rc = weft_insert_task(tp, &potrf_class_prefetch, WEFT_R | WEFT_AFFINITY,
                                      weft_tile(B, i, j), 0);
        }
    return rc < 0 ? rc : 0;
}

/* Step k of a solve on every column j of B: the TRSM of block row k, then
 * the GEMM updates of the rows still to solve (below k forward, above k
 * backward). Earlier steps first: the next TRSM waits for them. */
static int posv_insert_solve_step(weft_taskpool_t *tp, weft_matrix_t *L, weft_matrix_t *B, int k,
                                  int forward)
{
    int nt = weft_matrix_nt(L), rc = 0;
    int prio = forward ? 2 * (nt - k) : 2 * (k + 1);
    for (int j = 0; j < weft_matrix_nt(B) && rc >= 0; j++) {
        weft_data_t *bk = weft_tile(B, k, j);
        rc = weft_insert_task(tp, forward ? &posv_class_trsm_fwd : &posv_class_trsm_bwd, WEFT_R,
                              weft_tile(L, k, k), WEFT_RW | WEFT_AFFINITY, bk, WEFT_PRIORITY,
                              prio + 1, 0);
        int m0 = forward ? k + 1 : 0, m1 = forward ? nt : k;
        for (int m = m0; m < m1 && rc >= 0; m++)
            rc = weft_insert_task(tp, forward ? &posv_class_gemm_fwd : &posv_class_gemm_bwd, WEFT_R,
                                  forward ? weft_tile(L, m, k) : weft_tile(L, k, m), WEFT_R, bk,
                                  WEFT_RW | WEFT_AFFINITY, weft_tile(B, m, j), WEFT_PRIORITY, prio,
                                  0);
    }
    return rc < 0 ? rc : 0;
}

static int posv_insert_solve(weft_taskpool_t *tp, weft_matrix_t *L, weft_matrix_t *B)
{
    int nt = weft_matrix_nt(L), rc = 0;
    for (int k = 0; k < nt && rc >= 0; k++) rc = posv_insert_solve_step(tp, L, B, k, 1);
    for (int k = nt - 1; k >= 0 && rc >= 0; k--) rc = posv_insert_solve_step(tp, L, B, k, 0);
    return rc;
}

/* ---- residual check ------------------------------------------------------ */

enum { POSV_S_R, POSV_S_A, POSV_S_X, POSV_S_W };

/* R[m][j] = B0[m][j] - sum_k A0[m][k] X[k][j] where R[m][j] lives. */
static int posv_insert_resid(weft_taskpool_t *tp, weft_matrix_t *X, weft_matrix_t *R,
                             const posv_opts_t *o, uint64_t seed_b)
{
    int nt = weft_matrix_mt(X), rc = posv_insert_fill_b(tp, R, seed_b, o->nb, 0);
    for (int j = 0; j < weft_matrix_nt(R) && rc >= 0; j++)
        for (int m = 0; m < nt && rc >= 0; m++)
            for (int k = 0; k < nt && rc >= 0; k++) {
                potrf_tile_arg_t arg = potrf_arg_at((uint64_t)o->seed, o->n, o->nb, m, k);
                rc = weft_insert_task(tp, &posv_class_resid, WEFT_R, weft_tile(X, k, j),
                                      WEFT_RW | WEFT_AFFINITY, weft_tile(R, m, j), WEFT_VALUE, &arg,
                                      sizeof arg, 0);
            }
    return rc < 0 ? rc : 0;
}

/* ||A0||^2 from the lower tiles, each on the rank of L's tile. */
static int posv_insert_anorm(weft_taskpool_t *tp, weft_matrix_t *L, weft_matrix_t *S,
                             const posv_opts_t *o)
{
    int nt = weft_matrix_nt(L), rc = 0, c = POSV_S_A;
    for (int k = 0; k < nt && rc >= 0; k++)
        for (int m = k; m < nt && rc >= 0; m++) {
            potrf_tile_arg_t arg = potrf_arg_at((uint64_t)o->seed, o->n, o->nb, m, k);
            int shape[2] = {weft_matrix_tile_rows(L, m), weft_matrix_tile_cols(L, k)};
            rc = weft_insert_task(tp, &posv_class_anorm, WEFT_RW | WEFT_AFFINITY,
                                  app_sums_of(S, L, m, k), WEFT_VALUE, &c, sizeof c, WEFT_VALUE,
                                  &arg, sizeof arg, WEFT_VALUE, shape, sizeof shape, 0);
        }
    return rc < 0 ? rc : 0;
}

/* Adds ||tile||^2 of every tile of X into column c of its rank's sums. */
static int posv_insert_sqnorms(weft_taskpool_t *tp, weft_matrix_t *X, weft_matrix_t *S, int c)
{
    int rc = 0;
    for (int j = 0; j < weft_matrix_nt(X) && rc >= 0; j++)
        for (int i = 0; i < weft_matrix_mt(X) && rc >= 0; i++)
            rc = weft_insert_task(tp, &dense_class_sqnorm, WEFT_R, weft_tile(X, i, j),
                                  WEFT_RW | WEFT_AFFINITY, app_sums_of(S, X, i, j), WEFT_VALUE, &c,
                                  sizeof c, 0);
    return rc < 0 ? rc : 0;
}

static int posv_residual(weft_context_t *ctx, weft_taskpool_t *tp, weft_matrix_t *L,
                         weft_matrix_t *X, const posv_opts_t *o, uint64_t seed_b, double *resid)
{
    int rc = WEFT_ERR_NOMEM;
    weft_matrix_t *R = weft_matrix_new(ctx, WEFT_DOUBLE, o->n, o->nrhs, (int)o->nb, (int)o->nb,
                                       (int)o->p, (int)o->q);
    weft_matrix_t *S = app_sums_new(ctx, POSV_S_W);
    double s[POSV_S_W];
    if (R == NULL || S == NULL) {
        fprintf(stderr, POSV_NAME ": cannot create the matrices of the check\n");
        goto free_matrices;
    }
    rc = app_sums_insert_zero(tp, S);
    if (rc >= 0) rc = posv_insert_resid(tp, X, R, o, seed_b);
    if (rc >= 0) rc = posv_insert_anorm(tp, L, S, o);
    if (rc >= 0) rc = posv_insert_sqnorms(tp, R, S, POSV_S_R);
    if (rc >= 0) rc = posv_insert_sqnorms(tp, X, S, POSV_S_X);
    if (rc >= 0) rc = app_sums_insert_allreduce(tp, S);
    rc = posv_finish(tp, rc, "the residual check", weft_rank(ctx) == 0);
    if (rc >= 0) rc = app_sums_read(ctx, S, s, POSV_S_W, POSV_NAME);
    if (rc >= 0)
        *resid = sqrt(s[POSV_S_R]) /
                 (sqrt(s[POSV_S_A]) * sqrt(s[POSV_S_X]) * (double)o->n * LAPACKE_dlamch_work('e'));
free_matrices:
    if (S != NULL) weft_matrix_free(S);
    if (R != NULL) weft_matrix_free(R);
    return rc;
}

/* ---- driver ---------------------------------------------------------------- */

static double posv_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct posv_data {
    weft_matrix_t *a, *b;
    weft_data_t **dinv; /* --trsm-inv: the inverted diagonal factors */
} posv_data_t;

/* Run r: generate, factorize and solve (timed), report, check. 0, a weft
 * error, or 1 for a failed check. */
static int posv_run(weft_context_t *ctx, weft_taskpool_t *tp, const posv_data_t *d,
                    const posv_opts_t *o, int64_t r)
{
    int verbose = weft_rank(ctx) == 0;
    uint64_t seed_b = dense_seed((uint64_t)o->seed + (uint64_t)r, 1);
    int rc = potrf_insert_fill(tp, d->a, (uint64_t)o->seed, o->n, o->nb);
    if (rc >= 0 && o->g > 0) rc = potrf_insert_prefetch(tp, d->a);
    if (rc >= 0) rc = posv_insert_fill_b(tp, d->b, seed_b, o->nb, o->g > 0);
    rc = posv_finish(tp, rc, "generating the matrices", verbose);
    if (rc < 0) return rc;

    appdev_snap_t before;
    appdev_snapshot(ctx, &before);
    double t0 = posv_now();
    rc = potrf_insert_factorization(tp, d->a, d->dinv, (int)o->trsm_inv);
    if (rc >= 0) rc = posv_insert_solve(tp, d->a, d->b);
    rc = posv_finish(tp, rc, "dposv", verbose);
    double t = posv_now() - t0;
    if (rc < 0) return rc;
    double n = (double)o->n, flops = n * n * n / 3.0 + 2.0 * n * n * (double)o->nrhs;
    if (verbose)
        printf("[****] TIME(s) %.6f : dposv PxQxg= %d %d %d NB= %lld N= %lld NRHS= %lld : %.2f "
               "gflops\n",
               t, (int)o->p, (int)o->q, appdev_used(ctx, &before), (long long)o->nb,
               (long long)o->n, (long long)o->nrhs, flops / t / 1e9);
    if (!o->check) return 0;
    double resid = 0.0;
    rc = posv_residual(ctx, tp, d->a, d->b, o, seed_b, &resid);
    if (rc < 0) return rc;
    int passed = resid < POSV_RESIDUAL_MAX;
    if (verbose) printf("residual = %.6e : %s\n", resid, passed ? "PASSED" : "FAILED");
    return passed ? 0 : 1;
}

static int posv_main(weft_context_t *ctx, const posv_opts_t *o)
{
    int verbose = weft_rank(ctx) == 0, rc = 0, p = (int)o->p, q = (int)o->q, nb = (int)o->nb;
    posv_data_t d = {.a = weft_matrix_new(ctx, WEFT_DOUBLE, o->n, o->n, nb, nb, p, q),
                     .b = weft_matrix_new(ctx, WEFT_DOUBLE, o->n, o->nrhs, nb, nb, p, q)};
    if (d.a != NULL) d.dinv = potrf_new_inverses(ctx, d.a, (int)o->trsm_inv, POSV_NAME, &rc);
    weft_taskpool_t *tp =
        d.a != NULL && d.b != NULL && rc == 0 ? weft_taskpool_new(ctx, "posv") : NULL;
    if (tp == NULL) {
        if (verbose) fprintf(stderr, POSV_NAME ": cannot create the matrices or the taskpool\n");
        rc = 1;
        goto free_all;
    }
    for (int64_t r = 0; r < o->nruns && rc == 0; r++) {
        rc = posv_run(ctx, tp, &d, o, r);
        fflush(stdout);
    }
    weft_taskpool_free(tp);
free_all:
    if (d.a != NULL) potrf_free_inverses(d.dinv, weft_matrix_nt(d.a));
    if (d.b != NULL) weft_matrix_free(d.b);
    if (d.a != NULL) weft_matrix_free(d.a);
    return rc == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    appdev_t dev;
    int rc = app_cli_prescan(&posv_cli, argc, argv, &dev);
    if (rc == 2) return appdev_probe(dev.prog, argc, argv);
    if (rc != 0) return rc > 0 ? 0 : 1;
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (ctx == NULL) {
        fprintf(stderr, POSV_NAME ": weft_init failed (see the message above)\n");
        appdev_init_failed(&dev);
        return 1;
    }
    int verbose = weft_rank(ctx) == 0;
    posv_opts_t o = posv_defaults;
    if (app_cli_parse(&posv_cli, argc, argv, &o, &o.check, verbose) != 0 ||
        posv_validate(ctx, &o, &dev, verbose) != 0)
        rc = 1;
    else
        rc = posv_main(ctx, &o);
    int frc = weft_fini(ctx);
    if (frc < 0) {
        fprintf(stderr, POSV_NAME ": weft_fini: %s\n", weft_strerror(frc));
        rc = 1;
    }
    return rc;
}
