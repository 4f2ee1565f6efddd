/* Batches of small tasks on a device (emulated, or a GPU with the CUDA
 * bodies). A gate task on the host makes T independent tasks ready at once
 * (each adds its own value times a shared tile G to its own tile Y on
 * device 1); the device manager then
 * launches them through the class's batch body, several a call. Checked:
 * every Y is right, each task ran once, the batch body saw batches of 2 to
 * device_batch tasks whose total is the device's batched_tasks counter,
 * and batched_tasks > batches. With batching off (device_batch=1, or tiles
 * above device_batch_elems: the environment of the test variant) no batch
 * forms and the results are the same. Last, a batch body that fails makes
 * the taskpool fail, without hanging or crashing: every task of the failed
 * batches fails, the task reading each of their tiles afterwards is
 * cancelled, and the tiles keep their last good values
 * (docs/SEMANTICS.md section 3). */
#include <time.h>

#include "devtest.h"

#define NB 32
#define T 48

static atomic_int batch_calls, batch_tasks, batch_max, ran[T];

/* flow 0: G (R), flow 1: Y (RW); value 0: double a, value 1: int id.
 * Y += a G. */
static int axpy_body(weft_task_t *t)
{
    double a;
    int id;
    weft_task_value(t, 0, &a);
    weft_task_value(t, 1, &id);
    const double *g = weft_task_ptr(t, 0);
    double *y = weft_task_ptr(t, 1);
    int64_t ldg = weft_task_ld(t, 0), ldy = weft_task_ld(t, 1);
    for (int j = 0; j < weft_task_cols(t, 1); j++)
        for (int i = 0; i < weft_task_rows(t, 1); i++) y[i + j * ldy] += a * g[i + j * ldg];
    if (id >= 0 && id < T) atomic_fetch_add(&ran[id], 1);
    return 0;
}

/* The batch bodies: note the batch, then run each task with `one`. */
static int batch_of(weft_task_t *const *ts, int n, int (*one)(weft_task_t *))
{
    atomic_fetch_add(&batch_calls, 1);
    atomic_fetch_add(&batch_tasks, n);
    int seen = atomic_load(&batch_max);
    while (n > seen && !atomic_compare_exchange_weak(&batch_max, &seen, n)) {
    }
    for (int i = 0; i < n; i++) {
        if (weft_task_stream(ts[i]) != weft_task_stream(ts[0])) return -1; /* one stream */
        if (one(ts[i]) != 0) return -1;
    }
    return 0;
}

static int axpy_batch(weft_task_t *const *ts, int n) { return batch_of(ts, n, axpy_body); }

#ifdef WEFT_TEST_CUDA
/* The same on a GPU: Y = Y + a G with cuBLAS (geam, in place on Y). */
static int axpy_cuda(weft_task_t *t)
{
    double a, one = 1.0;
    int id;
    weft_task_value(t, 0, &a);
    weft_task_value(t, 1, &id);
    if (id >= 0 && id < T) atomic_fetch_add(&ran[id], 1);
    double *y = weft_task_ptr(t, 1);
    int ldy = (int)weft_task_ld(t, 1);
    return devtest_ok(cublasDgeam(devtest_blas(t), CUBLAS_OP_N, CUBLAS_OP_N, weft_task_rows(t, 1),
                                  weft_task_cols(t, 1), &one, y, ldy, &a, weft_task_ptr(t, 0),
                                  (int)weft_task_ld(t, 0), y, ldy));
}

static int axpy_batch_cuda(weft_task_t *const *ts, int n) { return batch_of(ts, n, axpy_cuda); }
#endif

static int failing_batch(weft_task_t *const *ts, int n)
{
    (void)ts;
    (void)n;
    return -1;
}

/* flow 0: Y (R) on the host, after the axpy on Y: counts the tiles whose
 * last axpy succeeded. */
static atomic_int after_ran;
static int after_body(weft_task_t *t)
{
    (void)t;
    atomic_fetch_add(&after_ran, 1);
    return 0;
}
static const weft_task_class_t after = {.name = "after", .body = {[WEFT_DEV_CPU] = after_body}};

/* flow 0: G (W) on the host, after a pause: the tasks reading G become
 * ready together when it ends. */
static int gate_body(weft_task_t *t)
{
    double *g = weft_task_ptr(t, 0);
    int64_t ld = weft_task_ld(t, 0);
    for (int j = 0; j < NB; j++)
        for (int i = 0; i < NB; i++) g[i + j * ld] = 1.0 + i + 0.5 * j;
    nanosleep(&(struct timespec){.tv_nsec = 50 * 1000 * 1000}, NULL);
    return 0;
}

static const weft_task_class_t gate = {.name = "gate", .body = {[WEFT_DEV_CPU] = gate_body}};
static const weft_task_class_t axpy = {
    .name = "axpy",
    .body = {[WEFT_DEV_EMU] = axpy_body, [WEFT_DEV_CUDA] = DEVTEST_CUDA_BODY(axpy_cuda)},
    .batch = {[WEFT_DEV_EMU] = axpy_batch, [WEFT_DEV_CUDA] = DEVTEST_CUDA_BODY(axpy_batch_cuda)}};
