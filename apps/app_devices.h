/* The accelerators of the weft apps: `-g N` and `--probe-gpus`.
 *
 * Header-only (apps/CMakeLists.txt builds every .c file of apps/ as its own
 * program); weft-potrf.c and weft-gemm-stress.c include it. Public API only.
 *
 * -g N asks for N accelerators a rank of the type the parameter device_type
 * names (cuda by default, hip, or emu). Before weft_init, appdev_prepare
 * reads that type from --weft-device_type=X in argv or env WEFT_DEVICE_TYPE
 * and sets env WEFT_DEVICE_<TYPE>_ENABLED=N (CUDA, HIP or EMU); when the
 * user already set that parameter (env or --weft-), the same count is
 * taken and another is refused (both named). N = 0 opens no device of the
 * type (CUDA is not even probed). After weft_init, appdev_check fails (1)
 * when the rank has fewer than N devices of the type, or devices -g did
 * not ask for; weft_init itself already fails when a count that was asked
 * for explicitly cannot be met (a type absent, or built without).
 *
 * --probe-gpus: weft_init with every CUDA device (device_cuda_enabled=-1,
 * no emu device, a small zone each) and prints "cuda_devices= <n>": what
 * the tests that need GPUs check before they run (they skip with 77). */
#ifndef WEFT_APPS_APP_DEVICES_H
#define WEFT_APPS_APP_DEVICES_H

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <weft/weft.h>

#include "app_agree.h"

#define APPDEV_MAX 256 /* device indices 1..APPDEV_MAX-1 are tracked */

typedef struct appdev {
    const char *prog;         /* for messages */
    int64_t g;                /* -g, or -1 when not given */
    const char *type;         /* "cuda", "hip" or "emu"; NULL: unknown (weft_init says) */
    weft_device_type_t dtype; /* WEFT_DEV_CUDA, WEFT_DEV_HIP or WEFT_DEV_EMU */
    const char *param;        /* device_<type>_enabled */
    int user_set;             /* the user set param: -g does not touch it */
    char user_origin[96];     /* where: "env WEFT_..." or "--weft-..." */
    char user_value[32];      /* the user's value of param */
    int one_tile;             /* the prescan set up one tile (app_cli_one_tile) */
} appdev_t;

/* 1 when argv word a (after "--weft-") names parameter name: '-' in a
 * matches '_' in name, as weft's own parser does; *rest is what follows. */
static inline int appdev_name_is(const char *a, const char *name, const char **rest)
{
    size_t k = 0;
    for (; name[k] != '\0'; k++)
        if (a[k] != name[k] && !(name[k] == '_' && a[k] == '-')) return 0;
    if (a[k] != '\0' && a[k] != '=') return 0;
    *rest = a + k;
    return 1;
}

/* Whether word w is an option ("-g", "--check"), not a value ("-1"). */
static inline int appdev_is_option(const char *w)
{
    return w[0] == '-' && (w[1] == '-' || isalpha((unsigned char)w[1]));
}

/* How many words the "--weft-..." option at argv[i] takes, as weft_init
 * reads them: 2 when the next word is its value, 1 for --weft-<name>=value
 * or a bare switch before an option or the end. The apps scan argv before
 * weft_init, and skipping the next word always took "-g" for the value of
 * a bare switch: "--weft-show_stats -g 1" ran on no device, silently. */
static inline int appdev_weft_words(int argc, char **argv, int i)
{
    if (strchr(argv[i], '=') != NULL || i + 1 >= argc || appdev_is_option(argv[i + 1])) return 1;
    return 2;
}

/* The value of the last --weft-<name>=value or --weft-<name> value in argv
 * (before a "--"), "1" for a bare switch, or NULL. */
static inline const char *appdev_weft_opt(int argc, char **argv, const char *name)
{
    const char *found = NULL;
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
        const char *rest;
        if (strncmp(argv[i], "--weft-", 7) != 0) continue;
        int words = appdev_weft_words(argc, argv, i);
        if (appdev_name_is(argv[i] + 7, name, &rest))
            found = *rest == '=' ? rest + 1 : words == 2 ? argv[i + 1] : "1";
        i += words - 1;
    }
    return found;
}

