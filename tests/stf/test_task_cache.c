/* A long chain inserted far ahead of its one worker (each body sleeps
 * 20 us, an insertion takes about 1): nearly every task is alive at once,
 * and their structures went to a cache that kept them all to weft_fini
 * (a 10^6-task chain held 76k, 117 MB). After the wait the cache keeps a
 * window's worth (sched_window=256 here): the heap, mmapped blocks
 * included, may stay at most 8 MiB above where it was before the chain;
 * the chain's sum is checked. Reads the heap with glibc's mallinfo2. */
#include <stdio.h>
#include <time.h>

#include "../check.h"
#include "heap_bytes.h"
#include "weft/weft.h"

#define CHAIN 20000

static int step_body(weft_task_t *t)
{
    struct timespec ts = {0, 20000};
    nanosleep(&ts, NULL);
    double *x = weft_task_ptr(t, 0);
    x[0] += 1.0;
    return 0;
}

static const weft_task_class_t step = {.name = "step", .body = {[WEFT_DEV_CPU] = step_body}};

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL);
    double x = 0;
    weft_data_t *d = weft_data_register(ctx, WEFT_DOUBLE, &x, 1, 1, 1, 0);
    REQUIRE(d != NULL);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "chain");
    REQUIRE(tp != NULL);
    /* One small wave first: what any wait makes once is not counted. */
    for (int i = 0; i < 10; i++) CHECK(weft_insert_task(tp, &step, WEFT_RW, d, 0) == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    size_t before = heap_bytes();
    for (int i = 0; i < CHAIN; i++) CHECK(weft_insert_task(tp, &step, WEFT_RW, d, 0) == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    double grew = ((double)heap_bytes() - (double)before) / (1 << 20);
    printf("heap after the chain's wait: %+.1f MiB\n", grew);
    CHECK(grew < 8.0);
    weft_taskpool_free(tp);
    weft_data_release(d);
    CHECK(x == CHAIN + 10);
    CHECK(weft_fini(ctx) == 0);
    return check_report("task_cache");
}