static const weft_task_class_t axpy_fail = {
    .name = "axpy_fail",
    .body = {[WEFT_DEV_EMU] = axpy_body, [WEFT_DEV_CUDA] = DEVTEST_CUDA_BODY(axpy_cuda)},
    .batch = {[WEFT_DEV_EMU] = failing_batch, [WEFT_DEV_CUDA] = failing_batch}};

/* The gate, then T tasks of cls on device 1 reading G: 0 or the first error. */
static int run(weft_context_t *ctx, const weft_task_class_t *cls, weft_data_t *g, weft_data_t **y)
{
    weft_taskpool_t *tp = weft_taskpool_new(ctx, cls->name);
    int rc = weft_insert_task(tp, &gate, WEFT_W, g, 0);
    for (int i = 0; i < T && rc == 0; i++) {
        double a = 1.0 + i;
        rc = weft_insert_task(tp, cls, WEFT_R, g, WEFT_RW | WEFT_AFFINITY, y[i], WEFT_VALUE, &a,
                              sizeof a, WEFT_VALUE, &i, sizeof i, 0);
        if (rc == 0 && cls == &axpy_fail) rc = weft_insert_task(tp, &after, WEFT_R, y[i], 0);
    }
    int wrc = weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    return rc != 0 ? rc : wrc;
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = devtest_init(&argc, &argv, 1);
    int64_t bmax = 0, belems = 0;
    CHECK(weft_param_get_int(ctx, "device_batch", &bmax) == 0);
    CHECK(weft_param_get_int(ctx, "device_batch_elems", &belems) == 0);
    int batching = bmax > 1 && belems >= NB * NB;
    static double gmem[NB * NB], ymem[T][NB * NB];
    weft_data_t *g = weft_data_register(ctx, WEFT_DOUBLE, gmem, NB, NB, NB, 0), *y[T];
    for (int i = 0; i < T; i++) {
        y[i] = weft_data_register(ctx, WEFT_DOUBLE, ymem[i], NB, NB, NB, 0);
        CHECK(y[i] != NULL && weft_data_set_device(y[i], 1) == 0);
    }
    CHECK(run(ctx, &axpy, g, y) == 0);
    weft_device_counters_t c = devtest_counters(ctx, 1);
    int wrong = 0, runs = 0;
    for (int k = 0; k < T; k++) {
        runs += atomic_load(&ran[k]) == 1;
        for (int j = 0; j < NB; j++)
            for (int i = 0; i < NB; i++)
                wrong += ymem[k][i + j * NB] != (1.0 + k) * (1.0 + i + 0.5 * j);
    }
    CHECK(wrong == 0 && runs == T);
    CHECK(c.tasks == T);
    if (batching) {
        CHECK(c.batches >= 1 && c.batched_tasks > c.batches);
        CHECK(atomic_load(&batch_max) >= 2 && atomic_load(&batch_max) <= bmax);
        CHECK(atomic_load(&batch_tasks) == c.batched_tasks);
    } else {
        CHECK(c.batches == 0 && c.batched_tasks == 0 && atomic_load(&batch_calls) == 0);
    }
    printf("batching %s: %lld tasks, %lld batches of %lld tasks, largest %d\n",
           batching ? "on" : "off", (long long)c.tasks, (long long)c.batches,
           (long long)c.batched_tasks, atomic_load(&batch_max));
    /* A failing batch body fails the taskpool (only when batches form). */
    int frc = run(ctx, &axpy_fail, g, y);
    CHECK(batching ? frc == WEFT_ERR_TASK : frc == 0);
    weft_stats_t st;
    CHECK(weft_stats_get(ctx, &st) == 0);
    int failed = (int)st.tasks_failed, cancelled = (int)st.tasks_cancelled;
    int kept = 0, added = 0;
    for (int k = 0; k < T; k++) {
        double want1 = (1.0 + k) * 1.0, got = ymem[k][0];
        kept += got == want1;
        added += got == 2.0 * want1;
    }
    /* Each task failed with its batch or ran alone and added once more. */
    CHECK(batching ? failed >= 2 : failed == 0);
    CHECK(cancelled == failed && atomic_load(&after_ran) == T - failed);
    CHECK(kept == failed && added == T - failed);
    printf("failing batch body: taskpool returned %d, %d tasks failed, %d cancelled, %d tiles "
           "kept their last good value\n",
           frc, failed, cancelled, kept);
    weft_data_release(g);
    for (int i = 0; i < T; i++) weft_data_release(y[i]);
    int rc = weft_fini(ctx); /* the first error seen: the failed batch's */
    CHECK(batching ? rc < 0 : rc == 0);
    return check_report("device_batch");
}
