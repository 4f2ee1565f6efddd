/* weft-pingpong: tile ping-pong between ranks 0 and 1 through weft tasks,
 * beside a bare MPI ping-pong of the same bytes in the same program.
 *
 * weft: one NEW tile x of `size` bytes owned by rank 0 is read and written
 * (WEFT_RW) by tasks that alternate between rank 1 and rank 0: each task
 * also reads, with WEFT_AFFINITY, an anchor tile of the rank it must run on
 * (tile (0, r) of a 1 x nranks matrix). So one round trip is two tasks and
 * moves x twice (0 -> 1, 1 -> 0). A round of `iters` round trips is inserted
 * and waited for; latency = time / (2 iters) (half a round trip, task
 * insertion, scheduling and the taskpool wait included) and bandwidth =
 * size / latency. Each task bumps a counter held in the first 8 bytes of x,
 * which rank 0 checks at the end of every size, and every rank checks that it
 * sent exactly one activation per move (weft_stats_get). With -g, the copies
 * its devices made (weft_device_counters_get: H2D, D2H, D2D bytes) are
 * printed per move, in tiles, and a move that copies the tile into device
 * memory more than once, or out of it more than once, fails the run: an ipc
 * move is one D2D copy on the receiver, a staged one a D2H on the sender and
 * an H2D on the receiver, an mpi one none.
 *
 * bare MPI: MPI_Send / MPI_Recv of the same number of bytes on
 * MPI_COMM_WORLD between ranks 0 and 1, run between taskpools while weft is
 * idle (its comm thread keeps polling its own communicator, as it does in
 * any application).
 *
 * Sizes are --min-size (default 8 B) times the powers of two up to
 * --max-size (default 64 MiB), then --max-size itself if not among them. Each measurement is
 * repeated --reps times, weft and MPI alternately, and the best of each is printed. Ranks beyond 1
 * only take part in the task insertion and the barriers. */
#define _POSIX_C_SOURCE 200809L

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>
#include <weft/weft.h>

#include "app_agree.h"
#include "app_devices.h"
#include "app_flags.h"
#ifdef WEFT_APP_HAVE_CUDA
#include <cublas_v2.h>
#endif

#define PP_NAME "weft-pingpong"
#define PP_SIZE_MIN 8                          /* the counter lives in 8 bytes */
#define PP_SIZE_MAX ((int64_t)1 << 30)         /* a tile has at most INT_MAX rows */
#define PP_BYTES_PER_SIZE ((int64_t)512 << 20) /* caps iterations of large sizes (default) */
#define PP_ITERS_MIN 3
#define PP_WARMUP 2
#define PP_TAG 4242

typedef struct pp_opts {
    int64_t min_size, max_size, iters, reps, cores, g, max_bytes, kernel;
} pp_opts_t;

static const pp_opts_t pp_defaults = {.min_size = 8,
                                      .max_size = (int64_t)64 << 20,
                                      .iters = 100,
                                      .reps = 3,
                                      .cores = -1,
                                      .g = 0,
                                      .max_bytes = PP_BYTES_PER_SIZE,
                                      .kernel = 1};

/* -g: the tile lives in device memory; it moves device to device. */
static appdev_t pp_dev = {.prog = "weft-pingpong", .g = -1};

/* ---- the task --------------------------------------------------------- */

/* flow 0: the anchor tile of the rank the task runs on (R, AFFINITY),
 * flow 1: x (RW). Bumps the counter in x's first 8 bytes. */
static int pp_cpu_touch(weft_task_t *t)
{
    unsigned char *x = weft_task_ptr(t, 1);
    uint64_t count;
    memcpy(&count, x, sizeof count);
    count++;
    memcpy(x, &count, sizeof count);
    return 0;
}

/* flow 0: anchor R, flow 1: x W: sets the counter to 0. */
static int pp_cpu_init(weft_task_t *t)
{
    uint64_t zero = 0;
    memcpy(weft_task_ptr(t, 1), &zero, sizeof zero);
    return 0;
}

#ifdef WEFT_APP_HAVE_CUDA
/* --kernel: whether a CUDA task launches its kernel (0 measures the
 * runtime's hand-offs alone; set before the first task). */
static int pp_cuda_kernel = 1;

/* On a GPU the task writes the tile in place (scales its first double by
 * 1: a real kernel on the data, a new version) without a host round trip;
 * the counter is kept by the CPU and emu bodies only. */
