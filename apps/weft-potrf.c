/* weft-potrf: tiled Cholesky factorization (lower) of a symmetric positive
 * definite matrix on a 2D block-cyclic P x Q grid of ranks.
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

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <weft/weft.h>

#include "app_devices.h"
#include "app_flags.h"
#include "potrf_check.h"
#include "potrf_dag.h"

#define POTRF_RESIDUAL_MAX 60.0
#define POTRF_NT_MAX (1 << 20)

typedef struct potrf_opts {
    int64_t n, nb, p, q, g, cores, nruns, seed;
    int64_t trsm_inv; /* 1, 2: TRSMs by inverted diagonal factors; -1: 2 with -g > 0 */
    int check;        /* 1: every run, 2: the first run only (--check-first) */
} potrf_opts_t;

static const potrf_opts_t potrf_defaults = {.n = 4096,
                                            .nb = 256,
                                            .p = 1,
                                            .q = 1,
                                            .g = 0,
                                            .cores = -1,
                                            .nruns = 1,
                                            .seed = 42,
                                            .trsm_inv = -1,
                                            .check = 0};

/* ---- command line ---------------------------------------------------- */

static void potrf_usage(FILE *out)
{
    fprintf(out,
            "usage: weft-potrf [options] [--weft-<param>=<value> ...]\n"
            "  -N <n>        matrix order (default %lld)\n"
            "  -t <nb>       tile size (default %lld)\n"
            "  -P <p>        rows of the process grid (default 1)\n"
            "  -Q <q>        columns of the process grid (default 1); P*Q = ranks\n"
            "  -g <n>        accelerators a rank uses, of the type --weft-device_type names\n"
            "                (cuda by default, or emu); sets device_cuda_enabled or\n"
            "                device_emu_enabled to n unless already set (default 0: CPU only)\n"
            "  -c <cores>    worker cores a rank (sets WEFT_CORES before weft_init)\n"
            "  --seed <s>    seed of the generated matrix (default %lld)\n"
            "  --nruns <r>   generate and factorize r times, one line each (default 1)\n"
            "  --trsm-inv <m> 0: a TRSM a panel tile; 1: each diagonal factor inverted\n"
            "                once (trtri task) and applied to the panel by multiplication;\n"
            "                2: the same but the first tile below the diagonal by TRSM\n"
            "                (default 2 with -g > 0, 0 without)\n"
            "  --check       check ||A - L L^T|| / (||A|| N eps) < %g against the original\n"
            "  --check-first the same check, after the first run only (timing series)\n"
            "  --probe-gpus  print 'cuda_devices= <n>', the CUDA devices weft finds, and exit\n"
            "  -h, --help    this help; weft-info lists the --weft-* parameters\n",
            (long long)potrf_defaults.n, (long long)potrf_defaults.nb,
            (long long)potrf_defaults.seed, POTRF_RESIDUAL_MAX);
}

static const app_flag_t potrf_flags[] = {
    {"-N", offsetof(potrf_opts_t, n), 1, INT32_MAX},
    {"-t", offsetof(potrf_opts_t, nb), 1, INT32_MAX / 2},
    {"-P", offsetof(potrf_opts_t, p), 1, 1 << 20},
    {"-Q", offsetof(potrf_opts_t, q), 1, 1 << 20},
    {"-g", offsetof(potrf_opts_t, g), 0, 1024},
    {"-c", offsetof(potrf_opts_t, cores), 1, 4096},
    {"--seed", offsetof(potrf_opts_t, seed), 0, INT64_MAX},
    {"--nruns", offsetof(potrf_opts_t, nruns), 1, 1000000},
    {"--trsm-inv", offsetof(potrf_opts_t, trsm_inv), 0, 2},
};

/* With accelerators, each execution stream's scratch memory must hold
 * cusolverDnDpotrf's work array for an nb x nb tile and, for the check on
 * the GPU, a tile and its packed lower triangle: 2.5 tiles and 1 MiB cover
 * both. Unless the user set device_workspace, it is raised to that before
 * weft_init (the default, 16M, is enough up to nb of about 700). */
static int potrf_size_workspace(int argc, char **argv, const appdev_t *dev, int64_t nb)
{
    const char *var = "WEFT_DEVICE_WORKSPACE";
    if (dev->g <= 0 || appdev_weft_opt(argc, argv, "device_workspace") != NULL || getenv(var))
        return 0;
    int64_t need = 5 * nb * nb * (int64_t)sizeof(double) / 2 + (1 << 20);
    if (need <= 16 << 20) return 0;
    char text[32];
    snprintf(text, sizeof text, "%lld", (long long)need);
    return appdev_setenv(dev->prog, var, text);
}

