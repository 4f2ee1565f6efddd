/* Two contexts in one process (weft keeps its state in the context, so
 * they coexist), ended in the order they began: weft started MPI for the
 * first, and finalized it at the first weft_fini, so the second one's
 * weft_fini aborted the process inside MPI. MPI now ends with the last
 * context. A weft_init after that (MPI cannot start twice in a process)
 * returns NULL with a message instead of MPI's abort. With WEFT_TRACE set
 * (both contexts take it), each context's trace is whole in a file of its
 * own: PREFIX.rankN.json (a's tasks, "bump") and PREFIX.rankN.ctx2.json
 * (b's, "bumpb"); both wrote one file before, b's over a's, and the
 * second weft_fini failed renaming it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "../file_text.h"
#include "weft/weft.h"

static int bump(weft_task_t *t)
{
    double *x = weft_task_ptr(t, 0);
    x[0] += 1;
    return 0;
}

static const weft_task_class_t bump_class = {.name = "bump", .body = {[WEFT_DEV_CPU] = bump}};
static const weft_task_class_t bumpb_class = {.name = "bumpb", .body = {[WEFT_DEV_CPU] = bump}};

/* The trace file PREFIX.rank<rank><tail> holds class `has` and not `not`. */
static void check_trace(const char *prefix, int rank, const char *tail, const char *has,
                        const char * not )
{
    char name[512];
    snprintf(name, sizeof name, "%s.rank%d%s", prefix, rank, tail);
    char *text = test_file_text(name);
    CHECK(text != NULL);
    if (!text) return;
    CHECK(strstr(text, has) != NULL);
    CHECK(strstr(text, not ) == NULL);
    size_t n = strlen(text);
    while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == ' ')) n--;
    CHECK(n > 0 && text[n - 1] == '}'); /* whole, not cut */
    free(text);
}

/* One task on a tile of ctx's last rank; the tile's value there. */
static double run_one(weft_context_t *ctx, const weft_task_class_t *cls)
{
    static double x;
    int last = weft_nranks(ctx) - 1, me = weft_rank(ctx);
    x = 41;
    weft_data_t *d = weft_data_register(ctx, WEFT_DOUBLE, &x, 1, 1, 1, last);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "one");
    CHECK(weft_insert_task(tp, cls, WEFT_RW, d, 0) == 0);
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
    int me = weft_rank(a), last = weft_nranks(a) - 1;
    CHECK(run_one(a, &bump_class) == 42);
    CHECK(run_one(b, &bumpb_class) == 42);
    CHECK(weft_fini(a) == 0); /* the context that started MPI ends first */
    CHECK(weft_fini(b) == 0);
    const char *prefix = getenv("WEFT_TRACE");
    if (prefix) { /* the tasks run on the last rank */
        check_trace(prefix, me, ".json", me == last ? "\"bump\"" : "main thread", "bumpb");
        check_trace(prefix, me, ".ctx2.json", me == last ? "\"bumpb\"" : "main thread", "\"bump\"");
    }
    capture_begin();
    weft_context_t *c = weft_init(&argc, &argv);
    capture_end();
    CHECK(c == NULL);
    CHECK(captured("weft_init: MPI was finalized already"));
    return check_report("stf_two_contexts");
}
