/* weft_matrix_host_release answers to weft_matrix_host_acquire, not to the
 * tiles' state: each rank acquires one of its tiles alone
 * (weft_data_host_acquire), and a matrix release without a matrix acquire
 * must be refused on every rank and leave that tile acquired, for its own
 * release. Before, the matrix release took the tile back and returned 0
 * (on a rank with such a tile; -1 on the others), and the program's own
 * release of the tile then failed ("data 0 is not acquired"). A matrix
 * acquire and release then work as usual. */
#include "../check.h"
#include "weft/weft.h"

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL);
    int nr = weft_nranks(ctx);
    weft_matrix_t *A = weft_matrix_new(ctx, WEFT_DOUBLE, 8, 8 * nr, 4, 4, 1, nr);
    REQUIRE(A != NULL && weft_matrix_local_count(A) > 0);
    weft_data_t *t = weft_matrix_local_tile(A, 0, NULL, NULL);
    void *p = NULL;
    CHECK(weft_data_host_acquire(t, WEFT_RW, &p, NULL) == WEFT_SUCCESS);
    CHECK(weft_matrix_host_release(A) == WEFT_ERR_INVALID);
    CHECK(weft_data_host_release(t) == WEFT_SUCCESS);
    CHECK(weft_matrix_host_acquire(A, WEFT_R) == WEFT_SUCCESS);
    CHECK(weft_matrix_host_release(A) == WEFT_SUCCESS);
    CHECK(weft_matrix_host_release(A) == WEFT_ERR_INVALID);
    weft_matrix_free(A);
    CHECK(weft_fini(ctx) == WEFT_SUCCESS);
    return check_report("test_matrix_release_alone");
}