/* Before weft_init: handles -h/--help (returns 1), --probe-gpus (returns
 * 2), -c, which must reach weft_init as WEFT_CORES, -g, which sets the
 * device count of its type (app_devices.h), and -t, which sizes the
 * devices' workspace. Other options are parsed after weft_init. */
static int potrf_prescan(int argc, char **argv, appdev_t *dev)
{
    dev->prog = "weft-potrf";
    dev->g = -1;
    int64_t nb = potrf_defaults.nb;
    if (appdev_probe_asked(argc, argv)) return 2;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *value;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            potrf_usage(stdout);
            return 1;
        }
        if (strncmp(a, "--weft-", 7) == 0) {
            if (strchr(a, '=') == NULL) i++; /* "--weft-<name> <value>" */
            continue;
        }
        const app_flag_t *f = app_flag_at(potrf_flags, sizeof potrf_flags / sizeof potrf_flags[0],
                                          argc, argv, &i, &value);
        if (f != NULL && strcmp(f->name, "-t") == 0) {
            if (app_parse_int("weft-potrf", "-t", value, f->min, f->max, &nb, 0) != 0)
                nb = potrf_defaults.nb; /* reported after weft_init */
            continue;
        }
        if (f != NULL && strcmp(f->name, "-g") == 0) {
            /* a malformed value is reported after weft_init */
            if (app_parse_int("weft-potrf", "-g", value, f->min, f->max, &dev->g, 0) != 0)
                dev->g = -1;
            continue;
        }
        if (f == NULL || strcmp(f->name, "-c") != 0)
            continue; /* unknown or missing values are reported after weft_init */
        int64_t cores;
        if (app_parse_int("weft-potrf", "-c", value, f->min, f->max, &cores, 1) != 0) return -1;
        char text[32];
        snprintf(text, sizeof text, "%lld", (long long)cores);
        if (setenv("WEFT_CORES", text, 1) != 0) {
            fprintf(stderr, "weft-potrf: cannot set WEFT_CORES: %s\n", strerror(errno));
            return -1;
        }
    }
    if (appdev_prepare(dev, argc, argv) != 0) return -1;
    return potrf_size_workspace(argc, argv, dev, nb);
}

/* After weft_init (its --weft-* options are gone from argv). */
static int potrf_parse(int argc, char **argv, potrf_opts_t *o, int verbose)
{
    *o = potrf_defaults;
    for (int i = 1; i < argc; i++) {
        const char *value;
        if (strcmp(argv[i], "--check") == 0 || strcmp(argv[i], "--check-first") == 0) {
            o->check = strcmp(argv[i], "--check") == 0 ? 1 : 2;
            continue;
        }
        const app_flag_t *f = app_flag_at(potrf_flags, sizeof potrf_flags / sizeof potrf_flags[0],
                                          argc, argv, &i, &value);
        if (f == NULL) {
            if (verbose && value != NULL)
                fprintf(stderr, "weft-potrf: %s needs a value (see --help)\n", argv[i]);
            else if (verbose)
                fprintf(stderr, "weft-potrf: unknown option '%s' (see --help)\n", argv[i]);
            return -1;
        }
        int64_t *dst = (int64_t *)((char *)o + f->offset);
        if (app_parse_int("weft-potrf", f->name, value, f->min, f->max, dst, verbose) != 0)
            return -1;
    }
    /* cuBLAS's TRSM of a tile runs at a fraction of its GEMM rate. */
    if (o->trsm_inv < 0) o->trsm_inv = o->g > 0 ? 2 : 0;
    return 0;
}

/* Checks the options against the context: grid size, tile count and the
 * accelerators asked for. */
static int potrf_validate(weft_context_t *ctx, const potrf_opts_t *o, appdev_t *dev, int verbose)
{
    int nranks = weft_nranks(ctx);
    if (o->p * o->q != nranks) {
        if (verbose)
            fprintf(stderr,
                    "weft-potrf: -P %lld x -Q %lld = %lld ranks, but running on %d "
                    "(P*Q must equal the number of ranks)\n",
                    (long long)o->p, (long long)o->q, (long long)(o->p * o->q), nranks);
        return -1;
    }
    if ((o->n + o->nb - 1) / o->nb > POTRF_NT_MAX) {
        if (verbose)
            fprintf(stderr,
                    "weft-potrf: -N %lld / -t %lld makes more than %d tile rows; "
                    "use a larger -t\n",
                    (long long)o->n, (long long)o->nb, POTRF_NT_MAX);
        return -1;
    }
    dev->g = o->g;
    return appdev_check(ctx, dev);
}

