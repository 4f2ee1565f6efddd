/* A NEW data with initial contents (weft_data_set_init) whose only task of
 * a taskpool, away from its owner, is cancelled (it also reads a data whose
 * writer failed): that rank made the initial contents itself, the owner
 * never held them, yet the ranks counted the cancelled write, so the next
 * taskpool's task on the owner, taken for a reader of a written data,
 * failed: "data 1 has no contents" (a fuzzer's finding). The next taskpool
 * now starts from the initial contents: b = 0 + 1. argv[1]: the rank the
 * cancelled task runs on; argv[2] non-zero: a reader of b on the owner
 * first, so the owner holds the initial contents too. Prints
 * "test_init_cancelled rank R: ok" or what differs. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "weft/weft.h"

static int boom(weft_task_t *t)
{
    (void)t;
    return -42;
}

static int inc(weft_task_t *t)
{
    for (int f = 0; f < weft_task_nflows(t); f++) *(int64_t *)weft_task_ptr(t, f) += 1;
    return 0;
}

static int look(weft_task_t *t)
{
    (void)t;
    return 0;
}

static const weft_task_class_t boom_cls = {.name = "boom", .body = {[WEFT_DEV_CPU] = boom}};
static const weft_task_class_t inc_cls = {.name = "inc", .body = {[WEFT_DEV_CPU] = inc}};
static const weft_task_class_t look_cls = {.name = "look", .body = {[WEFT_DEV_CPU] = look}};

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx || argc != 3) return 2;
    int me = weft_rank(ctx), owner = weft_nranks(ctx) - 1;
    int on = atoi(argv[1]), owner_reads = atoi(argv[2]);
    weft_data_t *a = weft_data_new(ctx, WEFT_INT64, 1, 1, owner);
    weft_data_t *b = weft_data_new(ctx, WEFT_INT64, 1, 1, owner);
    int rc = weft_data_set_init(b, NULL, NULL); /* zeros */
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "init_cancelled");
    rc |= weft_insert_task(tp, &boom_cls, WEFT_W, a, 0);
    if (owner_reads) rc |= weft_insert_task(tp, &look_cls, WEFT_R, b, 0);
    rc |= weft_insert_task(tp, &inc_cls, WEFT_RW, a, WEFT_RW, b, WEFT_ON_RANK, on, 0);
    int w1 = weft_taskpool_wait(tp);
    rc |= weft_insert_task(tp, &inc_cls, WEFT_RW, b, 0);
    int w2 = weft_taskpool_wait(tp);
    int64_t v = 1, ld;
    void *p;
    if (me == owner && weft_data_host_acquire(b, WEFT_R, &p, &ld) == 0) {
        v = *(int64_t *)p;
        rc |= weft_data_host_release(b);
    }
    weft_taskpool_free(tp);
    weft_data_release(a);
    weft_data_release(b);
    int f = weft_fini(ctx);
    int ok = rc == 0 && w1 == WEFT_ERR_TASK && w2 == 0 && v == 1 && f == WEFT_ERR_TASK;
    if (ok)
        printf("test_init_cancelled rank %d: ok\n", me);
    else
        printf("test_init_cancelled rank %d: calls %d, waits %d %d (-9 0 wanted), b %lld (1 "
               "wanted), fini %d\n",
               me, rc, w1, w2, (long long)v, f);
    return !ok;
}
