/* fault_inject task_skip reaches tasks that go out in batches
 * (devmgr/devbatch.c): a gate task on the host makes T independent tasks
 * ready at once on device 1, which launches them through the class's
 * batch body; the rule task_skip:axpy:N (the test's environment) makes
 * exactly one of them report success without running. Checked: at least
 * one batch formed, the wait and weft_fini return 0 (a skip is a silent
 * wrong result, for an application's check to catch), exactly T - 1 tiles
 * got their update, and the one left at its old value was not run, in a
 * batch or alone. Before the fix a batch body ran every member, skipped
 * or not: all T tiles were updated and no check could see the lost write. */
#include "devtest.h"

#define NB 16
#define T 32

static atomic_int ran[T], batched;

/* flow 0: G (R), flow 1: Y (RW); value 0: int id. Y += 1. */
static int add_body(weft_task_t *t)
{
    int id;
    weft_task_value(t, 0, &id);
    double *y = weft_task_ptr(t, 1);
    int64_t ld = weft_task_ld(t, 1);
    for (int j = 0; j < weft_task_cols(t, 1); j++)
        for (int i = 0; i < weft_task_rows(t, 1); i++) y[i + j * ld] += 1.0;
    if (id >= 0 && id < T) atomic_fetch_add(&ran[id], 1);
    return 0;
}

static int add_batch(weft_task_t *const *ts, int n)
{
    atomic_fetch_add(&batched, n);
    for (int i = 0; i < n; i++)
        if (add_body(ts[i]) != 0) return -1;
    return 0;
}

static const weft_task_class_t axpy = {
    .name = "axpy", .body = {[WEFT_DEV_EMU] = add_body}, .batch = {[WEFT_DEV_EMU] = add_batch}};

int main(int argc, char **argv)
{
    weft_context_t *ctx = devtest_init(&argc, &argv, 1);
    static double gmem[NB * NB], ymem[T][NB * NB];
    weft_data_t *g = weft_data_register(ctx, WEFT_DOUBLE, gmem, NB, NB, NB, 0), *y[T];
    REQUIRE(g != NULL);
    for (int i = 0; i < T; i++) {
        y[i] = weft_data_register(ctx, WEFT_DOUBLE, ymem[i], NB, NB, NB, 0);
        REQUIRE(y[i] != NULL && weft_data_set_device(y[i], 1) == 0);
    }
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "skip");
    CHECK(weft_insert_task(tp, &devtest_gate, WEFT_W, g, 0) == 0);
    for (int i = 0; i < T; i++)
        CHECK(weft_insert_task(tp, &axpy, WEFT_R, g, WEFT_RW | WEFT_AFFINITY, y[i], WEFT_VALUE, &i,
                               sizeof i, 0) == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    weft_taskpool_free(tp);
    weft_device_counters_t c = devtest_counters(ctx, 1);
    int updated = 0, runs = 0, kept = -1;
    for (int k = 0; k < T; k++) {
        runs += atomic_load(&ran[k]);
        if (ymem[k][0] == 1.0 && ymem[k][NB * NB - 1] == 1.0)
            updated++;
        else if (ymem[k][0] == 0.0)
            kept = k;
    }
    printf("%lld batches of %lld tasks; %d of %d tiles updated, tile %d kept its old value\n",
           (long long)c.batches, (long long)c.batched_tasks, updated, T, kept);
    CHECK(c.batches >= 1 && atomic_load(&batched) >= 2);
    CHECK(updated == T - 1 && runs == T - 1);
    CHECK(kept >= 0 && atomic_load(&ran[kept]) == 0);
    weft_data_release(g);
    for (int i = 0; i < T; i++) weft_data_release(y[i]);
    CHECK(weft_fini(ctx) == 0);
    return check_report("device_batch_skip");
}
