/* Calls that return nothing and refuse their argument (a second
 * weft_data_release, a second weft_taskpool_free or weft_matrix_free,
 * weft_data_release of a matrix's tile or of NULL) log why and have only
 * weft_fini to fail: it returns WEFT_ERR_INVALID on every rank (it returned
 * 0, and the run exited 0). "none" is the control. "failed": a task
 * failed before the refusal, so weft_fini returns the run's first error
 * (WEFT_ERR_TASK), and the refusal's line says so (it said -1).
 * "unwaited": a taskpool freed before its wait came first (a misuse of its
 * own, told to the other ranks): the refusal's line is still said (it was
 * lost). */
#include <stdio.h>
#include <string.h>

#include "elapsed.h"
#include "weft/weft.h"
#include "weft/weft_matrix.h"

static int fail_body(weft_task_t *t)
{
    (void)t;
    return 1;
}
static const weft_task_class_t fail_class = {.name = "fails", .body = {[WEFT_DEV_CPU] = fail_body}};
static int ok_body(weft_task_t *t)
{
    (void)t;
    return 0;
}
static const weft_task_class_t ok_class = {.name = "ok", .body = {[WEFT_DEV_CPU] = ok_body}};

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
    if (strcmp(mode, "failed") == 0) {
        weft_data_t *e = weft_data_new(ctx, WEFT_DOUBLE, 1, 1, 0);
        int irc = weft_insert_task(tp, &fail_class, WEFT_W, e, 0);
        int wrc = weft_taskpool_wait(tp);
        printf("test_void_refused rank %d: insert %d wait %d\n", me, irc, wrc);
        weft_data_release(e);
        weft_data_release(e);
    }
    if (strcmp(mode, "unwaited") == 0) {
        int irc = weft_insert_task(tp, &ok_class, WEFT_W, d, 0);
        printf("test_void_refused rank %d: insert %d\n", me, irc);
        weft_taskpool_free(tp);
        tp = weft_taskpool_new(ctx, "tp2");
        weft_matrix_free(A);
        weft_matrix_free(A);
        A = weft_matrix_new(ctx, WEFT_DOUBLE, 8, 8, 4, 4, 1, weft_nranks(ctx));
    }
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
