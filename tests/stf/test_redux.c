/* Reductions (WEFT_REDUX, issue 15 item 4): tasks that accumulate into one
 * data run at once, over the partials of their rank, instead of one after
 * the other as RW would make them; the value is the sum of what every task
 * added, on every rank count; misuse is refused with an error. */
#include <stdatomic.h>
#include <unistd.h>

#include "../check.h"
#include "weft/weft.h"

enum { NTASKS = 24 };
static atomic_int inflight, most;

static int zero(weft_task_t *t)
{
    *(double *)weft_task_ptr(t, 0) = 0.0;
    return 0;
}

static int add(weft_task_t *t)
{
    double *dst = weft_task_ptr(t, 0);
    *dst += *(const double *)weft_task_ptr(t, 1);
    return 0;
}

/* flow 0: the partial; value 0: what to add. Sleeps so that tasks that
 * may run together do. */
static int slow_add(weft_task_t *t)
{
    int now = atomic_fetch_add(&inflight, 1) + 1, seen = atomic_load(&most);
    while (now > seen && !atomic_compare_exchange_weak(&most, &seen, now)) {
    }
    double v;
    if (weft_task_value_get(t, 0, &v, sizeof v) != 0) return -1;
    usleep(20000);
    *(double *)weft_task_ptr(t, 0) += v;
    atomic_fetch_sub(&inflight, 1);
    return 0;
}

static const weft_task_class_t zero_class = {.name = "zero", .body = {[WEFT_DEV_CPU] = zero}};
static const weft_task_class_t add_class = {.name = "add", .body = {[WEFT_DEV_CPU] = add}};
static const weft_task_class_t slow_class = {.name = "slow", .body = {[WEFT_DEV_CPU] = slow_add}};
static const weft_task_class_t no_cpu = {.name = "nocpu"};

/* Inserts NTASKS slow tasks on d in `mode`; task k adds k + 1. */
static int run(weft_taskpool_t *tp, weft_data_t *d, int mode)
{
    atomic_store(&most, 0);
    for (int k = 0; k < NTASKS; k++) {
        double v = k + 1;
        if (weft_insert_task(tp, &slow_class, mode, d, WEFT_VALUE, &v, sizeof v, 0) != 0) return -1;
    }
    return weft_taskpool_wait(tp);
}

static void misuse(weft_context_t *ctx, weft_taskpool_t *tp, weft_data_t *d)
{
    weft_data_t *plain = weft_data_new(ctx, WEFT_DOUBLE, 1, 1, 0);
    double v = 1;
    CHECK(weft_insert_task(tp, &slow_class, WEFT_REDUX, plain, WEFT_VALUE, &v, sizeof v, 0) ==
          WEFT_ERR_INVALID);
    CHECK(weft_data_set_reduction(d, NULL, &add_class) == WEFT_ERR_INVALID);
    CHECK(weft_data_set_reduction(d, &zero_class, &no_cpu) == WEFT_ERR_INVALID);
    /* Partials pending in tp: another taskpool may not reduce d. */
    weft_taskpool_t *other = weft_taskpool_new(ctx, "other");
    CHECK(weft_insert_task(tp, &slow_class, WEFT_REDUX, d, WEFT_VALUE, &v, sizeof v, 0) == 0);
    CHECK(weft_insert_task(other, &slow_class, WEFT_REDUX, d, WEFT_VALUE, &v, sizeof v, 0) ==
          WEFT_ERR_INVALID);
    CHECK(weft_taskpool_wait(tp) == 0);
    CHECK(weft_taskpool_wait(other) == 0);
    weft_taskpool_free(other);
    weft_data_release(plain);
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL);
    int nranks = weft_nranks(ctx), rank = weft_rank(ctx);
    weft_data_t *d = weft_data_new(ctx, WEFT_DOUBLE, 1, 1, nranks - 1);
    REQUIRE(weft_data_set_reduction(d, &zero_class, &add_class) == 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "redux");
    /* The tasks run on d's owner (no other data): its partials let them
     * overlap; the NEW d is set to 0 first. */
    CHECK(run(tp, d, WEFT_REDUX) == 0);
    int redux_most = atomic_load(&most);
    double expect = NTASKS * (NTASKS + 1) / 2.0;
    const double *got = weft_data_host_ptr(d, NULL);
    if (rank == nranks - 1) {
        CHECK(got != NULL && *got == expect);
        CHECK(redux_most >= 2);
    }
    /* RW on the same data: one after the other, and adding to the sum. */
    CHECK(run(tp, d, WEFT_RW | WEFT_AFFINITY) == 0);
    got = weft_data_host_ptr(d, NULL);
    if (rank == nranks - 1) {
        CHECK(got != NULL && *got == 2 * expect);
        CHECK(atomic_load(&most) == 1);
    }
    printf("redux rank %d: %d tasks at once under WEFT_REDUX, %d under RW\n", rank, redux_most,
           atomic_load(&most));
    misuse(ctx, tp, d);
    weft_taskpool_free(tp);
    weft_data_release(d);
    CHECK(weft_fini(ctx) == 0);
    return check_report("redux");
}
