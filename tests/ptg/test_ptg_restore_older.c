/* A graph's versions are numbered past the data's version before it, on
 * one rank as on several, so that a failure that destroys them takes the
 * older version back alike (docs/SEMANTICS.md section 3).
 *
 * X (B doubles in user memory, owned by rank 0) is filled by an inserted
 * task on the host (v1; the wait leaves it in the user's memory). Then a
 * chain of two read-write steps on emulated device 1 of rank 0: step 0
 * makes X = 2 X + 1 there, step 1 writes -999 and fails. Step 0's version
 * lived on the device only, in the copy step 1 spoiled: every rank says
 * "the next taskpool starts from v1" and the user's memory holds the fill,
 * 42 + i. MODE "ptg" builds the chain as a graph, "stf" inserts it.
 *
 * Before, on one rank, the graph numbered step 0's version from the
 * ranks' shared count, which one rank does not keep (0): v1, the fill's
 * own number, so the user's memory was no older than the lost version and
 * the data kept the failed bytes ("no good version is left", -999), where
 * two ranks took the fill back. */
#include <stdio.h>
#include <string.h>

#include "weft/ptg.h"
#include "weft/weft.h"

#define B 4

static weft_data_t *X;
static const int step_of[2] = {0, 1};

static int body_fill(weft_task_t *t)
{
    double *x = weft_task_ptr(t, 0);
    for (int i = 0; i < B; i++) x[i] = 42 + i;
    return 0;
}

static int body_step(weft_task_t *t)
{
    int s = -1;
    if (weft_task_value_get(t, 0, &s, sizeof s) != WEFT_SUCCESS) return -1;
    double *x = weft_task_ptr(t, 0);
    for (int i = 0; i < B; i++) x[i] = s == 1 ? -999 : 2 * x[i] + 1;
    return s == 1 ? -7 : 0;
}

static const weft_task_class_t fill_class = {.name = "fill", .body = {[WEFT_DEV_CPU] = body_fill}};
static const weft_task_class_t step_class = {
    .name = "step", .body = {[WEFT_DEV_CPU] = body_step, [WEFT_DEV_EMU] = body_step}};

static void range(const int *idx, int dim, int *lo, int *hi, const void *arg)
{
    (void)idx, (void)dim, (void)arg;
    *lo = 0;
    *hi = 1;
}

static int rank_of(const int *idx, const void *arg)
{
    (void)idx, (void)arg;
    return 0;
}

static int args(const int *idx, weft_arg_t *a, int max, const void *arg)
{
    (void)max, (void)arg;
    a[0] = weft_arg_data(WEFT_RW | WEFT_AFFINITY, X);
    a[1] = weft_arg_value(&step_of[idx[0]], sizeof(int));
    a[2] = weft_arg_int(WEFT_DEVICE_HINT, 1);
    return 3;
}

static int producer(const int *idx, int flow, weft_ptg_ref_t *from, const void *arg)
{
    (void)flow, (void)arg;
    if (idx[0] == 0) return 0;
    *from = (weft_ptg_ref_t){.cls = 0, .flow = 0, .idx = {idx[0] - 1}};
    return 1;
}

static int consumers(const int *idx, int flow, weft_ptg_ref_t *to, int max, const void *arg)
{
    (void)flow, (void)arg;
    if (idx[0] == 1) return 0;
    if (max >= 1) to[0] = (weft_ptg_ref_t){.cls = 0, .flow = 0, .idx = {1}};
    return 1;
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx || argc != 2) return 1;
    int graph = strcmp(argv[1], "ptg") == 0, me = weft_rank(ctx);
    double x[B] = {1, 1, 1, 1};
    X = weft_data_register(ctx, WEFT_DOUBLE, me == 0 ? x : NULL, B, 1, B, 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "chain");
    int rc = weft_insert_task(tp, &fill_class, WEFT_W, X, WEFT_DEVICE_HINT, 0, 0);
    int w1 = weft_taskpool_wait(tp);
    if (graph) {
        const weft_ptg_class_t cls = {&step_class, 1,        range,     rank_of,
                                      args,        producer, consumers, NULL};
        const weft_ptg_t g = {&cls, 1, NULL};
        if (rc == WEFT_SUCCESS) rc = weft_ptg_insert(tp, &g);
    } else {
        for (int s = 0; s < 2 && rc == WEFT_SUCCESS; s++)
            rc = weft_insert_task(tp, &step_class, WEFT_RW, X, WEFT_VALUE, &step_of[s], sizeof(int),
                                  WEFT_DEVICE_HINT, 1, 0);
    }
    int w2 = weft_taskpool_wait(tp);
    int ok = rc == WEFT_SUCCESS && w1 == WEFT_SUCCESS && w2 == WEFT_ERR_TASK;
    for (int i = 0; me == 0 && i < B; i++) ok &= x[i] == 42 + i;
    printf("test_ptg_restore_older rank %d: %s %s: insert %d, waits %d %d, x = %g %g %g %g\n", me,
           argv[1], ok ? "ok" : "FAILED", rc, w1, w2, x[0], x[1], x[2], x[3]);
    weft_taskpool_free(tp);
    weft_data_release(X);
    weft_fini(ctx);
    return ok ? 0 : 1;
}