static inline int appdev_ieq(const char *a, const char *b)
{
    for (; *a != '\0' && *b != '\0'; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return 0;
    return *a == *b;
}

static inline int appdev_setenv(const char *prog, const char *var, const char *value)
{
    if (setenv(var, value, 1) == 0) return 0;
    fprintf(stderr, "%s: cannot set %s: %s\n", prog, var, strerror(errno));
    return -1;
}

/* -c's worker cores into WEFT_CORES, before weft_init; a --weft-cores on
 * the command line that says otherwise is refused (it would win over -c
 * silently; two apps took it so). 0, or -1 after a message. */
static inline int appdev_set_cores(const char *prog, int argc, char **argv, int64_t cores)
{
    const char *opt = appdev_weft_opt(argc, argv, "cores");
    char *end = NULL;
    long long given = opt != NULL ? strtoll(opt, &end, 10) : 0;
    /* A malformed --weft-cores is weft_init's to name. */
    if (opt != NULL && end != opt && *end == '\0' && given != cores) {
        fprintf(stderr, "%s: -c %lld and --weft-cores=%s disagree: give one of them\n", prog,
                (long long)cores, opt);
        return -1;
    }
    char text[32];
    snprintf(text, sizeof text, "%lld", (long long)cores);
    return appdev_setenv(prog, "WEFT_CORES", text);
}

/* Before weft_init, with d->prog and d->g (-1: no -g) filled: the type -g
 * asks for, and its device count in the environment unless the user set
 * it. 0, or -1 after a message. */
static inline int appdev_prepare(appdev_t *d, int argc, char **argv)
{
    const char *type = appdev_weft_opt(argc, argv, "device_type");
    if (type == NULL) type = getenv("WEFT_DEVICE_TYPE");
    if (type == NULL) type = "cuda";
    d->type = NULL;
    d->user_set = 0;
    d->user_origin[0] = d->user_value[0] = '\0';
    if (appdev_ieq(type, "cuda")) {
        d->type = "cuda";
        d->dtype = WEFT_DEV_CUDA;
        d->param = "device_cuda_enabled";
    } else if (appdev_ieq(type, "hip")) {
        d->type = "hip";
        d->dtype = WEFT_DEV_HIP;
        d->param = "device_hip_enabled";
    } else if (appdev_ieq(type, "emu")) {
        d->type = "emu";
        d->dtype = WEFT_DEV_EMU;
        d->param = "device_emu_enabled";
    } else {
        return 0; /* weft_init names the malformed device_type */
    }
    char var[64];
    snprintf(var, sizeof var, "WEFT_%s", d->param);
    for (char *c = var; *c != '\0'; c++) *c = (char)toupper((unsigned char)*c);
    const char *user = appdev_weft_opt(argc, argv, d->param);
    if (user != NULL)
        snprintf(d->user_origin, sizeof d->user_origin, "--weft-%s", d->param);
    else if ((user = getenv(var)) != NULL)
        snprintf(d->user_origin, sizeof d->user_origin, "env %s", var);
    if (user != NULL) {
        d->user_set = 1;
        snprintf(d->user_value, sizeof d->user_value, "%s", user);
        return 0;
    }
    if (d->g < 0) return 0;
    char text[32];
    snprintf(text, sizeof text, "%lld", (long long)d->g);
    return appdev_setenv(d->prog, var, text);
}

static inline const char *appdev_type_name(const appdev_t *d)
{
    return d->dtype == WEFT_DEV_CUDA ? "CUDA" : d->dtype == WEFT_DEV_HIP ? "HIP" : "emu";
}

/* weft_init returned NULL: one line that points at weft's message above
 * (which names the cause) and, with -g, recalls what -g asked weft for,
 * as context: the cause may lie elsewhere (a trace path, a fault rule). */
static inline void appdev_init_failed(const appdev_t *d)
{
    if (d->g <= 0 || d->type == NULL)
        fprintf(stderr, "%s: weft_init failed (see the message above)\n", d->prog);
    else if (d->user_set)
        fprintf(stderr,
                "%s: weft_init failed (see the message above; -g %lld asked for %lld %s "
                "device(s), %s=%s was set by %s)\n",
                d->prog, (long long)d->g, (long long)d->g, appdev_type_name(d), d->param,
                d->user_value, d->user_origin);
    else
        fprintf(stderr,
                "%s: weft_init failed (see the message above; -g %lld asked weft for %lld %s "
                "device(s), %s=%lld%s)\n",
                d->prog, (long long)d->g, (long long)d->g, appdev_type_name(d), d->param,
                (long long)d->g,
                d->dtype != WEFT_DEV_EMU
                    ? "; on a machine without GPUs, --weft-device_type=emu runs on emulated "
                      "accelerators"
                    : "");
}

/* Devices of the given type on this rank. */
static inline int appdev_count(const weft_context_t *ctx, weft_device_type_t type)
{
    int n = 0;
    for (int i = 1; i <= weft_ndevices(ctx); i++) n += weft_device_type(ctx, i) == (int)type;
    return n;
}

/* The device_type word of a weft_device_type_t. */
static inline const char *appdev_word_of(int type)
{
    return type == WEFT_DEV_CUDA ? "cuda" : type == WEFT_DEV_HIP ? "hip" : "emu";
}

/* Devices beyond the `have` of the type that -g asks for would run tasks
 * too and print a g nobody asked for (-g 0, "CPU only", ran on two emu
 * devices that env WEFT_DEVICE_EMU_ENABLED=2 opened): a count of the type
 * the user set above -g, or devices of another type (-g sets only its
 * type's count: another's is the user's). "all" (-1) is a policy, not a
 * count, and -g picks among those devices. 0, or -1 after a message. */
static inline int appdev_beyond_g(const weft_context_t *ctx, const appdev_t *d, int have)
{
    long asked = d->user_set ? strtol(d->user_value, NULL, 10) : 0;
    if (asked > d->g && have > d->g) {
        fprintf(stderr, "%s: rank %d: -g %lld and %s=%s set by %s disagree: give one of them\n",
                d->prog, weft_rank(ctx), (long long)d->g, d->param, d->user_value, d->user_origin);
        return -1;
    }
    for (int i = 1; i <= weft_ndevices(ctx); i++) {
        int type = weft_device_type(ctx, i);
        if (type == (int)d->dtype) continue;
        const char *word = appdev_word_of(type);
        fprintf(stderr,
                "%s: rank %d: -g %lld asks for %lld %s device(s) (device_type=%s) and no "
                "other, but device_%s_enabled opened %s devices on this rank: set it to 0, or "
                "ask for them by -g with --weft-device_type=%s\n",
                d->prog, weft_rank(ctx), (long long)d->g, (long long)d->g, appdev_type_name(d),
                d->type, word, word, word);
        return -1;
    }
    return 0;
}

/* After weft_init and with d->g the -g given (-1: none): 0 when the rank
 * has g devices of the type and no others it was not asked for, -1 after
 * a message (every rank that lacks devices says so: they may differ
 * between ranks). */
static inline int appdev_check(const weft_context_t *ctx, const appdev_t *d)
{
    if (d->g < 0 || d->type == NULL) return 0;
    int have = appdev_count(ctx, d->dtype);
    if (appdev_beyond_g(ctx, d, have) != 0) return -1;
    if (have >= d->g) return 0;
    fprintf(stderr,
            "%s: rank %d: asked for -g %lld accelerators but this rank has %d %s "
            "device(s) (device_type=%s",
            d->prog, weft_rank(ctx), (long long)d->g, have, appdev_type_name(d), d->type);
    if (d->user_set)
        fprintf(stderr, ", %s=%s set by %s: drop it to let -g choose", d->param, d->user_value,
                d->user_origin);
    fprintf(stderr, ")\n");
    return -1;
}

/* Tasks run so far by each accelerator of the rank (index 1..). */
typedef struct appdev_snap {
    int n;
    int64_t tasks[APPDEV_MAX];
} appdev_snap_t;

static inline void appdev_snapshot(const weft_context_t *ctx, appdev_snap_t *s)
{
    s->n = weft_ndevices(ctx);
    if (s->n >= APPDEV_MAX) s->n = APPDEV_MAX - 1;
    for (int i = 1; i <= s->n; i++) {
        weft_device_counters_t c;
        s->tasks[i] = weft_device_counters_get(ctx, i, &c) == 0 ? c.tasks : 0;
    }
}

/* Accelerators that ran at least one task since the snapshot `before`. */
static inline int appdev_used(const weft_context_t *ctx, const appdev_snap_t *before)
{
    appdev_snap_t now;
    appdev_snapshot(ctx, &now);
    int used = 0;
    for (int i = 1; i <= now.n && i <= before->n; i++) used += now.tasks[i] > before->tasks[i];
    return used;
}

/* 1 when argv holds --probe-gpus (before a "--"). */
static inline int appdev_probe_asked(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--probe-gpus") == 0) return 1;
    return 0;
}

/* --probe-gpus: prints "cuda_devices= <n>" (rank 0), the CUDA devices weft
 * opens when asked for all of them; 0 when weft has no CUDA module. Exit
 * status of the program. */
static inline int appdev_probe(const char *prog, int argc, char **argv)
{
    /* Errors only: the probe's own settings are not the user's, and the
     * warning that the small zone does nothing without a GPU named a
     * parameter the user never set. */
    if (appdev_setenv(prog, "WEFT_DEVICE_CUDA_ENABLED", "-1") != 0 ||
        appdev_setenv(prog, "WEFT_DEVICE_EMU_ENABLED", "0") != 0 ||
        appdev_setenv(prog, "WEFT_DEVICE_MEMORY_LIMIT", "16M") != 0 ||
        appdev_setenv(prog, "WEFT_CORES", "1") != 0 ||
        appdev_setenv(prog, "WEFT_DEBUG_VERBOSE", "0") != 0)
        return 1;
    int n = 1;
    char *only[] = {argv[0], NULL};
    char **args = only;
    weft_context_t *ctx = weft_init(&n, &args);
    if (ctx == NULL) {
        fprintf(stderr, "%s: --probe-gpus: weft_init failed (see the message above)\n", prog);
        return 1;
    }
    /* A probe on some ranks only is another program there (app_agree.h). */
    if (app_same_program(prog, "--probe-gpus", ctx) != 0) {
        (void)weft_fini(ctx);
        return 1;
    }
    /* The probe reads nothing else: other words passed silently, malformed
     * ones ("-N abc", "--weft-bogus=1") included. Refused after the
     * comparison above, which a rank refusing alone would leave the others
     * waiting in (every rank of one program has the same words). */
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--probe-gpus") != 0) {
            fprintf(stderr, "%s: --probe-gpus takes no other argument ('%s' given)\n", prog,
                    argv[i]);
            (void)weft_fini(ctx);
            return 1;
        }
    if (weft_rank(ctx) == 0) {
        printf("cuda_devices= %d\n", appdev_count(ctx, WEFT_DEV_CUDA));
        fflush(stdout);
    }
    return weft_fini(ctx) < 0 ? 1 : 0;
}

