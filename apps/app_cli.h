/* The command line of the dense linear algebra apps (weft-potrf, -getrf,
 * -geqrf, -gemm, -posv): the options they all have (app_opts_t, which
 * starts each app's options struct, and its flags), and the prescan and
 * parse of those and of an app's own table of integer flags (app_flags.h).
 *
 * Before weft_init, app_cli_prescan handles -h/--help and --probe-gpus,
 * sets WEFT_CORES from -c, the device count from -g (app_devices.h) and,
 * with accelerators and a workspace need, WEFT_DEVICE_WORKSPACE. After
 * weft_init (its --weft-* options gone from argv) app_cli_parse fills the
 * options and reports any unknown or malformed argument. Header-only. */
#ifndef WEFT_APPS_APP_CLI_H
#define WEFT_APPS_APP_CLI_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_devices.h"
#include "app_flags.h"

/* The options every dense app has, first member of the app's options. */
typedef struct app_opts {
    int64_t n, nb, p, q, g, cores, nruns, seed;
    int check;            /* 1: every run (--check), 2: the first run only (--check-first) */
    int nb_given;         /* -t was on the command line */
    int p_given, q_given; /* -P, -Q were */
    int ptg;              /* --ptg: the app's parameterized task graph instead of insertion */
    int64_t dist;         /* --dist: APP_DIST_CYCLIC or _REFLECTED (-1 until app_cli_parse) */
} app_opts_t;

/* How the apps deal tiles over the grid (weft_matrix.h): plainly, or back
 * and forth, which evens out the work of LU, QR and Cholesky between the
 * grid's rows and columns. */
enum { APP_DIST_CYCLIC = 0, APP_DIST_REFLECTED = 1 };
static const char *const app_cli_dist_words[] = {"cyclic", "reflected"};

/* The help lines of -P and -Q, one text for every dense app's --help (a
 * "%s" in its usage): each app wrote its own, and all five still said
 * "default 1 x 1" after the grid came to follow the rank count
 * (app_cli_default_grid). */
static const char app_cli_usage_grid[] =
    "  -P <p>, -Q <q> process grid, P*Q = ranks (default: from the rank count, as\n"
    "                square as it goes, P >= Q; one given, the other is its cofactor)\n"
    "  --dist <d>    how tiles are dealt over the grid: reflected (the default; rows\n"
    "                0 1 1 0 0 1 .. over 2 grid rows, which evens out the work of LU, QR\n"
    "                and Cholesky) or cyclic (0 1 0 1 ..; --ptg's only deal)\n";

/* Their flags; an app's own table may list one again with other bounds
 * (weft-geqrf's -t), and it is looked up first. */
static const app_flag_t app_cli_common[] = {
    {"-N", offsetof(app_opts_t, n), 1, INT32_MAX, 0},
    {"-t", offsetof(app_opts_t, nb), 1, INT32_MAX / 2, 0},
    {"-P", offsetof(app_opts_t, p), 1, 1 << 20, 0},
    {"-Q", offsetof(app_opts_t, q), 1, 1 << 20, 0},
    {"-g", offsetof(app_opts_t, g), 0, 16, 0}, /* the device_*_enabled parameters' range */
    {"-c", offsetof(app_opts_t, cores), 1, 4096, 0},
    {"--seed", offsetof(app_opts_t, seed), 0, INT64_MAX, 0},
    {"--nruns", offsetof(app_opts_t, nruns), 1, 1000000, 0},
    {"--dist", offsetof(app_opts_t, dist), 0, 1, 0},
};

/* Those of them whose values are words, as an app's own words table. */
static const app_flag_words_t app_cli_common_words[] = {{"--dist", app_cli_dist_words}};

typedef struct app_cli {
    const char *prog;
    const app_flag_t *flags; /* the app's own, offsets into its options */
    size_t nflags;
    const app_flag_words_t *words; /* those of flags whose values are words */
    size_t nwords;
    int check_first; /* --check-first is accepted */
    int ptg;         /* --ptg is accepted (the app has a graph, include/weft/ptg.h) */
    void (*usage)(FILE *out);
    int64_t nb;                   /* default tile size */
    int gpu_nb_auto;              /* without -t on GPUs, the tile follows N (app_cli_auto_nb) */
    int64_t (*gpu_nb)(int64_t n); /* the app's own rule for that, NULL: the common one */
    int64_t gpu_one_tile_max;     /* one rank, one GPU: N up to this is one tile (0: never) */
    double workspace_tiles;       /* device workspace an execution stream needs, in tiles */
} app_cli_t;

