/* A registered data released before the wait of the taskpool whose task
 * on it fails (weft_data_release is deferred while tasks use the data):
 * its memory still gets the newest good version, as a live data's does
 * (docs/SEMANTICS.md section 3). x (rank 0's) gets +1 on rank 0, +1 on
 * the last rank, then a body on rank 0 that writes 999 and fails; the
 * program releases x, then waits. On 2 ranks the good version 2 is on rank
 * 1 and comes home; on one rank with an emu device (the tasks run there)
 * the host copy holds the good version 0. Before, the release left x out
 * of the wait's recovery: x came out 999, the failed body's bytes, without
 * a word. Usage: test_fail_released WANT. */
#include <stdlib.h>

#include "../check.h"
#include "weft/weft.h"

static int add(weft_task_t *t)
{
    int v;
    if (weft_task_value_get(t, 0, &v, sizeof v) != 0) return -1;
    double *x = weft_task_ptr(t, 0);
    for (int i = 0; i < weft_task_rows(t, 0); i++) x[i] = v < 0 ? 999.0 : x[i] + v;
    return v < 0 ? 3 : 0;
}

static const weft_task_class_t add_class = {.name = "add",
                                            .body = {[WEFT_DEV_CPU] = add, [WEFT_DEV_EMU] = add}};

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL && argc == 2);
    int me = weft_rank(ctx), last = weft_nranks(ctx) - 1, dev = weft_ndevices(ctx) > 0;
    double want = atof(argv[1]);
    static double x[4];
    weft_data_t *d = weft_data_register(ctx, WEFT_DOUBLE, me == 0 ? x : NULL, 4, 1, 4, 0);
    REQUIRE(d != NULL);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "released");
    const int step[3] = {1, 1, -1}, rank[3] = {0, last, 0};
    for (int k = 0; k < 3; k++)
        CHECK(weft_insert_task(tp, &add_class, WEFT_RW, d, WEFT_VALUE, &step[k], sizeof step[k],
                               WEFT_ON_RANK, rank[k], WEFT_DEVICE_HINT, dev, 0) == 0);
    weft_data_release(d);
    CHECK(weft_taskpool_wait(tp) == WEFT_ERR_TASK);
    if (me == 0)
        for (int i = 0; i < 4; i++) CHECK(x[i] == want);
    weft_taskpool_free(tp);
    CHECK(weft_fini(ctx) == WEFT_ERR_TASK);
    return check_report("test_fail_released");
}
