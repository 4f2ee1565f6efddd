/* The sequence check with a task class whose memory is used again for
 * another class (a helper's class on its stack, a class freed after a
 * wait): the check hashed a class's name once per run of that class's
 * address, so a class at the address of the last one was taken for it.
 *
 *   diverge  a wave of "alpha", then a wave where rank 0 inserts "beta"
 *            and the others "gamma", from the same class struct filled
 *            again: the divergence is found (it passed unseen: every wait
 *            and weft_fini returned 0).
 *   inwave   the same in one wave: "alpha" then "beta"/"gamma". This
 *            case breaks weft.h's rule that a class stays unchanged
 *            until its tasks are done, on purpose (the check must not
 *            take one class for another even then): "alpha"'s task may
 *            read the struct while it is filled again (ThreadSanitizer
 *            says so); the body is the same function either way.
 *   same     a wave of "alpha", then "beta" on every rank: rank 0 from
 *            the struct that held "alpha", the others from another: no
 *            divergence (rank 0 was taken to have inserted "alpha").
 *
 * Each rank prints "test_seq_class_reuse rank R: <case> waits W1 W2 fini
 * F" and exits 0 when they are what the case expects. */
#include <stdio.h>
#include <string.h>

#include "elapsed.h"
#include "noop_body.h"
#include "weft/weft.h"

/* The slot a helper would fill anew at each call. */
static weft_task_class_t slot, other;

static const weft_task_class_t *fill(weft_task_class_t *c, const char *name)
{
    memset(c, 0, sizeof *c);
    c->name = name;
    c->body[WEFT_DEV_CPU] = noop_body;
    return c;
}

int main(int argc, char **argv)
{
    elapsed_start();
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 1;
    int me = weft_rank(ctx);
    const char *c = argc > 1 ? argv[1] : "same";
    weft_data_t *d = weft_data_new(ctx, WEFT_DOUBLE, 4, 4, 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "tp");
    int bad = d == NULL || tp == NULL || weft_data_set_init(d, NULL, NULL) != 0;
    bad |= weft_insert_task(tp, fill(&slot, "alpha"), WEFT_RW, d, 0) != 0;
    int w1 = strcmp(c, "inwave") == 0 ? 0 : weft_taskpool_wait(tp);
    const char *second = strcmp(c, "same") == 0 || me == 0 ? "beta" : "gamma";
    weft_task_class_t *where = strcmp(c, "same") == 0 && me != 0 ? &other : &slot;
    bad |= weft_insert_task(tp, fill(where, second), WEFT_RW, d, 0) != 0;
    int w2 = weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    weft_data_release(d);
    int f = weft_fini(ctx);
    printf("test_seq_class_reuse rank %d: %s waits %d %d fini %d\n", me, c, w1, w2, f);
    if (strcmp(c, "same") == 0) return bad || w1 != 0 || w2 != 0 || f != 0;
    return bad || w1 != 0 || w2 != WEFT_ERR_MISMATCH || f != WEFT_ERR_MISMATCH;
}
