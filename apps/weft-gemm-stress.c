/* weft-gemm-stress: chains of GEMMs whose C tiles are NEW tiles created on
 * the fly by tasks and handed from rank to rank.
 *
 * `width` independent chains of `depth` steps. Step s (1..depth) of chain c:
 *
 *     C[c][s] = A[c][s] * C[c][s-1] + B[c][s]
 *
 * where A[c][s] and B[c][s] are tile (c, s-1) of two width x depth tiled
 * matrices (2D block-cyclic over P x Q ranks, filled by tasks from a seed),
 * C[c][0] is generated from the seed too, and every C[c][s] is a NEW tile
 * (weft_data_new) owned by rank (c + s) % nranks: the task that makes it runs
 * there (WEFT_W | WEFT_AFFINITY), so consecutive steps run on different ranks
 * and each C travels to the next one; the A and B tiles travel from their
 * block-cyclic owners. Intermediate C tiles are released as soon as the task
 * that reads them is inserted.
 *
 * --check: the rank that owns the final C[c][depth] recomputes chain c with
 * CBLAS from the same seeds (regenerating A, B and C[c][0]; nothing is
 * gathered) inside a task, and the largest relative error is max-reduced over
 * the ranks with tasks too. Each rank also compares the activations it sent
 * during the chains with the count the sequence implies (one per tile
 * version per destination rank). Public API and CBLAS only.
 *
 * -g N: the GEMM steps run on the N accelerators a rank asks for (type
 * device_type, see app_devices.h) and on them only: their class then has no
 * CPU body, so every NEW C tile is created in device memory and travels
 * from device to device and rank to rank. CUDA: cublasDgemm on the task's
 * stream; emu: the CPU body as the emulated device's kernel. Fill and check
 * tasks keep their CPU bodies (an emu device may run them too). */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cblas.h>
#include <weft/weft.h>

#ifdef WEFT_APP_HAVE_CUDA
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#endif

#include "app_devices.h"
#include "app_flags.h"

#define GS_NAME "weft-gemm-stress"
/* Largest accepted relative Frobenius error of a chain against its CBLAS
 * recomputation (the same operations in the same order agree to rounding;
 * an accelerator BLAS may sum in another order). */
#define GS_ERROR_MAX 1e-10
#define GS_TILE_MAX 16384
#define GS_TILES_MAX (1 << 24)

typedef struct gs_opts {
    int64_t nb, depth, width, p, q, g, cores, seed;
    int check;
} gs_opts_t;

static const gs_opts_t gs_defaults = {.nb = 256,
                                      .depth = 16,
                                      .width = 4,
                                      .p = 1,
                                      .q = -1,
                                      .g = 0,
                                      .cores = -1,
                                      .seed = 42,
                                      .check = 0};

/* ---- the generated operands ------------------------------------------ */

enum { GS_GEN_A = 1, GS_GEN_B = 2, GS_GEN_C0 = 3 };

/* What a fill (or check) task needs to regenerate a tile: which operand,
 * of which chain and step, from which seed, and the tile order. */
typedef struct gs_tile_arg {
    uint64_t seed;
    int32_t which; /* GS_GEN_* */
    int32_t chain, step;
    int32_t nb;
    int32_t depth; /* check tasks only: steps of the chain */
} gs_tile_arg_t;

static uint64_t gs_mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Element (i, j) of an operand: a counter-based hash mapped to [-0.5, 0.5).
 * A is scaled by sqrt(12 / nb) (entries of variance 1/nb) so that the
 * product keeps the magnitude of C along a chain of any depth. */
static void gs_generate(const gs_tile_arg_t *a, double *p, int64_t ld)
{
    uint64_t base =
        gs_mix64(gs_mix64(gs_mix64(gs_mix64(a->seed) + (uint64_t)a->which) + (uint64_t)a->chain) +
                 (uint64_t)a->step);
    double scale = a->which == GS_GEN_A ? sqrt(12.0 / (double)a->nb) : 1.0;
    for (int j = 0; j < a->nb; j++)
        for (int i = 0; i < a->nb; i++) {
            uint64_t h = gs_mix64(base + (uint64_t)j * (uint64_t)a->nb + (uint64_t)i);
            p[i + j * ld] = scale * ((double)(h >> 11) * 0x1.0p-53 - 0.5);
        }
}

