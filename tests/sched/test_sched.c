/* Scheduler: every task runs exactly once, and with one worker the ready
 * tasks run in priority order (a first task holds the only worker until
 * all others are queued, so the order is the queue's, not the insertion's). */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "weft/weft.h"

#define NTASKS 20000

static atomic_int gate;
static atomic_int order_pos;
static int order[NTASKS];
static atomic_int runs[NTASKS];

static int hold(weft_task_t *t)
{
    while (!atomic_load(&gate)) {
    }
    return 0;
}

static int record(weft_task_t *t)
{
    int id;
    weft_task_value(t, 0, &id);
    atomic_fetch_add(&runs[id], 1);
    order[atomic_fetch_add(&order_pos, 1)] = id;
    return 0;
}

static const weft_task_class_t hold_cls = {.name = "hold", .body = {[WEFT_DEV_CPU] = hold}};
static const weft_task_class_t rec_cls = {.name = "record", .body = {[WEFT_DEV_CPU] = record}};

static int prio_of(int id) { return (id * 7919) % 101 - 50; }

static int run(weft_context_t *ctx, int check_order)
{
    atomic_store(&gate, 0);
    atomic_store(&order_pos, 0);
    for (int i = 0; i < NTASKS; i++) atomic_store(&runs[i], 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "sched");
    for (int w = 0; w < weft_ncores(ctx); w++)
        if (weft_insert_task(tp, &hold_cls, WEFT_PRIORITY, 1000, 0) != 0) return 1;
    for (int i = 0; i < NTASKS; i++)
        if (weft_insert_task(tp, &rec_cls, WEFT_VALUE, &i, sizeof i, WEFT_PRIORITY, prio_of(i), 0))
            return 1;
    atomic_store(&gate, 1);
    if (weft_taskpool_wait(tp) != 0) return 1;
    int64_t nrun = weft_taskpool_ntasks_run(tp);
    weft_taskpool_free(tp);
    int bad = nrun != NTASKS + weft_ncores(ctx);
    for (int i = 0; i < NTASKS; i++)
        if (atomic_load(&runs[i]) != 1) {
            fprintf(stderr, "task %d ran %d times\n", i, atomic_load(&runs[i]));
            bad = 1;
        }
    for (int k = 1; check_order && k < NTASKS; k++)
        if (prio_of(order[k]) > prio_of(order[k - 1])) {
            fprintf(stderr, "position %d: priority %d ran after %d\n", k, prio_of(order[k]),
                    prio_of(order[k - 1]));
            bad = 1;
            break;
        }
    return bad;
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 1;
    int one = weft_ncores(ctx) == 1;
    int bad = run(ctx, one);
    bad |= weft_fini(ctx) != 0;
    printf("test_sched: %d tasks, each once%s: %s\n", NTASKS, one ? ", in priority order" : "",
           bad ? "FAILED" : "PASSED");
    return bad;
}
