/* weft-geqrf: tile QR factorization of an M x N matrix (M >= N) on a P x Q
 * grid of ranks (tiles dealt as --dist says), by the tile algorithm with inner
 * blocking (qr_kernels.h): GEQRT, GEMQRT, TSQRT, TSMQR, and TTQRT, TTMQR.
 * The tree that reduces each panel (qr_tree.h, --tree): flat, every tile
 * below the diagonal into the diagonal one in turn; or hier (the default
 * when P > 1 without -g), as PLASMA's HQR: each grid row's tiles of the
 * panel into its first tile, on its own rank, then those P tiles merged by
 * a binary tree of triangle-on-triangle steps, so the panel crosses ranks
 * P - 1 times instead of at every tile row. With P = 1 both are the same.
 *
 * The matrix is generated from a seed by one task per tile. The T factors
 * (ib x nb) and the copies of the factored head tiles that the row updates
 * read are NEW tiles (weft_data_new): created where the task that writes
 * them runs, moved by weft to the ranks and devices that read them. With
 * --check, Q is applied, through the stored V and T tiles and the same
 * update classes in the tree's order, to the original matrix and to a
 * random block (qr_check.h): ||A - Q R|| / (||A|| M eps) and ||X - Q^T Q
 * X|| / (||X|| M eps) must both stay under QR_CHECK_MAX. Everything is
 * computed tile by tile where the tiles live, and reduced over the ranks
 * by tasks.
 *
 * -g N: the classes run on N accelerators a rank (CUDA: cuBLAS and
 * cuSOLVER, qr_cuda.h and qr_cuda_factor.h; emu: the CPU kernels), but
 * for TTQRT/TTMQR, which run on the host cores (qr_kernels.h says why).
 * Public API only. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <weft/weft.h>

#include "app_driver.h"
#include "qr_check.h"
#include "qr_kernels.h"
#include "qr_tree.h"

#define QR_NAME "weft-geqrf"
#define QR_CHECK_MAX 60.0
#define QR_NT_MAX (1 << 16)
#define QR_IB_CPU 32

typedef struct qr_opts {
    app_opts_t c;
    int64_t m, ib;
    int64_t preload; /* 1: a small factorization beside the first generation; -1: on CUDA */
    int64_t tree;    /* QR_TREE_FLAT or QR_TREE_HIER (qr_tree.h); -1: by the grid */
} qr_opts_t;

static const qr_opts_t qr_defaults = {
    .c = {.n = 4096, .nb = 192, .p = 1, .q = 1, .cores = -1, .nruns = 1, .seed = 42, .dist = -1},
    .m = -1,  /* -1: M = N */
    .ib = -1, /* -1: QR_IB_CPU, or a quarter of the tile with accelerators */
    .preload = -1,
    .tree = -1};

/* ---- command line ---------------------------------------------------- */

static void qr_usage(FILE *out)
{
    fprintf(out,
            "usage: weft-geqrf [options] [--weft-<param>=<value> ...]\n"
            "  -M <m>        rows of the matrix, >= N (default N)\n"
            "  -N <n>        columns of the matrix (default %lld)\n"
            "  -t <nb>       tile size (default %lld; with -g on GPUs, from N: 512 to 4096)\n"
            "  -b <ib>       inner block size of the T factors, <= nb (default %d, at most\n"
            "                nb; with -g, nb / 4)\n"
            "%s"
            "  -g <n>        accelerators a rank uses, of the type --weft-device_type names\n"
            "                (cuda by default, or emu) (default 0: CPU only)\n"
            "  -c <cores>    worker cores a rank (sets WEFT_CORES before weft_init)\n"
            "  --seed <s>    seed of the generated matrix (default %lld)\n"
            "  --nruns <r>   generate and factorize r times, one line each (default 1)\n"
            "  --preload <0|1> 1: while the first matrix is generated, the devices factorize\n"
            "                a small one of the same tiles, so the first timed run does not\n"
            "                pay the libraries' first calls (default 1 with CUDA devices)\n"
            "  --tree <flat|hier> the reduction tree of each panel: flat, the tiles below\n"
            "                the diagonal one by one into it; hier, each grid row's tiles\n"
            "                into its first, then those P tiles by a binary tree, so a\n"
            "                panel crosses ranks P - 1 times, not at every tile row\n"
            "                (default hier when P > 1 and no -g, else flat; with P = 1\n"
            "                hier is flat)\n"
            "  --check       check ||A - Q R|| / (||A|| M eps) and ||X - Q^T Q X|| /\n"
            "                (||X|| M eps) < %g after each run\n"
            "  --probe-gpus  print 'cuda_devices= <n>', the CUDA devices weft finds, and exit\n"
            "  -h, --help    this help; weft-info lists the --weft-* parameters\n",
            (long long)qr_defaults.c.n, (long long)qr_defaults.c.nb, QR_IB_CPU, app_cli_usage_grid,
            (long long)qr_defaults.c.seed, QR_CHECK_MAX);
}

