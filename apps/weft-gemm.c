/* weft-gemm: C = alpha A B + beta C, A M x K, B K x N, C M x N, tiled on a
 * P x Q grid of ranks (dealt back and forth or cyclically: --dist,
 * app_cli.h).
 *
 * The matrices are generated from a seed by one task per tile (alpha =
 * 0.5, beta = -0.25 on purpose: neither 1 nor 0 hides a missing scale).
 * One GEMM task per (m, n, k) runs where C[m][n] lives (on its home
 * accelerator with -g), so each tile of A travels to the ranks of its row of
 * C and each tile of B to the ranks of its column: one activation per tile
 * version per destination rank, which every rank compares after each run
 * with the count it computes from the grid (a difference fails the run).
 *
 * --check: a random vector x, r = C x - (alpha A0 (B0 x) + beta C0 x) by
 * matrix-vector tasks where the tiles of A, B and C live (A0, B0 and C0
 * regenerated from their seeds, so that a lost write of an operand shows;
 * the vectors travel), reduced with tasks into
 *   ||r|| / ((|alpha| ||A||_F ||B||_F + |beta| ||C0||_F) ||x|| K eps)
 * which must stay under GEMM_RESIDUAL_MAX: a wrong tile gives about 1/eps.
 * Public API, CBLAS and cuBLAS only. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lapacke.h>
#include <weft/weft.h>

#include "app_driver.h"
#include "app_sums.h"
#include "gemm_kernels.h"

#define GEMM_NAME "weft-gemm"
#define GEMM_ALPHA 0.5
#define GEMM_BETA (-0.25)
#define GEMM_RESIDUAL_MAX 10.0
#define GEMM_NT_MAX (1 << 16)

typedef struct gemm_opts {
    app_opts_t c;
    int64_t m, k; /* -1: N */
} gemm_opts_t;

static const gemm_opts_t gemm_defaults = {
    .c = {.n = 4096, .nb = 256, .p = 1, .q = 1, .cores = -1, .nruns = 1, .seed = 42, .dist = -1},
    .m = -1,
    .k = -1};

static void gemm_usage(FILE *out)
{
    fprintf(out,
            "usage: weft-gemm [options] [--weft-<param>=<value> ...]\n"
            "  C = %g A B %c %g C, A M x K, B K x N, C M x N\n"
            "  -N <n>        columns of B and C (default %lld)\n"
            "  -M <m>        rows of A and C (default N)\n"
            "  -K <k>        columns of A, rows of B (default N)\n"
            "  -t <nb>       tile size (default %lld; on GPUs from N, as weft-potrf)\n"
            "%s"
            "  -g <n>        accelerators a rank uses, of the type --weft-device_type names\n"
            "                (cuda by default, or emu; default 0: CPU only)\n"
            "  -c <cores>    worker cores a rank (sets WEFT_CORES before weft_init)\n"
            "  --seed <s>    seed of the generated matrices (default %lld)\n"
            "  --nruns <r>   generate and multiply r times, one line each (default 1)\n"
            "  --check       check ||C x - (alpha A B x + beta C0 x)|| scaled < %g\n"
            "  --probe-gpus  print 'cuda_devices= <n>', the CUDA devices weft finds, and exit\n"
            "  -h, --help    this help; weft-info lists the --weft-* parameters\n",
            GEMM_ALPHA, GEMM_BETA < 0 ? '-' : '+', fabs(GEMM_BETA), (long long)gemm_defaults.c.n,
            (long long)gemm_defaults.c.nb, app_cli_usage_grid, (long long)gemm_defaults.c.seed,
            GEMM_RESIDUAL_MAX);
}

static const app_flag_t gemm_flags[] = {
    {"-M", offsetof(gemm_opts_t, m), 1, INT32_MAX, 0},
    {"-K", offsetof(gemm_opts_t, k), 1, INT32_MAX, 0},
};

/* The three matrices of a run and the seeds they are generated from. */
typedef struct gemm_mats {
    weft_matrix_t *a, *b, *c;
    uint64_t seed_a, seed_b, seed_c, seed_x;
} gemm_mats_t;