static int pp_cuda_touch(weft_task_t *t)
{
    const double one = 1.0;
    if (!pp_cuda_kernel) return 0;
    return cublasDscal((cublasHandle_t)weft_task_blas_handle(t), 1, &one,
                       (double *)weft_task_ptr(t, 1), 1) == CUBLAS_STATUS_SUCCESS
               ? 0
               : -1;
}
#endif

/* Accelerators run the CPU bodies as emu kernels; CUDA has its own. */
static const weft_task_class_t pp_class_touch = {.name = "pp_touch",
                                                 .body =
                                                     {
                                                         [WEFT_DEV_CPU] = pp_cpu_touch,
                                                         [WEFT_DEV_EMU] = pp_cpu_touch,
#ifdef WEFT_APP_HAVE_CUDA
                                                         [WEFT_DEV_CUDA] = pp_cuda_touch,
#endif
                                                     },
                                                 .flops = NULL};
static const weft_task_class_t pp_class_init = {.name = "pp_init",
                                                .body =
                                                    {
                                                        [WEFT_DEV_CPU] = pp_cpu_init,
                                                        [WEFT_DEV_EMU] = pp_cpu_init,
#ifdef WEFT_APP_HAVE_CUDA
                                                        [WEFT_DEV_CUDA] = pp_cuda_touch,
#endif
                                                    },
                                                .flops = NULL};

/* ---- command line ---------------------------------------------------- */

static void pp_usage(FILE *out)
{
    fprintf(out,
            "usage: mpiexec -n 2 " PP_NAME " [options] [--weft-<param>=<value> ...]\n"
            "  --min-size <b>  smallest tile in bytes, K/M/G suffixes (default 8)\n"
            "  --max-size <b>  largest tile in bytes, K/M/G suffixes (default 64M);\n"
            "                  the sizes are min-size times 2^k, then max-size\n"
            "  --iters <n>     round trips a measurement (default %lld; sizes above\n"
            "                  max-bytes / iters take fewer, %d at least)\n"
            "  --max-bytes <b> bytes a measurement moves one way at most (default %lld MiB):\n"
            "                  a round's fixed cost (taskpool wait) shows as the change in\n"
            "                  latency between two values at the same size\n"
            "  --reps <r>      measurements a size, the best is printed (default %lld)\n"
            "  -c <cores>      worker cores a rank (sets WEFT_CORES before weft_init)\n"
            "  -g <n>          the tile lives in the memory of n accelerators a rank of\n"
            "                  device_type (cuda, or emu): device-to-device transfers\n"
            "  --kernel <0|1>  on a CUDA device each task runs one kernel on the tile (1,\n"
            "                  default) or none (0: a move then costs the transfer and\n"
            "                  the runtime's hand-offs only)\n"
            "  -h, --help      this help; weft-info lists the --weft-* parameters\n"
            "Needs at least 2 ranks; the ping-pong runs between ranks 0 and 1.\n",
            (long long)pp_defaults.iters, PP_ITERS_MIN, (long long)(PP_BYTES_PER_SIZE >> 20),
            (long long)pp_defaults.reps);
}

static const app_flag_t pp_flags[] = {
    {"--min-size", offsetof(pp_opts_t, min_size), PP_SIZE_MIN, PP_SIZE_MAX, 1},
    {"--max-size", offsetof(pp_opts_t, max_size), PP_SIZE_MIN, PP_SIZE_MAX, 1},
    {"--iters", offsetof(pp_opts_t, iters), 1, 100000000, 0},
    {"--reps", offsetof(pp_opts_t, reps), 1, 1000, 0},
    {"-c", offsetof(pp_opts_t, cores), 1, 4096, 0},
    {"-g", offsetof(pp_opts_t, g), 0, 64, 0},
    {"--max-bytes", offsetof(pp_opts_t, max_bytes), 1, (int64_t)1 << 40, 1},
    {"--kernel", offsetof(pp_opts_t, kernel), 0, 1, 0},
};
#define PP_NFLAGS (sizeof pp_flags / sizeof pp_flags[0])

