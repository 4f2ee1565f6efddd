/* Several bodies failing on one emulated device before their tasks are
 * looked at: each fails, and what depends on it is cancelled. The emu
 * device kept the number of the last op that failed on a stream only, so
 * an event asked after a later failure took the earlier one for done: its
 * task published a version its body never made and its successor ran (a
 * fuzzer's finding: 8 chains, 4 failures lost each run). One rank, an emu
 * device: NCHAIN registered values, each a chain "fail" (its body returns
 * -42 on the device) then "inc" (adds 1). Wanted: the wait fails, NCHAIN
 * tasks failed and NCHAIN cancelled, no inc ran, every value as it was.
 * Prints "test_device_fail_many: ... PASSED". */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "weft/weft.h"

#define NCHAIN 16

static atomic_int incs_ran;

static int fail_body(weft_task_t *t)
{
    (void)t;
    return -42;
}

static int inc(weft_task_t *t)
{
    atomic_fetch_add(&incs_ran, 1);
    *(int64_t *)weft_task_ptr(t, 0) += 1;
    return 0;
}

static const weft_task_class_t fail_cls = {.name = "fail", .body = {[WEFT_DEV_EMU] = fail_body}};
static const weft_task_class_t inc_cls = {.name = "inc",
                                          .body = {[WEFT_DEV_CPU] = inc, [WEFT_DEV_EMU] = inc}};

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx || weft_ndevices(ctx) < 1) return 2;
    static int64_t x[NCHAIN];
    weft_data_t *d[NCHAIN];
    for (int i = 0; i < NCHAIN; i++) {
        x[i] = 1000 + i;
        d[i] = weft_data_register(ctx, WEFT_INT64, &x[i], 1, 1, 1, 0);
    }
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "fail_many");
    int rc = 0;
    for (int i = 0; i < NCHAIN; i++) {
        rc |= weft_insert_task(tp, &fail_cls, WEFT_RW, d[i], WEFT_DEVICE_HINT, 1, 0);
        rc |= weft_insert_task(tp, &inc_cls, WEFT_RW, d[i], WEFT_DEVICE_HINT, 1, 0);
    }
    int wrc = weft_taskpool_wait(tp);
    weft_stats_t st;
    rc |= weft_stats_get(ctx, &st);
    int same = 0;
    for (int i = 0; i < NCHAIN; i++) same += x[i] == 1000 + i;
    weft_taskpool_free(tp);
    for (int i = 0; i < NCHAIN; i++) weft_data_release(d[i]);
    int frc = weft_fini(ctx);
    int ok = rc == 0 && wrc == WEFT_ERR_TASK && frc == WEFT_ERR_TASK && st.tasks_failed == NCHAIN &&
             st.tasks_cancelled == NCHAIN && atomic_load(&incs_ran) == 0 && same == NCHAIN;
    printf("test_device_fail_many: wait %d, %lld failed and %lld cancelled (%d each wanted), %d "
           "inc bodies ran (0 wanted), %d of %d values as they were: %s\n",
           wrc, (long long)st.tasks_failed, (long long)st.tasks_cancelled, NCHAIN,
           atomic_load(&incs_ran), same, NCHAIN, ok ? "PASSED" : "FAILED");
    return !ok;
}
