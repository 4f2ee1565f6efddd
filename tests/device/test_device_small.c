/* A device too small for the tiles of one task (issue 13, item 10): the
 * emu device of this test holds 57.5 KiB (90 % of device_emu_memory=64K)
 * and each task reads one 32 KiB tile and updates another, 64 KiB in all,
 * though each tile alone would fit. Such a task can never run there, so
 * the run fails at once, every task of it through the task-failure path
 * (weft_taskpool_wait returns the error), within a second, where it took
 * 2 s a task before; the error names the task, the bytes it needs and the
 * zone's capacity (checked by the test's regular expression). The body is
 * an accelerator body only: the host cannot run the task instead.
 * The same tasks of a class that also has a CPU body run on the host, with
 * one warning, and the wait returns 0: they used to be placed on the device
 * by weft itself (tiles without a home device go where they should finish
 * first, and with a home device by WEFT_AFFINITY) and then failed with
 * WEFT_ERR_DEVMEM although the host could run them. */
#include <time.h>

#include "devtest.h"

enum { NB = 64, NTASKS = 8 };

static atomic_int bodies_run;

static int add_body(weft_task_t *t)
{
    atomic_fetch_add(&bodies_run, 1);
    const double *a = weft_task_ptr(t, 0);
    double *b = weft_task_ptr(t, 1);
    for (int i = 0; i < NB * NB; i++) b[i] += a[i];
    return 0;
}

static const weft_task_class_t add_dev = {.name = "add_dev", .body = {[WEFT_DEV_EMU] = add_body}};
static const weft_task_class_t add_any = {
    .name = "add_any", .body = {[WEFT_DEV_CPU] = add_body, [WEFT_DEV_EMU] = add_body}};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = devtest_init(&argc, &argv, 1);
    weft_device_counters_t c;
    CHECK(weft_device_counters_get(ctx, 1, &c) == WEFT_SUCCESS);
    CHECK(c.mem_capacity == 58880); /* 65536 * 90 / 100 rounded down to 256 */
    static double a[NTASKS][NB * NB], b[NTASKS][NB * NB];
    weft_data_t *da[NTASKS], *db[NTASKS];
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "small");
    double t0 = now_s();
    for (int k = 0; k < NTASKS; k++) {
        da[k] = weft_data_register(ctx, WEFT_DOUBLE, a[k], NB, NB, NB, 0);
        db[k] = weft_data_register(ctx, WEFT_DOUBLE, b[k], NB, NB, NB, 0);
        CHECK(weft_insert_task(tp, &add_dev, WEFT_R, da[k], WEFT_RW, db[k], 0) == WEFT_SUCCESS);
    }
    int rc = weft_taskpool_wait(tp);
    double elapsed = now_s() - t0;
    printf("wait returned %d (%s) after %.3f s\n", rc, weft_strerror(rc), elapsed);
    CHECK(rc == WEFT_ERR_TASK);
    CHECK(elapsed < 1.0);
    CHECK(atomic_load(&bodies_run) == 0);
    weft_taskpool_free(tp);
    for (int k = 0; k < NTASKS; k++) {
        weft_data_release(da[k]);
        weft_data_release(db[k]);
    }
    /* With a host body: run there, tile (k) homed on the device or not. */
    tp = weft_taskpool_new(ctx, "small, host body");
    capture_begin();
    for (int k = 0; k < NTASKS; k++) {
        for (int i = 0; i < NB * NB; i++) a[k][i] = k, b[k][i] = 1;
        da[k] = weft_data_register(ctx, WEFT_DOUBLE, a[k], NB, NB, NB, 0);
        db[k] = weft_data_register(ctx, WEFT_DOUBLE, b[k], NB, NB, NB, 0);
        if (k % 2) CHECK(weft_data_set_device(db[k], 1) == WEFT_SUCCESS);
        CHECK(weft_insert_task(tp, &add_any, WEFT_R, da[k], WEFT_RW | WEFT_AFFINITY, db[k], 0) ==
              WEFT_SUCCESS);
    }
    rc = weft_taskpool_wait(tp);
    const char *text = capture_end();
    CHECK(rc == WEFT_SUCCESS);
    CHECK(strstr(text, "than the zone of emu1 holds even when empty: it and such tasks run on "
                       "the host instead") != NULL);
    CHECK(strstr(text, "can never run there") == NULL);
    CHECK(atomic_load(&bodies_run) == NTASKS);
    for (int k = 0; k < NTASKS; k++) CHECK(b[k][0] == k + 1 && b[k][NB * NB - 1] == k + 1);
    weft_taskpool_free(tp);
    for (int k = 0; k < NTASKS; k++) {
        weft_data_release(da[k]);
        weft_data_release(db[k]);
    }
    int frc = weft_fini(ctx);
    (void)frc; /* the run failed: fini reports that error again */
    return check_report("device_small");
}
