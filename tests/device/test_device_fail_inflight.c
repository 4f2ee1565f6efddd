/* A device that fails while a kernel of another task is still running on
 * it: the wait that reports the failure must return only once that kernel
 * ended (an emulated device's thread cannot stop a body midway, as a dead
 * CUDA context stops its kernels). Before, the event queries of a broken
 * emu device failed at once: the slow task was declared failed while its
 * body still ran, the wait returned, and weft_fini unmapped the device
 * memory under it (weft-getrf with device_fail:2 crashed in its fill body
 * after weft_fini's line). Usage: test_device_fail_inflight [weft
 * parameters], with device_fail:1 aimed at the quick task. */
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#include "../check.h"
#include "weft/weft.h"

static atomic_int slow_started, slow_ended;

/* Long enough that the slow task is queued behind it when it ends. */
static int quick(weft_task_t *t)
{
    struct timespec ts = {.tv_sec = 0, .tv_nsec = 100 * 1000 * 1000};
    nanosleep(&ts, NULL);
    double *a = weft_task_ptr(t, 0);
    a[0] += 1;
    return 0;
}

static int slow(weft_task_t *t)
{
    atomic_store(&slow_started, 1);
    struct timespec ts = {.tv_sec = 0, .tv_nsec = 500 * 1000 * 1000};
    nanosleep(&ts, NULL);
    double *a = weft_task_ptr(t, 0);
    a[0] += 1;
    atomic_store(&slow_ended, 1);
    return 0;
}

static const weft_task_class_t quick_class = {.name = "quick", .body = {[WEFT_DEV_EMU] = quick}};
static const weft_task_class_t slow_class = {.name = "slow", .body = {[WEFT_DEV_EMU] = slow}};

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL);
    REQUIRE(weft_ndevices(ctx) >= 1);
    double x[2][4] = {{0}};
    weft_data_t *d[2];
    for (int i = 0; i < 2; i++) {
        d[i] = weft_data_register(ctx, WEFT_DOUBLE, x[i], 2, 2, 2, 0);
        REQUIRE(d[i] != NULL);
    }
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "inflight");
    CHECK(weft_insert_task(tp, &quick_class, WEFT_RW, d[0], WEFT_DEVICE_HINT, 1, 0) == 0);
    CHECK(weft_insert_task(tp, &slow_class, WEFT_RW, d[1], WEFT_DEVICE_HINT, 1, 0) == 0);
    int rc = weft_taskpool_wait(tp);
    /* The device thread takes the slow op as the quick one ends, and runs
     * it unless the break came in between (then it never starts, which is
     * as right): a body that started must have ended. */
    int started = atomic_load(&slow_started), ended = atomic_load(&slow_ended);
    printf("test_device_fail_inflight: wait returned %d (%s), the slow body %s\n", rc,
           weft_strerror(rc),
           !started ? "never started"
           : ended  ? "had ended"
                    : "was still running");
    CHECK(rc == WEFT_ERR_TASK);
    CHECK(!started || ended);
    weft_taskpool_free(tp);
    for (int i = 0; i < 2; i++) weft_data_release(d[i]);
    int frc = weft_fini(ctx);
    CHECK(frc != 0);
    return check_report("device_fail_inflight");
}
