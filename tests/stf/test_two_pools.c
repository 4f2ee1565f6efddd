/* Two taskpools alive at once (docs/SEMANTICS.md section 1, "One taskpool
 * at a time"): a task of taskpool "two" naming a data that taskpool "one"
 * still uses (not waited for) is refused on every rank, naming both; data
 * apart are fine, and once "one" is waited for "two" may use the data.
 * Before, the insertion went through, the wait of "one" wrote the data
 * back and dropped its device copies while tasks of "two" ran on them, and
 * the result of "two" was lost without an error (emu devices) or a false
 * leak report failed the wait. The values of both taskpools are checked
 * in the user's memory. Then the owner's acquire of a data that a task of
 * another rank writes is refused until the wait, and so is a task of "two"
 * reading a data whose reduction has partial results pending in "one". */
#include <string.h>

#include "../check.h"
#include "weft/weft.h"

#define N 10
#define NB 3

static int axpb(weft_task_t *t) /* x = 2 x + value */
{
    double v;
    if (weft_task_value_get(t, 0, &v, sizeof v) != 0) return -1;
    double *a = weft_task_ptr(t, 0);
    int64_t ld = weft_task_ld(t, 0);
    for (int j = 0; j < weft_task_cols(t, 0); j++)
        for (int i = 0; i < weft_task_rows(t, 0); i++) a[i + j * ld] = 2 * a[i + j * ld] + v;
    return 0;
}
static const weft_task_class_t axpb_cls = {.name = "axpb",
                                           .body = {[WEFT_DEV_CPU] = axpb, [WEFT_DEV_EMU] = axpb}};

static int setv(weft_task_t *t) /* x = value, write only */
{
    return weft_task_value_get(t, 0, weft_task_ptr(t, 0), sizeof(double));
}
static const weft_task_class_t setv_cls = {.name = "setv",
                                           .body = {[WEFT_DEV_CPU] = setv, [WEFT_DEV_EMU] = setv}};

static int zero(weft_task_t *t) /* the reduction's identity */
{
    *(double *)weft_task_ptr(t, 0) = 0.0;
    return 0;
}
static int fold(weft_task_t *t)
{
    *(double *)weft_task_ptr(t, 0) += *(double *)weft_task_ptr(t, 1);
    return 0;
}
static int add_one(weft_task_t *t)
{
    *(double *)weft_task_ptr(t, 0) += 1.0;
    return 0;
}
static const weft_task_class_t zero_cls = {.name = "zero", .body = {[WEFT_DEV_CPU] = zero}};
static const weft_task_class_t fold_cls = {.name = "fold", .body = {[WEFT_DEV_CPU] = fold}};
static const weft_task_class_t add_cls = {.name = "add_one", .body = {[WEFT_DEV_CPU] = add_one}};

static int insert_all(weft_taskpool_t *tp, weft_matrix_t *A, double v)
{
    int rc = 0;
    for (int i = 0; i < weft_matrix_mt(A); i++)
        for (int j = 0; j < weft_matrix_nt(A); j++)
            rc |= weft_insert_task(tp, &axpb_cls, WEFT_RW | WEFT_AFFINITY, weft_tile(A, i, j),
                                   WEFT_VALUE, &v, sizeof v, 0);
    return rc;
}

