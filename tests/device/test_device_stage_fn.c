/* Custom stage-in/stage-out functions: the host keeps a tile row-major
 * (rows x cols, element (i,j) at i*cols + j); the stage-in function
 * transposes it into the device's column-major copy, the stage-out function
 * transposes it back. A device task doubles every element. The host copy
 * must end up doubled, still row-major, and both functions must have run.
 *
 * --misuse: the stage-in function calls weft_taskpool_wait, which belongs
 * to the main thread (from a device's thread it would deadlock): the call
 * must be refused, the copy and its task fail, and the wait returns the
 * error instead of hanging.
 *
 * --fails: the stage-out function returns -7: the wait fails, and the log
 * names the function, the data and the value (it said only "a task body
 * failed", about a copy no task body made). */
#include <stdio.h>
#include <string.h>

#include "devtest.h"

enum { ROWS = 37, COLS = 23 };

static int calls_in, calls_out, refused_in, out_fails;

static int to_device(const weft_stage_t *s, void *arg)
{
    if (arg != NULL) /* --misuse: arg is the taskpool */
        refused_in += weft_taskpool_wait((weft_taskpool_t *)arg) != WEFT_SUCCESS;
    const double *src = s->src;
    double *dst = s->dst;
    for (int i = 0; i < s->rows; i++)
        for (int j = 0; j < s->cols; j++) dst[i + j * s->dst_ld] = src[i * s->cols + j];
    calls_in++;
    return s->stream == NULL ? 0 : -1; /* emu: no stream to enqueue on */
}

static int to_host(const weft_stage_t *s, void *arg)
{
    const double *src = s->src;
    double *dst = s->dst;
    for (int i = 0; i < s->rows; i++)
        for (int j = 0; j < s->cols; j++) dst[i * s->cols + j] = src[i + j * s->src_ld];
    calls_out++;
    return out_fails ? -7 : 0;
}

/* --misuse: the wait must fail (the copy failed), the stage function's
 * own wait must have been refused, and the host copy must be untouched. */
static int misuse(weft_context_t *ctx, double *host)
{
    weft_data_t *d = weft_data_register(ctx, WEFT_DOUBLE, host, ROWS, COLS, ROWS, 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "stage-misuse");
    int bad = d == NULL || tp == NULL;
    bad |= weft_data_set_stage(d, to_device, to_host, tp) != 0;
    bad |= weft_data_set_device(d, 1) != 0;
    bad |= weft_insert_task(tp, &devtest_twice_dev, WEFT_RW | WEFT_AFFINITY, d, 0) != 0;
    int wrc = weft_taskpool_wait(tp);
    bad |= wrc == WEFT_SUCCESS || refused_in != 1;
    for (int k = 0; !bad && k < ROWS * COLS; k++) bad = host[k] != k;
    weft_taskpool_free(tp);
    weft_data_release(d);
    weft_fini(ctx); /* reports the failed taskpool again */
    printf("test_device_stage_fn --misuse: wait %s, the stage function's wait %s: %s\n",
           weft_strerror(wrc), refused_in == 1 ? "refused" : "not refused",
           bad ? "FAILED" : "PASSED");
    return bad;
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 1;
    if (weft_ndevices(ctx) < 1) {
        printf("test_device_stage_fn: needs an emu device (WEFT_DEVICE_EMU_ENABLED=1)\n");
        weft_fini(ctx);
        return 1;
    }
    static double host[ROWS * COLS];
    for (int k = 0; k < ROWS * COLS; k++) host[k] = k;
    if (argc > 1 && strcmp(argv[1], "--misuse") == 0) return misuse(ctx, host);
    out_fails = argc > 1 && strcmp(argv[1], "--fails") == 0;
    /* Registered as ROWS x COLS; the functions know its real layout. */
    weft_data_t *d = weft_data_register(ctx, WEFT_DOUBLE, host, ROWS, COLS, ROWS, 0);
    int rc = d ? 0 : 1;
    rc |= weft_data_set_stage(d, to_device, to_host, NULL);
    rc |= weft_data_set_device(d, 1);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "stage-fn");
    rc |= weft_insert_task(tp, &devtest_twice_dev, WEFT_RW | WEFT_AFFINITY, d, 0);
    rc |= weft_insert_task(tp, &devtest_twice_dev, WEFT_RW | WEFT_AFFINITY, d, 0);
    rc |= weft_taskpool_wait(tp);
    const double *h = weft_data_host_ptr(d, NULL);
    int bad = out_fails ? rc == 0 || h != NULL : rc != 0 || h != host;
    for (int k = 0; !bad && !out_fails && k < ROWS * COLS; k++) bad = host[k] != 4.0 * k;
    weft_taskpool_free(tp);
    weft_data_release(d);
    bad |= (weft_fini(ctx) != 0) != out_fails;
    bad |= calls_in < 1 || calls_out < 1;
    printf("test_device_stage_fn: stage-in %d, stage-out %d calls: %s\n", calls_in, calls_out,
           bad ? "FAILED" : "PASSED");
    return bad;
}
