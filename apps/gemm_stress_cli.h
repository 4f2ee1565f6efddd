/* The command line of weft-gemm-stress: its options, their defaults and
 * limits, the scan made before weft_init (-h, -c, -g, --probe-gpus) and
 * the parse and checks made after it.
 *
 * Header-only on purpose (see gemm_stress_kernels.h); weft-gemm-stress.c
 * includes it. */
#ifndef WEFT_APPS_GEMM_STRESS_CLI_H
#define WEFT_APPS_GEMM_STRESS_CLI_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <weft/weft.h>

#include "app_agree.h"
#include "app_devices.h"
#include "app_flags.h"
#include "gemm_stress_kernels.h" /* GS_NAME, GS_ERROR_MAX */

#define GS_TILE_MAX 16384
#define GS_TILES_MAX (1 << 24)

typedef struct gs_opts {
    int64_t nb, depth, width, p, q, g, cores, seed;
    int check;
    int ptg; /* --ptg: the chains as a parameterized task graph (gemm_stress_ptg.h) */
} gs_opts_t;

static const gs_opts_t gs_defaults = {.nb = 256,
                                      .depth = 16,
                                      .width = 4,
                                      .p = 1,
                                      .q = -1,
                                      .g = 0,
                                      .cores = -1,
                                      .seed = 42,
                                      .check = 0,
                                      .ptg = 0};

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
            "                 device_cuda_enabled or device_emu_enabled to n (already\n"
            "                 set to another count: refused; default 0: CPU only)\n"
            "  -c <cores>     worker cores a rank (sets WEFT_CORES before weft_init)\n"
            "  --seed <s>     seed of the generated operands (default %lld)\n"
            "  --check        recompute each chain with CBLAS on the rank that owns its\n"
            "                 result (relative error < %.0e) and check the message counts\n"
            "  --ptg          the chains as a parameterized task graph (weft_ptg_insert,\n"
            "                 docs/PTG.md): a rank builds only its own steps\n"
            "  --probe-gpus   print 'cuda_devices= <n>', the CUDA devices weft finds, and exit\n"
            "  -h, --help     this help; weft-info lists the --weft-* parameters\n",
            (long long)gs_defaults.nb, (long long)gs_defaults.depth, (long long)gs_defaults.width,
            (long long)gs_defaults.seed, GS_ERROR_MAX);
}

static const app_flag_t gs_flags[] = {
    {"-t", offsetof(gs_opts_t, nb), 1, GS_TILE_MAX, 0},
    {"--depth", offsetof(gs_opts_t, depth), 1, 1 << 20, 0},
    {"--width", offsetof(gs_opts_t, width), 1, 1 << 20, 0},
    {"-P", offsetof(gs_opts_t, p), 1, 1 << 20, 0},
    {"-Q", offsetof(gs_opts_t, q), 1, 1 << 20, 0},
    {"-g", offsetof(gs_opts_t, g), 0, 16, 0},
    {"-c", offsetof(gs_opts_t, cores), 1, 4096, 0},
    {"--seed", offsetof(gs_opts_t, seed), 0, INT64_MAX, 0},
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
            i += appdev_weft_words(argc, argv, i) - 1;
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
        if (appdev_set_cores(GS_NAME, argc, argv, cores) != 0) return -1;
    }
    return appdev_prepare(dev, argc, argv);
}

static int gs_parse(int argc, char **argv, gs_opts_t *o, int verbose)
{
    *o = gs_defaults;
    app_seen_flags_t seen = {.n = 0};
    for (int i = 1; i < argc; i++) {
        const char *value;
        if (strcmp(argv[i], "--check") == 0) {
            o->check = 1;
            continue;
        }
        if (strcmp(argv[i], "--ptg") == 0) {
            o->ptg = 1;
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
        if (app_parse_int(GS_NAME, f->name, value, f->min, f->max, dst, verbose) != 0 ||
            app_flag_once(GS_NAME, &seen, f, *dst, value, verbose) != 0)
            return -1;
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
    return appdev_check(ctx, dev); /* dev->g: -g as gs_prescan read it, -1 when not given */
}

/* Every flag but -c shapes the chains (their operands, tiles, grid and
 * steps), and ranks given different ones were told a check's relative
 * error or "inserted different task sequences", no flag named: each is
 * named where the ranks differ, on every rank, parsed or not (known 0:
 * this rank refused its command line and takes no side; every rank stops
 * with it). -g was compared before the parse. Collective; 0 or -1. */
static int gs_same_flags(weft_context_t *ctx, const gs_opts_t *o, int known)
{
    static const char *const skip[] = {"-c", "-g", NULL};
    int rc = app_same_flags(GS_NAME, ctx, gs_flags, sizeof gs_flags / sizeof gs_flags[0], o, 0,
                            skip, NULL, 0, known);
    if (app_same_flag(GS_NAME, ctx, "--check", o->check, known) != 0) rc = -1;
    if (app_same_flag(GS_NAME, ctx, "--ptg", o->ptg, known) != 0) rc = -1;
    if (app_all_parsed(GS_NAME, ctx, known) != 0) rc = -1;
    return rc;
}

#endif