/* Before weft_init: -h/--help (returns 1) and -c (WEFT_CORES). */
static int pp_prescan(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *value;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            pp_usage(stdout);
            return 1;
        }
        if (strncmp(a, "--weft-", 7) == 0) {
            i += appdev_weft_words(argc, argv, i) - 1;
            continue;
        }
        const app_flag_t *f = app_flag_at(pp_flags, PP_NFLAGS, argc, argv, &i, &value);
        if (f != NULL && strcmp(f->name, "-g") == 0) {
            if (app_parse_flag(PP_NAME, f, value, &pp_dev.g, 1) != 0) return -1;
            continue;
        }
        if (f == NULL || strcmp(f->name, "-c") != 0) continue;
        int64_t cores;
        if (app_parse_flag(PP_NAME, f, value, &cores, 1) != 0) return -1;
        if (appdev_set_cores(PP_NAME, argc, argv, cores) != 0) return -1;
    }
    return 0;
}

static int pp_parse(int argc, char **argv, pp_opts_t *o, int verbose)
{
    *o = pp_defaults;
    app_seen_flags_t seen = {.n = 0};
    for (int i = 1; i < argc; i++) {
        const char *value;
        const app_flag_t *f = app_flag_at(pp_flags, PP_NFLAGS, argc, argv, &i, &value);
        if (f == NULL) {
            if (verbose && value != NULL)
                fprintf(stderr, PP_NAME ": %s needs a value (see --help)\n", argv[i]);
            else if (verbose)
                fprintf(stderr, PP_NAME ": unknown option '%s' (see --help)\n", argv[i]);
            return -1;
        }
        int64_t *dst = (int64_t *)((char *)o + f->offset);
        if (app_parse_flag(PP_NAME, f, value, dst, verbose) != 0 ||
            app_flag_once(PP_NAME, &seen, f, *dst, value, verbose) != 0)
            return -1;
    }
    if (o->min_size > o->max_size) {
        if (verbose)
            fprintf(stderr, PP_NAME ": --min-size %lld is larger than --max-size %lld\n",
                    (long long)o->min_size, (long long)o->max_size);
        return -1;
    }
    return 0;
}

/* Both ends must time the same moves: a rank given other sizes, counts, -g
 * or --kernel ran other tasks or other MPI calls of the timing loop, and
 * the two waited on each other for ever. So a rank that refused its
 * command line stops every rank, and every option but -c must be the same
 * on all. Collective; 0 or -1 after naming the cause. */
static int pp_agree(weft_context_t *ctx, const pp_opts_t *o, int parsed)
{
    if (app_all_parsed(PP_NAME, ctx, parsed) != 0) return -1;
    static const char *const skip[] = {"-c", NULL};
    return app_same_flags(PP_NAME, ctx, pp_flags, PP_NFLAGS, o, 0, skip, NULL, 0, 1);
}

/* ---- measurements ----------------------------------------------------- */

static double pp_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Bytes the rank's devices copied, by kind (weft_device_counters_t). */
typedef struct pp_copies {
    double h2d, d2h, d2d;
} pp_copies_t;

static int pp_copies_get(weft_context_t *ctx, pp_copies_t *out)
{
    *out = (pp_copies_t){0};
    for (int i = 1; i <= weft_ndevices(ctx); i++) {
        weft_device_counters_t c;
        int rc = weft_device_counters_get(ctx, i, &c);
        if (rc < 0) return rc;
        out->h2d += (double)c.bytes_h2d;
        out->d2h += (double)c.bytes_d2h;
        out->d2d += (double)c.bytes_d2d;
    }
    return 0;
}

typedef struct pp_state {
    weft_context_t *ctx;
    weft_taskpool_t *tp;
    weft_matrix_t *anchors; /* 1 x nranks byte tiles, tile (0, r) on rank r */
    int rank, nranks;
    unsigned char *buf; /* bare MPI buffer (ranks 0 and 1) */
    int failed;         /* a check failed on this rank */
    pp_copies_t copied; /* by the devices in the measured rounds of this size */
} pp_state_t;

static int pp_insert_touch(pp_state_t *s, weft_data_t *x, int on_rank)
{
    return weft_insert_task(s->tp, &pp_class_touch, WEFT_R | WEFT_AFFINITY,
                            weft_tile(s->anchors, 0, on_rank), WEFT_RW, x, 0);
}

/* iters weft round trips of x; the seconds they took (rank 0's clock), or a
 * negative weft status. Checks the activations this rank sent. */