/* The ranks the launcher started, before weft_init (MPI is not up yet):
 * Open MPI's, Hydra's (MPICH, Intel MPI) or Slurm's variable; 1 when none
 * is set (the program was started alone). */
static inline int64_t app_cli_launch_ranks(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE",
                                       "SLURM_NTASKS"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        long long n = v != NULL ? strtoll(v, NULL, 10) : 0;
        if (n > 0) return n;
    }
    return 1;
}

/* Whether the tile follows N (and the device) for this run: the app asks
 * for it and -g gives GPUs (CUDA, HIP); on emu devices and CPUs the app's
 * default stays. */
static inline int app_cli_gpu_nb(const app_cli_t *c, const appdev_t *dev)
{
    int gpu = dev->dtype == WEFT_DEV_CUDA || dev->dtype == WEFT_DEV_HIP;
    return c->gpu_nb_auto && dev->g > 0 && gpu;
}

/* Whether the app takes the whole matrix as one tile: one rank with one
 * GPU (CUDA, HIP) and N up to the app's gpu_one_tile_max. There the tile
 * DAG is bound by its diagonal chain (each step's small factorization
 * and inversion leave an H200 mostly idle, docs/RESULTS.md "GPU speed"), and one
 * vendor call on the whole matrix, one task, is faster: weft-potrf at
 * N = 8192 0.97 of cusolverDnDpotrf as one tile against 0.67 tiled. */
static inline int app_cli_one_tile(const app_cli_t *c, int64_t n, const appdev_t *dev,
                                   int64_t nranks)
{
    return app_cli_gpu_nb(c, dev) && dev->g == 1 && nranks == 1 && n > 0 &&
           n <= c->gpu_one_tile_max;
}

/* The tile size when -t is not given. On GPUs (CUDA, HIP), for an app
 * that asks for it: N itself where dev->one_tile says so, else 2048
 * from N = 32768, 1024 above N = 4096, else 512, the best of
 * 512/1024/2048 measured on one H200 at N = 8192, 16384 and 32768
 * (docs/RESULTS.md, "GPU speed"): small tiles leave a GPU idle, large ones too few
 * tiles for its streams. Elsewhere (CPU, emu) the app's default. n < 0:
 * not known yet (the largest). */
static inline int64_t app_cli_auto_nb(const app_cli_t *c, int64_t n, const appdev_t *dev)
{
    if (!app_cli_gpu_nb(c, dev)) return c->nb;
    if (dev->one_tile && n > 0) return n;
    if (c->gpu_nb != NULL) return c->gpu_nb(n);
    if (n < 0 || n >= 32768) return 2048;
    return n > 4096 ? 1024 : 512;
}

/* The order of --preload's small matrix (app_driver.h): 2 max(P, Q) + 1
 * tiles, so that the ranks run the kinds of task they run in the
 * factorization, at most 17 (grids up to 8 x 8 covered) so that a large
 * grid does not factorize a large one. */
static inline int64_t app_preload_order(const app_opts_t *o)
{
    int64_t pq = o->p > o->q ? o->p : o->q;
    /* A matrix that is one tile preloads one tile of its order, not a
     * 3 x 3 of them: the vendor's factorization picks its kernels by the
     * order (a 2048 preload left the first N = 8192 run at 45 ms against
     * 7.4 warm on an H200). */
    if (o->nb >= o->n) return o->n;
    return (pq > 8 ? 17 : 2 * pq + 1) * o->nb;
}

/* The flag argv[*i] names, the app's own table first (app_flag_at). */
static inline const app_flag_t *app_cli_flag(const app_cli_t *c, int argc, char **argv, int *i,
                                             const char **value)
{
    const app_flag_t *f = app_flag_at(c->flags, c->nflags, argc, argv, i, value);
    if (f != NULL || *value != NULL) return f;
    return app_flag_at(app_cli_common, sizeof app_cli_common / sizeof app_cli_common[0], argc, argv,
                       i, value);
}