static int gemm_validate(weft_context_t *ctx, void *opts, int verbose)
{
    gemm_opts_t *o = opts;
    if (o->m < 0) o->m = o->c.n;
    if (o->k < 0) o->k = o->c.n;
    if (app_cli_grid(GEMM_NAME, o->c.p, o->c.q, weft_nranks(ctx), verbose) != 0) return -1;
    if (app_cli_tiles(GEMM_NAME, "-M", o->m, o->c.nb, GEMM_NT_MAX, verbose) != 0 ||
        app_cli_tiles(GEMM_NAME, "-N", o->c.n, o->c.nb, GEMM_NT_MAX, verbose) != 0 ||
        app_cli_tiles(GEMM_NAME, "-K", o->k, o->c.nb, GEMM_NT_MAX, verbose) != 0)
        return -1;
    return 0;
}

/* ---- task insertion ---------------------------------------------------- */

static dense_tile_arg_t gemm_arg(uint64_t seed, int64_t nb, int i, int j)
{
    return (dense_tile_arg_t){.seed = seed, .row0 = (int64_t)i * nb, .col0 = (int64_t)j * nb};
}

/* One fill task a tile of X, and with accelerators one prefetch task a
 * tile, so that the timed product starts with the tiles at home. */
static int gemm_insert_fill(weft_taskpool_t *tp, weft_matrix_t *X, uint64_t seed, int64_t nb,
                            int prefetch)
{
    int rc = 0;
    for (int j = 0; j < weft_matrix_nt(X) && rc >= 0; j++)
        for (int i = 0; i < weft_matrix_mt(X) && rc >= 0; i++) {
            dense_tile_arg_t arg = gemm_arg(seed, nb, i, j);
            rc = weft_insert_task(tp, &dense_class_fill, WEFT_W | WEFT_AFFINITY, weft_tile(X, i, j),
                                  WEFT_VALUE, &arg, sizeof arg, 0);
            if (rc >= 0 && prefetch)
                rc = weft_insert_task(tp, &gemm_class_prefetch, WEFT_R | WEFT_AFFINITY,
                                      weft_tile(X, i, j), 0);
        }
    return rc < 0 ? rc : 0;
}

/* The step where C(m,n)'s sum starts: the first k whose tiles of A and B
 * are both on C(m,n)'s rank, else the first with one of them there, else
 * 0. Started there, a rank computes from the first moment while the tiles
 * of its other steps travel; from k = 0 on each C(m,n) it waited for them
 * (on 2 ranks x 1 core, rank 1 idled 546 ms for its first tile of B: 16
 * transfers of 8 MiB in flight, each crossing between the processes for
 * the first time). On a P x Q grid a k with both is among the first
 * lcm(P, Q) (cyclic) or lcm(2P, 2Q) (reflected) where one exists (not on
 * every rank when P and Q share a factor: then one operand is local), so
 * the search stops at
 * GEMM_LOCAL_SEARCH steps. The order of the sum, so its rounding, follows
 * the grid; on one rank it is k = 0, 1, ... */
#define GEMM_LOCAL_SEARCH 64
static int gemm_first_k(const gemm_mats_t *x, int m, int n)
{
    int r = weft_matrix_tile_rank(x->c, m, n), kt = weft_matrix_nt(x->a), one = -1;
    for (int k = 0; k < kt && k < GEMM_LOCAL_SEARCH; k++) {
        int a = weft_matrix_tile_rank(x->a, m, k) == r, b = weft_matrix_tile_rank(x->b, k, n) == r;
        if (a && b) return k;
        if ((a || b) && one < 0) one = k;
    }
    return one < 0 ? 0 : one;
}

/* Steps outermost, as SUMMA: step s of C(m,n) is k = (first + s) mod kt,
 * first from gemm_first_k (kept a tile, or found again a task when there
 * is no memory to keep them); the tasks of step s get the higher priority,
 * so that the tiles they read go out first. beta scales C at its first
 * step. Every rank computes the same order from the same distribution. */
