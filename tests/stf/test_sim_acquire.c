/* Host access after a simulated taskpool (docs/SCALE.md): a simulated
 * rank's data written by its kept tasks have no memory, and the host gets
 * the shared scratch for them. A NEW data with an initialiser (and one made
 * reducible) written by three tasks on this rank: the read acquire after
 * the wait succeeds (it was refused, "has no contents yet (a NEW data that
 * no task wrote)", although three tasks wrote it). Run real, the same
 * program reads 3. Prints "test_sim_acquire: <case> acquire <rc> value <v>". */
#include <stdio.h>
#include <string.h>

#include "../check.h"
#include "weft/weft.h"

static int add_one(weft_task_t *t)
{
    ((double *)weft_task_ptr(t, 0))[0] += 1;
    return 0;
}
static int zero_body(weft_task_t *t)
{
    ((double *)weft_task_ptr(t, 0))[0] = 0;
    return 0;
}
static int sum_body(weft_task_t *t)
{
    ((double *)weft_task_ptr(t, 0))[0] += ((double *)weft_task_ptr(t, 1))[0];
    return 0;
}
static void zero_init(void *p, int64_t ld, int rows, int cols, void *arg)
{
    (void)ld, (void)rows, (void)cols, (void)arg;
    ((double *)p)[0] = 0;
}
static const weft_task_class_t add_class = {.name = "add1", .body = {[WEFT_DEV_CPU] = add_one}};
static const weft_task_class_t zero_class = {.name = "zero", .body = {[WEFT_DEV_CPU] = zero_body}};
static const weft_task_class_t sum_class = {.name = "sum", .body = {[WEFT_DEV_CPU] = sum_body}};

static void one_case(weft_context_t *ctx, int redux)
{
    weft_data_t *d = weft_data_new(ctx, WEFT_DOUBLE, 1, 1, 0);
    REQUIRE(d != NULL);
    CHECK(weft_data_set_init(d, zero_init, NULL) == 0);
    if (redux) CHECK(weft_data_set_reduction(d, &zero_class, &sum_class) == 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "writes");
    for (int k = 0; k < 3; k++)
        CHECK(weft_insert_task(tp, &add_class, redux ? WEFT_REDUX : WEFT_RW, d, 0) == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    weft_taskpool_free(tp);
    if (weft_rank(ctx) == 0) {
        void *p = NULL;
        int rc = weft_data_host_acquire(d, WEFT_R, &p, NULL);
        CHECK(rc == 0);
        printf("test_sim_acquire: %s acquire %d value %g\n", redux ? "redux" : "rw", rc,
               rc == 0 ? ((double *)p)[0] : -1.0);
        if (rc == 0) CHECK(weft_data_host_release(d) == 0);
    }
    weft_data_release(d);
}

/* A small tile acquired and kept while a larger one is acquired: the
 * small one's pointer stays valid until its release. The simulation's
 * shared scratch grew by freeing the smaller block (ASan: a
 * heap-use-after-free in the write below). */
static void two_sizes(weft_context_t *ctx)
{
    weft_data_t *small = weft_data_new(ctx, WEFT_DOUBLE, 4, 4, 0);
    weft_data_t *big = weft_data_new(ctx, WEFT_DOUBLE, 256, 256, 0);
    REQUIRE(small && big);
    if (weft_rank(ctx) == 0) {
        double *ps = NULL, *pb = NULL;
        REQUIRE(weft_data_host_acquire(small, WEFT_W, (void **)&ps, NULL) == 0);
        for (int i = 0; i < 16; i++) ps[i] = i;
        REQUIRE(weft_data_host_acquire(big, WEFT_W, (void **)&pb, NULL) == 0);
        for (int i = 0; i < 256 * 256; i++) pb[i] = 2;
        for (int i = 0; i < 16; i++) ps[i] = 3;
        CHECK(ps[15] == 3 && pb[256 * 256 - 1] == 2);
        printf("test_sim_acquire: two sizes written\n");
        CHECK(weft_data_host_release(small) == 0);
        CHECK(weft_data_host_release(big) == 0);
    }
    weft_data_release(small);
    weft_data_release(big);
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL);
    one_case(ctx, 0);
    one_case(ctx, 1);
    two_sizes(ctx);
    CHECK(weft_fini(ctx) == 0);
    return check_report("test_sim_acquire");
}