/* C := A * Cprev + B, all nb x nb column-major. */
static void gs_step(int nb, const double *a, int64_t lda, const double *cprev, int64_t ldp,
                    const double *b, int64_t ldb, double *c, int64_t ldc)
{
    for (int j = 0; j < nb; j++) memcpy(c + j * ldc, b + j * ldb, sizeof(double) * (size_t)nb);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, nb, nb, nb, 1.0, a, (int)lda, cprev,
                (int)ldp, 1.0, c, (int)ldc);
}

/* ---- task bodies (CPU) ------------------------------------------------ */

static double gs_flops_step(const weft_task_t *t)
{
    double n = weft_task_rows(t, 3);
    return 2.0 * n * n * n;
}

/* flow 0: a tile W; value 0: gs_tile_arg_t. */
static int gs_cpu_fill(weft_task_t *t)
{
    gs_tile_arg_t a;
    weft_task_value(t, 0, &a);
    if (weft_task_rows(t, 0) != a.nb || weft_task_cols(t, 0) != a.nb) return -1;
    gs_generate(&a, weft_task_ptr(t, 0), weft_task_ld(t, 0));
    return 0;
}

/* flow 0: A R, flow 1: C[s-1] R, flow 2: B R, flow 3: C[s] W. */
static int gs_cpu_step(weft_task_t *t)
{
    gs_step(weft_task_rows(t, 3), weft_task_ptr(t, 0), weft_task_ld(t, 0), weft_task_ptr(t, 1),
            weft_task_ld(t, 1), weft_task_ptr(t, 2), weft_task_ld(t, 2), weft_task_ptr(t, 3),
            weft_task_ld(t, 3));
    return 0;
}

/* flow 0: the final C of a chain R, flow 1: this rank's 1x1 error tile RW;
 * value 0: gs_tile_arg_t of the chain (which, step unused). Recomputes the
 * chain with CBLAS and raises the error tile to the relative error. */
static int gs_cpu_check(weft_task_t *t)
{
    gs_tile_arg_t a;
    weft_task_value(t, 0, &a);
    int nb = a.nb;
    size_t n2 = (size_t)nb * (size_t)nb;
    double *buf = malloc(sizeof(double) * 4 * n2);
    if (buf == NULL) return -1;
    double *ta = buf, *tb = buf + n2, *c = buf + 2 * n2, *next = buf + 3 * n2;
    gs_tile_arg_t g = a;
    g.which = GS_GEN_C0;
    g.step = 0;
    gs_generate(&g, c, nb);
    for (int s = 1; s <= a.depth; s++) {
        g.step = s;
        g.which = GS_GEN_A;
        gs_generate(&g, ta, nb);
        g.which = GS_GEN_B;
        gs_generate(&g, tb, nb);
        gs_step(nb, ta, nb, c, nb, tb, nb, next, nb);
        double *swap = c;
        c = next;
        next = swap;
    }
    const double *got = weft_task_ptr(t, 0);
    int64_t ld = weft_task_ld(t, 0);
    double d2 = 0.0, r2 = 0.0;
    for (int j = 0; j < nb; j++)
        for (int i = 0; i < nb; i++) {
            double r = c[i + (size_t)j * (size_t)nb], d = got[i + j * ld] - r;
            d2 += d * d;
            r2 += r * r;
        }
    free(buf);
    double err = sqrt(d2) / (r2 > 0.0 ? sqrt(r2) : 1.0);
    if (!(err <= GS_ERROR_MAX)) {
        fprintf(stderr, GS_NAME ": chain %d: relative error %.3e > %.0e\n", (int)a.chain, err,
                GS_ERROR_MAX);
        if (isnan(err)) err = INFINITY;
    }
    double *e = weft_task_ptr(t, 1);
    if (err > e[0]) e[0] = err;
    return 0;
}

/* flow 0: a 1x1 error tile W: zero. */
static int gs_cpu_err_zero(weft_task_t *t)
{
    *(double *)weft_task_ptr(t, 0) = 0.0;
    return 0;
}

/* flow 0: an error tile R, flow 1: another RW: keeps the larger. */
static int gs_cpu_err_max(weft_task_t *t)
{
    const double *x = weft_task_ptr(t, 0);
    double *y = weft_task_ptr(t, 1);
    if (x[0] > y[0]) y[0] = x[0];
    return 0;
}

/* flow 0: an error tile R, flow 1: another W: copies the first. */
static int gs_cpu_err_copy(weft_task_t *t)
{
    *(double *)weft_task_ptr(t, 1) = *(const double *)weft_task_ptr(t, 0);
    return 0;
}

