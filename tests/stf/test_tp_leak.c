/* The taskpool-end leak report: silent after a clean run, and it names a
 * planted leak (a reader left on a copy, as a lost transfer would leave).
 * A leak the wait itself finds (a reader planted before a taskpool that
 * reads the data) makes that wait and weft_fini return WEFT_ERR_INTERNAL
 * (they returned 0 after the error lines); with leak_report=0 (argument
 * "off") neither reports nor fails. On several ranks the leak is planted
 * on rank 0 (the data's owner) only: every rank's wait and weft_fini
 * return WEFT_ERR_INTERNAL, the other ranks naming rank 0's leak (they
 * returned 0 there: the leak was found after the failure exchange). While
 * another taskpool is open, a reader is not counted. */
#include <stdio.h>
#include <string.h>

#include "context/context.h"
#include "weft/weft.h"

static int body(weft_task_t *t) { return 0; }
static const weft_task_class_t cls = {.name = "touch", .body = {[WEFT_DEV_CPU] = body}};

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 1;
    int me = weft_rank(ctx);
    double x[16] = {0};
    weft_data_t *d = weft_data_register(ctx, WEFT_DOUBLE, x, 4, 4, 4, 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "clean");
    int rc = weft_insert_task(tp, &cls, WEFT_RW, d, 0) | weft_taskpool_wait(tp);
    int clean = weft_taskpool_leak_report(ctx, &d, 1, "clean", 0), planted = 1, tolerated = 0;
    if (me == 0) {
        weft_data_lock(d);
        weft_data_copy_reader_acquire_locked(d->copies[0]); /* the planted leak */
        weft_data_unlock(d);
        planted = weft_taskpool_leak_report(ctx, &d, 1, "planted", 0);
        /* Another taskpool open: its work may hold the copy (an eviction
         * making room for its task held one when this taskpool's wait
         * looked, and its correct run failed WEFT_ERR_INTERNAL). */
        tolerated = weft_taskpool_leak_report(ctx, &d, 1, "planted", 1);
        weft_data_lock(d);
        weft_data_copy_reader_release_locked(d->copies[0]);
        weft_data_unlock(d);
    }
    weft_taskpool_free(tp);
    /* The leak found by a wait. */
    int off = argc > 1 && strcmp(argv[1], "off") == 0, want = off ? 0 : WEFT_ERR_INTERNAL;
    if (me == 0) {
        weft_data_lock(d);
        weft_data_copy_reader_acquire_locked(d->copies[0]);
        weft_data_unlock(d);
    }
    tp = weft_taskpool_new(ctx, "leaky");
    rc |= weft_insert_task(tp, &cls, WEFT_R, d, 0);
    int wrc = weft_taskpool_wait(tp);
    if (me == 0) {
        weft_data_lock(d);
        weft_data_copy_reader_release_locked(d->copies[0]);
        weft_data_unlock(d);
    }
    weft_taskpool_free(tp);
    weft_data_release(d);
    int frc = weft_fini(ctx);
    int ok = rc == 0 && clean == 0 && planted == 1 && tolerated == 0 && wrc == want && frc == want;
    printf("test_tp_leak rank %d: clean run %d leaks, planted %d, leaky wait %d, fini %d: %s\n", me,
           clean, planted, wrc, frc, ok ? "PASSED" : "FAILED");
    return !ok;
}
