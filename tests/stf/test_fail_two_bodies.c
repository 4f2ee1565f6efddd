/* Two failed bodies and no good version left: the line must name the bytes
 * the data keeps. X (4 int64, registered on rank 1) goes through
 *   a: W on rank 0, X = 1 (v1); b: R on rank 1 (rank 1 gets v1);
 *   c: RW on rank 1, X = 10 X + 3 = 13, fails (the owner's copy of v1 changed);
 *   d: W on rank 0, X = 4 (good again, held on rank 0 alone);
 *   e: W on rank 0, X = 5, fails (that version changed).
 * No good version is left; the owner keeps its copy, which holds c's 13.
 * The line said "the next taskpool starts from what that body left in it",
 * naming e's version, whose bytes (5) are on rank 0 (a fuzzer's finding);
 * now it says the owner's copy holds what an earlier failed task left.
 * argv[1] "later" (any ranks, all tasks on the owner, the last rank): a,
 * then c, then e fail on the owner: the owner's copy holds e's 5, not c's
 * 13 ("what that body left in it" named c, which wrote v1 next); "matrix":
 * the same with X a tile of weft_matrix_new, runtime memory (the line said
 * "the user's memory given to weft"). Each rank prints
 * "test_fail_two_bodies rank R: insert I wait W fini F, X = ...". */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "weft/weft.h"

static int set_body(weft_task_t *t)
{
    int64_t v, fail, *x = weft_task_ptr(t, 0);
    if (weft_task_value_get(t, 0, &v, sizeof v) || weft_task_value_get(t, 1, &fail, sizeof fail))
        return -1;
    for (int i = 0; i < 4; i++) x[i] = v;
    return fail ? -42 : 0;
}
static int mix_body(weft_task_t *t)
{
    int64_t v, fail, *x = weft_task_ptr(t, 0);
    if (weft_task_value_get(t, 0, &v, sizeof v) || weft_task_value_get(t, 1, &fail, sizeof fail))
        return -1;
    for (int i = 0; i < 4; i++) x[i] = 10 * x[i] + v;
    return fail ? -42 : 0;
}
static int read_body(weft_task_t *t)
{
    (void)t;
    return 0;
}
static const weft_task_class_t set_cls = {
    .name = "set", .body = {[WEFT_DEV_CPU] = set_body, [WEFT_DEV_EMU] = set_body}};
static const weft_task_class_t mix_cls = {
    .name = "mix", .body = {[WEFT_DEV_CPU] = mix_body, [WEFT_DEV_EMU] = mix_body}};
static const weft_task_class_t read_cls = {
    .name = "read", .body = {[WEFT_DEV_CPU] = read_body, [WEFT_DEV_EMU] = read_body}};

static int step(weft_taskpool_t *tp, const weft_task_class_t *cls, int mode, weft_data_t *x,
                int64_t v, int64_t fail, int rank)
{
    return weft_insert_task(tp, cls, mode, x, WEFT_VALUE, &v, sizeof v, WEFT_VALUE, &fail,
                            sizeof fail, WEFT_ON_RANK, rank, 0);
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 1;
    const char *mode = argc > 1 ? argv[1] : "two";
    int me = weft_rank(ctx), owner = weft_nranks(ctx) - 1, later = strcmp(mode, "two") != 0;
    if (!later && weft_nranks(ctx) != 2) return 1;
    static int64_t mem[4];
    weft_matrix_t *M = NULL;
    weft_data_t *X;
    if (strcmp(mode, "matrix") == 0) {
        M = weft_matrix_new(ctx, WEFT_INT64, 1, 4, 1, 4, weft_nranks(ctx), 1);
        X = M ? weft_tile(M, 0, 0) : NULL; /* on rank 0 */
        owner = 0;
    } else {
        X = weft_data_register(ctx, WEFT_INT64, me == owner ? mem : NULL, 1, 4, 1, owner);
    }
    if (!X) return 1;
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "two_bodies");
    int rc = step(tp, &set_cls, WEFT_W, X, 1, 0, later ? owner : 0);
    if (!later) rc |= step(tp, &read_cls, WEFT_R, X, 0, 0, 1);
    rc |= step(tp, &mix_cls, WEFT_RW, X, 3, 1, owner);
    if (!later) rc |= step(tp, &set_cls, WEFT_W, X, 4, 0, 0);
    rc |= step(tp, &set_cls, WEFT_W, X, 5, 1, later ? owner : 0);
    int w = weft_taskpool_wait(tp);
    if (M && me == owner) { /* runtime memory: read through an acquire */
        void *p;
        int64_t ld;
        if (weft_data_host_acquire(X, WEFT_R, &p, &ld) == 0) {
            memcpy(mem, p, sizeof mem);
            rc |= weft_data_host_release(X);
        }
    }
    weft_taskpool_free(tp);
    if (M)
        weft_matrix_free(M);
    else
        weft_data_release(X);
    int frc = weft_fini(ctx);
    printf("test_fail_two_bodies rank %d: insert %d wait %d fini %d, X = %lld %lld %lld %lld\n", me,
           rc, w, frc, (long long)mem[0], (long long)mem[1], (long long)mem[2], (long long)mem[3]);
    return 0;
}