#ifdef WEFT_APP_HAVE_CUDA
/* The CUDA body of a step, flows as gs_cpu_step's: C[s] := B on the task's
 * stream, then C[s] += A * C[s-1] with cublasDgemm; enqueued only. */
static int gs_cuda_step(weft_task_t *t)
{
    int nb = weft_task_rows(t, 3);
    cudaStream_t stream = (cudaStream_t)weft_task_stream(t);
    cudaError_t err = cudaMemcpy2DAsync(
        weft_task_ptr(t, 3), sizeof(double) * (size_t)weft_task_ld(t, 3), weft_task_ptr(t, 2),
        sizeof(double) * (size_t)weft_task_ld(t, 2), sizeof(double) * (size_t)nb, (size_t)nb,
        cudaMemcpyDeviceToDevice, stream);
    if (err != cudaSuccess) {
        fprintf(stderr, GS_NAME ": cudaMemcpy2DAsync failed: %s\n", cudaGetErrorString(err));
        return -1;
    }
    const double one = 1.0;
    cublasStatus_t st =
        cublasDgemm((cublasHandle_t)weft_task_blas_handle(t), CUBLAS_OP_N, CUBLAS_OP_N, nb, nb, nb,
                    &one, weft_task_ptr(t, 0), (int)weft_task_ld(t, 0), weft_task_ptr(t, 1),
                    (int)weft_task_ld(t, 1), &one, weft_task_ptr(t, 3), (int)weft_task_ld(t, 3));
    if (st != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, GS_NAME ": cublasDgemm failed: %s\n", cublasGetStatusString(st));
        return -1;
    }
    return 0;
}
#define GS_CUDA_BODY(fn) [WEFT_DEV_CUDA] = fn,
#else
#define GS_CUDA_BODY(fn)
#endif

static const weft_task_class_t gs_class_fill = {
    .name = "gs_fill", .body = {[WEFT_DEV_CPU] = gs_cpu_fill}, .flops = NULL};
/* -g 0: the host, or any accelerator the parameters opened. */
static const weft_task_class_t gs_class_step = {
    .name = "gs_step",
    .body =
        {[WEFT_DEV_CPU] = gs_cpu_step, [WEFT_DEV_EMU] = gs_cpu_step, GS_CUDA_BODY(gs_cuda_step)},
    .flops = gs_flops_step};
/* -g N > 0: accelerators only. */
static const weft_task_class_t gs_class_step_dev = {
    .name = "gs_step",
    .body = {[WEFT_DEV_EMU] = gs_cpu_step, GS_CUDA_BODY(gs_cuda_step)},
    .flops = gs_flops_step};
static const weft_task_class_t gs_class_check = {
    .name = "gs_check", .body = {[WEFT_DEV_CPU] = gs_cpu_check}, .flops = NULL};
static const weft_task_class_t gs_class_err_zero = {
    .name = "gs_err_zero", .body = {[WEFT_DEV_CPU] = gs_cpu_err_zero}, .flops = NULL};
static const weft_task_class_t gs_class_err_max = {
    .name = "gs_err_max", .body = {[WEFT_DEV_CPU] = gs_cpu_err_max}, .flops = NULL};
static const weft_task_class_t gs_class_err_copy = {
    .name = "gs_err_copy", .body = {[WEFT_DEV_CPU] = gs_cpu_err_copy}, .flops = NULL};

/* ---- command line ---------------------------------------------------- */

static void gs_usage(FILE *out)
{
    fprintf(out,
            "usage: " GS_NAME " [options] [--weft-<param>=<value> ...]\n"
            "  -t <nb>        tile size (default %lld)\n"
            "  --depth <d>    GEMM steps of a chain (default %lld)\n"
            "  --width <w>    independent chains (default %lld)\n"
            "  -P <p>         rows of the process grid of A and B (default 1)\n"
            "  -Q <q>         columns of the process grid (default: ranks / P); P*Q = ranks\n"
            "  -g <n>         accelerators a rank runs the GEMM steps on, of the type\n"
            "                 --weft-device_type names (cuda by default, or emu); sets\n"
            "                 device_cuda_enabled or device_emu_enabled to n unless\n"
            "                 already set (default 0: CPU only)\n"
            "  -c <cores>     worker cores a rank (sets WEFT_CORES before weft_init)\n"
            "  --seed <s>     seed of the generated operands (default %lld)\n"
            "  --check        recompute each chain with CBLAS on the rank that owns its\n"
            "                 result (relative error < %.0e) and check the message counts\n"
            "  --probe-gpus   print 'cuda_devices= <n>', the CUDA devices weft finds, and exit\n"
            "  -h, --help     this help; weft-info lists the --weft-* parameters\n",
            (long long)gs_defaults.nb, (long long)gs_defaults.depth, (long long)gs_defaults.width,
            (long long)gs_defaults.seed, GS_ERROR_MAX);
}

