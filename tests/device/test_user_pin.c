/* weft_host_pin / weft_host_unpin (user memory page-locked for the rank's
 * devices): bad arguments and overlaps refused with a message naming them,
 * an unpin of memory not pinned refused, pinned memory used by a device
 * task round trip (a wrapped matrix, scaled on the devices, read back),
 * a range left pinned undone at weft_fini without an error; without
 * devices (DEVTEST_NODEV) the calls keep the same rules and pin nothing.
 * On CUDA the pinning is real (cudaHostRegister). */
#include <stdint.h>
#include <stdlib.h>

#include "devtest.h"

int main(int argc, char **argv)
{
    int nodev = getenv("DEVTEST_NODEV") != NULL;
    weft_context_t *ctx = nodev ? weft_init(&argc, &argv) : devtest_init(&argc, &argv, 1);
    REQUIRE(ctx != NULL);
    enum { N = 256, NB = 64 };
    double *a = malloc(sizeof(double) * N * N), *b = malloc(4096);
    REQUIRE(a != NULL && b != NULL);
    for (int i = 0; i < N * N; i++) a[i] = i;

    capture_begin();
    CHECK(weft_host_pin(ctx, NULL, 64) == WEFT_ERR_INVALID);
    CHECK(weft_host_pin(ctx, a, 0) == WEFT_ERR_INVALID);
    CHECK(weft_host_pin(ctx, a, sizeof(double) * N * N) == 0);
    CHECK(weft_host_pin(ctx, a + 100, 64) == WEFT_ERR_INVALID); /* inside the range */
    /* A range past the end of the address space wrapped the overlap test. */
    CHECK(weft_host_pin(ctx, b, SIZE_MAX) == WEFT_ERR_INVALID);
    CHECK(weft_host_pin(ctx, (void *)(uintptr_t)-64, 1024) == WEFT_ERR_INVALID);
    CHECK(weft_host_unpin(ctx, a + 1) == WEFT_ERR_INVALID); /* not its start */
    CHECK(weft_host_unpin(ctx, b) == WEFT_ERR_INVALID);
    const char *text = capture_end();
    CHECK(strstr(text, "weft_host_pin: NULL pointer") != NULL);
    CHECK(strstr(text, "runs past the end of the address space") != NULL);
    CHECK(strstr(text, "weft_host_pin: 0 bytes") != NULL);
    CHECK(strstr(text, "pinned already") != NULL);
    CHECK(strstr(text, "is not the start of memory weft_host_pin pinned") != NULL);

    /* The pinned matrix through the devices and back. */
    weft_matrix_t *A = weft_matrix_wrap(ctx, WEFT_DOUBLE, a, N, N, N, NB, NB, 1, 1);
    REQUIRE(A != NULL);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "twice");
    for (int j = 0; j < N / NB; j++)
        for (int i = 0; i < N / NB; i++)
            CHECK(weft_insert_task(tp, &devtest_twice, WEFT_RW | WEFT_AFFINITY, weft_tile(A, i, j),
                                   0) == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    weft_taskpool_free(tp);
    weft_matrix_free(A);
    int bad = 0;
    for (int i = 0; i < N * N; i++) bad += a[i] != 2.0 * i;
    CHECK(bad == 0);

    CHECK(weft_host_unpin(ctx, a) == 0);
    capture_begin();
    CHECK(weft_host_unpin(ctx, a) == WEFT_ERR_INVALID); /* twice */
    capture_end();
    CHECK(weft_host_pin(ctx, a, sizeof(double) * N * N) == 0); /* again, after the unpin */
    CHECK(weft_host_pin(ctx, b, 4096) == 0);
    CHECK(weft_host_unpin(ctx, a) == 0);
    /* b stays pinned: weft_fini undoes it without an error. */
    CHECK(weft_fini(ctx) == 0);
    free(a);
    free(b);
    return check_report("user_pin");
}
