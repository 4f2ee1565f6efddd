/* weft-posv: solves A X = B for NRHS right-hand sides, A symmetric positive
 * definite, by the tiled Cholesky factorization A = L L^T of weft-potrf
 * (its task graph, kernels and classes: potrf_dag.h) followed by the
 * forward solve L Y = B and the backward solve L^T X = Y, in place on B.
 *
 * A is weft-potrf's test matrix (apps/potrf_matrix.h), B an N x NRHS
 * matrix of dense_matrix.h, both tiled nb x nb and dealt alike on the
 * P x Q grid (--dist): B's block row of NRHS/nb tiles sits on the grid like A's
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

#include <lapacke.h>
#include <weft/weft.h>

#include "app_driver.h"
#include "app_sums.h"
#include "dense_tiles.h"
#include "posv_kernels.h"
#include "potrf_dag.h"

#define POSV_NAME "weft-posv"
#define POSV_RESIDUAL_MAX 60.0
#define POSV_NT_MAX (1 << 16)

typedef struct posv_opts {
    app_opts_t c;
    int64_t nrhs;
    int64_t trsm_inv; /* of the factorization; -1: 2 with -g > 0, else 0 */
} posv_opts_t;

static const posv_opts_t posv_defaults = {
    .c = {.n = 4096, .nb = 256, .p = 1, .q = 1, .cores = -1, .nruns = 1, .seed = 42, .dist = -1},
    .nrhs = 256,
    .trsm_inv = -1};

static void posv_usage(FILE *out)
{
    fprintf(out,
            "usage: weft-posv [options] [--weft-<param>=<value> ...]\n"
            "  -N <n>        order of A (default %lld)\n"
            "  --nrhs <r>    right-hand sides, columns of B (default %lld)\n"
            "  -t <nb>       tile size (default %lld; on GPUs from N, as weft-potrf)\n"
            "%s"
            "  -g <n>        accelerators a rank uses, of the type --weft-device_type names\n"
            "                (cuda by default, or emu; default 0: CPU only)\n"
            "  -c <cores>    worker cores a rank (sets WEFT_CORES before weft_init)\n"
            "  --seed <s>    seed of A and B (default %lld)\n"
            "  --nruns <r>   generate and solve r times, one line each (default 1)\n"
            "  --trsm-inv <m> the factorization's panel as weft-potrf's (default with\n"
            "                -g > 0: 1 on one rank, 2 on several; 0 without)\n"
            "  --check       check ||A X - B|| / (||A|| ||X|| N eps) < %g\n"
            "  --probe-gpus  print 'cuda_devices= <n>', the CUDA devices weft finds, and exit\n"
            "  -h, --help    this help; weft-info lists the --weft-* parameters\n",
            (long long)posv_defaults.c.n, (long long)posv_defaults.nrhs,
            (long long)posv_defaults.c.nb, app_cli_usage_grid, (long long)posv_defaults.c.seed,
            POSV_RESIDUAL_MAX);
}

static const app_flag_t posv_flags[] = {
    {"--nrhs", offsetof(posv_opts_t, nrhs), 1, INT32_MAX, 0},
    {"--trsm-inv", offsetof(posv_opts_t, trsm_inv), 0, 2, 0},
};

static int posv_validate(weft_context_t *ctx, void *opts, int verbose)
{
    posv_opts_t *o = opts;
    if (o->trsm_inv < 0) /* as weft-potrf */
        o->trsm_inv = o->c.g > 0 ? (weft_nranks(ctx) > 1 ? 2 : 1) : 0;
    if (app_cli_grid(POSV_NAME, o->c.p, o->c.q, weft_nranks(ctx), verbose) != 0) return -1;
    if (app_cli_tiles(POSV_NAME, "-N", o->c.n, o->c.nb, POSV_NT_MAX, verbose) != 0 ||
        app_cli_tiles(POSV_NAME, "--nrhs", o->nrhs, o->c.nb, POSV_NT_MAX, verbose) != 0)
        return -1;
    return 0;
}