static int gemm_insert_product(weft_taskpool_t *tp, const gemm_mats_t *x)
{
    int mt = weft_matrix_mt(x->c), nt = weft_matrix_nt(x->c), kt = weft_matrix_nt(x->a), rc = 0;
    int *first = malloc((size_t)mt * (size_t)nt * sizeof *first);
    for (int n = 0; n < nt && first != NULL; n++)
        for (int m = 0; m < mt; m++) first[m + (size_t)n * mt] = gemm_first_k(x, m, n);
    for (int s = 0; s < kt && rc >= 0; s++)
        for (int n = 0; n < nt && rc >= 0; n++)
            for (int m = 0; m < mt && rc >= 0; m++) {
                int k0 = first != NULL ? first[m + (size_t)n * mt] : gemm_first_k(x, m, n);
                int k = (k0 + s) % kt;
                gemm_scal_t sc = {.alpha = GEMM_ALPHA, .beta = s == 0 ? GEMM_BETA : 1.0};
                rc = weft_insert_task(tp, &gemm_class_gemm, WEFT_R, weft_tile(x->a, m, k), WEFT_R,
                                      weft_tile(x->b, k, n), WEFT_RW | WEFT_AFFINITY,
                                      weft_tile(x->c, m, n), WEFT_VALUE, &sc, sizeof sc,
                                      WEFT_PRIORITY, kt - s, 0);
            }
    free(first);
    return rc < 0 ? rc : 0;
}

/* ---- message count ------------------------------------------------------ */

/* Distinct ranks other than `rank` among the owners of row (by_row) or
 * column `idx` of C: where a tile of A (row idx) or B (column idx) goes. */
static int64_t gemm_dests(weft_matrix_t *C, int by_row, int idx, int rank, char *seen, int nranks)
{
    int len = by_row ? weft_matrix_nt(C) : weft_matrix_mt(C);
    int64_t count = 0;
    memset(seen, 0, (size_t)nranks);
    for (int j = 0; j < len; j++) {
        int r = by_row ? weft_matrix_tile_rank(C, idx, j) : weft_matrix_tile_rank(C, j, idx);
        if (r != rank && !seen[r]) count++;
        seen[r] = 1;
    }
    return count;
}

/* The activations this rank sends in one product: one per tile of A or B
 * it holds per other rank that holds a tile of C needing it. -1 when out
 * of memory. */
static int64_t gemm_expected_activations(const gemm_mats_t *x, int rank, int nranks)
{
    char *seen = malloc((size_t)nranks);
    if (seen == NULL) return -1;
    int64_t count = 0;
    for (int k = 0; k < weft_matrix_nt(x->a); k++) {
        for (int m = 0; m < weft_matrix_mt(x->a); m++)
            if (weft_matrix_tile_rank(x->a, m, k) == rank)
                count += gemm_dests(x->c, 1, m, rank, seen, nranks);
        for (int n = 0; n < weft_matrix_nt(x->b); n++)
            if (weft_matrix_tile_rank(x->b, k, n) == rank)
                count += gemm_dests(x->c, 0, n, rank, seen, nranks);
    }
    free(seen);
    return count;
}

/* Every rank compares; 0, or 1 after a message. A simulation sends
 * nothing (its summary line counts the SENDs inferred): not compared. */
static int gemm_check_activations(weft_context_t *ctx, const gemm_mats_t *x, int64_t sent)
{
    if (app_sim(ctx)) return 0;
    int rank = weft_rank(ctx);
    int64_t want = gemm_expected_activations(x, rank, weft_nranks(ctx));
    if (rank == 0 || sent != want)
        printf(GEMM_NAME ": rank %d: activations sent %lld, expected %lld : %s\n", rank,
               (long long)sent, (long long)want, sent == want ? "as computed" : "WRONG COUNT");
    return sent == want ? 0 : 1;
}

/* ---- residual check ------------------------------------------------------ */

enum { GEMM_S_R, GEMM_S_A, GEMM_S_B, GEMM_S_C, GEMM_S_X, GEMM_S_W };

/* Vectors of the check: len x 1 in nb x 1 tiles, tile i on rank i % nranks. */
static weft_matrix_t *gemm_vector(weft_context_t *ctx, int64_t len, int64_t nb)
{
    return weft_matrix_new(ctx, WEFT_DOUBLE, len, 1, (int)nb, 1, weft_nranks(ctx), 1);
}

