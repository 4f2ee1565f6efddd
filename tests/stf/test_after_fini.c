/* Calls made after weft_fini with the context and its handles, as an
 * application's cleanup code makes them in the wrong order: a second
 * weft_fini, a weft_matrix_free, weft_data_release and weft_taskpool_free of
 * handles fini freed or never saw freed, an insertion, a wait, an acquire.
 * Each is refused with an error naming the handle as one of an ended
 * context and returns its error value; they used to read freed memory
 * (AddressSanitizer: heap-use-after-free in weft_handle_check, or an MPI
 * call after MPI_Finalize from the second weft_fini). Handles released
 * before weft_fini (B, e, tp2) are refused the same way. */
#include "../check.h"
#include "weft/weft.h"

static int touch(weft_task_t *t)
{
    (void)t;
    return 0;
}

static const weft_task_class_t touch_class = {.name = "touch", .body = {[WEFT_DEV_CPU] = touch}};

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL);
    int rank = weft_rank(ctx), n = weft_nranks(ctx);
    weft_matrix_t *A = weft_matrix_new(ctx, WEFT_DOUBLE, 8, 8, 4, 4, n, 1);
    weft_matrix_t *B = weft_matrix_new(ctx, WEFT_DOUBLE, 8, 8, 4, 4, n, 1);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "kept");
    weft_taskpool_t *tp2 = weft_taskpool_new(ctx, "freed");
    weft_data_t *d = weft_data_new(ctx, WEFT_DOUBLE, 2, 2, 0);
    weft_data_t *e = weft_data_new(ctx, WEFT_DOUBLE, 2, 2, 0);
    REQUIRE(A && B && tp && tp2 && d && e);
    CHECK(weft_insert_task(tp, &touch_class, WEFT_W, d, 0) == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    weft_matrix_free(B);
    weft_taskpool_free(tp2);
    weft_data_release(e);
    /* A, d and tp are left to weft_fini: d holds runtime memory on rank 0,
     * which the leak report names (every rank's fini returns -1). */
    CHECK(weft_fini(ctx) == WEFT_ERR_INVALID);

    CHECK(weft_fini(ctx) == WEFT_ERR_INVALID);
    CHECK(weft_rank(ctx) == -1);
    CHECK(weft_taskpool_new(ctx, "late") == NULL);
    CHECK(weft_data_new(ctx, WEFT_DOUBLE, 2, 2, 0) == NULL);
    CHECK(weft_insert_task(tp, &touch_class, WEFT_W, d, 0) == WEFT_ERR_INVALID);
    CHECK(weft_taskpool_wait(tp) == WEFT_ERR_INVALID);
    CHECK(weft_tile(A, 0, 0) == NULL);
    void *p = NULL;
    CHECK(weft_data_host_acquire(d, WEFT_R, &p, NULL) == WEFT_ERR_INVALID);
    CHECK(weft_data_host_ptr(d, NULL) == NULL);
    weft_taskpool_free(tp);
    weft_taskpool_free(tp2);
    weft_matrix_free(A);
    weft_matrix_free(B);
    weft_data_release(d);
    weft_data_release(e);
    printf("test_after_fini rank %d: done\n", rank);
    return check_report("test_after_fini");
}