static double pp_weft_round(pp_state_t *s, weft_data_t *x, int64_t iters, int64_t size)
{
    weft_stats_t before, after;
    pp_copies_t cb, ca;
    int rc = weft_stats_get(s->ctx, &before);
    if (rc >= 0) rc = pp_copies_get(s->ctx, &cb);
    if (rc < 0) return rc;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = pp_now();
    for (int64_t i = 0; i < iters && rc >= 0; i++) {
        rc = pp_insert_touch(s, x, 1);
        if (rc >= 0) rc = pp_insert_touch(s, x, 0);
    }
    int wrc = weft_taskpool_wait(s->tp);
    double t = pp_now() - t0;
    if (rc >= 0) rc = wrc;
    if (rc >= 0) rc = weft_stats_get(s->ctx, &after);
    if (rc >= 0) rc = pp_copies_get(s->ctx, &ca);
    if (rc < 0) {
        fprintf(stderr, PP_NAME ": rank %d: weft round trips of %lld bytes failed: %s\n", s->rank,
                (long long)size, weft_strerror(rc));
        return rc;
    }
    int64_t sent = after.activations_sent - before.activations_sent;
    int64_t expected = s->rank < 2 ? iters : 0;
    if (sent != expected) {
        fprintf(stderr,
                PP_NAME ": rank %d sent %lld activations for %lld round trips of %lld "
                        "bytes, expected %lld (one per move)\n",
                s->rank, (long long)sent, (long long)iters, (long long)size, (long long)expected);
        s->failed = 1;
    }
    s->copied.h2d += ca.h2d - cb.h2d;
    s->copied.d2h += ca.d2h - cb.d2h;
    s->copied.d2d += ca.d2d - cb.d2d;
    return t;
}

/* With devices: the copies per move, in tiles, of ranks 0 and 1 (gathered
 * on rank 0, which prints them). A rank of the ping-pong receives and
 * sends `moves` times: more than one copy of the tile into its devices per
 * move received (H2D + D2D), or out of them per move sent (D2H), is a
 * tile moved twice, and fails the run. */
static void pp_copies_check(pp_state_t *s, int64_t moves, int64_t size)
{
    double tiles = (double)moves * (double)size, both[6] = {0}, all[6];
    double *mine = both + 3 * (s->rank < 2 ? s->rank : 0);
    if (s->rank < 2 && tiles > 0.0) {
        mine[0] = s->copied.h2d / tiles;
        mine[1] = s->copied.d2h / tiles;
        mine[2] = s->copied.d2d / tiles;
    }
    if (s->rank < 2 && (mine[0] + mine[2] > 1.0 || mine[1] > 1.0)) {
        fprintf(stderr,
                PP_NAME ": rank %d: tile of %lld bytes copied more than once a move by its "
                        "devices (in tiles a move: H2D %.3f, D2D %.3f into device memory, "
                        "D2H %.3f out of it)\n",
                s->rank, (long long)size, mine[0], mine[2], mine[1]);
        s->failed = 1;
    }
    s->copied = (pp_copies_t){0};
    MPI_Reduce(both, all, 6, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD); /* ranks 0, 1 apart */
    if (s->rank == 0)
        printf("# %lld B: device copies a move, in tiles: rank 0 H2D %.2f D2H %.2f D2D %.2f, "
               "rank 1 H2D %.2f D2H %.2f D2D %.2f\n",
               (long long)size, all[0], all[1], all[2], all[3], all[4], all[5]);
}

