/* A batch body that calls what belongs to the thread of weft_init (here
 * weft_data_new, refused with an error): every task of the batch fails, as
 * when a batch body returns non-zero (docs/SEMANTICS.md sections 2 and 3).
 * Before, only the batch's first task was marked and failed; the others
 * published what the misbehaving call wrote, after the error line. A gate
 * task on the host makes T tasks ready at once on device 1; each body,
 * batched or alone, makes the forbidden call and returns 0. Checked: the
 * wait returns WEFT_ERR_TASK, a batch formed, and all T tasks failed. */
#include "devtest.h"

#define T 24

static atomic_int refused;

static int misuse_body(weft_task_t *t)
{
    (void)t;
    atomic_fetch_add(&refused, weft_data_new(NULL, WEFT_DOUBLE, 1, 1, 0) == NULL);
    return 0;
}

static int misuse_batch(weft_task_t *const *ts, int n)
{
    (void)ts;
    (void)n;
    return misuse_body(NULL);
}

static const weft_task_class_t misuse = {.name = "misuse",
                                         .body = {[WEFT_DEV_EMU] = misuse_body},
                                         .batch = {[WEFT_DEV_EMU] = misuse_batch}};

int main(int argc, char **argv)
{
    weft_context_t *ctx = devtest_init(&argc, &argv, 1);
    static double gmem[4], ymem[T][4];
    weft_data_t *g = weft_data_register(ctx, WEFT_DOUBLE, gmem, 2, 2, 2, 0), *y[T];
    REQUIRE(g != NULL);
    for (int i = 0; i < T; i++) {
        y[i] = weft_data_register(ctx, WEFT_DOUBLE, ymem[i], 2, 2, 2, 0);
        REQUIRE(y[i] != NULL && weft_data_set_device(y[i], 1) == 0);
    }
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "misuse");
    CHECK(weft_insert_task(tp, &devtest_gate, WEFT_W, g, 0) == 0);
    for (int i = 0; i < T; i++)
        CHECK(weft_insert_task(tp, &misuse, WEFT_R, g, WEFT_RW | WEFT_AFFINITY, y[i], 0) == 0);
    CHECK(weft_taskpool_wait(tp) == WEFT_ERR_TASK);
    weft_taskpool_free(tp);
    weft_device_counters_t c = devtest_counters(ctx, 1);
    weft_stats_t st;
    CHECK(weft_stats_get(ctx, &st) == 0);
    printf("%lld batches of %lld tasks, %d calls refused, %lld tasks failed\n",
           (long long)c.batches, (long long)c.batched_tasks, atomic_load(&refused),
           (long long)st.tasks_failed);
    CHECK(c.batches >= 1 && c.batched_tasks >= 2);
    CHECK(st.tasks_failed == T);
    weft_data_release(g);
    for (int i = 0; i < T; i++) weft_data_release(y[i]);
    CHECK(weft_fini(ctx) == WEFT_ERR_TASK);
    return check_report("device_batch_misuse");
}
