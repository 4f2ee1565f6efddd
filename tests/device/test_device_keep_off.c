/* weft_data_set_keep_device_copies(d, 0) restores the default at once: the
 * device copy an earlier wait kept is no longer read in place of the
 * user's memory, which the user may now write with no call. Before, it
 * stayed current: the next device task read it and its write-back
 * overwrote the user's write (12 for 1012; a fuzzer's finding). One rank,
 * an emu device: x = 10 registered, kept; a task on emu1 adds 1 (11); keep
 * set to 0; the user adds 1000; a task on emu1 adds 1: 1012. Prints
 * "test_device_keep_off: ... PASSED". */
#include <stdint.h>
#include <stdio.h>

#include "weft/weft.h"

static int inc(weft_task_t *t)
{
    *(int64_t *)weft_task_ptr(t, 0) += 1;
    return 0;
}

static const weft_task_class_t inc_cls = {.name = "inc",
                                          .body = {[WEFT_DEV_CPU] = inc, [WEFT_DEV_EMU] = inc}};

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx || weft_ndevices(ctx) < 1) return 2;
    static int64_t x = 10;
    weft_data_t *d = weft_data_register(ctx, WEFT_INT64, &x, 1, 1, 1, 0);
    int rc = weft_data_set_keep_device_copies(d, 1);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "keep_off");
    rc |= weft_insert_task(tp, &inc_cls, WEFT_RW, d, WEFT_DEVICE_HINT, 1, 0);
    rc |= weft_taskpool_wait(tp);
    int64_t first = x;
    rc |= weft_data_set_keep_device_copies(d, 0);
    x += 1000; /* the user's write, no call */
    rc |= weft_insert_task(tp, &inc_cls, WEFT_RW, d, WEFT_DEVICE_HINT, 1, 0);
    rc |= weft_taskpool_wait(tp);
    int64_t after = x;
    weft_taskpool_free(tp);
    weft_data_release(d);
    rc |= weft_fini(ctx);
    int ok = rc == 0 && first == 11 && after == 1012;
    printf("test_device_keep_off: %lld after the kept wait (11 wanted), %lld after the next "
           "(1012 wanted): %s\n",
           (long long)first, (long long)after, ok ? "PASSED" : "FAILED");
    return !ok;
}