/* Adds ||tile||^2 of every tile of X into column c of the sums of the rank
 * that holds it. */
static int gemm_insert_sqnorms(weft_taskpool_t *tp, weft_matrix_t *X, app_sums_t *S, int c)
{
    int rc = 0;
    for (int j = 0; j < weft_matrix_nt(X) && rc >= 0; j++)
        for (int i = 0; i < weft_matrix_mt(X) && rc >= 0; i++)
            rc = weft_insert_task(tp, &dense_class_sqnorm, WEFT_R, weft_tile(X, i, j),
                                  WEFT_RW | WEFT_AFFINITY, app_sums_of(S, X, i, j), WEFT_VALUE, &c,
                                  sizeof c, 0);
    return rc < 0 ? rc : 0;
}

/* Adds ||tile||^2 of every tile of the operand generated from seed into
 * column c, where X's tiles are: regenerated, as the products below. */
static int gemm_insert_sqnorms_gen(weft_taskpool_t *tp, weft_matrix_t *X, uint64_t seed,
                                   app_sums_t *S, int c, int64_t nb)
{
    int rc = 0;
    for (int j = 0; j < weft_matrix_nt(X) && rc >= 0; j++)
        for (int i = 0; i < weft_matrix_mt(X) && rc >= 0; i++) {
            dense_tile_arg_t arg = gemm_arg(seed, nb, i, j);
            int shape[2] = {weft_matrix_tile_rows(X, i), weft_matrix_tile_cols(X, j)};
            rc = weft_insert_task(tp, &gemm_class_sqnorm_gen, WEFT_RW | WEFT_AFFINITY,
                                  app_sums_of(S, X, i, j), WEFT_VALUE, &c, sizeof c, WEFT_VALUE,
                                  &arg, sizeof arg, WEFT_VALUE, shape, sizeof shape, 0);
        }
    return rc < 0 ? rc : 0;
}

/* w[i] += s T0[i][j] v[j] for every tile of operand T, run where T[i][j]
 * is, with T0 the tile regenerated from seed (not the stored one). */
static int gemm_insert_matvec(weft_taskpool_t *tp, weft_matrix_t *T, uint64_t seed,
                              weft_matrix_t *v, weft_matrix_t *w, double s, int64_t nb)
{
    int rc = 0;
    for (int j = 0; j < weft_matrix_nt(T) && rc >= 0; j++)
        for (int i = 0; i < weft_matrix_mt(T) && rc >= 0; i++) {
            dense_tile_arg_t arg = gemm_arg(seed, nb, i, j);
            rc = weft_insert_task(tp, &gemm_class_gemv, WEFT_R | WEFT_AFFINITY, weft_tile(T, i, j),
                                  WEFT_R, weft_tile(v, j, 0), WEFT_RW, weft_tile(w, i, 0),
                                  WEFT_VALUE, &s, sizeof s, WEFT_VALUE, &arg, sizeof arg, 0);
        }
    return rc < 0 ? rc : 0;
}

/* r += C x - beta C0 x, where the tiles of C are. */
static int gemm_insert_cdiff(weft_taskpool_t *tp, const gemm_mats_t *x, weft_matrix_t *xv,
                             weft_matrix_t *r, int64_t nb)
{
    int rc = 0;
    double beta = GEMM_BETA;
    for (int j = 0; j < weft_matrix_nt(x->c) && rc >= 0; j++)
        for (int i = 0; i < weft_matrix_mt(x->c) && rc >= 0; i++) {
            dense_tile_arg_t arg = gemm_arg(x->seed_c, nb, i, j);
            rc = weft_insert_task(tp, &gemm_class_cdiff, WEFT_R | WEFT_AFFINITY,
                                  weft_tile(x->c, i, j), WEFT_R, weft_tile(xv, j, 0), WEFT_RW,
                                  weft_tile(r, i, 0), WEFT_VALUE, &beta, sizeof beta, WEFT_VALUE,
                                  &arg, sizeof arg, 0);
        }
    return rc < 0 ? rc : 0;
}