static const app_flag_t gs_flags[] = {
    {"-t", offsetof(gs_opts_t, nb), 1, GS_TILE_MAX},
    {"--depth", offsetof(gs_opts_t, depth), 1, 1 << 20},
    {"--width", offsetof(gs_opts_t, width), 1, 1 << 20},
    {"-P", offsetof(gs_opts_t, p), 1, 1 << 20},
    {"-Q", offsetof(gs_opts_t, q), 1, 1 << 20},
    {"-g", offsetof(gs_opts_t, g), 0, 1024},
    {"-c", offsetof(gs_opts_t, cores), 1, 4096},
    {"--seed", offsetof(gs_opts_t, seed), 0, INT64_MAX},
};

/* Before weft_init: -h/--help (returns 1), --probe-gpus (returns 2), -c,
 * which reaches weft_init as WEFT_CORES, and -g, which sets the device count
 * of its type (app_devices.h). The rest is parsed after weft_init. */
static int gs_prescan(int argc, char **argv, appdev_t *dev)
{
    dev->prog = GS_NAME;
    dev->g = -1;
    if (appdev_probe_asked(argc, argv)) return 2;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *value;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            gs_usage(stdout);
            return 1;
        }
        if (strncmp(a, "--weft-", 7) == 0) {
            if (strchr(a, '=') == NULL) i++; /* "--weft-<name> <value>" */
            continue;
        }
        const app_flag_t *f =
            app_flag_at(gs_flags, sizeof gs_flags / sizeof gs_flags[0], argc, argv, &i, &value);
        if (f != NULL && strcmp(f->name, "-g") == 0) {
            /* a malformed value is reported after weft_init */
            if (app_parse_int(GS_NAME, "-g", value, f->min, f->max, &dev->g, 0) != 0) dev->g = -1;
            continue;
        }
        if (f == NULL || strcmp(f->name, "-c") != 0) continue;
        int64_t cores;
        if (app_parse_int(GS_NAME, "-c", value, f->min, f->max, &cores, 1) != 0) return -1;
        char text[32];
        snprintf(text, sizeof text, "%lld", (long long)cores);
        if (setenv("WEFT_CORES", text, 1) != 0) {
            fprintf(stderr, GS_NAME ": cannot set WEFT_CORES: %s\n", strerror(errno));
            return -1;
        }
    }
    return appdev_prepare(dev, argc, argv);
}

static int gs_parse(int argc, char **argv, gs_opts_t *o, int verbose)
{
    *o = gs_defaults;
    for (int i = 1; i < argc; i++) {
        const char *value;
        if (strcmp(argv[i], "--check") == 0) {
            o->check = 1;
            continue;
        }
        const app_flag_t *f =
            app_flag_at(gs_flags, sizeof gs_flags / sizeof gs_flags[0], argc, argv, &i, &value);
        if (f == NULL) {
            if (verbose && value != NULL)
                fprintf(stderr, GS_NAME ": %s needs a value (see --help)\n", argv[i]);
            else if (verbose)
                fprintf(stderr, GS_NAME ": unknown option '%s' (see --help)\n", argv[i]);
            return -1;
        }
        int64_t *dst = (int64_t *)((char *)o + f->offset);
        if (app_parse_int(GS_NAME, f->name, value, f->min, f->max, dst, verbose) != 0) return -1;
    }
    return 0;
}

