/* A real stall, in the agreement: rank 0 is busy in code of its own for
 * 2 s before its wait, and rank 1 (watchdog_s=1) must say that it waits
 * for every rank to reach that wait, then finish normally once rank 0
 * arrives: a warning, the run goes on. With watchdog_abort=1 (and
 * argv[1], rank 0's seconds, 6) rank 1 ends the run instead, its lines
 * errors. run_expect.sh checks the report. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "elapsed.h"
#include "weft/weft.h"

static int one(weft_task_t *t)
{
    *(double *)weft_task_ptr(t, 0) = 1.0;
    return 0;
}

static const weft_task_class_t cls = {.name = "one", .body = {[WEFT_DEV_CPU] = one}};

int main(int argc, char **argv)
{
    elapsed_start();
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 2;
    int rank = weft_rank(ctx);
    weft_data_t *d = weft_data_new(ctx, WEFT_DOUBLE, 1, 1, weft_nranks(ctx) - 1);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "late");
    int rc = weft_insert_task(tp, &cls, WEFT_W | WEFT_AFFINITY, d, 0);
    if (rank == 0) sleep(argc > 1 ? (unsigned)atoi(argv[1]) : 2);
    rc |= weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    weft_data_release(d);
    rc |= weft_fini(ctx);
    printf("test_watchdog_late rank %d: %s\n", rank, rc == 0 ? "PASSED" : "FAILED");
    return rc != 0;
}
