/* A taskpool whose only insertion was refused, then freed (free) or left
 * to weft_fini (fini) without a wait: the refusal is an entry of the
 * taskpool's wave, so the free or weft_fini waits for it after an error
 * naming it, and weft_fini returns WEFT_ERR_INVALID on every rank. On one
 * rank (which keeps no sequence) and for a class every rank refuses (no
 * body: no entry was logged) weft_fini returned 0 without a word, so the
 * same program's outcome hung on the rank count.
 * Usage: test_refused_unwaited free|fini nobody|onrank
 * Prints "test_refused_unwaited rank R: insert=I fini=F". */
#include <stdio.h>
#include <string.h>

#include "elapsed.h"
#include "weft/weft.h"

static int noop(weft_task_t *t)
{
    (void)t;
    return 0;
}

static const weft_task_class_t nobody = {.name = "nobody"};
static const weft_task_class_t good = {.name = "good", .body = {[WEFT_DEV_CPU] = noop}};

int main(int argc, char **argv)
{
    elapsed_start();
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx || argc < 3) return 2;
    int me = weft_rank(ctx);
    weft_data_t *d = weft_data_new(ctx, WEFT_DOUBLE, 2, 2, 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "refusing");
    int ins = strcmp(argv[2], "nobody") == 0
                  ? weft_insert_task(tp, &nobody, WEFT_W, d, 0)
                  : weft_insert_task(tp, &good, WEFT_W, d, WEFT_ON_RANK, 99, 0);
    if (strcmp(argv[1], "free") == 0) weft_taskpool_free(tp);
    weft_data_release(d);
    int f = weft_fini(ctx);
    printf("test_refused_unwaited rank %d: insert=%d fini=%d\n", me, ins, f);
    return 0;
}