/* -t is bounded lower than the other apps': ib x nb T tiles and the
 * kernels' int sizes. */
static const app_flag_t qr_flags[] = {
    {"-M", offsetof(qr_opts_t, m), 1, INT32_MAX, 0},
    {"-t", offsetof(qr_opts_t, c.nb), 1, 1 << 15, 0},
    {"-b", offsetof(qr_opts_t, ib), 1, 1 << 15, 0},
    {"--preload", offsetof(qr_opts_t, preload), 0, 1, 0},
    {"--tree", offsetof(qr_opts_t, tree), 0, 1, 0},
};

/* --tree's values, in QR_TREE_* order. */
static const char *const qr_tree_words[] = {"flat", "hier"};
static const app_flag_words_t qr_words[] = {{"--tree", qr_tree_words}};

static int qr_validate(weft_context_t *ctx, void *opts, int verbose)
{
    qr_opts_t *o = opts;
    const char *why = NULL;
    if (o->m < 0) o->m = o->c.n;
    if (o->preload < 0) o->preload = app_preload_default(ctx, &o->c);
    /* hier only pays where the panel crosses ranks (P > 1); with -g the
     * TT kernels would run on the host (qr_kernels.h), so flat stays. */
    if (o->tree < 0) o->tree = o->c.p > 1 && o->c.g == 0 ? QR_TREE_HIER : QR_TREE_FLAT;
    if (o->ib < 0) { /* the best of 1/8 .. 1/2 of the tile on an H200 (docs/RESULTS.md) */
        o->ib = o->c.g > 0 ? o->c.nb / 4 : QR_IB_CPU;
        if (o->ib > o->c.nb) o->ib = o->c.nb;
        if (o->ib < 1) o->ib = 1;
    }
    if (app_cli_grid(QR_NAME, o->c.p, o->c.q, weft_nranks(ctx), verbose) != 0)
        return -1; /* said as the other apps say it */
    if (o->m < o->c.n)
        why = "-M must be >= -N (this is the QR of a tall or square matrix)";
    else if (o->ib > o->c.nb)
        why = "-b (inner block size) must be <= -t (tile size)";
    else if ((o->m + o->c.nb - 1) / o->c.nb > QR_NT_MAX)
        why = "too many tile rows: use a larger -t";
    if (why != NULL) {
        if (verbose)
            fprintf(stderr,
                    "weft-geqrf: -M %lld -N %lld -t %lld -b %lld -P %lld -Q %lld on %d rank%s: "
                    "%s\n",
                    (long long)o->m, (long long)o->c.n, (long long)o->c.nb, (long long)o->ib,
                    (long long)o->c.p, (long long)o->c.q, weft_nranks(ctx),
                    weft_nranks(ctx) == 1 ? "" : "s", why);
        return -1;
    }
    return 0;
}

/* One fill task a tile of C with matrix `which` of the seed; with
 * prefetch, one task a tile bringing it to its home accelerator. */
