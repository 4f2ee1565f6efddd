/* task_overhead: the cost of an empty weft task, insertion plus execution.
 *
 * Usage: task_overhead [-n ntasks] [-r reps]
 *                      [-p nodata|spread|chain|device|devchain|fan]
 *                      [--weft-cores=N ...]
 *
 * Three patterns, each timed from the first weft_insert_task to the return
 * of weft_taskpool_wait, best of reps (the first run also warms the
 * allocator, so the best run is the steady state):
 *   nodata  - no data at all: truly independent tasks, pure runtime cost;
 *   spread  - task i RW on tile i % 1024: dependency tracking, yet parallel
 *             (chains of depth ntasks/1024, 1024 of them side by side);
 *   chain   - every task RW on one tile: each task waits for the previous,
 *             so this is the latency of completion -> release -> run;
 *   device  - as spread, with the tiles homed on the accelerators (run
 *             only when the parameters open some, e.g.
 *             --weft-device_emu_enabled=1): every task goes through a device
 *             manager (pin, stage, an empty kernel, events, publication),
 *             the runtime's cost per task on an accelerator;
 *   devchain - every task RW on one tile homed on an accelerator: the
 *             latency from one device task's completion to the next one's
 *             launch (event seen, release, pick, launch), which the panel
 *             chain of a small factorization pays at every step;
 *   fan     - as spread over 64 tiles, each task also reading one more
 *             tile that all of them share (a panel read by a whole row of
 *             updates). With accelerators open (--weft-device_emu_enabled=1)
 *             the rank lists each data's pending uses for the next-use
 *             eviction, host tasks' too: the shared tile's list holds every
 *             task not ended, and tasks end out of order (the inserting
 *             thread runs some); its drops cost O(N^2) in all before they
 *             became a binary search.
 * bench/starpu_overhead.c is the same program on StarPU; task_overhead.sh
 * runs both and prints the ratios. One line per pattern on stdout:
 *   RESULT <runtime> <pattern> cores=<c> ntasks=<n> best_s=<t> insert_s=<t>
 * Public API only; this is a benchmark, it asserts nothing about times. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <weft/weft.h>

#define NTILES 1024

static int empty_body(weft_task_t *t)
{
    (void)t;
    return 0;
}

static const weft_task_class_t empty_class = {
    .name = "empty", .body = {[WEFT_DEV_CPU] = empty_body}, .flops = NULL};
/* The same on accelerators: a kernel body that enqueues nothing. */
static const weft_task_class_t empty_dev_class = {
    .name = "empty",
    .body = {[WEFT_DEV_EMU] = empty_body, [WEFT_DEV_CUDA] = empty_body},
    .flops = NULL};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* tiles == NULL: no data; otherwise task i is RW on tiles[i % ntiles], and
 * reads `shared` too when it is not NULL. One fresh taskpool per run, as
 * an application would; its creation is not timed. Returns 0 and the
 * times, or a weft status. */
static int run_once(weft_context_t *ctx, const weft_task_class_t *cls, weft_data_t **tiles,
                    int ntiles, weft_data_t *shared, long ntasks, double *total_s, double *insert_s)
{
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "overhead");
    if (tp == NULL) return WEFT_ERR_NOMEM;
    int rc = 0;
    double t0 = now_s();
    for (long i = 0; i < ntasks && rc == 0; i++)
        rc = shared  ? weft_insert_task(tp, cls, WEFT_RW, tiles[i % ntiles], WEFT_R, shared, 0)
             : tiles ? weft_insert_task(tp, cls, WEFT_RW, tiles[i % ntiles], 0)
                     : weft_insert_task(tp, cls, 0);
    double t1 = now_s();
    int wrc = weft_taskpool_wait(tp); /* always wait: tasks already inserted run */
    double t2 = now_s();
    /* A figure counts only if every task ran once. */
    if (rc == 0 && wrc == 0 && weft_taskpool_ntasks_run(tp) != ntasks) {
        fprintf(stderr, "task_overhead: %lld tasks ran, %ld inserted\n",
                (long long)weft_taskpool_ntasks_run(tp), ntasks);
        wrc = WEFT_ERR_INTERNAL;
    }
    weft_taskpool_free(tp);
    *insert_s = t1 - t0;
    *total_s = t2 - t0;
    return rc ? rc : wrc;
}

/* Device tiles: NEW, so that no host copy is written back at the end;
 * an untimed first write creates each on its home device (dealt over the
 * ndev devices). 0, or 1 after a message. */