/* The one-letter flag that arg spells as "-N=40" ("=" is for the long
 * ones, "--nrhs=3"), or NULL. */
static inline const app_flag_t *app_cli_short_eq(const app_cli_t *c, const char *arg)
{
    const app_flag_t *tables[2] = {c->flags, app_cli_common};
    size_t counts[2] = {c->nflags, sizeof app_cli_common / sizeof app_cli_common[0]};
    for (int t = 0; t < 2; t++)
        for (size_t f = 0; f < counts[t]; f++) {
            const char *name = tables[t][f].name;
            size_t len = strlen(name);
            if (name[1] != '-' && strncmp(arg, name, len) == 0 && arg[len] == '=')
                return &tables[t][f];
        }
    return NULL;
}

/* The words of flag f's values, or NULL for an integer flag: the app's
 * table, then the common one (as the flags are looked up). */
static inline const char *const *app_cli_words(const app_cli_t *c, const app_flag_t *f)
{
    const app_flag_words_t *tables[2] = {c->words, app_cli_common_words};
    size_t counts[2] = {c->nwords, sizeof app_cli_common_words / sizeof app_cli_common_words[0]};
    for (int t = 0; t < 2; t++)
        for (size_t w = 0; w < counts[t]; w++)
            if (strcmp(tables[t][w].flag, f->name) == 0) return tables[t][w].words;
    return NULL;
}

/* Raises device_workspace to ws_tiles nb x nb tiles and 1 MiB when the
 * user did not set it and the default (16 MiB) is too small; nb is the
 * tile as it will be (no larger than the matrix). A need past weft's bound
 * is the tile size's fault, said so (weft_init named the environment
 * variable the app had set, as if the user had). */
static inline int app_cli_workspace(const app_cli_t *c, int argc, char **argv, const appdev_t *dev,
                                    int64_t nb)
{
    const char *var = "WEFT_DEVICE_WORKSPACE";
    if (dev->g <= 0 || appdev_weft_opt(argc, argv, "device_workspace") != NULL || getenv(var))
        return 0;
    int64_t need = (int64_t)(c->workspace_tiles * (double)(nb * nb) * sizeof(double)) + (1 << 20);
    if (need <= 16 << 20) return 0;
    if (need > (int64_t)16 << 30) {
        fprintf(stderr,
                "%s: tiles of %lld x %lld need %lld bytes of device workspace, past weft's "
                "16 GiB (device_workspace): give a smaller -t\n",
                c->prog, (long long)nb, (long long)nb, (long long)need);
        return -1;
    }
    char text[32];
    snprintf(text, sizeof text, "%lld", (long long)need);
    return appdev_setenv(c->prog, var, text);
}

/* Sets weft parameter name (WEFT_<NAME> in var) to value unless the user
 * set it. 0, or -1 after a message. */
static inline int app_cli_default(const char *prog, int argc, char **argv, const char *name,
                                  const char *var, const char *value)
{
    if (appdev_weft_opt(argc, argv, name) != NULL || getenv(var)) return 0;
    return appdev_setenv(prog, var, value);
}

/* One tile runs one task at a time: one execution stream, no urgent one,
 * so that the workspace of a whole-matrix tile (app_cli_workspace) is
 * taken once, not once per stream. */
static inline int app_cli_one_stream(const app_cli_t *c, int argc, char **argv)
{
    if (app_cli_default(c->prog, argc, argv, "device_streams", "WEFT_DEVICE_STREAMS", "1") != 0)
        return -1;
    return app_cli_default(c->prog, argc, argv, "device_urgent_stream", "WEFT_DEVICE_URGENT_STREAM",
                           "0");
}

static inline int app_cli_set_cores(const char *prog, int argc, char **argv, const char *value,
                                    const app_flag_t *f)
{
    int64_t cores;
    if (app_parse_int(prog, "-c", value, f->min, f->max, &cores, 1) != 0) return -1;
    return appdev_set_cores(prog, argc, argv, cores);
}