static int gs_validate(weft_context_t *ctx, gs_opts_t *o, appdev_t *dev, int verbose)
{
    int nranks = weft_nranks(ctx);
    if (o->q < 0) {
        if (nranks % o->p != 0) {
            if (verbose)
                fprintf(stderr,
                        GS_NAME ": -P %lld does not divide the %d ranks "
                                "(P*Q must equal the number of ranks)\n",
                        (long long)o->p, nranks);
            return -1;
        }
        o->q = nranks / o->p;
    }
    if (o->p * o->q != nranks) {
        if (verbose)
            fprintf(stderr,
                    GS_NAME ": -P %lld x -Q %lld = %lld ranks, but running on %d "
                            "(P*Q must equal the number of ranks)\n",
                    (long long)o->p, (long long)o->q, (long long)(o->p * o->q), nranks);
        return -1;
    }
    if (o->width * o->depth > GS_TILES_MAX) {
        if (verbose)
            fprintf(stderr, GS_NAME ": --width %lld x --depth %lld is more than %d steps\n",
                    (long long)o->width, (long long)o->depth, GS_TILES_MAX);
        return -1;
    }
    dev->g = o->g;
    return appdev_check(ctx, dev);
}

/* ---- the run --------------------------------------------------------- */

typedef struct gs_run {
    weft_context_t *ctx;
    const gs_opts_t *o;
    int rank, nranks, width, depth, nb;
    weft_matrix_t *A, *B;
    weft_data_t **c;              /* C[c][s] of step s, width entries, the newest step */
    weft_data_t **cnext;          /* being created */
    int64_t expected_activations; /* that this rank sends during the chains */
} gs_run_t;

static int gs_owner(const gs_run_t *r, int chain, int step)
{
    return (int)(((int64_t)chain + step) % r->nranks);
}

static gs_tile_arg_t gs_arg(const gs_run_t *r, int which, int chain, int step)
{
    return (gs_tile_arg_t){.seed = (uint64_t)r->o->seed,
                           .which = which,
                           .chain = chain,
                           .step = step,
                           .nb = r->nb,
                           .depth = r->depth};
}

static int gs_wait(weft_taskpool_t *tp, int insert_rc, const char *what, int verbose)
{
    int rc = weft_taskpool_wait(tp);
    if (insert_rc < 0) rc = insert_rc;
    if (rc < 0 && verbose) fprintf(stderr, GS_NAME ": %s failed: %s\n", what, weft_strerror(rc));
    return rc;
}

/* Fill tasks of A, B (tile (c, s-1) of step s) and the NEW C[c][0]. */
static int gs_insert_fill(weft_taskpool_t *tp, gs_run_t *r)
{
    int rc = 0;
    for (int c = 0; c < r->width && rc >= 0; c++) {
        r->c[c] = weft_data_new(r->ctx, WEFT_DOUBLE, r->nb, r->nb, gs_owner(r, c, 0));
        if (r->c[c] == NULL) return WEFT_ERR_NOMEM;
        gs_tile_arg_t arg = gs_arg(r, GS_GEN_C0, c, 0);
        rc = weft_insert_task(tp, &gs_class_fill, WEFT_W | WEFT_AFFINITY, r->c[c], WEFT_VALUE, &arg,
                              sizeof arg, 0);
        for (int s = 1; s <= r->depth && rc >= 0; s++) {
            arg = gs_arg(r, GS_GEN_A, c, s);
            rc = weft_insert_task(tp, &gs_class_fill, WEFT_W | WEFT_AFFINITY,
                                  weft_tile(r->A, c, s - 1), WEFT_VALUE, &arg, sizeof arg, 0);
            arg = gs_arg(r, GS_GEN_B, c, s);
            if (rc >= 0)
                rc = weft_insert_task(tp, &gs_class_fill, WEFT_W | WEFT_AFFINITY,
                                      weft_tile(r->B, c, s - 1), WEFT_VALUE, &arg, sizeof arg, 0);
        }
    }
    return rc < 0 ? rc : 0;
}

/* Step-major: step s of every chain, then step s+1; the C tiles of step
 * s-1 are released once their reader is inserted. Counts the activations
 * this rank must send: one per remote reader of each tile version. */