static int qr_insert_fill(weft_taskpool_t *tp, weft_matrix_t *C, const qr_opts_t *o, int which,
                          int prefetch)
{
    int rc = 0;
    for (int j = 0; j < weft_matrix_nt(C) && rc >= 0; j++) {
        for (int m = 0; m < weft_matrix_mt(C) && rc >= 0; m++) {
            qr_tile_arg_t arg = {.seed = (uint64_t)o->c.seed,
                                 .which = which,
                                 .row0 = (int64_t)m * o->c.nb,
                                 .col0 = (int64_t)j * o->c.nb};
            weft_data_t *c = weft_tile(C, m, j);
            rc = weft_insert_task(tp, &qr_class_fill, WEFT_W | WEFT_AFFINITY, c, WEFT_VALUE, &arg,
                                  sizeof arg, 0);
            if (rc >= 0 && prefetch)
                rc = weft_insert_task(tp, &qr_class_prefetch, WEFT_R | WEFT_AFFINITY, c, 0);
        }
    }
    return rc < 0 ? rc : 0;
}

/* ---- check ---------------------------------------------------------- */

/* Every tile of the check: B (Q^T A0) against R, X (Q^T Q X0) against
 * X0, each into the sums tile of its rank. */
static int qr_insert_norms(weft_taskpool_t *tp, const qr_factors_t *f, weft_matrix_t *B,
                           weft_matrix_t *X, app_sums_t *S, const qr_opts_t *o)
{
    int rc = 0;
    for (int j = 0; j < f->nt && rc >= 0; j++)
        for (int m = 0; m < f->mt && rc >= 0; m++) {
            qr_tile_arg_t a = {(uint64_t)o->c.seed, 0, (int64_t)m * o->c.nb, (int64_t)j * o->c.nb};
            rc = weft_insert_task(tp, &qr_class_resid_norm, WEFT_R, weft_tile(f->A, m, j), WEFT_R,
                                  weft_tile(B, m, j), WEFT_RW | WEFT_AFFINITY,
                                  app_sums_of(S, B, m, j), WEFT_VALUE, &a, sizeof a, 0);
        }
    for (int j = 0; j < weft_matrix_nt(X) && rc >= 0; j++)
        for (int m = 0; m < f->mt && rc >= 0; m++) {
            qr_tile_arg_t a = {(uint64_t)o->c.seed, 1, (int64_t)m * o->c.nb, (int64_t)j * o->c.nb};
            rc = weft_insert_task(tp, &qr_class_orth_norm, WEFT_R, weft_tile(X, m, j),
                                  WEFT_RW | WEFT_AFFINITY, app_sums_of(S, X, m, j), WEFT_VALUE, &a,
                                  sizeof a, 0);
        }
    return rc < 0 ? rc : 0;
}

static int qr_insert_check(weft_taskpool_t *tp, const qr_factors_t *f, weft_matrix_t *B,
                           weft_matrix_t *X, app_sums_t *S, const qr_opts_t *o)
{
    int rc = qr_insert_fill(tp, B, o, 0, 0);
    if (rc >= 0) rc = qr_insert_fill(tp, X, o, 1, 0);
    if (rc >= 0) rc = app_sums_insert_zero(tp, S);
    if (rc >= 0) rc = qr_insert_apply(tp, f, B, 'T', 1);
    if (rc >= 0) rc = qr_insert_apply(tp, f, X, 'N', 0);
    if (rc >= 0) rc = qr_insert_apply(tp, f, X, 'T', 0);
    if (rc >= 0) rc = qr_insert_norms(tp, f, B, X, S, o);
    if (rc >= 0) rc = app_sums_insert_allreduce(tp, S); /* app_sums.h */
    return rc < 0 ? rc : 0;
}

/* The columns of the check's X0: one tile column a process column, at
 * most N. */
static int64_t qr_check_cols(const qr_opts_t *o)
{
    return o->c.nb * o->c.q < o->c.n ? o->c.nb * o->c.q : o->c.n;
}

