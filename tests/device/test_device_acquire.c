/* User memory between taskpools (docs/SEMANTICS.md section 1): what the
 * user writes into MANAGED memory (registered or wrapped) is what the next
 * task on a device reads; runtime-owned tiles keep their device copies
 * unless written through weft_data_host_ptr or an acquire for write; with
 * device copies kept, an acquire for read brings nothing back in. The H2D
 * byte counters tell whether a tile was staged in again. Runs on 1 or 2
 * emu devices, or on GPUs (WEFT_TEST_CUDA). */
#include "devtest.h"

#define N 4
#define VEC (N * sizeof(double))

static weft_context_t *ctx;
static weft_data_t *one; /* the 1 x 1 tile [1]: gemm b += a * one is b += a */

static int64_t h2d(void)
{
    int64_t s = 0;
    for (int d = 1; d <= weft_ndevices(ctx); d++) s += devtest_counters(ctx, d).bytes_h2d;
    return s;
}

/* One taskpool of b += a on device `dev` (0: where weft chooses). */
static void add_on_device(weft_data_t *a, weft_data_t *b, int dev)
{
    if (dev > 0) CHECK(weft_data_set_device(b, dev) == 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "add");
    CHECK(weft_insert_task(tp, &devtest_gemm_dev, WEFT_R, a, WEFT_R, one,
                           WEFT_RW | (dev > 0 ? WEFT_AFFINITY : 0), b, 0) == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    weft_taskpool_free(tp);
}

static double host_value(weft_data_t *d, int i)
{
    double *p = NULL;
    if (weft_data_host_acquire(d, WEFT_R, (void **)&p, NULL) != 0) return NAN;
    double v = p[i];
    CHECK(weft_data_host_release(d) == 0);
    return v;
}

/* The reproducer of issue 13 item 1, on registered memory. */
static void registered(void)
{
    double a[N] = {1, 1, 1, 1}, b[N] = {0};
    weft_data_t *da = weft_data_register(ctx, WEFT_DOUBLE, a, N, 1, N, 0);
    weft_data_t *db = weft_data_register(ctx, WEFT_DOUBLE, b, N, 1, N, 0);
    add_on_device(da, db, 0);
    CHECK(b[0] == 1 && b[3] == 1);
    a[0] = 100; /* no call: MANAGED memory is the user's between taskpools */
    int64_t before = h2d();
    add_on_device(da, db, 0);
    CHECK(b[0] == 101 && b[1] == 2);
    CHECK(h2d() - before == 2 * (int64_t)VEC + (int64_t)sizeof(double)); /* a, b and one */
    weft_data_release(da);
    weft_data_release(db);
}

/* The same through a wrapped matrix, and the opt-out: device copies kept,
 * writes announced by an acquire of the matrix. */
static void wrapped(void)
{
    double a[N] = {1, 1, 1, 1}, b[N] = {0};
    weft_matrix_t *A = weft_matrix_wrap(ctx, WEFT_DOUBLE, a, N, N, 1, N, 1, 1, 1);
    weft_matrix_t *B = weft_matrix_wrap(ctx, WEFT_DOUBLE, b, N, N, 1, N, 1, 1, 1);
    add_on_device(weft_tile(A, 0, 0), weft_tile(B, 0, 0), 1);
    a[2] = 50;
    add_on_device(weft_tile(A, 0, 0), weft_tile(B, 0, 0), 1);
    CHECK(b[2] == 51 && b[0] == 2);

    CHECK(weft_matrix_set_keep_device_copies(A, 1) == 0);
    CHECK(weft_matrix_set_keep_device_copies(B, 1) == 0);
    add_on_device(weft_tile(A, 0, 0), weft_tile(B, 0, 0), 1); /* copies now kept */
    int64_t before = h2d();
    add_on_device(weft_tile(A, 0, 0), weft_tile(B, 0, 0), 1);
    CHECK(h2d() - before == (int64_t)sizeof(double)); /* only `one`, registered */
    CHECK(b[0] == 4 && b[2] == 151);                  /* written back by the wait */
    CHECK(weft_matrix_host_acquire(A, WEFT_RW) == 0);
    CHECK(weft_matrix_host_acquire(A, WEFT_R) == WEFT_ERR_INVALID); /* held already */
    a[1] = -10;
    CHECK(weft_matrix_host_release(A) == 0);
    CHECK(weft_matrix_host_release(A) == WEFT_ERR_INVALID); /* not held any more */
    before = h2d();
    add_on_device(weft_tile(A, 0, 0), weft_tile(B, 0, 0), 1);
    CHECK(h2d() - before == (int64_t)VEC + (int64_t)sizeof(double)); /* a again, b kept */
    CHECK(b[1] == 4 - 10 && b[0] == 5);
    weft_matrix_free(A);
    weft_matrix_free(B);
}

/* Runtime-owned tiles (weft_matrix_new): device copies survive the wait;
 * weft_data_host_ptr is a write access, an acquire for read is not. */
static void runtime_tiles(void)
{
    weft_matrix_t *M = weft_matrix_new(ctx, WEFT_DOUBLE, N, 2, N, 1, 1, 1);
    weft_data_t *a = weft_tile(M, 0, 0), *b = weft_tile(M, 0, 1);
    double *pa = weft_data_host_ptr(a, NULL), *pb = weft_data_host_ptr(b, NULL);
    CHECK(pa && pb);
    for (int i = 0; i < N; i++) pa[i] = 1, pb[i] = 0;
    add_on_device(a, b, 1);
    int64_t before = h2d();
    add_on_device(a, b, 1);
    CHECK(h2d() - before == (int64_t)sizeof(double)); /* a and b stay on the device */
    CHECK(host_value(b, 3) == 2);                     /* brought home to read */
    before = h2d();
    add_on_device(a, b, 1);
    CHECK(h2d() - before == (int64_t)sizeof(double)); /* the read changed nothing */
    pa = weft_data_host_ptr(a, NULL);
    CHECK(pa && pa[0] == 1);
    pa[0] = 1000;
    before = h2d();
    add_on_device(a, b, 1);
    CHECK(h2d() - before == (int64_t)VEC + (int64_t)sizeof(double)); /* a staged again */
    CHECK(host_value(b, 0) == 1003 && host_value(b, 1) == 4);
    /* A write-only acquire: the old contents are not fetched, the new ones go in. */
    double *w = NULL;
    CHECK(weft_data_host_acquire(a, WEFT_W, (void **)&w, NULL) == 0 && w);
    for (int i = 0; i < N; i++) w[i] = 7;
    CHECK(weft_data_host_release(a) == 0);
    add_on_device(a, b, 1);
    CHECK(host_value(b, 0) == 1010 && host_value(b, 2) == 11);
    weft_matrix_free(M);
}

/* Two devices: a is read on both; the user's write reaches both. */
static void two_devices(void)
{
    double a[N] = {1, 1, 1, 1}, b[N] = {0}, c[N] = {0};
    weft_data_t *da = weft_data_register(ctx, WEFT_DOUBLE, a, N, 1, N, 0);
    weft_data_t *db = weft_data_register(ctx, WEFT_DOUBLE, b, N, 1, N, 0);
    weft_data_t *dc = weft_data_register(ctx, WEFT_DOUBLE, c, N, 1, N, 0);
    add_on_device(da, db, 1);
    add_on_device(da, dc, 2);
    a[0] = 100;
    add_on_device(da, db, 1);
    add_on_device(da, dc, 2);
    CHECK(b[0] == 101 && c[0] == 101 && b[1] == 2 && c[1] == 2);
    CHECK(devtest_counters(ctx, 1).tasks >= 2 && devtest_counters(ctx, 2).tasks >= 2);
    weft_data_release(da);
    weft_data_release(db);
    weft_data_release(dc);
}

int main(int argc, char **argv)
{
    ctx = devtest_init(&argc, &argv, 1);
    double unit = 1.0;
    one = weft_data_register(ctx, WEFT_DOUBLE, &unit, 1, 1, 1, 0);
    registered();
    wrapped();
    runtime_tiles();
    if (weft_ndevices(ctx) >= 2) two_devices();
    weft_data_release(one);
    CHECK(weft_fini(ctx) == 0);
    return check_report("device_acquire");
}
