/* A body that fails on a data's owner after changing its bytes. X is a
 * NEW data with zero initial contents ("new") or the user's registered
 * memory ("reg"), owned by rank O; +1 of X on rank G (v1; G = -1: none),
 * then a body on rank W that writes -999 into X and fails; the next
 * taskpool adds 1 (arguments: new|reg O G W [FLAGS]). Before, with W the
 * owner, the next taskpool started from the failed body's -999 without a
 * word on any rank, even when rank G != W still held a good v1: the
 * owner's own version was never counted as overwritten. Now the good v1
 * held elsewhere comes home (X = 2), and when none is left every rank says
 * so and X keeps what the body left (X = -998), but a NEW data whose first
 * write failed starts again from its initial contents (G = -1: X = 1).
 * FLAGS:
 *   c  a task after the failed one on W, cancelled (it cleared the mark
 *      of the failure: the scribble passed for good again, silently);
 *   d  the failing body runs on device 1 (an emu-only class) after the +1
 *      ran on the host: the host's v1 is intact on W and X = 2 (it went
 *      with the device's changed copy: X = 1 or a good v2 replaced by an
 *      older version from another rank);
 *   D  the +1 and the failing body both run on device 1: the +1's v1 is
 *      gone, but the owner's host copy still holds v0 intact, and the data
 *      goes back to it, said on every rank (X = 1; it kept the failed
 *      body's -999 and said that no good version was left: X = -998).
 * The owner prints "x=<value>". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "weft/weft.h"

static int add(weft_task_t *t)
{
    double *x = weft_task_ptr(t, 0);
    x[0] += 1;
    return 0;
}

static int scribble(weft_task_t *t)
{
    double *x = weft_task_ptr(t, 0);
    x[0] = -999;
    return -5;
}

static const weft_task_class_t add_class = {.name = "add",
                                            .body = {[WEFT_DEV_CPU] = add, [WEFT_DEV_EMU] = add}};
static const weft_task_class_t add_host_class = {.name = "add", .body = {[WEFT_DEV_CPU] = add}};
static const weft_task_class_t add_dev_class = {.name = "add", .body = {[WEFT_DEV_EMU] = add}};
static const weft_task_class_t scribble_class = {
    .name = "scribble", .body = {[WEFT_DEV_CPU] = scribble, [WEFT_DEV_EMU] = scribble}};
static const weft_task_class_t scribble_dev_class = {.name = "scribble",
                                                     .body = {[WEFT_DEV_EMU] = scribble}};

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL && (argc == 5 || argc == 6));
    int me = weft_rank(ctx), R = weft_nranks(ctx);
    int reg = strcmp(argv[1], "reg") == 0, O = atoi(argv[2]), G = atoi(argv[3]), W = atoi(argv[4]);
    const char *flags = argc == 6 ? argv[5] : "";
    int follow = strchr(flags, 'c') != NULL, on_dev = strchr(flags, 'd') != NULL;
    int both_dev = strchr(flags, 'D') != NULL;
    REQUIRE(O < R && G < R && W < R && (!(on_dev || both_dev) || weft_ndevices(ctx) == 1));
    double x = 0;
    weft_data_t *X = reg ? weft_data_register(ctx, WEFT_DOUBLE, me == O ? &x : NULL, 1, 1, 1, O)
                         : weft_data_new(ctx, WEFT_DOUBLE, 1, 1, O);
    REQUIRE(X != NULL);
    if (!reg) CHECK(weft_data_set_init(X, NULL, NULL) == WEFT_SUCCESS);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "scribbled");
    if (G >= 0)
        CHECK(weft_insert_task(tp,
                               on_dev     ? &add_host_class
                               : both_dev ? &add_dev_class
                                          : &add_class,
                               WEFT_RW, X, WEFT_ON_RANK, G, 0) == WEFT_SUCCESS);
    CHECK(weft_insert_task(tp, on_dev || both_dev ? &scribble_dev_class : &scribble_class, WEFT_RW,
                           X, WEFT_ON_RANK, W, 0) == WEFT_SUCCESS);
    if (follow)
        CHECK(weft_insert_task(tp, &add_class, WEFT_RW, X, WEFT_ON_RANK, W, 0) == WEFT_SUCCESS);
    CHECK(weft_taskpool_wait(tp) == WEFT_ERR_TASK);
    CHECK(weft_insert_task(tp, &add_class, WEFT_RW, X, 0) == WEFT_SUCCESS);
    CHECK(weft_taskpool_wait(tp) == WEFT_SUCCESS);
    if (me == O) {
        const double *p = weft_data_host_ptr(X, NULL);
        REQUIRE(p != NULL);
        printf("test_fail_owner_bytes rank %d: x=%g\n", me, p[0]);
    }
    weft_taskpool_free(tp);
    weft_data_release(X);
    CHECK(weft_fini(ctx) == WEFT_ERR_TASK);
    printf("test_fail_owner_bytes rank %d: %s\n", me,
           check_report("test_fail_owner_bytes") ? "FAILED" : "ok");
    return 0;
}
