/* check_writes: a body that reads a flow it was given to write only
 * (WEFT_W where WEFT_RW was meant) computes from NaNs on every placement,
 * so the program's own check fails; without it the body read whatever
 * the copy held (the previous version on the host, so the host run was
 * right, and stale bytes on an emu device after an eviction: a stranger's
 * block-sparse program was right on CPUs and wrong on devices). A body
 * that leaves elements of a write-only flow unwritten is warned of.
 *
 * y (owned by the last rank, 6 doubles 1..6) gets "acc" (y += 1 under
 * WEFT_W, the mistake), then on rank 0's side z gets "half" (writes its
 * first 3 elements only) and w gets "full" (writes all 6). On an emu
 * device when the rank has one. Prints "test_check_writes rank R: wait=W
 * y0=Y nan=N" on the last rank, whose y0 is NaN with the parameter and 2
 * without it; "acc" and "half" are warned of (all 6 and 3 elements still
 * hold the NaNs), "full" never. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../check.h"
#include "weft/weft.h"

enum { N = 6 };

static int want_device; /* where the bodies must run: 1 on a rank with an emu device */

/* Each body checks its placement: on the host the emu variants would pass
 * unnoticed. */
static void placed(weft_task_t *t) { CHECK(weft_task_device(t) == want_device); }

static int acc(weft_task_t *t)
{
    placed(t);
    double *y = weft_task_ptr(t, 0);
    for (int i = 0; i < weft_task_rows(t, 0); i++) y[i] += 1; /* reads its WEFT_W flow */
    return 0;
}

static int half(weft_task_t *t)
{
    placed(t);
    double *z = weft_task_ptr(t, 0);
    for (int i = 0; i < weft_task_rows(t, 0) / 2; i++) z[i] = i;
    return 0;
}

static int full(weft_task_t *t)
{
    placed(t);
    double *w = weft_task_ptr(t, 0);
    for (int i = 0; i < weft_task_rows(t, 0); i++) w[i] = i;
    return 0;
}

static const weft_task_class_t acc_cls = {.name = "acc",
                                          .body = {[WEFT_DEV_CPU] = acc, [WEFT_DEV_EMU] = acc}};
static const weft_task_class_t half_cls = {.name = "half",
                                           .body = {[WEFT_DEV_CPU] = half, [WEFT_DEV_EMU] = half}};
static const weft_task_class_t full_cls = {.name = "full",
                                           .body = {[WEFT_DEV_CPU] = full, [WEFT_DEV_EMU] = full}};

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 2;
    int me = weft_rank(ctx), last = weft_nranks(ctx) - 1;
    int hint = weft_ndevices(ctx) > 0 ? 1 : 0;
    want_device = hint;
    double y[N], z[N] = {0}, w[N] = {0};
    for (int i = 0; i < N; i++) y[i] = i + 1;
    weft_data_t *dy = weft_data_register(ctx, WEFT_DOUBLE, me == last ? y : NULL, N, 1, N, last);
    weft_data_t *dz = weft_data_register(ctx, WEFT_DOUBLE, me == 0 ? z : NULL, N, 1, N, 0);
    weft_data_t *dw = weft_data_register(ctx, WEFT_DOUBLE, me == 0 ? w : NULL, N, 1, N, 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "writes");
    CHECK(weft_insert_task(tp, &acc_cls, WEFT_W | WEFT_AFFINITY, dy, WEFT_DEVICE_HINT, hint, 0) ==
          0);
    CHECK(weft_insert_task(tp, &half_cls, WEFT_W | WEFT_AFFINITY, dz, WEFT_DEVICE_HINT, hint, 0) ==
          0);
    CHECK(weft_insert_task(tp, &full_cls, WEFT_W | WEFT_AFFINITY, dw, WEFT_DEVICE_HINT, hint, 0) ==
          0);
    int rc = weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    weft_data_release(dy);
    weft_data_release(dz);
    weft_data_release(dw);
    CHECK(rc == 0);
    CHECK(weft_fini(ctx) == 0);
    if (me == 0) CHECK(z[0] == 0 && z[2] == 2 && w[5] == 5);
    int nan = 0;
    for (int i = 0; i < N; i++) nan += isnan(y[i]) != 0;
    if (me == last)
        printf("test_check_writes rank %d: wait=%d y0=%s nan=%d\n", me, rc,
               isnan(y[0]) ? "NaN"
               : y[0] == 2 ? "2"
                           : "other",
               nan);
    return check_report("test_check_writes");
}
