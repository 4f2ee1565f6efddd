/* weft_data_set_reduction finding no memory for its tables (fault site
 * redux_alloc: the last of the three fails): refused, named, and a second
 * call builds the reduction whole. The first call left a half-built one
 * behind (its tables NULL): the second returned 0 and the first REDUX
 * insertion dereferenced NULL. Checked: the sum of K additions of 1..K. */
#include "../check.h"
#include "redux_classes.h"
#include "weft/weft.h"

enum { K = 7 };

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL);
    double x = 0;
    weft_data_t *d = weft_data_register(ctx, WEFT_DOUBLE, &x, 1, 1, 1, 0);
    REQUIRE(d != NULL);
    CHECK(weft_data_set_reduction(d, &redux_zero_class, &redux_combine_class) == WEFT_ERR_NOMEM);
    CHECK(weft_data_set_reduction(d, &redux_zero_class, &redux_combine_class) == WEFT_SUCCESS);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "sum");
    REQUIRE(tp != NULL);
    for (int k = 1; k <= K; k++) {
        double v = k;
        CHECK(weft_insert_task(tp, &redux_add_class, WEFT_REDUX, d, WEFT_VALUE, &v, sizeof v, 0) ==
              0);
    }
    CHECK(weft_taskpool_wait(tp) == WEFT_SUCCESS);
    weft_taskpool_free(tp);
    weft_data_release(d);
    CHECK(x == K * (K + 1) / 2);
    CHECK(weft_fini(ctx) == WEFT_SUCCESS);
    return check_report("test_redux_nomem");
}
