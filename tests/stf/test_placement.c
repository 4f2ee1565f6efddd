/* Placement options (issue 15 item 5). WEFT_ON_RANK: a chain of NCHAIN
 * updates of one registered double owned by rank 0, task i run on rank
 * i % R; checked: the value against a sequential loop, each rank's tasks
 * (i % R == rank) and activations against a replay of the transfer rule
 * (the data follows the chain and goes home at the wait).
 * WEFT_DEVICE_HINT (with emu devices): tasks hinted to each device of the
 * rank, their data homed on device 1, run where the hint says (the body
 * records weft_task_device; the device counters count them). Bad input:
 * a rank or a device out of range, refused on every rank. With
 * --disagree R, rank R gives the chain's first task another rank: every
 * rank names the divergent task at the wait. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "elapsed.h"
#include "weft/weft.h"

#define NCHAIN 24
#define NHINT 12

/* flow 0: x (RW), value 0: i. x = x / 2 + i */
static int chain(weft_task_t *t)
{
    int i;
    if (weft_task_value_get(t, 0, &i, sizeof i) != 0) return -1;
    double *x = weft_task_ptr(t, 0);
    *x = *x / 2 + i;
    return 0;
}

static atomic_int device_of[NHINT];

/* flow 0: y (W), value 0: k. Records the device it ran on. */
static int where(weft_task_t *t)
{
    int k;
    if (weft_task_value_get(t, 0, &k, sizeof k) != 0) return -1;
    *(double *)weft_task_ptr(t, 0) = k;
    atomic_store(&device_of[k], weft_task_device(t));
    return 0;
}

static const weft_task_class_t chain_class = {.name = "chain", .body = {[WEFT_DEV_CPU] = chain}};
static const weft_task_class_t where_class = {.name = "where", .body = {[WEFT_DEV_CPU] = where}};

/* Activations rank `me` sends for the chain: each task on a rank that does
 * not hold the newest version gets it from the rank that wrote it; the
 * last version goes home to rank 0. */
static int64_t chain_sends(int R, int me)
{
    int writer = 0, n = 0;
    for (int i = 0; i < NCHAIN; i++) {
        int exec = i % R;
        if (exec != writer && writer == me) n++;
        writer = exec;
    }
    return n + (writer != 0 && writer == me);
}

static int run_chain(weft_context_t *ctx, int disagree)
{
    int R = weft_nranks(ctx), me = weft_rank(ctx);
    double x = 1, want = 1;
    weft_data_t *d = weft_data_register(ctx, WEFT_DOUBLE, me == 0 ? &x : NULL, 1, 1, 1, 0);
    weft_stats_t s0, s1;
    CHECK(weft_stats_get(ctx, &s0) == 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "chain");
    int its[NCHAIN], rc = 0;
    for (int i = 0; i < NCHAIN; i++) {
        its[i] = i;
        int on = i == 0 && disagree == me ? 1 % R : i % R;
        rc |= weft_insert_task(tp, &chain_class, WEFT_RW, d, WEFT_VALUE, &its[i], sizeof its[i],
                               WEFT_ON_RANK, on, 0);
        want = want / 2 + i;
    }
    int w = weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    CHECK(weft_stats_get(ctx, &s1) == 0);
    if (disagree < 0) {
        CHECK(rc == 0 && w == 0);
        CHECK(s1.tasks_run - s0.tasks_run == (NCHAIN - me + R - 1) / R);
        CHECK(s1.activations_sent - s0.activations_sent == chain_sends(R, me));
        if (me == 0) CHECK(x == want);
    }
    weft_data_release(d);
    return w;
}

/* Tasks k hinted to device k % (g + 1), their data owned by rank k % R and
 * homed on device 1 (the hint wins over the home). */
static void run_hints(weft_context_t *ctx)
{
    int R = weft_nranks(ctx), me = weft_rank(ctx), g = weft_ndevices(ctx);
    weft_data_t *y[NHINT];
    int64_t before[17] = {0}, want[17] = {0};
    weft_device_counters_t c;
    for (int dev = 1; dev <= g && dev < 17; dev++)
        if (weft_device_counters_get(ctx, dev, &c) == 0) before[dev] = c.tasks;
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "hints");
    int ks[NHINT];
    for (int k = 0; k < NHINT; k++) {
        ks[k] = k;
        atomic_store(&device_of[k], -1);
        y[k] = weft_data_new(ctx, WEFT_DOUBLE, 1, 1, k % R);
        if (g > 0) CHECK(weft_data_set_device(y[k], 1) == 0);
        CHECK(weft_insert_task(tp, &where_class, WEFT_W | WEFT_AFFINITY, y[k], WEFT_VALUE, &ks[k],
                               sizeof ks[k], WEFT_DEVICE_HINT, k % (g + 1), 0) == 0);
        if (k % R == me) want[k % (g + 1)]++;
    }
    CHECK(weft_taskpool_wait(tp) == 0);
    weft_taskpool_free(tp);
    for (int k = 0; k < NHINT; k++) {
        if (k % R == me) CHECK(atomic_load(&device_of[k]) == k % (g + 1));
        weft_data_release(y[k]);
    }
    for (int dev = 1; dev <= g && dev < 17; dev++)
        CHECK(weft_device_counters_get(ctx, dev, &c) == 0 && c.tasks - before[dev] == want[dev]);
}

static void bad_input(weft_context_t *ctx)
{
    int R = weft_nranks(ctx), g = weft_ndevices(ctx);
    weft_data_t *y = weft_data_new(ctx, WEFT_DOUBLE, 1, 1, 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "bad");
    int k = 0;
    capture_begin();
    CHECK(weft_insert_task(tp, &where_class, WEFT_W, y, WEFT_VALUE, &k, sizeof k, WEFT_ON_RANK, R,
                           0) == WEFT_ERR_INVALID);
    CHECK(weft_insert_task(tp, &where_class, WEFT_W, y, WEFT_VALUE, &k, sizeof k, WEFT_DEVICE_HINT,
                           g + 1, 0) == WEFT_ERR_INVALID);
    CHECK(weft_insert_task(tp, &where_class, WEFT_W, y, WEFT_VALUE, &k, sizeof k, WEFT_DEVICE_HINT,
                           -1, 0) == WEFT_ERR_INVALID);
    capture_end();
    CHECK(captured("insert where: argument 3: WEFT_ON_RANK rank"));
    CHECK(captured("insert where: argument 3: WEFT_DEVICE_HINT device -1 is not in [0, "));
    CHECK(weft_taskpool_wait(tp) == 0 && weft_taskpool_ntasks_run(tp) == 0);
    weft_taskpool_free(tp);
    weft_data_release(y);
}

int main(int argc, char **argv)
{
    elapsed_start();
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 2;
    int disagree = argc > 2 && !strcmp(argv[1], "--disagree") ? atoi(argv[2]) : -1;
    int w = run_chain(ctx, disagree), rank = weft_rank(ctx);
    if (disagree >= 0) {
        int f = weft_fini(ctx);
        printf("test_placement rank %d: wait=%d fini=%d\n", rank, w, f);
        return w != 0 && f != 0;
    }
    run_hints(ctx);
    bad_input(ctx);
    CHECK(weft_fini(ctx) == 0);
    return check_report("test_placement");
}