/* y = B x, r = C x - beta C0 x - alpha A y, then the squared norms. */
static int gemm_insert_check(weft_taskpool_t *tp, const gemm_mats_t *x, weft_matrix_t *const v[3],
                             app_sums_t *S, int64_t nb)
{
    weft_matrix_t *xv = v[0], *y = v[1], *r = v[2];
    int rc = app_sums_insert_zero(tp, S);
    if (rc >= 0) rc = gemm_insert_fill(tp, xv, x->seed_x, nb, 0);
    for (int i = 0; i < weft_matrix_mt(y) && rc >= 0; i++)
        rc = weft_insert_task(tp, &dense_class_zero, WEFT_W | WEFT_AFFINITY, weft_tile(y, i, 0), 0);
    for (int i = 0; i < weft_matrix_mt(r) && rc >= 0; i++)
        rc = weft_insert_task(tp, &dense_class_zero, WEFT_W | WEFT_AFFINITY, weft_tile(r, i, 0), 0);
    if (rc >= 0) rc = gemm_insert_matvec(tp, x->b, x->seed_b, xv, y, 1.0, nb);
    if (rc >= 0) rc = gemm_insert_cdiff(tp, x, xv, r, nb);
    if (rc >= 0) rc = gemm_insert_sqnorms_gen(tp, x->c, x->seed_c, S, GEMM_S_C, nb);
    if (rc >= 0) rc = gemm_insert_matvec(tp, x->a, x->seed_a, y, r, -GEMM_ALPHA, nb);
    if (rc >= 0) rc = gemm_insert_sqnorms(tp, r, S, GEMM_S_R);
    if (rc >= 0) rc = gemm_insert_sqnorms_gen(tp, x->a, x->seed_a, S, GEMM_S_A, nb);
    if (rc >= 0) rc = gemm_insert_sqnorms_gen(tp, x->b, x->seed_b, S, GEMM_S_B, nb);
    if (rc >= 0) rc = gemm_insert_sqnorms(tp, xv, S, GEMM_S_X);
    if (rc >= 0) rc = app_sums_insert_allreduce(tp, S);
    return rc;
}

/* The scaled residual of the product in x->c, in *resid. */
static int gemm_residual(weft_context_t *ctx, weft_taskpool_t *tp, const gemm_mats_t *x,
                         const gemm_opts_t *o, double *resid)
{
    int rc = WEFT_ERR_NOMEM;
    weft_matrix_t *v[3] = {gemm_vector(ctx, o->c.n, o->c.nb), gemm_vector(ctx, o->k, o->c.nb),
                           gemm_vector(ctx, o->m, o->c.nb)};
    app_sums_t S = app_sums_new(ctx, GEMM_S_W);
    double s[GEMM_S_W];
    if (v[0] == NULL || v[1] == NULL || v[2] == NULL || S.m == NULL) {
        fprintf(stderr, GEMM_NAME ": cannot create the vectors of the check\n");
        goto free_vectors;
    }
    rc = gemm_insert_check(tp, x, v, &S, o->c.nb);
    if (rc >= 0) rc = app_sums_insert_out(tp, &S, s);
    rc = app_wait(GEMM_NAME, tp, rc, "the residual check", weft_rank(ctx) == 0);
    if (rc >= 0) {
        double scale = fabs(GEMM_ALPHA) * sqrt(s[GEMM_S_A]) * sqrt(s[GEMM_S_B]) +
                       fabs(GEMM_BETA) * sqrt(s[GEMM_S_C]);
        *resid = sqrt(s[GEMM_S_R]) /
                 (scale * sqrt(s[GEMM_S_X]) * (double)o->k * LAPACKE_dlamch_work('e'));
    }
free_vectors:
    app_sums_free(&S);
    for (int i = 0; i < 3; i++)
        if (v[i] != NULL) weft_matrix_free(v[i]);
    return rc;
}

/* ---- driver ---------------------------------------------------------------- */

static int gemm_fill_all(weft_taskpool_t *tp, const gemm_mats_t *x, const gemm_opts_t *o,
                         int verbose)
{
    int pre = o->c.g > 0;
    int rc = gemm_insert_fill(tp, x->a, x->seed_a, o->c.nb, pre);
    if (rc >= 0) rc = gemm_insert_fill(tp, x->b, x->seed_b, o->c.nb, pre);
    if (rc >= 0) rc = gemm_insert_fill(tp, x->c, x->seed_c, o->c.nb, pre);
    return app_wait(GEMM_NAME, tp, rc, "generating the matrices", verbose);
}

