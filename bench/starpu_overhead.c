/* starpu_overhead: bench/task_overhead.c on StarPU 1.3, same patterns, same
 * timing, same output line, so that task_overhead.sh can print ratios.
 *
 * Usage: STARPU_NCPU=<c> [STARPU_SCHED=<policy>] starpu_overhead [-n ntasks] [-r reps]
 *        [-p pattern]
 *
 *   nodata  - codelet with no buffers: truly independent tasks;
 *   spread  - task i STARPU_RW on handle i % 1024;
 *   chain   - every task STARPU_RW on one handle.
 * Timed from the first starpu_task_insert to the return of
 * starpu_task_wait_for_all, best of reps. Tasks are inserted the way an STF
 * application does (starpu_task_insert), as weft_insert_task is used. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <starpu.h>

#define NTILES 1024

static void empty_func(void *buffers[], void *arg)
{
    (void)buffers;
    (void)arg;
}

/* Two codelets because nbuffers is part of the codelet in StarPU. No
 * performance model: nothing to calibrate or record per task. */
static struct starpu_codelet cl_nodata = {
    .cpu_funcs = {empty_func}, .nbuffers = 0, .name = "empty0"};
static struct starpu_codelet cl_rw = {
    .cpu_funcs = {empty_func}, .nbuffers = 1, .modes = {STARPU_RW}, .name = "empty1"};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int run_once(starpu_data_handle_t *tiles, int ntiles, long ntasks, double *total_s,
                    double *insert_s)
{
    int rc = 0;
    double t0 = now_s();
    for (long i = 0; i < ntasks && rc == 0; i++)
        rc = tiles ? starpu_task_insert(&cl_rw, STARPU_RW, tiles[i % ntiles], 0)
                   : starpu_task_insert(&cl_nodata, 0);
    double t1 = now_s();
    starpu_task_wait_for_all();
    double t2 = now_s();
    *insert_s = t1 - t0;
    *total_s = t2 - t0;
    return rc;
}

int main(int argc, char **argv)
{
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
        fprintf(stderr, "usage: %s [-n ntasks] [-r reps] [-p nodata|spread|chain]\n", argv[0]);
        return 2;
    }
    if (starpu_init(NULL) != 0) {
        fprintf(stderr, "starpu_init failed\n");
        return 1;
    }

    static double mem[NTILES];
    starpu_data_handle_t tiles[NTILES];
    for (int i = 0; i < NTILES; i++)
        starpu_variable_data_register(&tiles[i], STARPU_MAIN_RAM, (uintptr_t)&mem[i],
                                      sizeof mem[i]);

    static const struct {
        const char *name;
        int ntiles;
    } patterns[] = {{"nodata", 0}, {"spread", NTILES}, {"chain", 1}};
    int status = 0;
    for (size_t p = 0; p < sizeof patterns / sizeof patterns[0] && status == 0; p++) {
        if (only && strcmp(only, patterns[p].name) != 0) continue;
        double best = 1e300, best_ins = 0;
        for (int r = 0; r < reps && status == 0; r++) {
            double tot, ins;
            status =
                run_once(patterns[p].ntiles ? tiles : NULL, patterns[p].ntiles, ntasks, &tot, &ins);
            if (status == 0 && tot < best) {
                best = tot;
                best_ins = ins;
            }
        }
        if (status != 0) {
            fprintf(stderr, "%s: starpu_task_insert returned %d\n", patterns[p].name, status);
            break;
        }
        printf("RESULT starpu %s cores=%u ntasks=%ld best_s=%.6f insert_s=%.6f\n", patterns[p].name,
               starpu_cpu_worker_get_count(), ntasks, best, best_ins);
        fflush(stdout);
    }
    for (int i = 0; i < NTILES; i++) starpu_data_unregister(tiles[i]);
    starpu_shutdown();
    return status != 0;
}
