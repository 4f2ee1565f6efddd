/* Two contexts in one process (weft keeps its state in the context, so
 * they coexist), ended in the order they began: weft started MPI for the
 * first, and finalized it at the first weft_fini, so the second one's
 * weft_fini aborted the process inside MPI. MPI now ends with the last
 * context. A weft_init after that (MPI cannot start twice in a process)
 * returns NULL with a message instead of MPI's abort. */
#include "../check.h"
#include "weft/weft.h"

static int bump(weft_task_t *t)
{
    double *x = weft_task_ptr(t, 0);
    x[0] += 1;
    return 0;
}

static const weft_task_class_t bump_class = {.name = "bump", .body = {[WEFT_DEV_CPU] = bump}};

/* One task on a tile of ctx's last rank; the tile's value there. */
static double run_one(weft_context_t *ctx)
{
    static double x;
    int last = weft_nranks(ctx) - 1, me = weft_rank(ctx);
    x = 41;
    weft_data_t *d = weft_data_register(ctx, WEFT_DOUBLE, &x, 1, 1, 1, last);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "one");
    CHECK(weft_insert_task(tp, &bump_class, WEFT_RW, d, 0) == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    weft_taskpool_free(tp);
    weft_data_release(d);
    return me == last ? x : 42;
}

int main(int argc, char **argv)
{
    weft_context_t *a = weft_init(&argc, &argv);
    REQUIRE(a != NULL);
    weft_context_t *b = weft_init(&argc, &argv);
    REQUIRE(b != NULL);
    CHECK(run_one(a) == 42);
    CHECK(run_one(b) == 42);
    CHECK(weft_fini(a) == 0); /* the context that started MPI ends first */
    CHECK(weft_fini(b) == 0);
    capture_begin();
    weft_context_t *c = weft_init(&argc, &argv);
    capture_end();
    CHECK(c == NULL);
    CHECK(captured("weft_init: MPI was finalized already"));
    return check_report("stf_two_contexts");
}
