/* weft-potrf: tiled Cholesky factorization (lower) of a symmetric positive
 * definite matrix on a P x Q grid of ranks (tiles dealt back and forth, or
 * cyclically with --dist cyclic and always with --ptg: app_cli.h).
 *
 * The matrix is generated from a seed by one task per tile, factorized by
 * the right-looking tile algorithm (POTRF, TRSM, SYRK, GEMM) and, with
 * --check, compared with the original: ||A - L L^T||_F / (||A||_F N eps)
 * computed by tasks where the tiles live, then reduced over the ranks with
 * tasks too, so nothing is gathered on one rank.
 *
 * -g N runs the factorization on N accelerators a rank (CUDA: cuSOLVER and
 * cuBLAS; emu: the CPU kernels as emulated device kernels), each tile on its
 * home device; the matrix is generated on the host and brought to the
 * devices before the timing starts. The line printed gives g = the
 * accelerators of rank 0 that ran factorization tasks. Public API only. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <weft/weft.h>

#include "app_driver.h"
#include "potrf_check.h"
#include "potrf_dag.h"
#include "potrf_ptg.h"

#define POTRF_NAME "weft-potrf"
#define POTRF_RESIDUAL_MAX 60.0
#define POTRF_NT_MAX (1 << 20)

typedef struct potrf_opts {
    app_opts_t c;
    int64_t trsm_inv; /* 1, 2: TRSMs by inverted diagonal factors; -1: see potrf_validate */
    int64_t preload;  /* 1: a small factorization beside the first generation; -1: on CUDA */
} potrf_opts_t;

static const potrf_opts_t potrf_defaults = {
    .c = {.n = 4096, .nb = 256, .p = 1, .q = 1, .cores = -1, .nruns = 1, .seed = 42, .dist = -1},
    .trsm_inv = -1,
    .preload = -1};

/* ---- command line ---------------------------------------------------- */

static void potrf_usage(FILE *out)
{
    fprintf(out,
            "usage: weft-potrf [options] [--weft-<param>=<value> ...]\n"
            "  -N <n>        matrix order (default %lld)\n"
            "  -t <nb>       tile size (default %lld; on GPUs 512 up to N=4096, 1024 below\n"
            "                N=32768, 2048 from there; one rank with one GPU: one tile up\n"
            "                to N=16384)\n"
            "%s"
            "  -g <n>        accelerators a rank uses, of the type --weft-device_type names\n"
            "                (cuda by default, or emu); sets device_cuda_enabled or\n"
            "                device_emu_enabled to n (already set to another count: refused;\n"
            "                default 0: CPU only)\n"
            "  -c <cores>    worker cores a rank (sets WEFT_CORES before weft_init)\n"
            "  --seed <s>    seed of the generated matrix (default %lld)\n"
            "  --nruns <r>   generate and factorize r times, one line each (default 1)\n"
            "  --trsm-inv <m> 0: a TRSM a panel tile; 1: each diagonal factor inverted\n"
            "                once (trtri task) and applied to the panel by multiplication;\n"
            "                2: the same but the first tile below the diagonal by TRSM\n"
            "                (default with -g > 0: 1 on one rank, 2 on several; 0 without)\n"
            "  --preload <0|1> 1: while the first matrix is generated, the devices factorize\n"
            "                a small one of the same tiles, so the first timed run does not\n"
            "                pay the libraries' first calls (default 1 with CUDA devices)\n"
            "  --ptg         the factorization as a parameterized task graph (weft_ptg_insert,\n"
            "                docs/PTG.md): each rank builds only its own tasks; TRSM panel\n"
            "                (--trsm-inv 0)\n"
            "  --check       check ||A - L L^T|| / (||A|| N eps) < %g against the original\n"
            "  --check-first the same check, after the first run only (timing series)\n"
            "  --probe-gpus  print 'cuda_devices= <n>', the CUDA devices weft finds, and exit\n"
            "  -h, --help    this help; weft-info lists the --weft-* parameters\n",
            (long long)potrf_defaults.c.n, (long long)potrf_defaults.c.nb, app_cli_usage_grid,
            (long long)potrf_defaults.c.seed, POTRF_RESIDUAL_MAX);
}

static const app_flag_t potrf_flags[] = {
    {"--trsm-inv", offsetof(potrf_opts_t, trsm_inv), 0, 2, 0},
    {"--preload", offsetof(potrf_opts_t, preload), 0, 1, 0},
};

