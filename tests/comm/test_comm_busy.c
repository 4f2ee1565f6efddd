/* The comm thread serves every transfer of its rank, so it never waits on
 * one copy (docs/ARCHITECTURE.md, "The comm thread never waits"): a
 * transfer whose copy is slow or busy is polled or tried again later while
 * the others go on. Two ranks, one emu device each, whose copies take
 * device_emu_copy_delay_us (2 s) to land. Tile x is slow, tile y is
 * small and quick; rank 1 adds each into its own accumulator on the host.
 *
 * argv[1] "send": x is written on rank 0's device and GPU-aware sends are
 * off, so its send must first copy it to host memory. The task that writes
 * y on rank 0 starts once that copy is enqueued; y must then reach rank 1
 * while the copy of x is still on its way (rank 1 has received y's bytes
 * alone when it adds y), which fails when the comm thread copies x
 * synchronously (y's activation then leaves after x's).
 *
 * argv[1] "recv": x (rank 1's) is on rank 1's device; a thread of rank 1
 * writes it back to host (2 s), and while that lands rank 0 writes a new
 * version of x, then of y, and sends both: the receive of x into the host
 * copy still being written must be tried again later, not waited for (y is
 * added while the write-back is still landing), and x ends right.
 *
 * argv[1] "land": x (rank 0's, small: eager) is read on rank 1's device,
 * where its bytes land by a copy the comm thread must poll, not wait for:
 * y, sent after x, is added on rank 1 while x is still landing. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "../check.h"
#include "context/context.h"
#include "devmgr/devmgr.h"
#include "weft/weft.h"

#define ROWS 4

static weft_context_t *ctx;
static atomic_int wb_done; /* recv: the write-back thread is over */

static void nap_ms(int ms) { nanosleep(&(struct timespec){0, ms * 1000000L}, NULL); }

static void fill(weft_task_t *t, int f)
{
    double v;
    weft_task_value(t, 0, &v);
    double *p = weft_task_ptr(t, f);
    for (int i = 0; i < ROWS; i++) p[i] = v;
}

/* flow 0 (W) = the value. */
static int set_body(weft_task_t *t)
{
    fill(t, 0);
    return 0;
}

/* flows 0 and 1 (W) = the value. */
static int set_both(weft_task_t *t)
{
    fill(t, 0);
    fill(t, 1);
    return 0;
}

/* send: y's writer starts once rank 0's device copies x to host. */
static int set_after_pull(weft_task_t *t)
{
    weft_device_counters_t dc = {0};
    for (int i = 0; i < 20000 && dc.bytes_d2h == 0; i++) {
        CHECK(weft_device_counters_get(ctx, 1, &dc) == 0);
        if (dc.bytes_d2h == 0) nap_ms(1);
    }
    CHECK(dc.bytes_d2h > 0);
    return set_body(t);
}

/* flow 0 (R) added into flow 1 (RW). */
static int add_body(weft_task_t *t)
{
    const double *x = weft_task_ptr(t, 0);
    double *z = weft_task_ptr(t, 1);
    for (int i = 0; i < ROWS; i++) z[i] += x[i];
    return 0;
}

/* The add of y: the slow transfer of x is not over yet. */
static int add_first(weft_task_t *t)
{
    long long recvs = atomic_load(&ctx->recvs_done);
    if (recvs != 1) fprintf(stderr, "rank 1 ended %lld receives before adding y\n", recvs);
    CHECK(recvs == 1);
    CHECK(atomic_load(&wb_done) == 0);
    return add_body(t);
}

/* Both bodies: each task runs where its AFFINITY data lives. */
static const weft_task_class_t set_cls = {
    .name = "set", .body = {[WEFT_DEV_CPU] = set_body, [WEFT_DEV_EMU] = set_body}};
static const weft_task_class_t set2_cls = {.name = "set2", .body = {[WEFT_DEV_CPU] = set_both}};
static const weft_task_class_t set_dev = {.name = "set_dev", .body = {[WEFT_DEV_EMU] = set_body}};
static const weft_task_class_t set_late = {.name = "set_late",
                                           .body = {[WEFT_DEV_CPU] = set_after_pull}};
static const weft_task_class_t add_cls = {
    .name = "add", .body = {[WEFT_DEV_CPU] = add_body, [WEFT_DEV_EMU] = add_body}};
static const weft_task_class_t add_y = {.name = "add_y", .body = {[WEFT_DEV_CPU] = add_first}};

static int set(weft_taskpool_t *tp, const weft_task_class_t *cls, weft_data_t *d, double v)
{
    return weft_insert_task(tp, cls, WEFT_W | WEFT_AFFINITY, d, WEFT_VALUE, &v, sizeof v, 0);
}