static int make_device_tiles(weft_context_t *ctx, int ndev, weft_data_t **dtiles)
{
    for (int i = 0; i < NTILES; i++)
        if ((dtiles[i] = weft_data_new(ctx, WEFT_DOUBLE, 1, 1, 0)) == NULL ||
            weft_data_set_device(dtiles[i], 1 + i % ndev) != 0) {
            fprintf(stderr, "device tiles: weft_data_new failed\n");
            return 1;
        }
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "create");
    int rc = tp ? 0 : WEFT_ERR_NOMEM;
    for (int i = 0; i < NTILES && rc == 0; i++)
        rc = weft_insert_task(tp, &empty_dev_class, WEFT_W, dtiles[i], 0);
    if (tp && weft_taskpool_wait(tp) != 0) rc = WEFT_ERR_INTERNAL;
    if (tp) weft_taskpool_free(tp);
    if (rc != 0) fprintf(stderr, "device tiles: %s\n", weft_strerror(rc));
    return rc != 0;
}

/* Best of reps runs of one pattern, printed as its RESULT line; 0 or the
 * weft status of a failed run (reported). */
static int run_pattern(weft_context_t *ctx, const char *name, const weft_task_class_t *cls,
                       weft_data_t **tiles, int ntiles, weft_data_t *shared, long ntasks, int reps)
{
    double best = 1e300, best_ins = 0;
    for (int r = 0; r < reps; r++) {
        double tot, ins;
        int status = run_once(ctx, cls, tiles, ntiles, shared, ntasks, &tot, &ins);
        if (status != 0) {
            fprintf(stderr, "%s: %s\n", name, weft_strerror(status));
            return status;
        }
        if (tot < best) {
            best = tot;
            best_ins = ins;
        }
    }
    printf("RESULT weft %s cores=%d ntasks=%ld best_s=%.6f insert_s=%.6f\n", name, weft_ncores(ctx),
           ntasks, best, best_ins);
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv); /* takes the --weft-* options */
    if (ctx == NULL) return 1;
    long ntasks = 200000;
    int reps = 3;
    const char *only = NULL; /* -p <pattern>: run that one alone (to profile it) */
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "-n") == 0)
            ntasks = atol(argv[i + 1]);
        else if (strcmp(argv[i], "-r") == 0)
            reps = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "-p") == 0)
            only = argv[i + 1];
    }
    if (ntasks < 1 || reps < 1) {
        fprintf(stderr,
                "usage: %s [-n ntasks] [-r reps] [-p nodata|spread|chain|device|devchain|fan] "
                "[--weft-<param>=<value>]\n",
                argv[0]);
        weft_fini(ctx);
        return 2;
    }

    /* User-owned host tiles of one double: registering them (MANAGED) keeps
     * allocation out of the measure; an empty body never touches them. */
    static double mem[NTILES];
    weft_data_t *tiles[NTILES], *dtiles[NTILES];
    int ndev = weft_ndevices(ctx);
    for (int i = 0; i < NTILES; i++)
        if ((tiles[i] = weft_data_register(ctx, WEFT_DOUBLE, &mem[i], 1, 1, 1, 0)) == NULL) {
            fprintf(stderr, "weft_data_register failed\n");
            return 1;
        }
    if (ndev > 0 && make_device_tiles(ctx, ndev, dtiles) != 0) return 1;

    static const struct {
        const char *name;
        int ntiles;      /* 0: no data */
        int device, fan; /* fan: tiles 1..ntiles, each task reading tile 0 too */
    } patterns[] = {{"nodata", 0, 0, 0},      {"spread", NTILES, 0, 0}, {"chain", 1, 0, 0},
                    {"device", NTILES, 1, 0}, {"devchain", 1, 1, 0},    {"fan", 64, 0, 1}};
    int status = 0;
    for (size_t p = 0; p < sizeof patterns / sizeof patterns[0] && status == 0; p++) {
        if ((only && strcmp(only, patterns[p].name) != 0) || (patterns[p].device && ndev == 0))
            continue;
        const weft_task_class_t *cls = patterns[p].device ? &empty_dev_class : &empty_class;
        weft_data_t **use = patterns[p].ntiles ? (patterns[p].device ? dtiles : tiles) : NULL;
        weft_data_t *shared = patterns[p].fan ? use[0] : NULL;
        status = run_pattern(ctx, patterns[p].name, cls, shared ? use + 1 : use, patterns[p].ntiles,
                             shared, ntasks, reps);
    }
    for (int i = 0; i < NTILES; i++) {
        weft_data_release(tiles[i]);
        if (ndev > 0) weft_data_release(dtiles[i]);
    }
    int frc = weft_fini(ctx);
    return status != 0 || frc != 0;
}
