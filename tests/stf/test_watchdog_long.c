/* A task running longer than watchdog_s is not a stall: with watchdog_s=1
 * and watchdog_abort set, a body sleeping 3 s (on the host, or on an emu
 * device when one is enabled) must neither trigger a report nor end the
 * run; the wait returns 0 after the sleep. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "weft/weft.h"

static int sleepy(weft_task_t *t)
{
    sleep(3);
    *(double *)weft_task_ptr(t, 0) = 42.0;
    return 0;
}

static const weft_task_class_t cls = {.name = "sleepy", .body = {[WEFT_DEV_CPU] = sleepy}};

int main(int argc, char **argv)
{
    setenv("WEFT_WATCHDOG_S", "1", 1);
    setenv("WEFT_WATCHDOG_ABORT", "1", 1);
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 2;
    double x = 0;
    weft_data_t *d = weft_data_register(ctx, WEFT_DOUBLE, &x, 1, 1, 1, 0);
    int rc = weft_ndevices(ctx) > 0 ? weft_data_set_device(d, 1) : 0;
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "long");
    rc |= weft_insert_task(tp, &cls, WEFT_RW | WEFT_AFFINITY, d, 0);
    rc |= weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    const double *h = weft_data_host_ptr(d, NULL);
    int ok = rc == 0 && h && *h == 42.0;
    weft_data_release(d);
    const char *where = weft_ndevices(ctx) ? "emu" : "host";
    rc = weft_fini(ctx);
    printf("test_watchdog_long (%s): %s\n", where, ok && rc == 0 ? "PASSED" : "FAILED");
    return !(ok && rc == 0);
}
