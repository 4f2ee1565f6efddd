/* A receive that fails leaves its copy usable by the next receive of the
 * same data in the same taskpool. Rank 0 writes x twice; rank 1 adds the
 * first version to y and the second to z. Run with a fault that fails the
 * first receive on rank 1 (comm_post:1@1, or device_copy on an emu device
 * with argv[2] "dev"): the first add is cancelled, the second receive lands
 * in the copy the failed one was using and z = 2. The copy was left
 * arriving for good, and the second receive waited for it for ever. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "weft/weft.h"

static int set_body(weft_task_t *t)
{
    double v;
    weft_task_value(t, 0, &v);
    double *x = weft_task_ptr(t, 0);
    for (int i = 0; i < weft_task_rows(t, 0); i++) x[i] = v;
    return 0;
}

static int add_body(weft_task_t *t)
{
    const double *x = weft_task_ptr(t, 0);
    double *y = weft_task_ptr(t, 1);
    for (int i = 0; i < weft_task_rows(t, 0); i++) y[i] += x[i];
    return 0;
}

static const weft_task_class_t set_cls = {.name = "set", .body = {[WEFT_DEV_CPU] = set_body}};
static const weft_task_class_t add_cls = {.name = "add", .body = {[WEFT_DEV_CPU] = add_body}};

static int set(weft_taskpool_t *tp, weft_data_t *x, double v)
{
    return weft_insert_task(tp, &set_cls, WEFT_W | WEFT_AFFINITY, x, WEFT_VALUE, &v, sizeof v, 0);
}

static int add(weft_taskpool_t *tp, weft_data_t *x, weft_data_t *y)
{
    return weft_insert_task(tp, &add_cls, WEFT_R, x, WEFT_RW | WEFT_AFFINITY, y, 0);
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx || weft_nranks(ctx) != 2 || argc < 2) return 1;
    int rank = weft_rank(ctx), rows = atoi(argv[1]);
    weft_data_t *x = weft_data_new(ctx, WEFT_DOUBLE, rows, 1, 0);
    weft_data_t *y = weft_data_new(ctx, WEFT_DOUBLE, rows, 1, 1);
    weft_data_t *z = weft_data_new(ctx, WEFT_DOUBLE, rows, 1, 1);
    if (argc > 2 && strcmp(argv[2], "dev") == 0) {
        CHECK(weft_data_set_device(x, 1) == 0);
        CHECK(weft_data_set_device(y, 1) == 0);
        CHECK(weft_data_set_device(z, 1) == 0);
    }
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "again");
    CHECK(set(tp, y, 0) == 0 && set(tp, z, 0) == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    CHECK(set(tp, x, 5) == 0 && add(tp, x, y) == 0);
    CHECK(set(tp, x, 2) == 0 && add(tp, x, z) == 0);
    int w = weft_taskpool_wait(tp);
    CHECK(w == WEFT_ERR_TASK);
    if (rank == 1) {
        const double *py = weft_data_host_ptr(y, NULL), *pz = weft_data_host_ptr(z, NULL);
        CHECK(py && py[0] == 0 && py[rows - 1] == 0);
        CHECK(pz && pz[0] == 2 && pz[rows - 1] == 2);
    }
    weft_taskpool_free(tp);
    weft_data_release(x);
    weft_data_release(y);
    weft_data_release(z);
    CHECK(weft_fini(ctx) == WEFT_ERR_TASK);
    printf("test_recv_again rank %d: %d checks, %d failed: %s\n", rank, checks, failures,
           failures ? "FAILED" : "PASSED");
    return failures != 0;
}