static int gs_insert_chains(weft_taskpool_t *tp, gs_run_t *r)
{
    int rc = 0;
    r->expected_activations = 0;
    for (int s = 1; s <= r->depth && rc >= 0; s++) {
        for (int c = 0; c < r->width && rc >= 0; c++) {
            int exec = gs_owner(r, c, s);
            weft_data_t *a = weft_tile(r->A, c, s - 1), *b = weft_tile(r->B, c, s - 1);
            r->cnext[c] = weft_data_new(r->ctx, WEFT_DOUBLE, r->nb, r->nb, exec);
            if (r->cnext[c] == NULL) return WEFT_ERR_NOMEM;
            int src[3] = {weft_matrix_tile_rank(r->A, c, s - 1), gs_owner(r, c, s - 1),
                          weft_matrix_tile_rank(r->B, c, s - 1)};
            for (int k = 0; k < 3; k++)
                r->expected_activations += src[k] == r->rank && exec != r->rank;
            rc = weft_insert_task(tp, r->o->g > 0 ? &gs_class_step_dev : &gs_class_step, WEFT_R, a,
                                  WEFT_R, r->c[c], WEFT_R, b, WEFT_W | WEFT_AFFINITY, r->cnext[c],
                                  0);
            weft_data_release(r->c[c]);
            r->c[c] = r->cnext[c];
            r->cnext[c] = NULL;
        }
    }
    return rc < 0 ? rc : 0;
}

/* Check tasks on the owner of each final C, then the max-reduction of the
 * per-rank error tiles E[i] into E[0] and back to every E[i]. */
static int gs_insert_check(weft_taskpool_t *tp, gs_run_t *r, weft_matrix_t *E)
{
    int rc = 0;
    for (int i = 0; i < r->nranks && rc >= 0; i++)
        rc =
            weft_insert_task(tp, &gs_class_err_zero, WEFT_W | WEFT_AFFINITY, weft_tile(E, i, 0), 0);
    for (int c = 0; c < r->width && rc >= 0; c++) {
        gs_tile_arg_t arg = gs_arg(r, 0, c, r->depth);
        rc = weft_insert_task(tp, &gs_class_check, WEFT_R | WEFT_AFFINITY, r->c[c], WEFT_RW,
                              weft_tile(E, gs_owner(r, c, r->depth), 0), WEFT_VALUE, &arg,
                              sizeof arg, 0);
    }
    for (int i = 1; i < r->nranks && rc >= 0; i++)
        rc = weft_insert_task(tp, &gs_class_err_max, WEFT_R, weft_tile(E, i, 0),
                              WEFT_RW | WEFT_AFFINITY, weft_tile(E, 0, 0), 0);
    for (int i = 1; i < r->nranks && rc >= 0; i++)
        rc = weft_insert_task(tp, &gs_class_err_copy, WEFT_R, weft_tile(E, 0, 0),
                              WEFT_W | WEFT_AFFINITY, weft_tile(E, i, 0), 0);
    return rc < 0 ? rc : 0;
}

static double gs_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The check after the chains: 0 passed, 1 failed, or a weft error. */
static int gs_check(weft_taskpool_t *tp, gs_run_t *r, int64_t activations)
{
    int verbose = r->rank == 0, failed = 0;
    if (activations != r->expected_activations) {
        fprintf(stderr,
                GS_NAME ": rank %d sent %lld activations during the chains, the task "
                        "sequence implies %lld (one per tile version per destination)\n",
                r->rank, (long long)activations, (long long)r->expected_activations);
        failed = 1;
    }
    weft_matrix_t *E = weft_matrix_new(r->ctx, WEFT_DOUBLE, r->nranks, 1, 1, 1, r->nranks, 1);
    if (E == NULL) {
        fprintf(stderr, GS_NAME ": cannot create the error tiles\n");
        return WEFT_ERR_NOMEM;
    }
    int rc = gs_insert_check(tp, r, E);
    rc = gs_wait(tp, rc, "the check", verbose);
    if (rc < 0) goto out;
    const double *e = weft_data_host_ptr(weft_tile(E, r->rank, 0), NULL);
    if (e == NULL) {
        fprintf(stderr, GS_NAME ": rank %d does not hold its error tile\n", r->rank);
        rc = WEFT_ERR_INTERNAL;
        goto out;
    }
    double err = e[0];
    failed |= !(err <= GS_ERROR_MAX);
    if (verbose)
        printf(GS_NAME ": max relative error %.3e (threshold %.0e), activations %lld on "
                       "rank 0 : %s\n",
               err, GS_ERROR_MAX, (long long)activations, failed ? "FAILED" : "PASSED");
    rc = failed;
out:
    weft_matrix_free(E);
    return rc;
}

