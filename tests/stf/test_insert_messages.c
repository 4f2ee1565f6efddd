/* What insertion and a failed task say, for the mistakes that used to get
 * a wrong or empty explanation: a WEFT_VALUE with a NULL pointer (it was
 * told "at most 8 values of at most 64 bytes", which it was within), and a
 * failed task with no data (its failure line ended in "()"). An empty
 * value (NULL, 0) is accepted: it used to memcpy from NULL (UBSan: null
 * pointer passed as argument 2, in the sanitizer build). The variadic form
 * takes 64 arguments (it refused exactly 64: the 0 after them was never
 * read) and refuses 65, named. A placement given twice (WEFT_ON_RANK,
 * WEFT_DEVICE_HINT, WEFT_AFFINITY on two data) is refused, named (the
 * last rank or hint, the first affinity, won silently). Each rank prints
 * what it got; run_expect checks the lines. */
#include "../check.h"
#include "weft/weft.h"

static int fails(weft_task_t *t)
{
    (void)t;
    return -7;
}

static int nothing(weft_task_t *t)
{
    (void)t;
    return 0;
}

static const weft_task_class_t fails_class = {.name = "fails", .body = {[WEFT_DEV_CPU] = fails}};
static const weft_task_class_t nothing_class = {.name = "nothing",
                                                .body = {[WEFT_DEV_CPU] = nothing}};

#define PRIO WEFT_PRIORITY, 1
#define PRIO8 PRIO, PRIO, PRIO, PRIO, PRIO, PRIO, PRIO, PRIO
#define PRIO64 PRIO8, PRIO8, PRIO8, PRIO8, PRIO8, PRIO8, PRIO8, PRIO8

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL);
    int rank = weft_rank(ctx);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "messages");
    double x = 1;
    char big[65] = {0};
    CHECK(weft_insert_task(tp, &nothing_class, WEFT_VALUE, NULL, sizeof x, 0) == WEFT_ERR_INVALID);
    CHECK(weft_insert_task(tp, &nothing_class, WEFT_VALUE, big, sizeof big, 0) == WEFT_ERR_INVALID);
    weft_arg_t nine[9];
    for (int i = 0; i < 9; i++) nine[i] = weft_arg_value(&x, sizeof x);
    CHECK(weft_insert_task_array(tp, &nothing_class, nine, 9) == WEFT_ERR_INVALID);
    CHECK(weft_insert_task(tp, &nothing_class, WEFT_VALUE, NULL, (size_t)0, 0) == 0);
    CHECK(weft_insert_task(tp, &nothing_class, PRIO64, 0) == 0);
    CHECK(weft_insert_task(tp, &nothing_class, PRIO64, PRIO, 0) == WEFT_ERR_INVALID);
    weft_data_t *a = weft_data_new(ctx, WEFT_DOUBLE, 2, 2, 0);
    weft_data_t *b = weft_data_new(ctx, WEFT_DOUBLE, 2, 2, weft_nranks(ctx) - 1);
    CHECK(weft_insert_task(tp, &nothing_class, WEFT_ON_RANK, 0, WEFT_ON_RANK, 1, 0) ==
          WEFT_ERR_INVALID);
    CHECK(weft_insert_task(tp, &nothing_class, WEFT_DEVICE_HINT, 0, WEFT_PRIORITY, 2,
                           WEFT_DEVICE_HINT, 0, 0) == WEFT_ERR_INVALID);
    CHECK(weft_insert_task(tp, &nothing_class, WEFT_W | WEFT_AFFINITY, a, WEFT_W | WEFT_AFFINITY, b,
                           0) == WEFT_ERR_INVALID);
    CHECK(weft_insert_task(tp, &nothing_class, WEFT_W | WEFT_AFFINITY, a, WEFT_W, b, 0) == 0);
    CHECK(weft_insert_task(tp, &fails_class, WEFT_VALUE, &x, sizeof x, 0) == 0);
    CHECK(weft_taskpool_wait(tp) == WEFT_ERR_TASK);
    weft_taskpool_free(tp);
    weft_data_release(a);
    weft_data_release(b);
    CHECK(weft_fini(ctx) == WEFT_ERR_TASK);
    printf("test_insert_messages rank %d: done\n", rank);
    return check_report("test_insert_messages");
}
