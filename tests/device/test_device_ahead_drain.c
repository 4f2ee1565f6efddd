/* A copy ahead must not start after the wait of its task's taskpool
 * (docs/COHERENCY.md rule 9: between taskpools the host's writes win).
 * One emu device of about two tiles, copies slowed to 100 ms:
 *  - taskpool 0 writes E1 and E3 on the device (dirty there);
 *  - taskpool 1: SLOW reads E3 on the device; FAIL (host) writes X after
 *    reading E1 and fails slowly; B, homed on the device by D (the user's
 *    memory), reads D and X, so it is cancelled when FAIL fails. While
 *    SLOW runs, the manager's scan takes B out of its upcoming list to
 *    fetch D, and makes room by writing E1 back (100 ms);
 *  - the wait ends meanwhile; then the user writes D's memory (101 due
 *    after taskpool 2's increment on the device).
 * Before, the wait's drain saw neither B (out of the list) nor a copy in
 * flight, and passed; the scan then copied D in, made the device copy
 * current at D's version after the wait made the host's the only one, and
 * taskpool 2 incremented the stale device copy: "v = 2 (expect 101)", in
 * 4 runs of 5, and a copy ahead still holding a reader at the wait was
 * reported a leak. Three rounds, so that it fails almost surely. */
#include <stdio.h>
#include <unistd.h>

#include <weft/weft.h>

#define N 8192 /* 64 KiB tiles */
#define ROUNDS 3

static int fill(weft_task_t *t)
{
    double *x = weft_task_ptr(t, 0);
    for (int i = 0; i < N; i++) x[i] = 7;
    return 0;
}

static int slow(weft_task_t *t)
{
    (void)t;
    usleep(30000);
    return 0;
}

static int nop(weft_task_t *t)
{
    (void)t;
    return 0;
}

static int inc(weft_task_t *t)
{
    double *x = weft_task_ptr(t, 0);
    for (int i = 0; i < N; i++) x[i] += 1;
    return 0;
}

static int slow_fail(weft_task_t *t)
{
    (void)t;
    usleep(50000);
    return -1;
}

static const weft_task_class_t fill_c = {.name = "fill", .body = {[WEFT_DEV_EMU] = fill}};
static const weft_task_class_t slow_c = {.name = "slow", .body = {[WEFT_DEV_EMU] = slow}};
static const weft_task_class_t nop_c = {.name = "nop", .body = {[WEFT_DEV_EMU] = nop}};
static const weft_task_class_t inc_c = {.name = "inc", .body = {[WEFT_DEV_EMU] = inc}};
static const weft_task_class_t fail_c = {.name = "fail", .body = {[WEFT_DEV_CPU] = slow_fail}};

static double v[N];

/* One round; 0 when taskpool 2 read what the user wrote. */
static int round_once(weft_context_t *ctx, int r)
{
    for (int i = 0; i < N; i++) v[i] = 1;
    weft_data_t *d = weft_data_register(ctx, WEFT_DOUBLE, v, N, 1, N, 0);
    weft_data_t *e1 = weft_data_new(ctx, WEFT_DOUBLE, N, 1, 0);
    weft_data_t *e3 = weft_data_new(ctx, WEFT_DOUBLE, N, 1, 0);
    weft_data_t *x = weft_data_new(ctx, WEFT_DOUBLE, N, 1, 0);
    if (!d || !e1 || !e3 || !x) return 1;
    int rc = weft_data_set_device(d, 1) | weft_data_set_device(e1, 1) | weft_data_set_device(e3, 1);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "drain");
    rc |= weft_insert_task(tp, &fill_c, WEFT_W | WEFT_AFFINITY, e1, 0);
    rc |= weft_insert_task(tp, &fill_c, WEFT_W | WEFT_AFFINITY, e3, 0);
    rc |= weft_taskpool_wait(tp);
    rc |= weft_insert_task(tp, &slow_c, WEFT_R | WEFT_AFFINITY, e3, 0);
    rc |= weft_insert_task(tp, &fail_c, WEFT_W, x, WEFT_R, e1, 0);
    rc |= weft_insert_task(tp, &nop_c, WEFT_R | WEFT_AFFINITY, d, WEFT_R, x, 0);
    int failed = weft_taskpool_wait(tp) != WEFT_SUCCESS; /* FAIL failed, B cancelled */
    weft_taskpool_free(tp);
    /* A copy started after the wait lands meanwhile. */
    usleep(300000);
    for (int i = 0; i < N; i++) v[i] = 100; /* the user's memory, after a wait */
    tp = weft_taskpool_new(ctx, "after");
    rc |= weft_insert_task(tp, &inc_c, WEFT_RW | WEFT_AFFINITY, d, 0);
    rc |= weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    int bad = rc != WEFT_SUCCESS || !failed || v[0] != 101 || v[N - 1] != 101;
    printf("test_device_ahead_drain round %d: %s (v = %g, expect 101; rc %d, failed %d)\n", r,
           bad ? "FAILED" : "ok", v[0], rc, failed);
    weft_data_release(d);
    weft_data_release(e1);
    weft_data_release(e3);
    weft_data_release(x);
    return bad;
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 2;
    if (weft_ndevices(ctx) < 1) {
        weft_fini(ctx);
        return 77;
    }
    int bad = 0;
    for (int r = 0; r < ROUNDS; r++) bad |= round_once(ctx, r);
    weft_fini(ctx); /* fails: taskpool 1's failure is remembered */
    printf("test_device_ahead_drain: %s\n", bad ? "FAILED" : "ok");
    return bad;
}