/* The two scaled residuals of the factorization in f, in res[0..1], in B
 * (M x N) and X (M x qr_check_cols), made at set-up. */
static int qr_residuals(weft_context_t *ctx, weft_taskpool_t *tp, const qr_factors_t *f,
                        const qr_opts_t *o, weft_matrix_t *B, weft_matrix_t *X, double res[2])
{
    int rc = WEFT_ERR_NOMEM;
    app_sums_t S = app_sums_new(ctx, QR_SUMS);
    double s[QR_SUMS];
    if (S.m == NULL) {
        fprintf(stderr, QR_NAME ": cannot create the sums of the check\n");
        goto free_matrices;
    }
    rc = qr_insert_check(tp, f, B, X, &S, o);
    if (rc >= 0) rc = app_sums_insert_out(tp, &S, s);
    rc = app_wait(QR_NAME, tp, rc, "the check", weft_rank(ctx) == 0);
    if (rc >= 0) {
        double eps = LAPACKE_dlamch_work('e'), m = (double)o->m;
        res[0] = sqrt(s[0]) / (sqrt(s[1]) * m * eps);
        res[1] = sqrt(s[2]) / (sqrt(s[3]) * m * eps);
    }
free_matrices:
    app_sums_free(&S);
    return rc;
}

/* ---- driver ---------------------------------------------------------- */

/* The app's data: the factors of the matrix and, with --preload, those of
 * the small matrix until the first generation ends. */
typedef struct qr_data {
    qr_factors_t f;
    qr_factors_t *w;
    qr_opts_t *wo;          /* the small matrix's options */
    weft_matrix_t *cb, *cx; /* --check: B and X (qr_residuals) */
} qr_data_t;

static int qr_setup_one(weft_context_t *ctx, const qr_opts_t *o, qr_factors_t *f)
{
    weft_matrix_t *A = app_matrix(ctx, &o->c, o->m, o->c.n);
    if (A == NULL) {
        if (weft_rank(ctx) == 0) fprintf(stderr, QR_NAME ": cannot create the matrix\n");
        return -1;
    }
    return qr_factors_new(ctx, f, A, (int)o->ib, o->tree == QR_TREE_HIER ? (int)o->c.p : 1);
}

static void qr_free_one(qr_factors_t *f)
{
    qr_factors_free(f);
    if (f->A != NULL) weft_matrix_free(f->A);
    f->A = NULL;
}

static void qr_free_preload(qr_data_t *d)
{
    if (d->w) qr_free_one(d->w);
    free(d->w);
    free(d->wo);
    d->w = NULL;
    d->wo = NULL;
}

/* The matrix and, with --preload, the small one (app_driver.h). */
static int qr_setup(weft_context_t *ctx, const void *opts, void *data)
{
    const qr_opts_t *o = opts;
    qr_data_t *d = data;
    if (qr_setup_one(ctx, o, &d->f) != 0) return -1;
    if (o->c.check &&
        ((d->cb = app_check_matrix(ctx, QR_NAME, &o->c, o->m, o->c.n)) == NULL ||
         (d->cx = app_check_matrix(ctx, QR_NAME, &o->c, o->m, qr_check_cols(o))) == NULL))
        return -1;
    if (!o->preload) return 0;
    d->w = calloc(1, sizeof *d->w);
    d->wo = malloc(sizeof *d->wo);
    if (d->w == NULL || d->wo == NULL) return -1;
    *d->wo = *o;
    d->wo->m = d->wo->c.n = app_preload_order(&o->c);
    return qr_setup_one(ctx, d->wo, d->w);
}

static void qr_free(void *data)
{
    qr_data_t *d = data;
    qr_free_preload(d);
    if (d->cx != NULL) weft_matrix_free(d->cx);
    if (d->cb != NULL) weft_matrix_free(d->cb);
    qr_free_one(&d->f);
}

/* One run: generate, factorize (timed), report, check. 0, a weft error,
 * or 1 for a failed check. */
