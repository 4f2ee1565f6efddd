/* A refusal on one rank only keeps its words although calls that every
 * rank refused alike came first. Every rank makes six creations that every
 * rank refuses (an owner rank out of range, a type that is no type, a size
 * of 0, a tile of 0 x 4), then rank 0, the owner, refuses a registration
 * that rank 1 accepts (ld 0 on the owner). The wait names rank 0's reason
 * on every rank. Before, the alike refusals spent the four notes a
 * sequence keeps (each was a refusal entry), and the report said only "a
 * creation refused on this rank (its reason not kept: more refusals than
 * notes)" against a later call of rank 1, the registration unnamed. Now
 * checks that every rank makes alike add no refusal entry: the creation's
 * entry, with its arguments, is what the ranks compare.
 *
 * --tasks: the same for insertions, whose refusals are entries: 70
 * insertions every rank refuses (WEFT_ON_RANK outside the ranks, two
 * different ranks in turn), then rank 0 inserts a task on a data its host
 * acquired (refused there only). A sequence kept the words of the first
 * four refusals, then of the first 64, one note each: the 71st was named
 * "inserted #70 as 'a task refused on this rank'", its words lost. Alike
 * words are now kept once, each refusal marked in runs.
 *
 * Run with fault_inject refusal_note:1@0, rank 0 finds no memory for the
 * words of its refusal: the wait still fails on every rank, naming the
 * call refused and "its reason not kept: out of host memory" (before, the
 * entry was not taken for a refusal: "rank 0 made #7 as 'a creation
 * refused on this rank'", and rank 1's line said it made a creation that
 * rank 0 did not). */
#include <stdio.h>
#include <string.h>

#include "weft/weft.h"

static int touch(weft_task_t *t)
{
    (void)t;
    return 0;
}

static const weft_task_class_t touch_class = {.name = "touch", .body = {[WEFT_DEV_CPU] = touch}};

static int tasks(weft_context_t *ctx)
{
    int rank = weft_rank(ctx), n = weft_nranks(ctx), alike = 0;
    weft_data_t *d = weft_data_new(ctx, WEFT_DOUBLE, 2, 2, 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "refusals");
    /* Two words alternating (rank n, rank n + 1), past the 64 notes. */
    for (int k = 0; k < 70; k++)
        alike += weft_insert_task(tp, &touch_class, WEFT_W, d, WEFT_ON_RANK, n + k % 2, 0) != 0;
    void *p = NULL;
    int held = rank == 0 && weft_data_host_acquire(d, WEFT_W, &p, NULL) == 0;
    int rc = weft_insert_task(tp, &touch_class, WEFT_W, d, 0); /* refused on rank 0 */
    int w = weft_taskpool_wait(tp);
    if (held && weft_data_host_release(d) != 0) rc = 99;
    weft_taskpool_free(tp);
    weft_data_release(d);
    int f = weft_fini(ctx);
    printf("test_refused_words rank %d: %d alike refusals, insert=%d wait=%d fini=%d\n", rank,
           alike, rc, w, f);
    return 0;
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 2;
    if (argc > 1 && strcmp(argv[1], "--tasks") == 0) return tasks(ctx);
    int rank = weft_rank(ctx), n = weft_nranks(ctx), alike = 0;
    for (int k = 0; k < 3; k++) alike += weft_data_new(ctx, WEFT_DOUBLE, 1, 1, n) == NULL;
    alike += weft_data_new(ctx, (weft_dtype_t)99, 1, 1, 0) == NULL;
    alike += weft_data_register(ctx, WEFT_DOUBLE, NULL, 0, 1, 1, 0) == NULL;
    alike += weft_matrix_new(ctx, WEFT_DOUBLE, 8, 8, 0, 4, n, 1) == NULL;
    double x = 1;
    weft_data_t *d = weft_data_register(ctx, WEFT_DOUBLE, &x, 1, 1, 0, 0); /* ld 0: owner only */
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "after");
    int w = weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    if (d) weft_data_release(d);
    int f = weft_fini(ctx);
    printf("test_refused_words rank %d: %d alike refusals, wait=%d fini=%d\n", rank, alike, w, f);
    return 0;
}
