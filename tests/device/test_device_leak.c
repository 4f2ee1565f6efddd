/* Two devices a process: readers are exact and nothing leaks. After a wait
 * every copy has 0 readers and no transfer in flight; after the user
 * released everything, no runtime copy is left in any zone and the leak
 * report is empty. A planted real leak (a NEW tile written on a device and
 * never released) is reported, with its host copy once it has one. */
#include "devtest.h"
#include "context/context.h"
#include "devmgr/devmgr.h"

#define NB 32
#define T 6

static int busy_copies(weft_context_t *ctx)
{
    int busy = 0;
    pthread_mutex_lock(&ctx->live_lock);
    for (size_t i = 0; i < ctx->live.n; i++) {
        weft_data_t *d = *(weft_data_t **)weft_vec_at(&ctx->live, i);
        for (int dev = 0; dev < WEFT_MAX_DEVICES; dev++) {
            weft_data_copy_t *c = d->copies[dev];
            if (c && (c->readers != 0 || c->xfer == WEFT_XFER_UNDER)) busy++;
        }
    }
    pthread_mutex_unlock(&ctx->live_lock);
    return busy;
}

static int64_t device_copies(weft_context_t *ctx)
{
    int64_t n = 0;
    for (int d = 1; d <= weft_ndevices(ctx); d++) {
        weft_device_counters_t c = devtest_counters(ctx, d);
        n += c.copies + (c.mem_used > 0);
    }
    return n;
}

/* GEMMs with NEW temporaries and device-only classes: copies on both
 * devices, peer reads, pushouts by the host copy task at the end. */
static void workload(weft_context_t *ctx, weft_matrix_t *A, weft_matrix_t *C)
{
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "work");
    int rc = 0;
    for (int i = 0; i < T && rc == 0; i++)
        for (int j = 0; j < T && rc == 0; j++) {
            weft_data_t *tmp = weft_data_new(ctx, WEFT_DOUBLE, NB, NB, 0);
            rc = weft_insert_task(tp, &devtest_gemm_new_dev, WEFT_R, weft_tile(A, i, j), WEFT_R,
                                  weft_tile(A, j, i), WEFT_W, tmp, 0);
            if (rc == 0)
                rc =
                    weft_insert_task(tp, &devtest_gemm_dev, WEFT_R, tmp, WEFT_R, weft_tile(A, i, i),
                                     WEFT_RW | WEFT_AFFINITY, weft_tile(C, i, j), 0);
            if (rc == 0)
                rc = weft_insert_task(tp, &devtest_copy, WEFT_R, tmp, WEFT_W,
                                      weft_tile(A, (i + 1) % T, j), 0);
            weft_data_release(tmp);
        }
    CHECK(rc == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    CHECK(busy_copies(ctx) == 0);
    weft_taskpool_free(tp);
}

static void planted_leak(weft_context_t *ctx)
{
    weft_data_t *leak = weft_data_new(ctx, WEFT_DOUBLE, NB, NB, 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "leak");
    double seed = 5.0;
    CHECK(weft_insert_task(tp, &devtest_fill_dev, WEFT_VALUE, &seed, sizeof seed, WEFT_W, leak,
                           0) == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    weft_taskpool_free(tp);
    /* Device-only: one runtime copy, on a device. */
    CHECK(leak->copies[0] == NULL);
    CHECK(weft_context_leak_report(ctx, "planted leak") == 1);
    double *h = weft_data_host_ptr(leak, NULL);
    double ref[NB * NB];
    devtest_fill_array(ref, NB, NB, NB, seed);
    CHECK(h && devtest_maxdiff(h, NB, ref, NB, NB, NB) == 0.0);
    CHECK(weft_context_leak_report(ctx, "planted leak with host copy") == 2);
    weft_data_release(leak);
    CHECK(weft_context_leak_report(ctx, "after release") == 0);
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = devtest_init(&argc, &argv, 2);
    weft_matrix_t *A = weft_matrix_new(ctx, WEFT_DOUBLE, NB * T, NB * T, NB, NB, 1, 1);
    weft_matrix_t *C = weft_matrix_new(ctx, WEFT_DOUBLE, NB * T, NB * T, NB, NB, 1, 1);
    for (int i = 0; i < T; i++)
        for (int j = 0; j < T; j++) {
            devtest_fill_array(weft_data_host_ptr(weft_tile(A, i, j), NULL), NB, NB, NB,
                               i + 3.0 * j);
            memset(weft_data_host_ptr(weft_tile(C, i, j), NULL), 0, sizeof(double) * NB * NB);
        }
    workload(ctx, A, C);
    workload(ctx, A, C);
    CHECK(device_copies(ctx) > 0); /* cached clean or dirty copies may stay until release */
    weft_matrix_free(A);
    weft_matrix_free(C);
    CHECK(device_copies(ctx) == 0);
    CHECK(weft_context_leak_report(ctx, "after matrix free") == 0);
    planted_leak(ctx);
    CHECK(device_copies(ctx) == 0);
    CHECK(weft_fini(ctx) == 0);
    return check_report("device_leak");
}