/* Whether ctx is a simulation (parameter sim_nranks, docs/SCALE.md): no
 * body runs and nothing is sent. */
static inline int app_sim(const weft_context_t *ctx)
{
    int64_t n = 0;
    return weft_param_get_int(ctx, "sim_nranks", &n) == WEFT_SUCCESS && n > 0;
}

/* The rate of a run's TIME line: "<GFLOPS> gflops", or in a simulation,
 * which runs no body and whose time is the insertion's, no rate (it
 * claimed TFLOP/s on two cores). */
static inline void app_rate_text(const weft_context_t *ctx, double flops, double t, char *text,
                                 size_t n)
{
    if (app_sim(ctx))
        snprintf(text, n, "simulated, no body ran (no rate)");
    else
        snprintf(text, n, "%.2f gflops", flops / t / 1e9);
}

/* A check asked for in a simulation would judge results no body made (it
 * failed, silently on every simulated rank but 0): refused. 0, or -1
 * after a message (a simulation is one process: printed whatever rank it
 * acts as). */
static inline int app_sim_check(const char *prog, const weft_context_t *ctx, int check)
{
    if (!check || !app_sim(ctx)) return 0;
    fprintf(stderr,
            "%s: --check needs the task bodies to run, and a simulation (sim_nranks) runs none: "
            "drop --check\n",
            prog);
    return -1;
}

/* A program whose measurement needs the real processes refuses a
 * simulation (weft-pingpong: its bare MPI ping-pong sent to a rank 1 that a
 * simulation does not have, and MPI_ERR_RANK aborted the run). 0, or -1
 * after a message naming why. */
static inline int app_sim_refuse(const char *prog, const weft_context_t *ctx, const char *why)
{
    if (!app_sim(ctx)) return 0;
    fprintf(stderr, "%s: %s, and a simulation (sim_nranks) runs one: drop sim_nranks\n", prog, why);
    return -1;
}

#endif /* WEFT_APPS_APP_DEVICES_H */