/* 1 after --help, 2 for --probe-gpus, 0 to go on, -1 after an error.
 * Malformed -t and -g values are reported by app_cli_parse. */
static inline int app_cli_prescan(const app_cli_t *c, int argc, char **argv, appdev_t *dev)
{
    dev->prog = c->prog;
    dev->g = -1;
    int64_t nb = c->nb, n = -1, mk = -1;
    int nb_given = 0;
    if (appdev_probe_asked(argc, argv)) return 2;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *value;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            c->usage(stdout);
            return 1;
        }
        if (strncmp(a, "--weft-", 7) == 0) {
            i += appdev_weft_words(argc, argv, i) - 1;
            continue;
        }
        const app_flag_t *f = app_cli_flag(c, argc, argv, &i, &value);
        if (f == NULL) continue;
        if (strcmp(f->name, "-t") == 0) {
            nb_given = 1;
            if (app_parse_int(c->prog, "-t", value, f->min, f->max, &nb, 0) != 0) nb = c->nb;
        }
        if (strcmp(f->name, "-N") == 0 &&
            app_parse_int(c->prog, "-N", value, f->min, f->max, &n, 0) != 0)
            n = -1;
        if (strcmp(f->name, "-g") == 0 &&
            app_parse_int(c->prog, "-g", value, f->min, f->max, &dev->g, 0) != 0)
            dev->g = -1;
        if (strcmp(f->name, "-M") == 0 || strcmp(f->name, "-K") == 0) {
            int64_t dim;
            if (app_parse_int(c->prog, f->name, value, f->min, f->max, &dim, 0) == 0 && dim > mk)
                mk = dim;
        }
        if (strcmp(f->name, "-c") == 0 && app_cli_set_cores(c->prog, argc, argv, value, f) != 0)
            return -1;
    }
    if (appdev_prepare(dev, argc, argv) != 0) return -1;
    dev->one_tile = !nb_given && app_cli_one_tile(c, n, dev, app_cli_launch_ranks());
    if (dev->one_tile && app_cli_one_stream(c, argc, argv) != 0) return -1;
    if (!nb_given) nb = app_cli_auto_nb(c, n, dev);
    /* A tile is no larger than the matrix's largest dimension (N, or -M
     * or -K where the app takes them and they are larger). */
    int64_t dim = n > mk ? n : mk;
    if (dim > 0 && nb > dim) nb = dim;
    return app_cli_workspace(c, argc, argv, dev, nb);
}

/* The deal when --dist is not given: reflected, but for --ptg, whose
 * graphs compute owners by the cyclic rule (potrf_ptg.h); --ptg with
 * --dist reflected is refused rather than run on another deal than asked. */
static inline int app_cli_dist(const char *prog, app_opts_t *o, int verbose)
{
    if (o->dist < 0) o->dist = o->ptg ? APP_DIST_CYCLIC : APP_DIST_REFLECTED;
    if (!o->ptg || o->dist == APP_DIST_CYCLIC) return 0;
    if (verbose)
        fprintf(stderr, "%s: --ptg deals tiles block-cyclically only: drop --dist reflected\n",
                prog);
    return -1;
}

/* Fills the int64_t fields of opts (an app's options, app_opts_t first)
 * named by the flags, and its check. 0, or -1 after a message (when
 * verbose). */