/* iters bare MPI round trips of size bytes between ranks 0 and 1. */
static double pp_mpi_round(pp_state_t *s, int64_t iters, int64_t size)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = pp_now();
    int n = (int)size;
    for (int64_t i = 0; i < iters; i++) {
        if (s->rank == 0) {
            MPI_Send(s->buf, n, MPI_BYTE, 1, PP_TAG, MPI_COMM_WORLD);
            MPI_Recv(s->buf, n, MPI_BYTE, 1, PP_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (s->rank == 1) {
            MPI_Recv(s->buf, n, MPI_BYTE, 0, PP_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(s->buf, n, MPI_BYTE, 0, PP_TAG, MPI_COMM_WORLD);
        }
    }
    return pp_now() - t0;
}

/* The fixed cost of a round: a taskpool wait with no task (its agreement
 * between ranks), the best of reps, in seconds (rank 0's clock); a round
 * of the ping-pong pays it once for its 2 x iters moves. */
static double pp_empty_round(pp_state_t *s, int64_t reps)
{
    double best = 0.0;
    for (int64_t r = 0; r < reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = pp_now();
        int rc = weft_taskpool_wait(s->tp);
        double t = pp_now() - t0;
        if (rc < 0) return rc;
        if (r == 0 || t < best) best = t;
    }
    return best;
}

static int64_t pp_iters(const pp_opts_t *o, int64_t size)
{
    int64_t cap = o->max_bytes / size;
    if (cap < PP_ITERS_MIN) cap = PP_ITERS_MIN;
    return o->iters < cap ? o->iters : cap;
}

/* One size: a fresh x, warm-up, reps x (weft round, MPI round); prints the
 * row on rank 0. 0, or a weft error. */
static int pp_size(pp_state_t *s, const pp_opts_t *o, int64_t size)
{
    int64_t iters = pp_iters(o, size);
    weft_data_t *x = weft_data_new(s->ctx, WEFT_BYTE, (int)size, 1, 0);
    if (x == NULL) {
        fprintf(stderr, PP_NAME ": cannot create a tile of %lld bytes\n", (long long)size);
        return WEFT_ERR_NOMEM;
    }
    /* Creates x on rank 0, then warms both paths up. */
    int rc = weft_insert_task(s->tp, &pp_class_init, WEFT_R | WEFT_AFFINITY,
                              weft_tile(s->anchors, 0, 0), WEFT_W, x, 0);
    for (int i = 0; i < PP_WARMUP && rc >= 0; i++) {
        rc = pp_insert_touch(s, x, 1);
        if (rc >= 0) rc = pp_insert_touch(s, x, 0);
    }
    int wrc = weft_taskpool_wait(s->tp);
    if (rc >= 0) rc = wrc;
    if (rc < 0) {
        fprintf(stderr, PP_NAME ": rank %d: warm-up of %lld bytes failed: %s\n", s->rank,
                (long long)size, weft_strerror(rc));
        weft_data_release(x);
        return rc;
    }
    pp_mpi_round(s, PP_WARMUP, size);

    double best_weft = 0.0, best_mpi = 0.0;
    for (int64_t r = 0; r < o->reps; r++) {
        double t = pp_weft_round(s, x, iters, size);
        if (t < 0) {
            weft_data_release(x);
            return (int)t;
        }
        if (r == 0 || t < best_weft) best_weft = t;
        t = pp_mpi_round(s, iters, size);
        if (r == 0 || t < best_mpi) best_mpi = t;
    }

    if (s->rank == 0) {
        const unsigned char *p = weft_data_host_ptr(x, NULL);
        uint64_t count = 0, expected = (uint64_t)(2 * (PP_WARMUP + iters * o->reps));
        if (p != NULL) memcpy(&count, p, sizeof count);
        int counted = pp_dev.g <= 0 || pp_dev.dtype != WEFT_DEV_CUDA;
        if (counted && (p == NULL || count != expected)) {
            fprintf(stderr,
                    PP_NAME ": tile of %lld bytes: counter %llu on rank 0, expected "
                            "%llu%s\n",
                    (long long)size, (unsigned long long)count, (unsigned long long)expected,
                    p == NULL ? " (no host copy)" : "");
            s->failed = 1;
        }
        double lw = best_weft / (2.0 * (double)iters), lm = best_mpi / (2.0 * (double)iters);
        double bw = (double)size / lw / 1e9, bm = (double)size / lm / 1e9;
        printf("%10lld %6lld %12.2f %10.4g %12.2f %10.4g %9.3f %9.3f\n", (long long)size,
               (long long)iters, lw * 1e6, bw, lm * 1e6, bm, lw / lm, bw / bm);
        fflush(stdout);
    }
    if (weft_ndevices(s->ctx) > 0) pp_copies_check(s, iters * o->reps, size);
    weft_data_release(x);
    return 0;
}

static int pp_main(weft_context_t *ctx, const pp_opts_t *o)
{
    pp_state_t s = {.ctx = ctx, .rank = weft_rank(ctx), .nranks = weft_nranks(ctx)};
    int rc = 1;
    s.anchors = weft_matrix_new(ctx, WEFT_BYTE, 1, s.nranks, 1, 1, 1, s.nranks);
    s.tp = weft_taskpool_new(ctx, "pingpong");
    if (s.rank < 2) s.buf = malloc((size_t)o->max_size);
    if (s.anchors == NULL || s.tp == NULL || (s.rank < 2 && s.buf == NULL)) {
        fprintf(stderr, PP_NAME ": rank %d: cannot set up (%lld-byte buffer)\n", s.rank,
                (long long)o->max_size);
        goto out;
    }
    if (s.buf != NULL) memset(s.buf, 1, (size_t)o->max_size);
    if (s.rank == 0) {
        printf("# " PP_NAME ": ranks 0 <-> 1 of %d, %lld reps a size (best shown); a weft "
               "round trip is 2 tasks moving the tile twice\n"
               "# lat = half a round trip (us), bw = size / lat (GB/s); ratios weft/mpi\n"
               "%10s %6s %12s %10s %12s %10s %9s %9s\n",
               s.nranks, (long long)o->reps, "bytes", "iters", "weft_lat", "weft_bw", "mpi_lat",
               "mpi_bw", "lat_ratio", "bw_ratio");
        fflush(stdout);
    }
    double empty = pp_empty_round(&s, o->reps);
    rc = empty < 0 ? (int)empty : 0;
    if (s.rank == 0 && rc == 0) {
        printf("# a round without tasks (taskpool wait): %.1f us\n", empty * 1e6);
        if (o->kernel == 0) printf("# --kernel 0: CUDA tasks launch no kernel\n");
        fflush(stdout);
    }
    /* min_size times the powers of two, then max_size itself when that
     * sequence stepped over it (it was left unmeasured). */
    int64_t size = o->min_size;
    for (; size <= o->max_size && rc == 0; size *= 2) rc = pp_size(&s, o, size);
    if (rc == 0 && size / 2 < o->max_size) rc = pp_size(&s, o, o->max_size);
    /* What failed, said as it is: a weft run (a task, a transfer), which
     * its lines above name, or the counts this program checks. */
    int mine[2] = {rc != 0, s.failed}, any[2] = {0, 0};
    MPI_Allreduce(mine, any, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    const char *what = any[0] ? "the weft run" : "the tile counters and message counts";
    if (s.rank == 0 && !any[0] && !any[1])
        printf(PP_NAME ": tile counters and message counts verified\n");
    else if (any[0] || any[1]) /* every rank exits 1: each with a line */
        fprintf(stderr, PP_NAME ": rank %d: %s FAILED %s\n", s.rank, what,
                mine[any[0] ? 0 : 1] ? "here (see above)" : "on another rank (see its lines)");
    rc = any[0] || any[1];
out:
    free(s.buf);
    if (s.tp != NULL) weft_taskpool_free(s.tp);
    if (s.anchors != NULL) weft_matrix_free(s.anchors);
    return rc == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    app_stderr_by_line();
    int rc = pp_prescan(argc, argv);
    if (rc != 0) return rc > 0 ? 0 : 1;
    if (appdev_prepare(&pp_dev, argc, argv) != 0) return 1;
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (ctx == NULL) {
        appdev_init_failed(&pp_dev);
        return 1;
    }
    if (app_same_program(PP_NAME, "", ctx) != 0) {
        (void)weft_fini(ctx);
        return 1;
    }
    pp_opts_t o;
    /* A refused command line is named on every rank (app_driver.h). */
    int parsed = pp_parse(argc, argv, &o, 1) == 0;
    if (pp_agree(ctx, &o, parsed) != 0) {
        rc = 1;
    } else if (appdev_check(ctx, &pp_dev) != 0) {
        rc = 1;
    } else if (app_sim_refuse(PP_NAME, ctx, "it times moves between two processes") != 0) {
        rc = 1;
    } else if (weft_nranks(ctx) < 2) {
        fprintf(stderr,
                PP_NAME ": needs at least 2 ranks, running on %d "
                        "(e.g. mpiexec -n 2 " PP_NAME ")\n",
                weft_nranks(ctx));
        rc = 1;
    } else {
#ifdef WEFT_APP_HAVE_CUDA
        pp_cuda_kernel = (int)o.kernel;
#endif
        rc = pp_main(ctx, &o);
    }
    int frc = weft_fini(ctx);
    if (frc < 0) {
        fprintf(stderr, PP_NAME ": weft_fini: %s\n", weft_strerror(frc));
        rc = 1;
    }
    return rc;
}
