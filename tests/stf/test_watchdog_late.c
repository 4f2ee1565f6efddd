/* A real stall, in the agreement: rank 0 is busy in code of its own for
 * 2 s before its wait, and rank 1 (watchdog_s=1) must say that it waits
 * for every rank to reach that wait, then finish normally once rank 0
 * arrives: a warning, the run goes on. With watchdog_abort=1 (and
 * argv[1], rank 0's seconds, 6) rank 1 ends the run instead, its lines
 * errors. With argv[1] "body" the stall is after the tasks: rank 1's task
 * computes 3 s, rank 0 (nothing to run) waits in the wait's collectives
 * after its tasks, and must say so too (it sat there silent). run_expect.sh
 * checks the report. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elapsed.h"
#include "weft/weft.h"

static int one(weft_task_t *t)
{
    *(double *)weft_task_ptr(t, 0) = 1.0;
    return 0;
}

static int slow_one(weft_task_t *t)
{
    sleep(3);
    return one(t);
}

static const weft_task_class_t cls = {.name = "one", .body = {[WEFT_DEV_CPU] = one}};
static const weft_task_class_t slow = {.name = "slow", .body = {[WEFT_DEV_CPU] = slow_one}};

int main(int argc, char **argv)
{
    elapsed_start();
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 2;
    int rank = weft_rank(ctx);
    weft_data_t *d = weft_data_new(ctx, WEFT_DOUBLE, 1, 1, weft_nranks(ctx) - 1);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "late");
    int body = argc > 1 && strcmp(argv[1], "body") == 0;
    int rc = weft_insert_task(tp, body ? &slow : &cls, WEFT_W | WEFT_AFFINITY, d, 0);
    if (rank == 0 && !body) sleep(argc > 1 ? (unsigned)atoi(argv[1]) : 2);
    rc |= weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    weft_data_release(d);
    rc |= weft_fini(ctx);
    printf("test_watchdog_late rank %d: %s\n", rank, rc == 0 ? "PASSED" : "FAILED");
    return rc != 0;
}
