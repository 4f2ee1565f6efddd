/* A process that makes and ends a context in a loop (a service, a driver
 * of many runs): what each ended context keeps is bounded. Each cycle
 * releases a data and frees a matrix (the quarantine's ring, 384 KiB, is
 * made at the first release); the heap, mmapped blocks included, may not
 * grow by more than 64 KiB a cycle between cycles 10 and 40 (it grew by
 * 405 KiB a cycle: every ended context kept its ring). */
#include <mpi.h>
#include <stdio.h>

#include "../check.h"
#include "heap_bytes.h"
#include "weft/weft.h"

int main(int argc, char **argv)
{
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    size_t at10 = 0, at40 = 0;
    for (int c = 0; c <= 40; c++) {
        int n = argc;
        char **v = argv;
        weft_context_t *ctx = weft_init(&n, &v);
        REQUIRE(ctx != NULL);
        weft_matrix_t *A = weft_matrix_new(ctx, WEFT_DOUBLE, 128, 128, 64, 64, 1, 1);
        weft_data_t *d = weft_data_new(ctx, WEFT_DOUBLE, 4, 4, 0);
        REQUIRE(A && d);
        weft_data_release(d);
        weft_matrix_free(A);
        CHECK(weft_fini(ctx) == 0);
        if (c == 10) at10 = heap_bytes();
        if (c == 40) at40 = heap_bytes();
    }
    double per_cycle = ((double)at40 - (double)at10) / 30.0;
    printf("heap growth a cycle: %.1f KiB\n", per_cycle / 1024);
    CHECK(per_cycle < 64 * 1024);
    MPI_Finalize();
    return check_report("init_cycles");
}