/* ---- task insertion -------------------------------------------------- */

static potrf_tile_arg_t potrf_tile_arg(const potrf_opts_t *o, int m, int n)
{
    return potrf_arg_at((uint64_t)o->seed, o->n, o->nb, m, n);
}

/* Waits for tp even after a failed insertion (so nothing is left running)
 * and returns the first error of the two. */
static int potrf_finish(weft_taskpool_t *tp, int insert_rc, const char *what, int verbose)
{
    int rc = weft_taskpool_wait(tp);
    if (insert_rc < 0) rc = insert_rc;
    if (rc < 0 && verbose) fprintf(stderr, "weft-potrf: %s failed: %s\n", what, weft_strerror(rc));
    return rc;
}

/* ---- residual check -------------------------------------------------- */

/* R[m][n] = A0[m][n] - sum_{k<=n} L[m][k] L[n][k]^T for m >= n, then each
 * tile's squared norms into the 1x2 sums tile S[rank of the tile]. */
static int potrf_insert_residual(weft_taskpool_t *tp, weft_matrix_t *L, weft_matrix_t *R,
                                 weft_matrix_t *S, const potrf_opts_t *o)
{
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
                                      WEFT_RW | WEFT_AFFINITY,
                                      weft_tile(S, weft_matrix_tile_rank(R, m, n), 0), WEFT_VALUE,
                                      &arg, sizeof arg, 0);
        }
    }
    return rc < 0 ? rc : 0;
}

/* All-reduce of the 1x2 sums tiles S[i] (tile i on rank i): a chain into
 * S[0], then S[0] copied back to every S[i]. */
static int potrf_insert_allreduce(weft_taskpool_t *tp, weft_matrix_t *S, int nranks)
{
    int rc = 0;
    for (int i = 1; i < nranks && rc >= 0; i++)
        rc = weft_insert_task(tp, &potrf_class_sum_add, WEFT_R, weft_tile(S, i, 0),
                              WEFT_RW | WEFT_AFFINITY, weft_tile(S, 0, 0), 0);
    for (int i = 1; i < nranks && rc >= 0; i++)
        rc = weft_insert_task(tp, &potrf_class_sum_copy, WEFT_R, weft_tile(S, 0, 0),
                              WEFT_W | WEFT_AFFINITY, weft_tile(S, i, 0), 0);
    return rc < 0 ? rc : 0;
}

static int potrf_insert_check(weft_taskpool_t *tp, weft_matrix_t *L, weft_matrix_t *R,
                              weft_matrix_t *S, const potrf_opts_t *o, int nranks)
{
    int rc = 0;
    for (int i = 0; i < nranks && rc >= 0; i++)
        rc = weft_insert_task(tp, &potrf_class_sum_zero, WEFT_W | WEFT_AFFINITY, weft_tile(S, i, 0),
                              0);
    if (rc >= 0) rc = potrf_insert_residual(tp, L, R, S, o);
    if (rc >= 0) rc = potrf_insert_allreduce(tp, S, nranks);
    return rc < 0 ? rc : 0;
}

/* The scaled residual of the factorization held in L, in *resid. */
static int potrf_residual(weft_context_t *ctx, weft_taskpool_t *tp, weft_matrix_t *L,
                          const potrf_opts_t *o, double *resid)
{
    int rank = weft_rank(ctx), nranks = weft_nranks(ctx), rc = WEFT_ERR_NOMEM;
    weft_matrix_t *R =
        weft_matrix_new(ctx, WEFT_DOUBLE, o->n, o->n, (int)o->nb, (int)o->nb, (int)o->p, (int)o->q);
    weft_matrix_t *S = weft_matrix_new(ctx, WEFT_DOUBLE, nranks, 2, 1, 2, nranks, 1);
    if (R == NULL || S == NULL) {
        fprintf(stderr, "weft-potrf: cannot create the matrices of the check\n");
        goto free_matrices;
    }
    rc = potrf_insert_check(tp, L, R, S, o, nranks);
    rc = potrf_finish(tp, rc, "the residual check", rank == 0);
    if (rc < 0) goto free_matrices;
    int64_t ld = 0;
    const double *s = weft_data_host_ptr(weft_tile(S, rank, 0), &ld);
    if (s == NULL) {
        fprintf(stderr, "weft-potrf: rank %d does not hold its residual sums\n", rank);
        rc = WEFT_ERR_INTERNAL;
        goto free_matrices;
    }
    double eps = LAPACKE_dlamch_work('e');
    *resid = sqrt(s[0]) / (sqrt(s[ld]) * (double)o->n * eps);
free_matrices:
    if (S != NULL) weft_matrix_free(S);
    if (R != NULL) weft_matrix_free(R);
    return rc;
}

