/* Activations that arrive before their RECV, when no memory is left to
 * keep them (fault_inject=comm_alloc:1+@1): rank 1 notes each, and the
 * RECV, posted later, fails at once (docs/SEMANTICS.md section 3). Rank 1
 * owns N tiles and reads each slowly (10 ms a task, one core); rank 0
 * replaces them meanwhile, and rank 1 then reads the new versions, whose
 * RECVs wait for the slow reads: all N activations come first. Before,
 * past 64 such activations the engine dropped the rest with a line and
 * their RECVs waited for ever. argv[1]: N. Every rank's wait must fail;
 * prints "test_comm_lost rank R: wait failed, N cancelled here". */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../check.h"
#include "weft/weft.h"

static int slow_read(weft_task_t *t)
{
    (void)t;
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
    return 0;
}

static int set(weft_task_t *t)
{
    *(double *)weft_task_ptr(t, 0) = 1;
    return 0;
}

static int read_one(weft_task_t *t) { return *(const double *)weft_task_ptr(t, 0) == 1 ? 0 : -1; }

static const weft_task_class_t slow_cls = {.name = "slow", .body = {[WEFT_DEV_CPU] = slow_read}};
static const weft_task_class_t set_cls = {.name = "set", .body = {[WEFT_DEV_CPU] = set}};
static const weft_task_class_t read_cls = {.name = "read", .body = {[WEFT_DEV_CPU] = read_one}};

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    CHECK(ctx != NULL);
    CHECK(argc == 2 && weft_nranks(ctx) == 2);
    int n = atoi(argv[1]), me = weft_rank(ctx);
    CHECK(n > 0);
    double *mem = calloc((size_t)n, sizeof *mem);
    weft_data_t **x = calloc((size_t)n, sizeof *x);
    CHECK(mem && x);
    for (int i = 0; i < n; i++) {
        x[i] = weft_data_register(ctx, WEFT_DOUBLE, me == 1 ? &mem[i] : NULL, 1, 1, 1, 1);
        CHECK(x[i] != NULL);
    }
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "lost");
    for (int i = 0; i < n; i++)
        CHECK(weft_insert_task(tp, &slow_cls, WEFT_R | WEFT_AFFINITY, x[i], 0) == 0);
    for (int i = 0; i < n; i++)
        CHECK(weft_insert_task(tp, &set_cls, WEFT_W, x[i], WEFT_ON_RANK, 0, 0) == 0);
    for (int i = 0; i < n; i++)
        CHECK(weft_insert_task(tp, &read_cls, WEFT_R, x[i], WEFT_ON_RANK, 1, 0) == 0);
    int rc = weft_taskpool_wait(tp);
    weft_stats_t st;
    CHECK(weft_stats_get(ctx, &st) == 0);
    printf("test_comm_lost rank %d: wait %s, %lld cancelled here\n", me,
           rc == WEFT_ERR_TASK ? "failed" : "did not fail", (long long)st.tasks_cancelled);
    weft_taskpool_free(tp);
    for (int i = 0; i < n; i++) weft_data_release(x[i]);
    free(x);
    free(mem);
    weft_fini(ctx);
    return rc == WEFT_ERR_TASK ? 1 : 0;
}
