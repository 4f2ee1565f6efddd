/* What a registered 1x1 data X goes back to when a body fails on its
 * owner's device after other tasks wrote newer versions there, the owner's
 * host copy (the user's memory) still holding an older one intact
 * (docs/SEMANTICS.md section 3). The arguments script the run, one token a
 * task or a wait:
 *   O<r>     X's owner is rank r (first token; default 0)
 *   N        X is a NEW data with zero initial contents, not the user's
 *            memory (after O<r>, if any): x is read through
 *            weft_data_host_ptr at the last wait only (a read brings the
 *            newest version to the host copy), "x=unread" before
 *   A<r><d>  on rank r, device d (h: the host), x = 10 x + k, k = 1, 2, ...
 *            for the adds in order, so x's digits name the adds it holds
 *   F<r><d>  a body that writes -999 into x and fails
 *   R<r><d>  a body that reads x
 *   |        a wait: the owner prints "test_fail_restore rank R: wait N x=X
 *            (status S)"
 * The checks are the ctest's (tests/stf/failures.cmake). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "weft/weft.h"

static int add(weft_task_t *t)
{
    double *x = weft_task_ptr(t, 0);
    int k = 0;
    weft_task_value(t, 0, &k);
    x[0] = x[0] * 10 + k;
    return 0;
}

static int scribble(weft_task_t *t)
{
    double *x = weft_task_ptr(t, 0);
    x[0] = -999;
    return -5;
}

static int look(weft_task_t *t)
{
    (void)t;
    return 0;
}

static const weft_task_class_t add_class = {.name = "add",
                                            .body = {[WEFT_DEV_CPU] = add, [WEFT_DEV_EMU] = add}};
static const weft_task_class_t scribble_class = {
    .name = "scribble", .body = {[WEFT_DEV_CPU] = scribble, [WEFT_DEV_EMU] = scribble}};
static const weft_task_class_t look_class = {
    .name = "look", .body = {[WEFT_DEV_CPU] = look, [WEFT_DEV_EMU] = look}};

/* The task a token names, inserted on its rank and device. */
static void insert(weft_taskpool_t *tp, weft_data_t *X, const char *tok, int nranks, int *nadds)
{
    const weft_task_class_t *cls = tok[0] == 'A'   ? &add_class
                                   : tok[0] == 'F' ? &scribble_class
                                                   : &look_class;
    int rank = tok[1] - '0', dev = tok[2] == 'h' ? 0 : tok[2] - '0';
    REQUIRE((tok[0] == 'A' || tok[0] == 'F' || tok[0] == 'R') && rank >= 0 && rank < nranks &&
            dev >= 0 && dev <= 9);
    int k = tok[0] == 'A' ? ++*nadds : 0;
    CHECK(weft_insert_task(tp, cls, tok[0] == 'R' ? WEFT_R : WEFT_RW, X, WEFT_VALUE, &k, sizeof k,
                           WEFT_ON_RANK, rank, WEFT_DEVICE_HINT, dev, 0) == WEFT_SUCCESS);
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL && argc >= 2);
    int me = weft_rank(ctx), R = weft_nranks(ctx), first = 1, owner = 0;
    if (argv[1][0] == 'O') owner = atoi(argv[first++] + 1);
    int is_new = first < argc && strcmp(argv[first], "N") == 0;
    first += is_new;
    REQUIRE(owner >= 0 && owner < R);
    double x = 0;
    weft_data_t *X =
        is_new ? weft_data_new(ctx, WEFT_DOUBLE, 1, 1, owner)
               : weft_data_register(ctx, WEFT_DOUBLE, me == owner ? &x : NULL, 1, 1, 1, owner);
    REQUIRE(X != NULL);
    if (is_new) REQUIRE(weft_data_set_init(X, NULL, NULL) == WEFT_SUCCESS);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "restore");
    int nadds = 0, nwaits = 0;
    for (int i = first; i < argc; i++) {
        if (strcmp(argv[i], "|") != 0) {
            insert(tp, X, argv[i], R, &nadds);
            continue;
        }
        int rc = weft_taskpool_wait(tp); /* a failure's status, as the script made it */
        int read = !is_new || i == argc - 1;
        if (is_new && read && me == owner) {
            const double *p = weft_data_host_ptr(X, NULL);
            REQUIRE(p != NULL);
            x = p[0];
        }
        char xs[32] = "unread";
        if (read) snprintf(xs, sizeof xs, "%g", x);
        if (me == owner)
            printf("test_fail_restore rank %d: wait %d x=%s (status %d)\n", me, ++nwaits, xs, rc);
        fflush(stdout);
    }
    weft_taskpool_free(tp);
    weft_data_release(X);
    (void)weft_fini(ctx); /* a failed wait's status, as the script made it */
    printf("test_fail_restore rank %d: %s\n", me,
           check_report("test_fail_restore") ? "FAILED" : "ok");
    return 0;
}
