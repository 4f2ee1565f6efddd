/* An insertion refused on some ranks only is named, with the refusing
 * rank's reason, on every rank at the next collective. Rank 0 acquires
 * data 0 (its owner) on the host and the ranks insert a task that writes
 * it: rank 0 refuses it (the data is acquired), rank 1 inserts it. argv[1]
 * names what comes next:
 *
 *   acquired  weft_taskpool_wait: every rank's wait and weft_fini return
 *             WEFT_ERR_MISMATCH and every rank logs "rank 0 refused task
 *             touch: insert touch: data 0 is acquired by the host ..."
 *             (before, rank 1 only learnt that rank 0 "never inserted"
 *             task #0, with no reason).
 *   ptg       weft_ptg_insert of a graph into the same taskpool: every
 *             rank names the refusal there and returns WEFT_ERR_MISMATCH
 *             (before: rank 1 refused the graph, its wave having a task,
 *             rank 0 built it, and both logged "ranks are out of step"
 *             with no reason).
 *   free      weft_taskpool_free without a wait: every rank makes the
 *             implicit wait, which names the refusal (before: rank 1
 *             waited, rank 0 went on to weft_fini: "out of step").
 *   fini      weft_fini without a wait nor a free: the same at weft_fini.
 *   same      (the control): no acquire, wait and fini 0.
 *
 * Each rank prints "test_insert_refused rank R: <case> insert=I graph=G
 * wait=W fini=F". */
#include <stdio.h>
#include <string.h>

#include "../ptg/ptg_one_task.h"
#include "elapsed.h"
#include "noop_body.h"
#include "weft/ptg.h"
#include "weft/weft.h"

static const weft_task_class_t touch = {.name = "touch", .body = {[WEFT_DEV_CPU] = noop_body}};

/* A graph of one task writing data 0 on rank 0. */
static const weft_ptg_class_t graph_class = PTG_ONE_CLASS(touch);
static const weft_ptg_t graph = {&graph_class, 1, NULL};

int main(int argc, char **argv)
{
    elapsed_start();
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 1;
    int me = weft_rank(ctx);
    const char *c = argc > 1 ? argv[1] : "same";
    int acquire = strcmp(c, "same") != 0 && me == 0;
    static double x[16];
    weft_data_t *d = weft_data_register(ctx, WEFT_DOUBLE, x, 4, 4, 4, 0);
    ptg_one_data = d;
    void *p = NULL;
    int64_t ld = 0;
    int arc = acquire ? weft_data_host_acquire(d, WEFT_RW, &p, &ld) : 0;
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "refusing");
    int irc = weft_insert_task(tp, &touch, WEFT_RW, d, 0);
    if (acquire && arc == 0 && weft_data_host_release(d) != 0) irc = 99;
    int g = strcmp(c, "ptg") == 0 ? weft_ptg_insert(tp, &graph) : 0;
    int w = strcmp(c, "free") == 0 || strcmp(c, "fini") == 0 ? 0 : weft_taskpool_wait(tp);
    if (strcmp(c, "fini") != 0) {
        weft_taskpool_free(tp);
        weft_data_release(d);
    }
    int f = weft_fini(ctx);
    printf("test_insert_refused rank %d: %s insert=%d graph=%d wait=%d fini=%d\n", me, c, irc, g, w,
           f);
    return g != 0 || w != 0 || f != 0;
}
