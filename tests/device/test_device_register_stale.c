/* Device memory registered (weft_data_register_device, current=0) on a
 * rank that does not own the data keeps the version a task wrote there
 * past the wait; the owner then rewrites the data from the host. In the
 * next taskpool a host task on the non-owner received the owner's version
 * under the number the device copy had (each rank counts versions
 * itself), both copies passed for current, and the device task that
 * followed read the old bytes: 2 instead of 101, on every rank, without a
 * word (a fuzzer found it). Rank 1 owns d; rank 0 registers device
 * memory for it, adds 1 there (1), the owner writes 100, rank 0 copies d
 * on its host, adds 1 on its device and copies d again: 101. Prints
 * "test_device_register_stale rank R: ... PASSED". */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "weft/weft.h"

static int add1(weft_task_t *t)
{
    *(int64_t *)weft_task_ptr(t, 0) += 1;
    return 0;
}

static int copy(weft_task_t *t)
{
    *(int64_t *)weft_task_ptr(t, 1) = *(const int64_t *)weft_task_ptr(t, 0);
    return 0;
}

static const weft_task_class_t add_cls = {.name = "add1", .body = {[WEFT_DEV_CPU] = add1}};
static const weft_task_class_t copy_cls = {.name = "copy", .body = {[WEFT_DEV_CPU] = copy}};

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx || weft_nranks(ctx) != 2 || weft_ndevices(ctx) < 1) return 1;
    int me = weft_rank(ctx), rc = 0;
    static int64_t on_device; /* the user's "device memory" of an emu device */
    weft_data_t *d = weft_data_new(ctx, WEFT_INT64, 1, 1, 1);
    weft_data_t *first = weft_data_new(ctx, WEFT_INT64, 1, 1, 0);
    weft_data_t *last = weft_data_new(ctx, WEFT_INT64, 1, 1, 0);
    rc |= weft_data_set_init(d, NULL, NULL);
    if (me == 0) rc |= weft_data_register_device(d, 1, &on_device, 1, 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "stale");
    rc |= weft_insert_task(tp, &add_cls, WEFT_RW, d, WEFT_ON_RANK, 0, WEFT_DEVICE_HINT, 1, 0);
    rc |= weft_taskpool_wait(tp);
    if (me == 1) {
        int64_t *p = NULL;
        rc |= weft_data_host_acquire(d, WEFT_W, (void **)&p, NULL);
        if (p) *p = 100;
        rc |= weft_data_host_release(d);
    }
    rc |= weft_insert_task(tp, &copy_cls, WEFT_R, d, WEFT_W | WEFT_AFFINITY, first, 0);
    rc |= weft_insert_task(tp, &add_cls, WEFT_RW, d, WEFT_ON_RANK, 0, WEFT_DEVICE_HINT, 1, 0);
    rc |= weft_insert_task(tp, &copy_cls, WEFT_R, d, WEFT_W | WEFT_AFFINITY, last, 0);
    rc |= weft_taskpool_wait(tp);
    int64_t got = -1;
    weft_data_t *mine = me == 0 ? last : d;
    const int64_t *h = rc == 0 ? weft_data_host_ptr(mine, NULL) : NULL;
    if (h) got = *h;
    weft_taskpool_free(tp);
    weft_data_release(d);
    weft_data_release(first);
    weft_data_release(last);
    rc |= weft_fini(ctx);
    int ok = rc == 0 && got == 101;
    printf("test_device_register_stale rank %d: %s %lld (101 wanted): %s\n", me,
           me == 0 ? "the copy after the device's add" : "d on its owner", (long long)got,
           ok ? "PASSED" : "FAILED");
    return !ok;
}
