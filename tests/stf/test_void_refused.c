/* Calls that return nothing and refuse their argument (a second
 * weft_data_release, a second weft_taskpool_free or weft_matrix_free,
 * weft_data_release of a matrix's tile or of NULL) log why and have only
 * weft_fini to fail: it returns WEFT_ERR_INVALID on every rank (it returned
 * 0, and the run exited 0). "none" is the control. */
#include <stdio.h>
#include <string.h>

#include "elapsed.h"
#include "weft/weft.h"
#include "weft/weft_matrix.h"

int main(int argc, char **argv)
{
    elapsed_start(); /* the ranks meet at exit: a rank's last line is not lost */
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 1;
    const char *mode = argc > 1 ? argv[1] : "none";
    int me = weft_rank(ctx);
    weft_data_t *d = weft_data_new(ctx, WEFT_DOUBLE, 4, 4, 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "tp");
    weft_matrix_t *A = weft_matrix_new(ctx, WEFT_DOUBLE, 8, 8, 4, 4, 1, weft_nranks(ctx));
    if (strcmp(mode, "tile") == 0) weft_data_release(weft_tile(A, 0, 0));
    if (strcmp(mode, "null") == 0) weft_data_release(NULL);
    weft_data_release(d);
    if (strcmp(mode, "release") == 0) weft_data_release(d);
    weft_taskpool_free(tp);
    if (strcmp(mode, "free") == 0) weft_taskpool_free(tp);
    weft_matrix_free(A);
    if (strcmp(mode, "matrix") == 0) weft_matrix_free(A);
    int rc = weft_fini(ctx);
    printf("test_void_refused rank %d: %s: weft_fini %d\n", me, mode, rc);
    fflush(stdout);
    return rc != 0;
}
