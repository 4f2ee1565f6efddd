/* A task whose own copies, made by its last try to take device memory,
 * are all the zone holds and split its free space runs on the device: the
 * manager empties the zone once more instead of waiting for holders that
 * are not there (devexec.c, keep_blocked).
 *
 * Two ranks, one emu device each, zones of 8 units of 256 bytes. Rank 0
 * writes X (1 unit) on its device and sends it to rank 1, whose pull is
 * slowed (device_emu_copy_delay_us, rank 1 only), so X stays held at unit
 * 0 meanwhile. Once X's activation has left (the gate), task `big` (a
 * device body only) takes g (1 unit, the gate's tile), a (1), b (2) and c
 * (4): best fit puts g, a and b at units 1-4 and c does not fit in 5-7.
 * When rank 1 has X, X is evicted to make room, which frees unit 0 only:
 * big's own copies then split the free units (0 and 5-7). big waited
 * device_room_wait_ms for a holder that no longer existed and failed
 * ("nothing more can be evicted"); it now runs, and every wait succeeds. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "devtest.h"

enum { UNIT = 32 }; /* doubles in 256 bytes, the zone's unit */

static weft_context_t *ctx;
static atomic_int big_on = -1;

static int fill(weft_task_t *t) /* W X */
{
    double *x = weft_task_ptr(t, 0);
    for (int i = 0; i < UNIT; i++) x[i] = i;
    return 0;
}

static int take(weft_task_t *t) /* R X, W s */
{
    *(double *)weft_task_ptr(t, 1) = ((const double *)weft_task_ptr(t, 0))[7];
    return 0;
}

/* On rank 0's host: ends once X was announced to rank 1, so that big
 * comes while the send holds X. */
static int gate(weft_task_t *t) /* W g */
{
    CHECK(devtest_wait_sent(ctx, 1, 5000));
    memset(weft_task_ptr(t, 0), 0, UNIT * sizeof(double));
    return 0;
}

static int big(weft_task_t *t) /* R g, W a, W b, W c */
{
    atomic_store(&big_on, weft_task_device(t));
    for (int f = 1; f <= 3; f++)
        memset(weft_task_ptr(t, f), 0, (size_t)weft_task_rows(t, f) * sizeof(double));
    return 0;
}

static const weft_task_class_t fill_cls = {.name = "fill", .body = {[WEFT_DEV_EMU] = fill}};
static const weft_task_class_t take_cls = {.name = "take", .body = {[WEFT_DEV_EMU] = take}};
static const weft_task_class_t gate_cls = {.name = "gate", .body = {[WEFT_DEV_CPU] = gate}};
static const weft_task_class_t big_cls = {.name = "big", .body = {[WEFT_DEV_EMU] = big}};

static weft_data_t *tile(int units, int owner, int device)
{
    weft_data_t *d = weft_data_new(ctx, WEFT_DOUBLE, units * UNIT, 1, owner);
    CHECK(d && weft_data_set_device(d, device) == 0);
    return d;
}

int main(int argc, char **argv)
{
    ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL);
    REQUIRE(weft_nranks(ctx) == 2 && weft_ndevices(ctx) == 1);
    int rank = weft_rank(ctx);
    weft_data_t *x = tile(1, 0, 1), *s = tile(1, 1, 1), *g = tile(1, 0, 0);
    weft_data_t *a = tile(1, 0, 1), *b = tile(2, 0, 1), *c = tile(4, 0, 1);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "split");
    int rc = weft_insert_task(tp, &fill_cls, WEFT_W | WEFT_AFFINITY, x, 0);
    if (!rc) rc = weft_insert_task(tp, &take_cls, WEFT_R, x, WEFT_W | WEFT_AFFINITY, s, 0);
    if (!rc) rc = weft_insert_task(tp, &gate_cls, WEFT_W | WEFT_AFFINITY, g, 0);
    if (!rc)
        rc = weft_insert_task(tp, &big_cls, WEFT_R, g, WEFT_W | WEFT_AFFINITY, a, WEFT_W, b, WEFT_W,
                              c, 0);
    CHECK(rc == 0);
    rc = weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    printf("test_device_room_split rank %d: wait returned %d\n", rank, rc);
    CHECK(rc == 0);
    if (rank == 0) {
        CHECK(atomic_load(&big_on) == 1);
        printf("test_device_room_split: big ran on device %d\n", atomic_load(&big_on));
    }
    weft_data_t *all[] = {x, s, g, a, b, c};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) weft_data_release(all[i]);
    CHECK(weft_fini(ctx) == 0);
    return check_report(rank == 0 ? "device_room_split rank 0" : "device_room_split rank 1");
}