static int qr_run(weft_context_t *ctx, weft_taskpool_t *tp, const void *opts, void *data, int64_t r)
{
    const qr_opts_t *o = opts;
    qr_data_t *d = data;
    const qr_factors_t *f = &d->f;
    int verbose = weft_rank(ctx) == 0, rc = 0;
    if (d->w) { /* --preload: the small factorization, beside the generation */
        rc = qr_insert_fill(tp, d->w->A, d->wo, 0, 1);
        for (int k = 0; k < d->w->nt && rc >= 0; k++) rc = qr_insert_step(tp, d->w, k);
    }
    if (rc >= 0) rc = qr_insert_fill(tp, f->A, o, 0, o->c.g > 0);
    rc = app_wait(QR_NAME, tp, rc, "generating the matrix", verbose);
    qr_free_preload(d); /* its device memory goes back before the timing */
    if (rc < 0) return rc;
    app_timer_t tm;
    app_timer_start(ctx, &tm);
    for (int k = 0; k < f->nt && rc >= 0; k++) rc = qr_insert_step(tp, f, k);
    rc = app_wait(QR_NAME, tp, rc, "dgeqrf", verbose);
    app_timer_stop(&tm);
    if (rc < 0) return rc;
    double m = (double)o->m, n = (double)o->c.n;
    char tall[40] = ""; /* a matrix that is not square says its M */
    if (o->m != o->c.n) snprintf(tall, sizeof tall, " M= %lld", (long long)o->m);
    app_report(ctx, &tm, "dgeqrf", &o->c, tall, 2.0 * m * n * n - 2.0 * n * n * n / 3.0);
    if (!app_check_due(&o->c, r)) return 0;
    double res[2] = {0.0, 0.0};
    rc = qr_residuals(ctx, tp, f, o, d->cb, d->cx, res);
    if (rc < 0) return rc;
    int mine = res[0] < QR_CHECK_MAX && res[1] < QR_CHECK_MAX;
    int passed = app_agree_verdict(ctx, QR_NAME, mine);
    if (verbose)
        printf("residual = %.6e orthogonality = %.6e (M= %lld IB= %lld TREE= %s) : %s\n", res[0],
               res[1], (long long)o->m, (long long)o->ib,
               qr_tree_words[o->c.p > 1 ? o->tree : QR_TREE_FLAT], /* hier on P = 1 is flat */
               app_verdict_word(mine, passed));
    return passed ? 0 : 1;
}

/* The tile without -t on GPUs: the best measured on an H200 (docs/RESULTS.md):
 * 4096 at N=16384 (IB 1024: 14366 GFLOPS against 12510 with 2048:512 in
 * one call) and at 32768; QR's panel chain wants fewer, larger tiles than
 * Cholesky's. */
static int64_t qr_gpu_nb(int64_t n)
{
    if (n < 0 || n >= 16384) return 4096;
    if (n >= 8192) return 2048;
    return n > 4096 ? 1024 : 512;
}

static const app_driver_t qr_app = {
    .cli = {.prog = QR_NAME,
            .flags = qr_flags,
            .nflags = sizeof qr_flags / sizeof qr_flags[0],
            .words = qr_words,
            .nwords = sizeof qr_words / sizeof qr_words[0],
            .usage = qr_usage,
            .nb = 192,
            .gpu_nb_auto = 1,
            .gpu_nb = qr_gpu_nb,
            /* TSQRT: its stack (2 tiles), R packed, cuSOLVER's scratch:
             * 7 tiles in all at NB=1024, 9.5 at 512 (measured, H200) */
            .workspace_tiles = 10.0},
    .pool = "geqrf",
    .validate = qr_validate,
    .setup = qr_setup,
    .free = qr_free,
    .run = qr_run};

int main(int argc, char **argv)
{
    qr_opts_t o = qr_defaults;
    qr_data_t d = {0};
    return app_main(&qr_app, &o, &d, argc, argv);
}