static int add(weft_taskpool_t *tp, const weft_task_class_t *cls, weft_data_t *x, weft_data_t *z)
{
    return weft_insert_task(tp, cls, WEFT_R, x, WEFT_RW | WEFT_AFFINITY, z, 0);
}

static void *write_back(void *arg)
{
    int rc = weft_devcopy_to_host(WEFT_LOG_ERROR, arg, NULL);
    CHECK(rc == 0);
    atomic_store(&wb_done, 1);
    return NULL;
}

/* recv, rank 1: x's host copy is being written when this returns. */
static void start_write_back(weft_data_t *x, pthread_t *th)
{
    REQUIRE(pthread_create(th, NULL, write_back, x) == 0);
    int under = 0;
    for (int i = 0; i < 10000 && !under; i++) {
        weft_data_lock(x);
        under = x->copies[0] && x->copies[0]->xfer == WEFT_XFER_UNDER;
        weft_data_unlock(x);
        if (!under) nap_ms(1);
    }
    REQUIRE(under);
}

int main(int argc, char **argv)
{
    ctx = weft_init(&argc, &argv);
    if (!ctx || weft_nranks(ctx) != 2 || argc < 2 || weft_ndevices(ctx) < 1) return 1;
    int rank = weft_rank(ctx), recv = strcmp(argv[1], "recv") == 0;
    int land = strcmp(argv[1], "land") == 0;
    weft_data_t *x = weft_data_new(ctx, WEFT_DOUBLE, ROWS, 1, recv ? 1 : 0);
    weft_data_t *y = weft_data_new(ctx, WEFT_DOUBLE, ROWS, 1, 0);
    weft_data_t *w = weft_data_new(ctx, WEFT_DOUBLE, ROWS, 1, 0);
    weft_data_t *zx = weft_data_new(ctx, WEFT_DOUBLE, ROWS, 1, 1);
    weft_data_t *zy = weft_data_new(ctx, WEFT_DOUBLE, ROWS, 1, 1);
    CHECK(weft_data_set_device(x, !land) == 0 && weft_data_set_device(zx, land) == 0);
    CHECK(weft_data_set_device(y, 0) == 0 && weft_data_set_device(w, 0) == 0);
    CHECK(weft_data_set_device(zy, 0) == 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "busy");
    CHECK(set(tp, land ? &set_cls : &set_dev, x, 5) == 0 && set(tp, &set_cls, zx, 0) == 0);
    CHECK(set(tp, &set_cls, zy, 0) == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    pthread_t th;
    if (recv && rank == 1) start_write_back(x, &th);
    double two = 2, seven = 7;
    if (recv || land) {
        /* On rank 0 (w's): x then y, in that order (y's writer reads w). */
        CHECK(weft_insert_task(tp, &set2_cls, WEFT_W, x, WEFT_W | WEFT_AFFINITY, w, WEFT_VALUE,
                               &two, sizeof two, 0) == 0);
        CHECK(add(tp, &add_cls, x, zx) == 0);
        CHECK(weft_insert_task(tp, &set_cls, WEFT_W | WEFT_AFFINITY, y, WEFT_R, w, WEFT_VALUE,
                               &seven, sizeof seven, 0) == 0);
    } else {
        CHECK(add(tp, &add_cls, x, zx) == 0);
        CHECK(set(tp, &set_late, y, seven) == 0);
    }
    CHECK(add(tp, &add_y, y, zy) == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    if (recv && rank == 1) CHECK(pthread_join(th, NULL) == 0);
    weft_stats_t s;
    CHECK(weft_stats_get(ctx, &s) == 0);
    if (rank == 1) {
        const double *px = weft_data_host_ptr(zx, NULL), *py = weft_data_host_ptr(zy, NULL);
        double ex = recv || land ? 2 : 5;
        CHECK(px && px[0] == ex && px[ROWS - 1] == ex);
        CHECK(py && py[0] == 7 && py[ROWS - 1] == 7);
        if (recv) CHECK(s.comm_recv_retries > 0);
    } else if (!recv && !land) {
        CHECK(s.comm_send_pulls == 1);
    }
    weft_taskpool_free(tp);
    weft_data_release(x);
    weft_data_release(y);
    weft_data_release(w);
    weft_data_release(zx);
    weft_data_release(zy);
    CHECK(weft_fini(ctx) == 0);
    printf("test_comm_busy %s rank %d: %d checks, %d failed: %s\n", argv[1], rank, checks, failures,
           failures ? "FAILED" : "PASSED");
    return failures != 0;
}
