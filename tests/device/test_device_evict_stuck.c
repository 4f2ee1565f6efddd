/* An eviction whose write-back fails when no other copy can go (one emu
 * device whose zone holds two tiles, one task in flight): X and Y are
 * written on the device, then Z needs room there; the write-backs of X
 * and Y fail (fault_inject device_copy:1,device_copy:2). Z fails, its
 * cause naming the room and the write-back (devevict.c, no_room_held), and
 * nothing is lost: X and Y keep their newest versions on the device, and
 * an acquire after the wait brings them home (copies 3 and 4). The run's
 * lines are checked by the ctest (tests/device/evict.cmake). */
#include <stdio.h>

#include "../check.h"
#include "weft/weft.h"

#define NB 64 /* 32 KiB tiles: two fill the zone of 64K */

static int fill(weft_task_t *t)
{
    double *a = weft_task_ptr(t, 0);
    double v = 0;
    if (weft_task_value_get(t, 0, &v, sizeof v) != 0) return 1;
    for (int i = 0; i < NB * NB; i++) a[i] = v;
    return 0;
}

static const weft_task_class_t fill_class = {.name = "fill", .body = {[WEFT_DEV_EMU] = fill}};

static void insert_fill(weft_taskpool_t *tp, weft_data_t *d, double v)
{
    CHECK(weft_insert_task(tp, &fill_class, WEFT_W, d, WEFT_VALUE, &v, sizeof v, 0) == 0);
}

/* d holds v everywhere, read through a host acquire. */
static int holds(weft_data_t *d, double v)
{
    void *p = NULL;
    if (weft_data_host_acquire(d, WEFT_R, &p, NULL) != 0) return 0;
    const double *a = p;
    int ok = 1;
    for (int i = 0; i < NB * NB; i++) ok &= a[i] == v;
    CHECK(weft_data_host_release(d) == 0);
    return ok;
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL);
    REQUIRE(weft_ndevices(ctx) == 1);
    weft_data_t *x = weft_data_new(ctx, WEFT_DOUBLE, NB, NB, 0);
    weft_data_t *y = weft_data_new(ctx, WEFT_DOUBLE, NB, NB, 0);
    weft_data_t *z = weft_data_new(ctx, WEFT_DOUBLE, NB, NB, 0);
    REQUIRE(x && y && z);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "stuck");
    insert_fill(tp, x, 7);
    insert_fill(tp, y, 9);
    insert_fill(tp, z, 11);
    int rc = weft_taskpool_wait(tp);
    printf("test_device_evict_stuck: wait %d\n", rc);
    CHECK(rc == WEFT_ERR_TASK);
    CHECK(holds(x, 7) && holds(y, 9));
    weft_taskpool_free(tp);
    weft_data_release(x);
    weft_data_release(y);
    weft_data_release(z);
    CHECK(weft_fini(ctx) == WEFT_ERR_TASK);
    return check_report("test_device_evict_stuck");
}
