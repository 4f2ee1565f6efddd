/* The collective an agreement makes when the ranks disagree fails in MPI
 * (fault_inject mpi_coll:1, on every rank, as when the communicator
 * breaks): the broadcast of the failing rank's words ("failed": rank 0's
 * gather is refused, a NULL buffer on the root) or the gather of the
 * points every rank reached ("points": rank 1 skips the gather and waits).
 * Both returned WEFT_ERR_MPI without a line and without stopping the
 * context's later collectives; now every rank names the collective, the
 * context is diverged (the next wait returns WEFT_ERR_MISMATCH at once),
 * weft_fini fails. "none" makes no gather (stf_agree_mpi_one_rank_r2: MPI
 * itself fails a collective on one rank). Prints "test_agree_mpi rank R: gather=G next=N fini=F"
 * (run_expect.sh checks). */
#include <dlfcn.h> /* RTLD_DEFAULT: the build defines _GNU_SOURCE */
#include <stdio.h>
#include <string.h>

#include "weft/weft.h"

/* Starts fail_preload.c's failures when it is preloaded (a no-op
 * otherwise): from here on, so that weft_init's calls do not count. */
static void arm_preload(void)
{
    void *sym = dlsym(RTLD_DEFAULT, "weft_test_preload_arm");
    void (*arm)(void);
    if (!sym) return;
    memcpy(&arm, &sym, sizeof arm); /* an object pointer's bytes, as POSIX allows */
    arm();
}

/* "data": a weft_data_new and a weft_data_register, then a wait (run with
 * every aligned_alloc failing on one rank: stf_data_nomem_one_rank_r2). */
static int data_calls(weft_context_t *ctx)
{
    static double x;
    arm_preload();
    weft_data_t *d = weft_data_new(ctx, WEFT_DOUBLE, 4, 4, 0);
    weft_data_t *r = weft_data_register(ctx, WEFT_DOUBLE, &x, 1, 1, 1, 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "next");
    int w = weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    if (d) weft_data_release(d);
    if (r) weft_data_release(r);
    int me = weft_rank(ctx), f = weft_fini(ctx);
    printf("test_agree_mpi rank %d: new=%s register=%s next=%d fini=%d\n", me, d ? "ok" : "NULL",
           r ? "ok" : "NULL", w, f);
    return 0;
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 2;
    int me = weft_rank(ctx), points = argc > 1 && strcmp(argv[1], "points") == 0;
    int none = argc > 1 && strcmp(argv[1], "none") == 0; /* no gather: MPI fails (preload) */
    if (argc > 1 && strcmp(argv[1], "data") == 0) return data_calls(ctx);
    weft_matrix_t *A = weft_matrix_new(ctx, WEFT_DOUBLE, 8, 8, 4, 4, weft_nranks(ctx), 1);
    static double buf[64];
    int g = 1;
    if (none)
        g = 0;
    else if (!points)
        g = weft_matrix_gather(A, 0, me == 0 ? NULL : buf, 8);
    else if (me != 1)
        g = weft_matrix_gather(A, 0, buf, 8);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "next");
    if (none) arm_preload(); /* its first MPI_Iallreduce: the wait's agreement */
    int w = weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    weft_matrix_free(A);
    int f = weft_fini(ctx);
    printf("test_agree_mpi rank %d: gather=%d next=%d fini=%d\n", me, g, w, f);
    return 0;
}
