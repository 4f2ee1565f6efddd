/* Device memory held by a send that waits for the task that needs it (2
 * ranks, one emu device each, a 200 KiB zone a rank, tiles of 128 KiB).
 *
 * Rank 1 makes x on its device and sends it to rank 0 (v1), then bumps it
 * there (v2) and announces v2 to rank 0: the send's reader keeps v2 on the
 * device until rank 0 fetches it. Rank 0 fetches v2 only after its task
 * `use`, which reads v1, has run (the fetch overwrites x there), and `use`
 * also reads y, which rank 1's device is to make after a slow host task.
 * So the making of y waits for room that x keeps, x waits for `use`, and
 * `use` waits for y: no wait ends by itself. weft used to fail make_y
 * after 2 s with "nothing more can be evicted: its copies stayed in use"
 * and the wait returned WEFT_ERR_DEVMEM on both ranks, though make_y has a
 * CPU body; it now runs on the host after that while, with one warning,
 * and every value is right (docs/SEMANTICS.md 5.2). Found by the random
 * graphs of tests/stf/test_dist_dag.c with dev=1 on small zones. */
#include <stdatomic.h>
#include <unistd.h>

#include "../check.h"
#include "weft/weft.h"

enum { N = 16384 }; /* doubles: 128 KiB */

static int made_on = -1;
static atomic_int bumped; /* rank 1: x v2 is made, its send is next */

static int fill(weft_task_t *t)
{
    double *x = weft_task_ptr(t, 0);
    for (int i = 0; i < N; i++) x[i] = i;
    return 0;
}

/* On rank 1's host: ends once x v2 is made and, a while later, announced
 * (bump runs on the device, this on a worker), so that make_y comes after
 * under any load. */
static int slow(weft_task_t *t)
{
    for (int k = 0; k < 3000 && !atomic_load(&bumped); k++) usleep(10000);
    usleep(300000);
    *(double *)weft_task_ptr(t, 0) = 7;
    return 0;
}

static int make_y(weft_task_t *t) /* flow 0: s (R), flow 1: y (W) */
{
    double s = *(const double *)weft_task_ptr(t, 0), *y = weft_task_ptr(t, 1);
    for (int i = 0; i < N; i++) y[i] = s + i;
    made_on = weft_task_device(t);
    return 0;
}

static int use(weft_task_t *t) /* R x, R y, W out */
{
    const double *x = weft_task_ptr(t, 0), *y = weft_task_ptr(t, 1);
    *(double *)weft_task_ptr(t, 2) = x[3] + y[5];
    return 0;
}

static int bump(weft_task_t *t)
{
    double *x = weft_task_ptr(t, 0);
    for (int i = 0; i < N; i++) x[i] += 100;
    atomic_store(&bumped, 1);
    return 0;
}

static int peek(weft_task_t *t) /* R x, W out */
{
    *(double *)weft_task_ptr(t, 1) = ((const double *)weft_task_ptr(t, 0))[3];
    return 0;
}

static const weft_task_class_t fill_cls = {.name = "fill", .body = {[WEFT_DEV_CPU] = fill}};
static const weft_task_class_t slow_cls = {.name = "slow", .body = {[WEFT_DEV_CPU] = slow}};
static const weft_task_class_t make_cls = {.name = "make_y", .body = {[WEFT_DEV_CPU] = make_y}};
static const weft_task_class_t use_cls = {.name = "use", .body = {[WEFT_DEV_CPU] = use}};
static const weft_task_class_t bump_cls = {.name = "bump", .body = {[WEFT_DEV_CPU] = bump}};
static const weft_task_class_t peek_cls = {.name = "peek", .body = {[WEFT_DEV_CPU] = peek}};

/* x, y, s on rank 1 (x and y homed on its device, s on its host); the
 * two results on rank 0's host. */
static int insert_all(weft_taskpool_t *tp, weft_data_t *x, weft_data_t *y, weft_data_t *s,
                      weft_data_t *out1, weft_data_t *out2)
{
    int rc = weft_insert_task(tp, &fill_cls, WEFT_W | WEFT_AFFINITY, x, 0);
    if (!rc) rc = weft_insert_task(tp, &slow_cls, WEFT_W | WEFT_AFFINITY, s, 0);
    if (!rc) rc = weft_insert_task(tp, &make_cls, WEFT_R, s, WEFT_W | WEFT_AFFINITY, y, 0);
    if (!rc)
        rc = weft_insert_task(tp, &use_cls, WEFT_R, x, WEFT_R, y, WEFT_W | WEFT_AFFINITY, out1, 0);
    if (!rc) rc = weft_insert_task(tp, &bump_cls, WEFT_RW | WEFT_AFFINITY, x, 0);
    if (!rc) rc = weft_insert_task(tp, &peek_cls, WEFT_R, x, WEFT_W | WEFT_AFFINITY, out2, 0);
    return rc;
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL);
    REQUIRE(weft_nranks(ctx) == 2 && weft_ndevices(ctx) == 1);
    int rank = weft_rank(ctx);
    weft_data_t *x = weft_data_new(ctx, WEFT_DOUBLE, N, 1, 1);
    weft_data_t *y = weft_data_new(ctx, WEFT_DOUBLE, N, 1, 1);
    weft_data_t *s = weft_data_new(ctx, WEFT_DOUBLE, 1, 1, 1);
    weft_data_t *out1 = weft_data_new(ctx, WEFT_DOUBLE, 1, 1, 0);
    weft_data_t *out2 = weft_data_new(ctx, WEFT_DOUBLE, 1, 1, 0);
    CHECK(weft_data_set_device(x, 1) == 0 && weft_data_set_device(y, 1) == 0);
    CHECK(weft_data_set_device(s, 0) == 0 && weft_data_set_device(out1, 0) == 0 &&
          weft_data_set_device(out2, 0) == 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "held");
    CHECK(insert_all(tp, x, y, s, out1, out2) == 0);
    int rc = weft_taskpool_wait(tp);
    CHECK(rc == 0);
    weft_taskpool_free(tp);
    if (rank == 0 && rc == 0) {
        const double *a = weft_data_host_ptr(out1, NULL), *b = weft_data_host_ptr(out2, NULL);
        CHECK(a && *a == 3 + 7 + 5);
        CHECK(b && *b == 103);
    }
    if (rank == 1) {
        weft_device_counters_t c;
        CHECK(weft_device_counters_get(ctx, 1, &c) == 0);
        CHECK(made_on == 0);     /* moved to the host */
        CHECK(c.evictions < 10); /* the wait empties the zone once, not at every poll */
        printf("rank 1: make_y ran on device %d; %lld evictions\n", made_on,
               (long long)c.evictions);
    }
    weft_data_t *all[] = {x, y, s, out1, out2};
    for (int i = 0; i < 5; i++) weft_data_release(all[i]);
    CHECK(weft_fini(ctx) == 0);
    return check_report(rank == 0 ? "device_held rank 0" : "device_held rank 1");
}
