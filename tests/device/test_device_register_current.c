/* weft_data_register_device with current contents on data whose host
 * memory the user registered: that memory holds the data between
 * taskpools, so it gets the contents at once. It kept its old ones until
 * the wait of a taskpool that used the data: a wait of another taskpool
 * wrote nothing back, the user's write to the memory after it was lost,
 * and the next task read the device's old contents (a fuzzer's finding).
 * One rank, an emu device: host 1s, device 7s made current; the host
 * holds 7 at once; after a wait of another taskpool the user writes 5;
 * a task reads 5 and the memory still holds 5 after its wait. With argv
 * "fail" (run with that copy failing, fault_inject device_copy:1): the
 * registration returns the copy's error, the memory keeps 1 until the next
 * wait, whichever taskpool's, copies 7 into it; the rest as above. Prints
 * "test_device_register_current: ... PASSED". */
#include <stdio.h>
#include <string.h>

#include "weft/weft.h"

static double seen = -1;

static int read_first(weft_task_t *t)
{
    seen = *(const double *)weft_task_ptr(t, 0);
    return 0;
}

static int touch(weft_task_t *t)
{
    *(double *)weft_task_ptr(t, 0) += 1;
    return 0;
}

static const weft_task_class_t read_cls = {.name = "read", .body = {[WEFT_DEV_CPU] = read_first}};
static const weft_task_class_t touch_cls = {.name = "touch", .body = {[WEFT_DEV_CPU] = touch}};

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx || weft_ndevices(ctx) < 1) return 2;
    static double host[4] = {1, 1, 1, 1}, dev[4] = {7, 7, 7, 7}, other[1];
    weft_data_t *d = weft_data_register(ctx, WEFT_DOUBLE, host, 4, 1, 4, 0);
    weft_data_t *e = weft_data_register(ctx, WEFT_DOUBLE, other, 1, 1, 1, 0);
    int fail = argc > 1 && strcmp(argv[1], "fail") == 0;
    int reg = weft_data_register_device(d, 1, dev, 4, 1);
    int rc = fail ? reg == 0 : reg;
    double at_once = host[0];
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "current");
    rc |= weft_insert_task(tp, &touch_cls, WEFT_RW, e, 0);
    rc |= weft_taskpool_wait(tp);
    double retried = host[0];
    for (int i = 0; i < 4; i++) host[i] = 5; /* the user's write, no call */
    rc |= weft_insert_task(tp, &read_cls, WEFT_R, d, WEFT_DEVICE_HINT, 0, 0);
    rc |= weft_taskpool_wait(tp);
    double after = host[0];
    weft_taskpool_free(tp);
    weft_data_release(d);
    weft_data_release(e);
    rc |= weft_fini(ctx);
    int ok = rc == 0 && at_once == (fail ? 1 : 7) && retried == 7 && seen == 5 && after == 5;
    printf("test_device_register_current: registration %d, host %g at once (%d wanted), %g after "
           "a wait (7 wanted), task read %g, host %g after (5 wanted): %s\n",
           reg, at_once, fail ? 1 : 7, retried, seen, after, ok ? "PASSED" : "FAILED");
    return !ok;
}
