/* After a failed task, the next taskpool starts from each data's newest
 * good version, wherever it was made (docs/SEMANTICS.md section 3). On 3
 * ranks, data d registered on rank 0 (value 0) and e, NEW on the last rank:
 * +1 on rank 0, +2 on rank 1, a body on rank 2 that fails (leaving its tile
 * as it was), +100 on rank 0 (cancelled); e the same one rank further.
 * The next taskpool adds 10: 13 each. d came back as 11: the version rank
 * 1 made was dropped with the copies away from owners, and the next
 * taskpool read rank 0's own last version. Tiles of NB x NB doubles
 * (argument 1; eager and rendezvous), on the host or on emu devices.
 * "broken" (argument 2, with fault_inject recover:1@1): rank 1 cannot read
 * the version it gives; every rank names d, d restarts from rank 0's own
 * version (11), e (whose owner made its good version) is 13 still. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "weft/weft.h"

static int add(weft_task_t *t)
{
    int v;
    if (weft_task_value_get(t, 0, &v, sizeof v) != 0) return -1;
    if (v < 0) return 3; /* the failing body: its tile untouched */
    double *x = weft_task_ptr(t, 0);
    for (int j = 0; j < weft_task_cols(t, 0); j++)
        for (int i = 0; i < weft_task_rows(t, 0); i++) x[i + j * weft_task_ld(t, 0)] += v;
    return 0;
}

static const weft_task_class_t add_class = {.name = "add",
                                            .body = {[WEFT_DEV_CPU] = add, [WEFT_DEV_EMU] = add}};

static int insert(weft_taskpool_t *tp, weft_data_t *d, int v, int rank)
{
    return weft_insert_task(tp, &add_class, WEFT_RW, d, WEFT_VALUE, &v, sizeof v, WEFT_ON_RANK,
                            rank, 0);
}

/* Every element of the tile at p (ld) equals want. */
static int all_equal(const double *p, int nb, int64_t ld, double want)
{
    int bad = 0;
    for (int j = 0; j < nb; j++)
        for (int i = 0; i < nb; i++) bad += p[i + j * ld] != want;
    return bad == 0;
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL);
    int me = weft_rank(ctx), R = weft_nranks(ctx), nb = argc > 1 ? atoi(argv[1]) : 1;
    int broken = argc > 2 && strcmp(argv[2], "broken") == 0;
    REQUIRE(R == 3 && nb > 0);
    double *mem = calloc((size_t)nb * nb, sizeof *mem);
    REQUIRE(mem != NULL);
    weft_data_t *d = weft_data_register(ctx, WEFT_DOUBLE, me == 0 ? mem : NULL, nb, nb, nb, 0);
    weft_data_t *e = weft_data_new(ctx, WEFT_DOUBLE, nb, nb, R - 1);
    REQUIRE(d && e && weft_data_set_init(e, NULL, NULL) == 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "chain");
    const int vals[] = {1, 2, -1, 100};
    for (int k = 0; k < 4; k++) {
        CHECK(insert(tp, d, vals[k], k % R) == 0);
        CHECK(insert(tp, e, vals[k], (k + 1) % R) == 0);
    }
    capture_begin();
    CHECK(weft_taskpool_wait(tp) == WEFT_ERR_TASK);
    capture_end();
    CHECK(captured("taskpool chain failed: rank 0: task add #3 returned 3"));
    if (broken) /* rank 1 could not read d's v2: every rank says so, and why (the others
                   said "another rank failed to take part") */
        CHECK(captured("data 0: its newest good version v2, on rank 1, could not come home after "
                       "the failure (rank 1: out of host memory)"));
    CHECK(insert(tp, d, 10, R - 1) == 0);
    CHECK(insert(tp, e, 10, 0) == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    weft_taskpool_free(tp);
    if (me == 0) CHECK(all_equal(mem, nb, nb, broken ? 11.0 : 13.0));
    if (me == R - 1) {
        int64_t ld = 0;
        const double *p = weft_data_host_ptr(e, &ld);
        CHECK(p != NULL && all_equal(p, nb, ld, 13.0));
    }
    weft_data_release(d);
    weft_data_release(e);
    CHECK(weft_fini(ctx) == WEFT_ERR_TASK); /* the run had a failed task: every rank */
    free(mem);
    return check_report("test_fail_good_version");
}