/* ---- driver ---------------------------------------------------------- */

static double potrf_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Run number r: generate, factorize (timed), report, check. 0, a weft
 * error, or 1 for a failed check. */
static int potrf_run(weft_context_t *ctx, weft_taskpool_t *tp, weft_matrix_t *A, weft_data_t **dinv,
                     const potrf_opts_t *o, int64_t r)
{
    int verbose = weft_rank(ctx) == 0;
    int rc = potrf_insert_fill(tp, A, (uint64_t)o->seed, o->n, o->nb);
    if (rc >= 0 && o->g > 0) rc = potrf_insert_prefetch(tp, A);
    rc = potrf_finish(tp, rc, "generating the matrix", verbose);
    if (rc < 0) return rc;

    appdev_snap_t before;
    appdev_snapshot(ctx, &before);
    double t0 = potrf_now();
    rc = potrf_insert_factorization(tp, A, dinv, (int)o->trsm_inv);
    rc = potrf_finish(tp, rc, "dpotrf", verbose);
    double t = potrf_now() - t0;
    if (rc < 0) return rc;
    /* g: the accelerators of this rank that ran factorization tasks. */
    int g = appdev_used(ctx, &before);
    double n = (double)o->n;
    if (verbose)
        printf("[****] TIME(s) %.6f : dpotrf PxQxg= %d %d %d NB= %lld N= %lld : %.2f gflops\n", t,
               (int)o->p, (int)o->q, g, (long long)o->nb, (long long)o->n,
               n * n * n / 3.0 / t / 1e9);
    if (!o->check || (o->check == 2 && r > 0)) return 0;

    double resid = 0.0;
    rc = potrf_residual(ctx, tp, A, o, &resid);
    if (rc < 0) return rc;
    int passed = resid < POTRF_RESIDUAL_MAX;
    if (verbose) printf("residual = %.6e : %s\n", resid, passed ? "PASSED" : "FAILED");
    return passed ? 0 : 1;
}

static int potrf_main(weft_context_t *ctx, const potrf_opts_t *o)
{
    int verbose = weft_rank(ctx) == 0, rc = 0;
    weft_matrix_t *A =
        weft_matrix_new(ctx, WEFT_DOUBLE, o->n, o->n, (int)o->nb, (int)o->nb, (int)o->p, (int)o->q);
    if (A == NULL) {
        if (verbose)
            fprintf(stderr, "weft-potrf: cannot create the %lld x %lld matrix (tiles %lld)\n",
                    (long long)o->n, (long long)o->n, (long long)o->nb);
        return 1;
    }
    weft_data_t **dinv = potrf_new_inverses(ctx, A, (int)o->trsm_inv, "weft-potrf", &rc);
    weft_taskpool_t *tp = rc == 0 ? weft_taskpool_new(ctx, "potrf") : NULL;
    if (tp == NULL) {
        if (verbose && rc == 0) fprintf(stderr, "weft-potrf: cannot create the taskpool\n");
        rc = 1;
        goto free_matrix;
    }
    for (int64_t r = 0; r < o->nruns && rc == 0; r++) {
        rc = potrf_run(ctx, tp, A, dinv, o, r);
        fflush(stdout);
    }
    weft_taskpool_free(tp);
free_matrix:
    potrf_free_inverses(dinv, weft_matrix_nt(A));
    weft_matrix_free(A);
    return rc == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    appdev_t dev;
    int rc = potrf_prescan(argc, argv, &dev);
    if (rc == 2) return appdev_probe(dev.prog, argc, argv);
    if (rc != 0) return rc > 0 ? 0 : 1;
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (ctx == NULL) {
        fprintf(stderr, "weft-potrf: weft_init failed (see the message above)\n");
        appdev_init_failed(&dev);
        return 1;
    }
    int verbose = weft_rank(ctx) == 0;
    potrf_opts_t o;
    if (potrf_parse(argc, argv, &o, verbose) != 0 || potrf_validate(ctx, &o, &dev, verbose) != 0)
        rc = 1;
    else
        rc = potrf_main(ctx, &o);
    int frc = weft_fini(ctx);
    if (frc < 0) {
        fprintf(stderr, "weft-potrf: weft_fini: %s\n", weft_strerror(frc));
        rc = 1;
    }
    return rc;
}