static inline int app_cli_parse(const app_cli_t *c, int argc, char **argv, void *opts, int verbose)
{
    app_opts_t *common = opts;
    app_seen_flags_t seen = {.n = 0};
    for (int i = 1; i < argc; i++) {
        const char *value;
        if (strcmp(argv[i], "--check") == 0 ||
            (c->check_first && strcmp(argv[i], "--check-first") == 0)) {
            int check = strcmp(argv[i], "--check") == 0 ? 1 : 2;
            /* Both given, the last one won silently. */
            if (common->check != 0 && common->check != check) {
                if (verbose)
                    fprintf(stderr, "%s: --check and --check-first: give one of them\n", c->prog);
                return -1;
            }
            common->check = check;
            continue;
        }
        if (c->ptg && strcmp(argv[i], "--ptg") == 0) {
            common->ptg = 1;
            continue;
        }
        const app_flag_t *f = app_cli_flag(c, argc, argv, &i, &value);
        if (f == NULL) {
            const app_flag_t *s = app_cli_short_eq(c, argv[i]);
            if (verbose && value != NULL)
                fprintf(stderr, "%s: %s needs a value (see --help)\n", c->prog, argv[i]);
            else if (verbose && s != NULL)
                fprintf(stderr,
                        "%s: unknown option '%s': %s takes its value as the next word (%s %s)\n",
                        c->prog, argv[i], s->name, s->name, argv[i] + strlen(s->name) + 1);
            else if (verbose)
                fprintf(stderr, "%s: unknown option '%s' (see --help)\n", c->prog, argv[i]);
            return -1;
        }
        int64_t *dst = (int64_t *)((char *)opts + f->offset), got = 0;
        const char *const *words = app_cli_words(c, f);
        if (words != NULL
                ? app_parse_word(c->prog, f, words, value, &got, verbose) != 0
                : app_parse_int(c->prog, f->name, value, f->min, f->max, &got, verbose) != 0)
            return -1;
        if (app_flag_once(c->prog, &seen, f, got, value, verbose) != 0) return -1;
        *dst = got;
        if (strcmp(f->name, "-t") == 0) common->nb_given = 1;
        if (strcmp(f->name, "-P") == 0) common->p_given = 1;
        if (strcmp(f->name, "-Q") == 0) common->q_given = 1;
    }
    return app_cli_dist(c->prog, common, verbose);
}

/* The grid when -P or -Q is missing: the other one's cofactor in the rank
 * count when it divides it; with neither, P x Q = nranks as square as it
 * goes, P >= Q (2 ranks: 2 x 1). A grid given whole, or a P or Q that
 * does not divide the rank count, is left for app_cli_grid to judge. */
static inline void app_cli_default_grid(app_opts_t *o, int nranks)
{
    if (o->p_given && o->q_given) return;
    if (o->p_given) {
        if (nranks % o->p == 0) o->q = nranks / o->p;
        return;
    }
    if (o->q_given) {
        if (nranks % o->q == 0) o->p = nranks / o->q;
        return;
    }
    int64_t q = 1;
    for (int64_t d = 1; d * d <= nranks; d++)
        if (nranks % d == 0) q = d;
    o->q = q;
    o->p = nranks / q;
}

/* Whether a dimension of len elements in tiles of nb makes at most max
 * tiles; -1 after a message naming the flag (when verbose). */
static inline int app_cli_tiles(const char *prog, const char *flag, int64_t len, int64_t nb,
                                int max, int verbose)
{
    int64_t nt = (len + nb - 1) / nb;
    if (nt <= max) return 0;
    if (verbose)
        fprintf(stderr,
                "%s: %s %lld in tiles of -t %lld makes %lld tiles, more than %d: use a "
                "larger -t\n",
                prog, flag, (long long)len, (long long)nb, (long long)nt, max);
    return -1;
}

/* P x Q against the ranks; 0 or -1 after a message (when verbose). */
static inline int app_cli_grid(const char *prog, int64_t p, int64_t q, int nranks, int verbose)
{
    if (p * q == nranks) return 0;
    if (verbose)
        fprintf(stderr,
                "%s: the grid P %lld x Q %lld = %lld ranks, but running on %d (P*Q must equal "
                "the number of ranks; P or Q given alone sets the other when it divides %d; "
                "without -P and -Q the grid follows the rank count)\n",
                prog, (long long)p, (long long)q, (long long)(p * q), nranks, nranks);
    return -1;
}

/* -N / -t against the most tile rows an app takes; 0, or -1 after a
 * message (when verbose). */
static inline int app_cli_tile_rows(const char *prog, const app_opts_t *o, int64_t max, int verbose)
{
    if ((o->n + o->nb - 1) / o->nb <= max) return 0;
    if (verbose)
        fprintf(stderr, "%s: -N %lld / -t %lld makes more than %lld tile rows; use a larger -t\n",
                prog, (long long)o->n, (long long)o->nb, (long long)max);
    return -1;
}

#endif
