/* A starved run: rank 0's producer never finishes in time, so rank 1's
 * receive never comes. The watchdog must name the missing tile (data 0,
 * version 1, from rank 0) and, with watchdog_abort, end the run with a
 * non-zero exit instead of hanging. The ctest wrapper checks both. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "weft/weft.h"

static int slow(weft_task_t *t)
{
    sleep(30);
    return 0;
}

static int nop(weft_task_t *t) { return 0; }

static const weft_task_class_t slow_cls = {.name = "slow", .body = {[WEFT_DEV_CPU] = slow}};
static const weft_task_class_t read_cls = {.name = "read", .body = {[WEFT_DEV_CPU] = nop}};

int main(int argc, char **argv)
{
    /* Rank 1 fires first so that its report is out before any abort. */
    const char *r = getenv("OMPI_COMM_WORLD_RANK");
    if (!r) r = getenv("PMIX_RANK");
    setenv("WEFT_WATCHDOG_S", r && atoi(r) == 1 ? "2" : "8", 1);
    setenv("WEFT_WATCHDOG_ABORT", "1", 1);
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx || weft_nranks(ctx) != 2) return 1;
    weft_data_t *x = weft_data_new(ctx, WEFT_DOUBLE, 64, 64, 0);
    weft_data_t *y = weft_data_new(ctx, WEFT_DOUBLE, 64, 64, 1);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "starved");
    int rc = weft_insert_task(tp, &slow_cls, WEFT_W | WEFT_AFFINITY, x, 0);
    rc |= weft_insert_task(tp, &read_cls, WEFT_R, x, WEFT_W | WEFT_AFFINITY, y, 0);
    rc |= weft_taskpool_wait(tp);
    printf("test_watchdog: the run was not stopped (rc %d)\n", rc);
    return 1;
}
