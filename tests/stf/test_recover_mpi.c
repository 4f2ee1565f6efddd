/* A collective of the recovery of good versions after a failure fails in
 * MPI (fault_inject mpi_coll:N, on every rank, as when the communicator
 * breaks). The scenario of test_fail_good_version.c on 3 ranks: d owned
 * by rank 0 gets +1 on rank 0, +2 on rank 1, a failing body on rank 2,
 * +100 on rank 0 (cancelled), so the wait brings rank 1's version home.
 * Every rank names the collective that failed, its wait fails, its context
 * is diverged (the next wait returns WEFT_ERR_MISMATCH at once) and
 * weft_fini fails; nothing hangs. The recovery ignored MPI's return codes:
 * a broadcast that failed installed a buffer MPI never filled, and the
 * ranks went on into collectives whose partners were unknown. Prints
 * "test_recover_mpi rank R: wait=W next=N fini=F" (run_expect.sh checks). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "weft/weft.h"

static int add(weft_task_t *t)
{
    int v;
    if (weft_task_value_get(t, 0, &v, sizeof v) != 0) return -1;
    if (v < 0) return 3; /* the failing body */
    double *x = weft_task_ptr(t, 0);
    x[0] += v;
    return 0;
}

static const weft_task_class_t add_class = {.name = "add", .body = {[WEFT_DEV_CPU] = add}};

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 2;
    int me = weft_rank(ctx);
    double mem = 0.0;
    weft_data_t *d = weft_data_register(ctx, WEFT_DOUBLE, me == 0 ? &mem : NULL, 1, 1, 1, 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "chain");
    const int vals[] = {1, 2, -1, 100}, on[] = {0, 1, 2, 0};
    int rc = d && tp ? 0 : 1;
    for (int k = 0; rc == 0 && k < 4; k++)
        rc = weft_insert_task(tp, &add_class, WEFT_RW, d, WEFT_VALUE, &vals[k], sizeof vals[k],
                              WEFT_ON_RANK, on[k], 0);
    int wait = rc ? rc : weft_taskpool_wait(tp);
    int next = weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    weft_data_release(d);
    int fini = weft_fini(ctx);
    printf("test_recover_mpi rank %d: wait=%d next=%d fini=%d\n", me, wait, next, fini);
    fflush(stdout);
    usleep(300000); /* mpiexec ends the job at the first non-zero exit */
    return fini != 0 ? 1 : 0;
}
