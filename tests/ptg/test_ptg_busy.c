/* A graph's tasks are ordered among themselves only (docs/PTG.md): a data
 * a graph uses is busy until its taskpool's wait, as a data inserted
 * tasks use. argv[1] names the case:
 *
 *   after    a graph writes X (ptg_one_data, ptg_one_task.h) (slowly) in taskpool g; then a task
 * inserted into another taskpool adds 1 to X: refused, naming g (it ran beside the graph's write,
 * which overwrote its result); after g's wait the same insertion runs, in order: X = 8. before   a
 * task inserted into taskpool s uses X; then a graph using X into g: refused on every rank, naming
 * s; after s's wait the graph runs: X = 7. acquire  a graph writes X; weft_data_host_acquire of X
 * before g's wait is refused, naming g (it read X while the graph wrote it). redux    tasks
 * inserted into s add 1 to X as WEFT_REDUX contributions, one a rank in turn; then a graph
 * using X into g: refused on every rank, naming s (it was accepted: the contributions wait for
 * their combination outside the tasks' record, the graph read X before it and the combination
 * was lost; on 2 ranks the ranks fell out of step); after s's wait X = 4, then the graph: X = 7.
 *
 * X is ptg_one_task.h's ptg_one_data, the graph its one task (class set).
 * Each rank prints "test_ptg_busy rank R: <case> ok" or what went wrong. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <weft/ptg.h>
#include <weft/weft.h>

#include "../stf/redux_classes.h"
#include "ptg_one_task.h"

static int body_set(weft_task_t *t)
{
    nanosleep(&(struct timespec){0, 100 * 1000000L}, NULL);
    double *x = weft_task_ptr(t, 0);
    x[0] = 7;
    return 0;
}

static int body_inc(weft_task_t *t)
{
    double *x = weft_task_ptr(t, 0);
    x[0] += 1;
    return 0;
}

static const weft_task_class_t set_class = {.name = "set", .body = {[WEFT_DEV_CPU] = body_set}};
static const weft_task_class_t inc_class = {.name = "inc", .body = {[WEFT_DEV_CPU] = body_inc}};

static const weft_ptg_class_t cls = PTG_ONE_CLASS(set_class);
static const weft_ptg_t graph = {&cls, 1, NULL};

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 1;
    int me = weft_rank(ctx), bad = 0;
    const char *c = argc > 1 ? argv[1] : "after";
    static double mem[1] = {1};
    ptg_one_data = weft_data_register(ctx, WEFT_DOUBLE, me == 0 ? mem : NULL, 1, 1, 1, 0);
    weft_taskpool_t *g = weft_taskpool_new(ctx, "g"), *s = weft_taskpool_new(ctx, "s");
    if (strcmp(c, "after") == 0) {
        bad |= weft_ptg_insert(g, &graph) != 0;
        bad |= weft_insert_task(s, &inc_class, WEFT_RW, ptg_one_data, 0) != WEFT_ERR_INVALID;
        bad |= weft_taskpool_wait(s) != 0 || weft_taskpool_wait(g) != 0;
        bad |= weft_insert_task(s, &inc_class, WEFT_RW, ptg_one_data, 0) != 0 ||
               weft_taskpool_wait(s) != 0;
        bad |= me == 0 && mem[0] != 8;
    } else if (strcmp(c, "before") == 0) {
        bad |= weft_insert_task(s, &inc_class, WEFT_RW, ptg_one_data, 0) != 0;
        bad |= weft_ptg_insert(g, &graph) != WEFT_ERR_INVALID;
        bad |= weft_taskpool_wait(s) != 0 || weft_taskpool_wait(g) != 0;
        bad |= weft_ptg_insert(g, &graph) != 0 || weft_taskpool_wait(g) != 0;
        bad |= me == 0 && mem[0] != 7;
    } else if (strcmp(c, "redux") == 0) {
        int n = weft_nranks(ctx);
        bad |= weft_data_set_reduction(ptg_one_data, &redux_zero_class, &redux_combine_class) != 0;
        for (int k = 0; k < 3; k++)
            bad |= weft_insert_task(s, &inc_class, WEFT_REDUX, ptg_one_data, WEFT_ON_RANK, k % n,
                                    0) != 0;
        bad |= weft_ptg_insert(g, &graph) != WEFT_ERR_INVALID;
        bad |= weft_taskpool_wait(s) != 0 || weft_taskpool_wait(g) != 0;
        bad |= me == 0 && mem[0] != 4;
        bad |= weft_ptg_insert(g, &graph) != 0 || weft_taskpool_wait(g) != 0;
        bad |= me == 0 && mem[0] != 7;
    } else {
        void *p = NULL;
        bad |= weft_ptg_insert(g, &graph) != 0;
        bad |=
            me == 0 && weft_data_host_acquire(ptg_one_data, WEFT_R, &p, NULL) != WEFT_ERR_INVALID;
        bad |= weft_taskpool_wait(g) != 0;
        bad |= me == 0 && mem[0] != 7;
    }
    printf("test_ptg_busy rank %d: %s %s (X = %g)\n", me, c, bad ? "FAILED" : "ok",
           me == 0 ? mem[0] : 0.0);
    weft_taskpool_free(g);
    weft_taskpool_free(s);
    weft_data_release(ptg_one_data);
    return weft_fini(ctx) != 0 || bad;
}