/* The options against the context: grid size and tile count. */
static int potrf_validate(weft_context_t *ctx, void *opts, int verbose)
{
    potrf_opts_t *o = opts;
    /* cuBLAS's TRSM of a tile runs at a fraction of its GEMM rate. */
    if (o->c.ptg && o->trsm_inv > 0) {
        if (verbose)
            fprintf(stderr,
                    POTRF_NAME ": --ptg factorizes with TRSM panels: drop --trsm-inv %lld "
                               "(or give 0)\n",
                    (long long)o->trsm_inv);
        return -1;
    }
    /* On one H200, mode 1 measured 2-5% faster than 2 at N=8192..32768
     * (docs/RESULTS.md); on several ranks only 0 and 2 were compared (2 won), so 2
     * stays there. */
    if (o->trsm_inv < 0) o->trsm_inv = o->c.g > 0 && !o->c.ptg ? (weft_nranks(ctx) > 1 ? 2 : 1) : 0;
    if (o->preload < 0) o->preload = app_preload_default(ctx, &o->c);
    if (app_cli_grid(POTRF_NAME, o->c.p, o->c.q, weft_nranks(ctx), verbose) != 0) return -1;
    return app_cli_tile_rows(POTRF_NAME, &o->c, POTRF_NT_MAX, verbose);
}

/* ---- task insertion -------------------------------------------------- */

static potrf_tile_arg_t potrf_tile_arg(const potrf_opts_t *o, int m, int n)
{
    return potrf_arg_at((uint64_t)o->c.seed, o->c.n, o->c.nb, m, n);
}

/* The matrix a run factorizes, in place. */
typedef struct potrf_data {
    weft_matrix_t *a;
    weft_data_t **dinv; /* --trsm-inv: the inverted diagonal factors */
    weft_matrix_t *w;   /* --preload: the small matrix, until the first generation ends */
    weft_data_t **wdinv;
    weft_matrix_t *r; /* --check: the residual */
} potrf_data_t;

/* ---- residual check -------------------------------------------------- */

/* R[m][n] = A0[m][n] - sum_{k<=n} L[m][k] L[n][k]^T for m >= n, then each
 * tile's squared norms into the sums tile S[rank of the tile]. */
static int potrf_insert_residual(weft_taskpool_t *tp, weft_matrix_t *R, app_sums_t *S,
                                 const void *opts, const void *data)
{
    const potrf_opts_t *o = opts;
    weft_matrix_t *L = ((const potrf_data_t *)data)->a;
    int nt = weft_matrix_nt(L), rc = 0;
    for (int n = 0; n < nt && rc >= 0; n++) {
        for (int m = n; m < nt && rc >= 0; m++) {
            potrf_tile_arg_t arg = potrf_tile_arg(o, m, n);
            weft_data_t *r = weft_tile(R, m, n);
            rc = weft_insert_task(tp, &potrf_class_fill, WEFT_W | WEFT_AFFINITY, r, WEFT_VALUE,
                                  &arg, sizeof arg, 0);
            for (int k = 0; k <= n && rc >= 0; k++) {
                int tri = k == n;
                if (m == n)
                    rc = weft_insert_task(tp, &potrf_class_resid_syrk, WEFT_R, weft_tile(L, n, k),
                                          WEFT_RW | WEFT_AFFINITY, r, WEFT_VALUE, &tri, sizeof tri,
                                          0);
                else
                    rc = weft_insert_task(tp, &potrf_class_resid_gemm, WEFT_R, weft_tile(L, m, k),
                                          WEFT_R, weft_tile(L, n, k), WEFT_RW | WEFT_AFFINITY, r,
                                          WEFT_VALUE, &tri, sizeof tri, 0);
            }
            if (rc >= 0)
                rc = weft_insert_task(tp, &potrf_class_resid_norm, WEFT_R, r,
                                      WEFT_RW | WEFT_AFFINITY, app_sums_of(S, R, m, n), WEFT_VALUE,
                                      &arg, sizeof arg, 0);
        }
    }
    return rc < 0 ? rc : 0;
}

/* ---- driver ---------------------------------------------------------- */

static int potrf_setup(weft_context_t *ctx, const void *opts, void *data)
{
    const potrf_opts_t *o = opts;
    potrf_data_t *d = data;
    int rc = 0;
    d->a = app_matrix(ctx, &o->c, o->c.n, o->c.n);
    if (d->a == NULL) {
        if (weft_rank(ctx) == 0)
            fprintf(stderr, POTRF_NAME ": cannot create the %lld x %lld matrix (tiles %lld)\n",
                    (long long)o->c.n, (long long)o->c.n, (long long)o->c.nb);
        return -1;
    }
    if (o->c.check && (d->r = app_check_matrix(ctx, POTRF_NAME, &o->c, o->c.n, o->c.n)) == NULL)
        return -1;
    d->dinv = potrf_new_inverses(ctx, d->a, (int)o->trsm_inv, POTRF_NAME, &rc);
    if (rc == 0 && o->preload) {
        int64_t side = app_preload_order(&o->c);
        d->w = app_matrix(ctx, &o->c, side, side);
        if (d->w == NULL) return -1;
        d->wdinv = potrf_new_inverses(ctx, d->w, (int)o->trsm_inv, POTRF_NAME, &rc);
    }
    return rc == 0 ? 0 : -1;
}