static int gs_run(weft_context_t *ctx, weft_taskpool_t *tp, gs_run_t *r)
{
    int verbose = r->rank == 0;
    int rc = gs_insert_fill(tp, r);
    rc = gs_wait(tp, rc, "generating the operands", verbose);
    if (rc < 0) return rc;

    weft_stats_t before, after;
    rc = weft_stats_get(ctx, &before);
    if (rc < 0) return rc;
    appdev_snap_t devs;
    appdev_snapshot(ctx, &devs);
    double t0 = gs_now();
    rc = gs_insert_chains(tp, r);
    rc = gs_wait(tp, rc, "the GEMM chains", verbose);
    double t = gs_now() - t0;
    if (rc < 0) return rc;
    rc = weft_stats_get(ctx, &after);
    if (rc < 0) return rc;
    double nb = r->nb, flops = 2.0 * nb * nb * nb * (double)r->width * (double)r->depth;
    /* g: the accelerators of this rank that ran tasks of the chains. */
    int g = appdev_used(ctx, &devs);
    if (verbose)
        printf("[****] TIME(s) %.6f : gemm-stress PxQxg= %d %d %d NB= %d depth= %d width= %d "
               ": %.2f gflops\n",
               t, (int)r->o->p, (int)r->o->q, g, r->nb, r->depth, r->width, flops / t / 1e9);
    int64_t activations = after.activations_sent - before.activations_sent;
    printf(GS_NAME ": rank %d: tasks %lld, activations sent %lld (eager %lld, gets %lld), "
                   "net bytes sent %lld received %lld\n",
           r->rank, (long long)(after.tasks_run - before.tasks_run), (long long)activations,
           (long long)(after.eager_sent - before.eager_sent),
           (long long)(after.gets_sent - before.gets_sent),
           (long long)(after.net_bytes_sent - before.net_bytes_sent),
           (long long)(after.net_bytes_received - before.net_bytes_received));
    fflush(stdout);
    if (!r->o->check) return 0;
    return gs_check(tp, r, activations);
}

static int gs_main(weft_context_t *ctx, const gs_opts_t *o)
{
    gs_run_t r = {.ctx = ctx,
                  .o = o,
                  .rank = weft_rank(ctx),
                  .nranks = weft_nranks(ctx),
                  .width = (int)o->width,
                  .depth = (int)o->depth,
                  .nb = (int)o->nb};
    int verbose = r.rank == 0, rc = 1;
    int64_t rows = o->width * o->nb, cols = o->depth * o->nb;
    r.A = weft_matrix_new(ctx, WEFT_DOUBLE, rows, cols, r.nb, r.nb, (int)o->p, (int)o->q);
    r.B = weft_matrix_new(ctx, WEFT_DOUBLE, rows, cols, r.nb, r.nb, (int)o->p, (int)o->q);
    r.c = calloc((size_t)r.width, sizeof *r.c);
    r.cnext = calloc((size_t)r.width, sizeof *r.cnext);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "gemm-stress");
    if (r.A == NULL || r.B == NULL || r.c == NULL || r.cnext == NULL || tp == NULL) {
        if (verbose)
            fprintf(stderr, GS_NAME ": cannot create the operands (%lld x %lld, tiles %d)\n",
                    (long long)rows, (long long)cols, r.nb);
        goto out;
    }
    rc = gs_run(ctx, tp, &r);
out:
    if (tp != NULL) weft_taskpool_free(tp);
    for (int c = 0; r.c != NULL && c < r.width; c++) weft_data_release(r.c[c]);
    for (int c = 0; r.cnext != NULL && c < r.width; c++) weft_data_release(r.cnext[c]);
    free(r.c);
    free(r.cnext);
    if (r.B != NULL) weft_matrix_free(r.B);
    if (r.A != NULL) weft_matrix_free(r.A);
    return rc == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    appdev_t dev;
    int rc = gs_prescan(argc, argv, &dev);
    if (rc == 2) return appdev_probe(dev.prog, argc, argv);
    if (rc != 0) return rc > 0 ? 0 : 1;
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (ctx == NULL) {
        fprintf(stderr, GS_NAME ": weft_init failed (see the message above)\n");
        appdev_init_failed(&dev);
        return 1;
    }
    int verbose = weft_rank(ctx) == 0;
    gs_opts_t o;
    if (gs_parse(argc, argv, &o, verbose) != 0 || gs_validate(ctx, &o, &dev, verbose) != 0)
        rc = 1;
    else
        rc = gs_main(ctx, &o);
    int frc = weft_fini(ctx);
    if (frc < 0) {
        fprintf(stderr, GS_NAME ": weft_fini: %s\n", weft_strerror(frc));
        rc = 1;
    }
    return rc;
}
