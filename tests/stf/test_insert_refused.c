/* An insertion refused on some ranks only is named, with the refusing
 * rank's reason, on every rank at the next wait. Rank 0 acquires data 0
 * (its owner) on the host and the ranks insert a task that writes it:
 * rank 0 refuses it (the data is acquired), rank 1 inserts it. Every
 * rank's wait and weft_fini return WEFT_ERR_MISMATCH and every rank logs
 * "rank 0 refused task touch: insert touch: data 0 is acquired by the
 * host ..." (before, rank 1 only learnt that rank 0 "never inserted" task
 * #0, with no reason). "same" (the control): no acquire, wait and fini 0.
 *
 * Each rank prints "test_insert_refused rank R: <case> insert=I wait=W fini=F". */
#include <stdio.h>
#include <string.h>

#include "elapsed.h"
#include "weft/weft.h"

static int body(weft_task_t *t)
{
    (void)t;
    return 0;
}
static const weft_task_class_t touch = {.name = "touch", .body = {[WEFT_DEV_CPU] = body}};

int main(int argc, char **argv)
{
    elapsed_start();
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 1;
    int me = weft_rank(ctx);
    const char *c = argc > 1 ? argv[1] : "same";
    int acquire = strcmp(c, "acquired") == 0 && me == 0;
    static double x[16];
    weft_data_t *d = weft_data_register(ctx, WEFT_DOUBLE, x, 4, 4, 4, 0);
    void *p = NULL;
    int64_t ld = 0;
    int arc = acquire ? weft_data_host_acquire(d, WEFT_RW, &p, &ld) : 0;
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "refusing");
    int irc = weft_insert_task(tp, &touch, WEFT_RW, d, 0);
    if (acquire && arc == 0 && weft_data_host_release(d) != 0) irc = 99;
    int w = weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    weft_data_release(d);
    int f = weft_fini(ctx);
    printf("test_insert_refused rank %d: %s insert=%d wait=%d fini=%d\n", me, c, irc, w, f);
    return w != 0 || f != 0;
}