/* --preload (app_driver.h): the small factorization, beside the first
 * generation. */
static int potrf_insert_preload(weft_taskpool_t *tp, const potrf_opts_t *o, potrf_data_t *d)
{
    int64_t side = app_preload_order(&o->c);
    int rc = potrf_insert_fill(tp, d->w, (uint64_t)o->c.seed + 1, side, o->c.nb);
    if (rc >= 0) rc = potrf_insert_factorization(tp, d->w, d->wdinv, (int)o->trsm_inv);
    return rc;
}

static void potrf_free_preload(potrf_data_t *d)
{
    if (d->w == NULL) return;
    potrf_free_inverses(d->wdinv, weft_matrix_nt(d->w));
    weft_matrix_free(d->w);
    d->w = NULL;
    d->wdinv = NULL;
}

static void potrf_free(void *data)
{
    potrf_data_t *d = data;
    potrf_free_preload(d);
    if (d->r != NULL) weft_matrix_free(d->r);
    if (d->a == NULL) return;
    potrf_free_inverses(d->dinv, weft_matrix_nt(d->a));
    weft_matrix_free(d->a);
}

/* Run number r: generate, factorize (timed), report, check. 0, a weft
 * error, or 1 for a failed check. */
static int potrf_run(weft_context_t *ctx, weft_taskpool_t *tp, const void *opts, void *data,
                     int64_t r)
{
    const potrf_opts_t *o = opts;
    potrf_data_t *d = data;
    int verbose = weft_rank(ctx) == 0;
    int rc = d->w ? potrf_insert_preload(tp, o, d) : 0;
    if (rc >= 0) rc = potrf_insert_fill(tp, d->a, (uint64_t)o->c.seed, o->c.n, o->c.nb);
    if (rc >= 0 && o->c.g > 0) rc = potrf_insert_prefetch(tp, d->a);
    rc = app_wait(POTRF_NAME, tp, rc, "generating the matrix", verbose);
    potrf_free_preload(d); /* its device memory goes back before the timing */
    if (rc < 0) return rc;

    app_timer_t tm;
    app_timer_start(ctx, &tm);
    if (o->c.ptg)
        rc = potrf_ptg_factorization(tp, d->a, (int)o->c.p, (int)o->c.q);
    else
        rc = potrf_insert_factorization(tp, d->a, d->dinv, (int)o->trsm_inv);
    rc = app_wait(POTRF_NAME, tp, rc, "dpotrf", verbose);
    app_timer_stop(&tm);
    if (rc < 0) return rc;
    double n = (double)o->c.n;
    app_report(ctx, &tm, "dpotrf", &o->c, "", n * n * n / 3.0);
    if (!app_check_due(&o->c, r)) return 0;
    double resid = 0.0;
    rc = app_resid_check(ctx, tp, POTRF_NAME, &o->c, d->r, potrf_insert_residual, d, &resid);
    return rc < 0 ? rc : app_verdict(ctx, POTRF_NAME, resid, POTRF_RESIDUAL_MAX);
}

static const app_driver_t potrf_app = {
    .cli = {.prog = POTRF_NAME,
            .flags = potrf_flags,
            .nflags = sizeof potrf_flags / sizeof potrf_flags[0],
            .check_first = 1,
            .ptg = 1,
            .usage = potrf_usage,
            .nb = 256,
            .gpu_nb_auto = 1,
            /* one tile: N = 8192 and 16384 at 0.97 and 1.01 of cusolverDnDpotrf, tiled
             * 0.67 and 0.95 (docs/RESULTS.md, "GPU speed"); 32768 tiled keeps 1.00 */
            .gpu_one_tile_max = 16384,
            /* cusolverDnDpotrf's work array for a tile and, for the check
             * on the GPU, a tile and its packed lower triangle */
            .workspace_tiles = 2.5},
    .pool = "potrf",
    .validate = potrf_validate,
    .setup = potrf_setup,
    .free = potrf_free,
    .run = potrf_run};

int main(int argc, char **argv)
{
    potrf_opts_t o = potrf_defaults;
    potrf_data_t d = {0};
    return app_main(&potrf_app, &o, &d, argc, argv);
}
