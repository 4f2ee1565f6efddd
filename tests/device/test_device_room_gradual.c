/* A task's wait for device room held by sends restarts each time one of
 * them is let go (docs/SEMANTICS.md 5.2, device_room_wait_ms).
 *
 * Two ranks, one emu device each. Rank 0 makes K tiles A of 128 KiB on
 * its device (a zone of 576 KiB) and sends them to rank 1, whose device
 * tasks read them there: rank 1 pulls them by ipc, one after another,
 * each pull slowed to device_emu_copy_delay_us (rank 1 only, set by the
 * test's command), so rank 0's copies of A are let go one at a time. Once
 * the K activations have left, rank 0's task `big` (a device body only)
 * writes 4 tiles B on the same device: they fit only once every A is let
 * go.
 *
 * argv[1] K, argv[2] "ok": the releases come closer together than
 * device_room_wait_ms (argv[3], ms) but all of them take longer; big waits
 * past that while and runs on the device, and every wait succeeds. With a
 * fixed wait from its start, big failed ("nothing more can be evicted:
 * its copies stayed in use") while copies were still being let go.
 * "fail": no copy is let go within the wait: big fails after it, and the
 * error names device_room_wait_ms (the test's command matches it). */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "devtest.h"

enum { N = 16384, NB = 4, KMAX = 4 }; /* N doubles: 128 KiB a tile */

static weft_context_t *ctx;
static int nsent; /* K: the activations the gate waits for */
static atomic_llong gate_ns, big_ns;
static atomic_int big_on = -1;

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int fill(weft_task_t *t) /* W A */
{
    double *a = weft_task_ptr(t, 0);
    for (int i = 0; i < N; i++) a[i] = i;
    return 0;
}

static int take(weft_task_t *t) /* R A, W s */
{
    *(double *)weft_task_ptr(t, 1) = ((const double *)weft_task_ptr(t, 0))[5];
    return 0;
}

/* On rank 0's host: ends once every A was announced to rank 1, so that
 * big comes while they are held (it would otherwise evict them first). */
static int gate(weft_task_t *t) /* W g */
{
    CHECK(devtest_wait_sent(ctx, nsent, 2000));
    *(double *)weft_task_ptr(t, 0) = 1;
    atomic_store(&gate_ns, now_ns());
    return 0;
}

static int big(weft_task_t *t) /* R g, W B[0..NB) */
{
    atomic_store(&big_ns, now_ns());
    atomic_store(&big_on, weft_task_device(t));
    for (int b = 1; b <= NB; b++) memset(weft_task_ptr(t, b), 0, N * sizeof(double));
    return 0;
}

static const weft_task_class_t fill_cls = {.name = "fill", .body = {[WEFT_DEV_EMU] = fill}};
static const weft_task_class_t take_cls = {.name = "take", .body = {[WEFT_DEV_EMU] = take}};
static const weft_task_class_t gate_cls = {.name = "gate", .body = {[WEFT_DEV_CPU] = gate}};
static const weft_task_class_t big_cls = {.name = "big", .body = {[WEFT_DEV_EMU] = big}};

static weft_data_t *tile(int rows, int owner, int device)
{
    weft_data_t *d = weft_data_new(ctx, WEFT_DOUBLE, rows, 1, owner);
    CHECK(d && weft_data_set_device(d, device) == 0);
    return d;
}

/* The tiles of the graph: A[k] and B on rank 0's device, s[k] on rank 1's,
 * g on rank 0's host; all[] lists them for the release. */
static int insert_all(weft_taskpool_t *tp, int k, weft_data_t **all)
{
    weft_data_t **a = all, **s = all + KMAX, **b = all + 2 * KMAX, *g = all[2 * KMAX + NB];
    int rc = 0;
    for (int i = 0; i < k && !rc; i++)
        rc = weft_insert_task(tp, &fill_cls, WEFT_W | WEFT_AFFINITY, a[i], 0);
    for (int i = 0; i < k && !rc; i++)
        rc = weft_insert_task(tp, &take_cls, WEFT_R, a[i], WEFT_W | WEFT_AFFINITY, s[i], 0);
    if (!rc) rc = weft_insert_task(tp, &gate_cls, WEFT_W | WEFT_AFFINITY, g, 0);
    if (!rc)
        rc = weft_insert_task(tp, &big_cls, WEFT_R, g, WEFT_W | WEFT_AFFINITY, b[0], WEFT_W, b[1],
                              WEFT_W, b[2], WEFT_W, b[3], 0);
    return rc;
}

int main(int argc, char **argv)
{
    ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL && argc == 4);
    REQUIRE(weft_nranks(ctx) == 2 && weft_ndevices(ctx) == 1);
    int rank = weft_rank(ctx), k = atoi(argv[1]), ok = strcmp(argv[2], "ok") == 0;
    long wait_ms = atol(argv[3]);
    REQUIRE(k >= 1 && k <= KMAX);
    nsent = k;
    weft_data_t *all[2 * KMAX + NB + 1];
    for (int i = 0; i < KMAX; i++) all[i] = tile(N, 0, 1);
    for (int i = 0; i < KMAX; i++) all[KMAX + i] = tile(1, 1, 1);
    for (int i = 0; i < NB; i++) all[2 * KMAX + i] = tile(N, 0, 1);
    all[2 * KMAX + NB] = tile(1, 0, 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "gradual");
    CHECK(insert_all(tp, k, all) == 0);
    int rc = weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    printf("test_device_room_gradual rank %d: wait returned %d\n", rank, rc);
    CHECK(ok ? rc == 0 : rc != 0);
    if (rank == 0 && ok) {
        /* big waited longer than device_room_wait_ms: the wait was
         * extended by the releases, not merely never needed. */
        long long waited = (atomic_load(&big_ns) - atomic_load(&gate_ns)) / 1000000;
        CHECK(atomic_load(&big_on) == 1);
        if (atomic_load(&big_on) == 1)
            printf("test_device_room_gradual: big ran on device 1, %lld ms after the gate\n",
                   waited);
        CHECK(waited > wait_ms);
    }
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) weft_data_release(all[i]);
    int fini = weft_fini(ctx);
    CHECK(!ok || fini == 0);
    return check_report(rank == 0 ? "device_room_gradual rank 0" : "device_room_gradual rank 1");
}