/* Run r: generate, multiply (timed), report, count the messages, check.
 * 0, a weft error, or 1 for a failed check or count. */
static int gemm_run(weft_context_t *ctx, weft_taskpool_t *tp, const void *opts, void *data,
                    int64_t r)
{
    const gemm_opts_t *o = opts;
    gemm_mats_t *x = data;
    uint64_t seed = (uint64_t)o->c.seed + (uint64_t)r;
    x->seed_a = dense_seed(seed, 0);
    x->seed_b = dense_seed(seed, 1);
    x->seed_c = dense_seed(seed, 2);
    x->seed_x = dense_seed(seed, 3);
    int verbose = weft_rank(ctx) == 0;
    int rc = gemm_fill_all(tp, x, o, verbose);
    if (rc < 0) return rc;
    weft_stats_t before, after;
    app_timer_t tm;
    app_timer_start(ctx, &tm);
    if (weft_stats_get(ctx, &before) != 0) return WEFT_ERR_INTERNAL;
    rc = gemm_insert_product(tp, x);
    rc = app_wait(GEMM_NAME, tp, rc, "dgemm", verbose);
    app_timer_stop(&tm);
    if (rc < 0) return rc;
    if (weft_stats_get(ctx, &after) != 0) return WEFT_ERR_INTERNAL;
    /* A product that is not square says its M and K: the rate is 2 M N K. */
    char mk[64] = "";
    if (o->m != o->c.n || o->k != o->c.n)
        snprintf(mk, sizeof mk, " M= %lld K= %lld", (long long)o->m, (long long)o->k);
    app_report(ctx, &tm, "dgemm", &o->c, mk, 2.0 * (double)o->m * (double)o->c.n * (double)o->k);
    int bad = gemm_check_activations(ctx, x, after.activations_sent - before.activations_sent);
    /* Every rank's: a rank alone stopping its runs would leave the others
     * in the next run's wait. */
    bad = !app_all_passed(!bad);
    if (!app_check_due(&o->c, r)) return bad;
    double resid = 0.0;
    rc = gemm_residual(ctx, tp, x, o, &resid);
    if (rc < 0) return rc;
    return app_verdict(ctx, GEMM_NAME, resid, GEMM_RESIDUAL_MAX) != 0 ? 1 : bad;
}

static int gemm_setup(weft_context_t *ctx, const void *opts, void *data)
{
    const gemm_opts_t *o = opts;
    gemm_mats_t *x = data;
    x->a = app_matrix(ctx, &o->c, o->m, o->k);
    x->b = app_matrix(ctx, &o->c, o->k, o->c.n);
    x->c = app_matrix(ctx, &o->c, o->m, o->c.n);
    if (x->a != NULL && x->b != NULL && x->c != NULL) return 0;
    if (weft_rank(ctx) == 0) fprintf(stderr, GEMM_NAME ": cannot create the matrices\n");
    return -1;
}

static void gemm_free(void *data)
{
    gemm_mats_t *x = data;
    if (x->c != NULL) weft_matrix_free(x->c);
    if (x->b != NULL) weft_matrix_free(x->b);
    if (x->a != NULL) weft_matrix_free(x->a);
}

static const app_driver_t gemm_app = {
    .cli = {.prog = GEMM_NAME,
            .flags = gemm_flags,
            .nflags = sizeof gemm_flags / sizeof gemm_flags[0],
            .usage = gemm_usage,
            .nb = 256,
            .gpu_nb_auto = 1,
            .workspace_tiles = 0.0}, /* the batch body: 3 pointers a task, far below 1 MiB */
    .pool = "gemm",
    .validate = gemm_validate,
    .setup = gemm_setup,
    .free = gemm_free,
    .run = gemm_run};

int main(int argc, char **argv)
{
    gemm_opts_t o = gemm_defaults;
    gemm_mats_t x = {0};
    return app_main(&gemm_app, &o, &x, argc, argv);
}