/* ---- task insertion ------------------------------------------------------ */

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
    int nt = weft_matrix_mt(X), rc = posv_insert_fill_b(tp, R, seed_b, o->c.nb, 0);
    for (int j = 0; j < weft_matrix_nt(R) && rc >= 0; j++)
        for (int m = 0; m < nt && rc >= 0; m++)
            for (int k = 0; k < nt && rc >= 0; k++) {
                potrf_tile_arg_t arg = potrf_arg_at((uint64_t)o->c.seed, o->c.n, o->c.nb, m, k);
                rc = weft_insert_task(tp, &posv_class_resid, WEFT_R, weft_tile(X, k, j),
                                      WEFT_RW | WEFT_AFFINITY, weft_tile(R, m, j), WEFT_VALUE, &arg,
                                      sizeof arg, 0);
            }
    return rc < 0 ? rc : 0;
}

/* ||A0||^2 from the lower tiles, each on the rank of L's tile. */
static int posv_insert_anorm(weft_taskpool_t *tp, weft_matrix_t *L, app_sums_t *S,
                             const posv_opts_t *o)
{
    int nt = weft_matrix_nt(L), rc = 0, c = POSV_S_A;
    for (int k = 0; k < nt && rc >= 0; k++)
        for (int m = k; m < nt && rc >= 0; m++) {
            potrf_tile_arg_t arg = potrf_arg_at((uint64_t)o->c.seed, o->c.n, o->c.nb, m, k);
            int shape[2] = {weft_matrix_tile_rows(L, m), weft_matrix_tile_cols(L, k)};
            rc = weft_insert_task(tp, &posv_class_anorm, WEFT_RW | WEFT_AFFINITY,
                                  app_sums_of(S, L, m, k), WEFT_VALUE, &c, sizeof c, WEFT_VALUE,
                                  &arg, sizeof arg, WEFT_VALUE, shape, sizeof shape, 0);
        }
    return rc < 0 ? rc : 0;
}

/* Adds ||tile||^2 of every tile of X into column c of its rank's sums. */
static int posv_insert_sqnorms(weft_taskpool_t *tp, weft_matrix_t *X, app_sums_t *S, int c)
{
    int rc = 0;
    for (int j = 0; j < weft_matrix_nt(X) && rc >= 0; j++)
        for (int i = 0; i < weft_matrix_mt(X) && rc >= 0; i++)
            rc = weft_insert_task(tp, &dense_class_sqnorm, WEFT_R, weft_tile(X, i, j),
                                  WEFT_RW | WEFT_AFFINITY, app_sums_of(S, X, i, j), WEFT_VALUE, &c,
                                  sizeof c, 0);
    return rc < 0 ? rc : 0;
}

/* The scaled residual of the solution X in R (N x NRHS, made at set-up). */
static int posv_residual(weft_context_t *ctx, weft_taskpool_t *tp, weft_matrix_t *L,
                         weft_matrix_t *X, weft_matrix_t *R, const posv_opts_t *o, uint64_t seed_b,
                         double *resid)
{
    int rc = WEFT_ERR_NOMEM;
    app_sums_t S = app_sums_new(ctx, POSV_S_W);
    double s[POSV_S_W];
    if (S.m == NULL) {
        fprintf(stderr, POSV_NAME ": cannot create the sums of the check\n");
        goto free_matrices;
    }
    rc = app_sums_insert_zero(tp, &S);
    if (rc >= 0) rc = posv_insert_resid(tp, X, R, o, seed_b);
    if (rc >= 0) rc = posv_insert_anorm(tp, L, &S, o);
    if (rc >= 0) rc = posv_insert_sqnorms(tp, R, &S, POSV_S_R);
    if (rc >= 0) rc = posv_insert_sqnorms(tp, X, &S, POSV_S_X);
    if (rc >= 0) rc = app_sums_insert_allreduce(tp, &S);
    if (rc >= 0) rc = app_sums_insert_out(tp, &S, s);
    rc = app_wait(POSV_NAME, tp, rc, "the residual check", weft_rank(ctx) == 0);
    if (rc >= 0)
        *resid = sqrt(s[POSV_S_R]) / (sqrt(s[POSV_S_A]) * sqrt(s[POSV_S_X]) * (double)o->c.n *
                                      LAPACKE_dlamch_work('e'));
free_matrices:
    app_sums_free(&S);
    return rc;
}

/* ---- driver ---------------------------------------------------------------- */

