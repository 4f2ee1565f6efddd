/* weft_fini with a data never released (a NEW tile a task wrote on rank
 * 0, so only rank 0 holds runtime memory for it): with leak_report on
 * (the default), rank 0 names the data in its leak report and fini returns
 * WEFT_ERR_INVALID on every rank; with leak_report=0 there is no report
 * and fini returns 0. Usage: test_fini_leak [--release] (the control: the
 * data is released, fini returns 0) or [--refuse1] (rank 1 also has an
 * error of its own at weft_fini: a weft_data_release(NULL) refused; each
 * rank names the other's failure, the leak included). Prints "test_fini_leak rank R:
 * fini=RC"; run_expect.sh checks the lines and the status. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "weft/weft.h"

static int fill(weft_task_t *t)
{
    double *x = weft_task_ptr(t, 0);
    x[0] = 1.0;
    return 0;
}

static const weft_task_class_t fill_cls = {.name = "fill", .body = {[WEFT_DEV_CPU] = fill}};

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 2;
    int release = argc > 1 && strcmp(argv[1], "--release") == 0;
    int refuse1 = argc > 1 && strcmp(argv[1], "--refuse1") == 0;
    int rank = weft_rank(ctx);
    weft_data_t *kept = weft_data_new(ctx, WEFT_DOUBLE, 4, 4, 0);
    weft_data_t *freed = weft_data_new(ctx, WEFT_DOUBLE, 4, 4, 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "fill");
    int rc = weft_insert_task(tp, &fill_cls, WEFT_W, kept, 0);
    rc |= weft_insert_task(tp, &fill_cls, WEFT_W, freed, 0);
    rc |= weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    weft_data_release(freed);
    if (release) weft_data_release(kept);
    if (refuse1 && rank == 1) weft_data_release(NULL);
    int f = weft_fini(ctx);
    printf("test_fini_leak rank %d: insert+wait=%d fini=%d\n", rank, rc, f);
    fflush(stdout);
    /* mpiexec aborts the job at the first non-zero exit: the other ranks'
     * lines were lost now and then (1 run in ~30). */
    if (rc != 0 || f != 0) usleep(300000);
    return rc != 0 ? 3 : f != 0 ? 1 : 0;
}