/* Every element of this rank's tiles of A (wrapping U) holds want. */
static void check_local(weft_matrix_t *A, const double *U, double want)
{
    int wrong = 0;
    for (int k = 0; k < weft_matrix_local_count(A); k++) {
        int ti, tj;
        (void)weft_matrix_local_tile(A, k, &ti, &tj);
        for (int j = 0; j < weft_matrix_tile_cols(A, tj); j++)
            for (int i = 0; i < weft_matrix_tile_rows(A, ti); i++)
                wrong += U[ti * NB + i + (tj * NB + j) * N] != want;
    }
    CHECK(wrong == 0);
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL);
    int nr = weft_nranks(ctx);
    static double U[N * N], V[N * N];
    weft_matrix_t *A = weft_matrix_wrap(ctx, WEFT_DOUBLE, U, N, N, N, NB, NB, nr, 1);
    weft_matrix_t *B = weft_matrix_wrap(ctx, WEFT_DOUBLE, V, N, N, N, NB, NB, 1, nr);
    weft_taskpool_t *one = weft_taskpool_new(ctx, "one"), *two = weft_taskpool_new(ctx, "two");
    REQUIRE(A && B && one && two);

    CHECK(insert_all(one, A, 1.0) == 0);
    /* B is used by no other taskpool: "two" takes it. */
    CHECK(insert_all(two, B, 5.0) == 0);
    capture_begin();
    double v = 3.0;
    int rc =
        weft_insert_task(two, &axpb_cls, WEFT_RW, weft_tile(A, 0, 0), WEFT_VALUE, &v, sizeof v, 0);
    const char *text = capture_end();
    CHECK(rc == WEFT_ERR_INVALID);
    CHECK(strstr(text, "insert axpb: data 0 is used by taskpool \"one\", which was not waited "
                       "for: a data is used by one taskpool at a time") != NULL);
    /* Waited in the other order: each returns its own outcome. */
    CHECK(weft_taskpool_wait(two) == 0);
    CHECK(weft_taskpool_wait(one) == 0);
    check_local(A, U, 1.0);
    check_local(B, V, 5.0);
    /* "one" waited for: "two" may use A now, and an empty "one" is no
     * obstacle. */
    CHECK(insert_all(two, A, 3.0) == 0);
    CHECK(weft_taskpool_wait(one) == 0);
    CHECK(weft_taskpool_wait(two) == 0);
    check_local(A, U, 5.0);

    /* A task of another rank that only writes a data this rank owns: the
     * owner's host acquire is refused until the wait (it was granted, and
     * the wait overwrote what the host wrote). */
    int rank = weft_rank(ctx);
    static double x = 1.0;
    weft_data_t *d = weft_data_register(ctx, WEFT_DOUBLE, rank == 0 ? &x : NULL, 1, 1, 1, 0);
    CHECK(weft_insert_task(one, &setv_cls, WEFT_W, d, WEFT_VALUE, &v, sizeof v, WEFT_ON_RANK,
                           nr - 1, 0) == 0);
    if (rank == 0) {
        void *p;
        int64_t ld;
        CHECK(weft_data_host_acquire(d, WEFT_RW, &p, &ld) == WEFT_ERR_INVALID);
    }
    CHECK(weft_taskpool_wait(one) == 0);
    if (rank == 0) CHECK(x == 3.0);
    weft_data_release(d);

    /* Partial results of a reduction pending in "one": reading the data in
     * "two" is refused (it read 0 instead of the sum). */
    static double sum = 0.0;
    weft_data_t *r = weft_data_register(ctx, WEFT_DOUBLE, rank == 0 ? &sum : NULL, 1, 1, 1, 0);
    CHECK(weft_data_set_reduction(r, &zero_cls, &fold_cls) == 0);
    for (int k = 0; k < 6; k++) CHECK(weft_insert_task(one, &add_cls, WEFT_REDUX, r, 0) == 0);
    CHECK(weft_insert_task(two, &axpb_cls, WEFT_RW, r, WEFT_VALUE, &v, sizeof v, 0) ==
          WEFT_ERR_INVALID);
    CHECK(weft_taskpool_wait(two) == 0);
    CHECK(weft_taskpool_wait(one) == 0);
    if (rank == 0) CHECK(sum == 6.0);
    weft_data_release(r);

    weft_taskpool_free(one);
    weft_taskpool_free(two);
    weft_matrix_free(A);
    weft_matrix_free(B);
    CHECK(weft_fini(ctx) == 0);
    return check_report("test_two_pools");
}