typedef struct posv_data {
    weft_matrix_t *a, *b;
    weft_data_t **dinv; /* --trsm-inv: the inverted diagonal factors */
    weft_matrix_t *r;   /* --check: the residual */
} posv_data_t;

/* Run r: generate, factorize and solve (timed), report, check. 0, a weft
 * error, or 1 for a failed check. */
static int posv_run(weft_context_t *ctx, weft_taskpool_t *tp, const void *opts, void *data,
                    int64_t r)
{
    const posv_opts_t *o = opts;
    const posv_data_t *d = data;
    int verbose = weft_rank(ctx) == 0;
    uint64_t seed_b = dense_seed((uint64_t)o->c.seed + (uint64_t)r, 1);
    int rc = potrf_insert_fill(tp, d->a, (uint64_t)o->c.seed, o->c.n, o->c.nb);
    if (rc >= 0 && o->c.g > 0) rc = potrf_insert_prefetch(tp, d->a);
    if (rc >= 0) rc = posv_insert_fill_b(tp, d->b, seed_b, o->c.nb, o->c.g > 0);
    rc = app_wait(POSV_NAME, tp, rc, "generating the matrices", verbose);
    if (rc < 0) return rc;

    app_timer_t tm;
    app_timer_start(ctx, &tm);
    rc = potrf_insert_factorization(tp, d->a, d->dinv, (int)o->trsm_inv);
    if (rc >= 0) rc = posv_insert_solve(tp, d->a, d->b);
    rc = app_wait(POSV_NAME, tp, rc, "dposv", verbose);
    app_timer_stop(&tm);
    if (rc < 0) return rc;
    double n = (double)o->c.n, flops = n * n * n / 3.0 + 2.0 * n * n * (double)o->nrhs;
    char nrhs[32];
    snprintf(nrhs, sizeof nrhs, " NRHS= %lld", (long long)o->nrhs);
    app_report(ctx, &tm, "dposv", &o->c, nrhs, flops);
    if (!app_check_due(&o->c, r)) return 0;
    double resid = 0.0;
    rc = posv_residual(ctx, tp, d->a, d->b, d->r, o, seed_b, &resid);
    return rc < 0 ? rc : app_verdict(ctx, POSV_NAME, resid, POSV_RESIDUAL_MAX);
}

static int posv_setup(weft_context_t *ctx, const void *opts, void *data)
{
    const posv_opts_t *o = opts;
    posv_data_t *d = data;
    int rc = 0;
    d->a = app_matrix(ctx, &o->c, o->c.n, o->c.n);
    d->b = app_matrix(ctx, &o->c, o->c.n, o->nrhs);
    if (d->a != NULL) d->dinv = potrf_new_inverses(ctx, d->a, (int)o->trsm_inv, POSV_NAME, &rc);
    if (d->a == NULL || d->b == NULL || rc != 0) {
        if (weft_rank(ctx) == 0) fprintf(stderr, POSV_NAME ": cannot create the matrices\n");
        return -1;
    }
    if (o->c.check && (d->r = app_check_matrix(ctx, POSV_NAME, &o->c, o->c.n, o->nrhs)) == NULL)
        return -1;
    return 0;
}

static void posv_free(void *data)
{
    posv_data_t *d = data;
    if (d->r != NULL) weft_matrix_free(d->r);
    if (d->a != NULL) potrf_free_inverses(d->dinv, weft_matrix_nt(d->a));
    if (d->b != NULL) weft_matrix_free(d->b);
    if (d->a != NULL) weft_matrix_free(d->a);
}

static const app_driver_t posv_app = {
    .cli = {.prog = POSV_NAME,
            .flags = posv_flags,
            .nflags = sizeof posv_flags / sizeof posv_flags[0],
            .usage = posv_usage,
            .nb = 256,
            .gpu_nb_auto = 1,
            .workspace_tiles = 2.5}, /* cusolverDnDpotrf's and the check's, as weft-potrf */
    .pool = "posv",
    .validate = posv_validate,
    .setup = posv_setup,
    .free = posv_free,
    .run = posv_run};

int main(int argc, char **argv)
{
    posv_opts_t o = posv_defaults;
    posv_data_t d = {0};
    return app_main(&posv_app, &o, &d, argc, argv);
}
