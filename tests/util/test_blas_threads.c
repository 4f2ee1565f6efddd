/* libweft links no BLAS (issue 15 item 11) yet keeps the application's
 * OpenBLAS single-threaded inside task bodies, found at run time, and gives
 * the old thread count back at weft_fini. This program links OpenBLAS
 * itself, as an application does. */
#include <cblas.h>

#include "../check.h"
#include "weft/weft.h"

static int seen_in_body = -1;

static int probe(weft_task_t *t)
{
    seen_in_body = openblas_get_num_threads();
    return 0;
}

static const weft_task_class_t probe_class = {.name = "probe", .body = {[WEFT_DEV_CPU] = probe}};

int main(int argc, char **argv)
{
    openblas_set_num_threads(3);
    int before = openblas_get_num_threads();
    weft_context_t *ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL);
    double x = 0;
    weft_data_t *d = weft_data_register(ctx, WEFT_DOUBLE, &x, 1, 1, 1, 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "blas");
    CHECK(weft_insert_task(tp, &probe_class, WEFT_RW, d, 0) == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    CHECK(seen_in_body == 1);
    weft_taskpool_free(tp);
    weft_data_release(d);
    CHECK(weft_fini(ctx) == 0);
    /* OpenBLAS built for fewer cores clamps the 3 asked: compare with what it took. */
    CHECK(openblas_get_num_threads() == before);
    return check_report("blas_threads");
}
