/* A reduction into a data with stage functions: the partial results move
 * by the data's stage functions as the data does. Here a device holds a
 * double as twice its host value (stage_in doubles, stage_out halves), so
 * a device body adds 2c where a host body adds c. X starts at 100 on rank
 * 0; eight WEFT_REDUX tasks add 1..8, on ranks k % R, on the emu device
 * (argument "device") or alternately on host and device ("mixed"): X ends
 * at 136 either way. The partials ignored the stage functions: a device's
 * partial was made and folded in the device layout (172 or 154, no error).
 * Rank 0 prints X. */
#include <stdio.h>
#include <string.h>

#include "weft/weft.h"
#include "weft/weft_device.h"

static void scale(const weft_stage_t *s, double f)
{
    for (int j = 0; j < s->cols; j++)
        for (int i = 0; i < s->rows; i++)
            ((double *)s->dst)[i + j * s->dst_ld] = f * ((const double *)s->src)[i + j * s->src_ld];
}
static int to_device(const weft_stage_t *s, void *arg) { return (void)arg, scale(s, 2.0), 0; }
static int to_host(const weft_stage_t *s, void *arg) { return (void)arg, scale(s, 0.5), 0; }

static int zero(weft_task_t *t) { return *(double *)weft_task_ptr(t, 0) = 0, 0; }
static int fold(weft_task_t *t)
{
    *(double *)weft_task_ptr(t, 0) += *(double *)weft_task_ptr(t, 1);
    return 0;
}
static int add_by(weft_task_t *t, double f)
{
    double c = 0;
    if (weft_task_value_get(t, 0, &c, sizeof c) != WEFT_SUCCESS) return -1;
    *(double *)weft_task_ptr(t, 0) += f * c;
    return 0;
}
static int add_host(weft_task_t *t) { return add_by(t, 1.0); }
static int add_device(weft_task_t *t) { return add_by(t, 2.0); } /* the device layout */

static const weft_task_class_t zero_class = {
    .name = "zero", .body = {[WEFT_DEV_CPU] = zero, [WEFT_DEV_EMU] = zero}};
static const weft_task_class_t fold_class = {.name = "fold", .body = {[WEFT_DEV_CPU] = fold}};
static const weft_task_class_t add_class = {
    .name = "add", .body = {[WEFT_DEV_CPU] = add_host, [WEFT_DEV_EMU] = add_device}};

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx || argc < 2) return 1;
    int mixed = strcmp(argv[1], "mixed") == 0, R = weft_nranks(ctx);
    double x = 100;
    weft_data_t *d = weft_data_register(ctx, WEFT_DOUBLE, &x, 1, 1, 1, 0);
    int rc = d ? weft_data_set_stage(d, to_device, to_host, NULL) : WEFT_ERR_NOMEM;
    if (rc == WEFT_SUCCESS) rc = weft_data_set_reduction(d, &zero_class, &fold_class);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "staged_redux");
    for (int k = 1; k <= 8 && rc == WEFT_SUCCESS; k++) {
        double c = k;
        int dev = mixed ? k % 2 : 1;
        rc = weft_insert_task(tp, &add_class, WEFT_REDUX, d, WEFT_VALUE, &c, sizeof c, WEFT_ON_RANK,
                              k % R, WEFT_DEVICE_HINT, dev, 0);
    }
    int w = weft_taskpool_wait(tp);
    int ok = rc == WEFT_SUCCESS && w == WEFT_SUCCESS && (weft_rank(ctx) != 0 || x == 136);
    if (weft_rank(ctx) == 0)
        printf("test_redux_stage %s: wait %d, x = %g (136 expected): %s\n", argv[1], w, x,
               ok ? "PASSED" : "FAILED");
    weft_taskpool_free(tp);
    weft_data_release(d);
    return (weft_fini(ctx) != WEFT_SUCCESS) || !ok;
}
