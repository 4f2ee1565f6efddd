/* The application calls MPI_Finalize before weft_fini (argument "user":
 * it started MPI itself; "weft": weft_init did). Before, MPI aborted
 * every rank in the comm thread's next call ("MPI_Testsome() called after
 * MPI_FINALIZE"), without a word of weft. Now MPI_Finalize stops weft's
 * threads while MPI still works (an MPI_COMM_SELF attribute), every rank
 * says so, an insertion and a wait afterwards fail without calling MPI, and
 * weft_fini returns WEFT_ERR_MPI: exit status 0 when all of that held. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../check.h"
#include "weft/weft.h"

static int inc(weft_task_t *t)
{
    double *x = weft_task_ptr(t, 0);
    x[0] += 1;
    return 0;
}

static const weft_task_class_t inc_class = {.name = "inc",
                                            .body = {[WEFT_DEV_CPU] = inc, [WEFT_DEV_EMU] = inc}};

/* "user two": two contexts, the first made first; the last rank
 * calls MPI_Finalize with both alive, the others wait for a taskpool of
 * the second, then end the second, then the first. The last rank's hook
 * took the contexts' agreements one after another, the first's first, and
 * waited there for ever while the others stood in the second's wait. */
/* A body that ends MPI once the main thread is in the wait. */
static int finalize_body(weft_task_t *t)
{
    (void)t;
    usleep(300 * 1000);
    MPI_Finalize();
    return 0;
}

static const weft_task_class_t finalize_class = {.name = "finalize",
                                                 .body = {[WEFT_DEV_CPU] = finalize_body}};

/* "body": a body calls MPI_Finalize while the main thread waits: the wait
 * returns WEFT_ERR_MISMATCH (it waited for ever: the threads that would
 * end the task had been stopped under it), weft_fini an error. */
static int finalize_in_body(int *argc, char ***argv)
{
    weft_context_t *ctx = weft_init(argc, argv);
    REQUIRE(ctx != NULL);
    double x = 0;
    weft_data_t *d = weft_data_register(ctx, WEFT_DOUBLE, &x, 1, 1, 1, 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "ender");
    CHECK(weft_insert_task(tp, &finalize_class, WEFT_RW, d, 0) == 0);
    int w = weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    weft_data_release(d);
    int f = weft_fini(ctx);
    CHECK(w == WEFT_ERR_MISMATCH && f != WEFT_SUCCESS);
    printf("test_mpi_end rank 0: body: wait %d, fini %d: %s\n", w, f,
           check_report("test_mpi_end") ? "FAILED" : "ok");
    return 0;
}

static int two_contexts(int *argc, char ***argv)
{
    weft_context_t *first = weft_init(argc, argv);
    weft_context_t *second = weft_init(argc, argv);
    REQUIRE(first != NULL && second != NULL);
    int me = weft_rank(second), R = weft_nranks(second);
    double x = 0;
    weft_data_t *d = weft_data_register(second, WEFT_DOUBLE, me == 0 ? &x : NULL, 1, 1, 1, 0);
    if (me == R - 1) {
        capture_begin();
        MPI_Finalize();
        weft_data_release(d);
        int f2 = weft_fini(second), f1 = weft_fini(first);
        capture_end();
        CHECK(f2 == WEFT_ERR_MPI && f1 == WEFT_ERR_MPI);
        printf("test_mpi_end rank %d: two contexts: %s\n", me,
               check_report("test_mpi_end") ? "FAILED" : "ok");
        return 0;
    }
    weft_taskpool_t *tp = weft_taskpool_new(second, "second");
    CHECK(weft_insert_task(tp, &inc_class, WEFT_RW, d, WEFT_ON_RANK, 0, 0) == 0);
    capture_begin();
    int w = weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    weft_data_release(d);
    int f2 = weft_fini(second), f1 = weft_fini(first);
    capture_end();
    CHECK(w != WEFT_SUCCESS && f2 != WEFT_SUCCESS && f1 != WEFT_SUCCESS);
    char line[96];
    snprintf(line, sizeof line, "rank %d: in MPI_Finalize, called before weft_fini", R - 1);
    CHECK(captured(line));
    printf("test_mpi_end rank %d: two contexts: wait %d, fini %d %d: %s\n", me, w, f2, f1,
           check_report("test_mpi_end") ? "FAILED" : "ok");
    fflush(stdout);
    MPI_Finalize();
    return 0;
}

int main(int argc, char **argv)
{
    /* "single": the application starts MPI without MPI_THREAD_MULTIPLE:
     * weft_init refuses on every rank, saying why in the form of its other
     * failures (it read "weft_init failed (workers and comm): MPI error").
     * "multiple": with MPI_THREAD_MULTIPLE, run beside "single" ranks,
     * whose words it prints (it read the same "MPI error"). */
    int multiple = argc > 1 && strcmp(argv[1], "multiple") == 0;
    if (argc > 1 && (strcmp(argv[1], "single") == 0 || multiple)) {
        int provided = 0;
        if (multiple)
            MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
        else
            MPI_Init(&argc, &argv);
        int me = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &me);
        weft_context_t *ctx = weft_init(&argc, &argv);
        printf("test_mpi_end rank %d: %s: weft_init %s\n", me, argv[1],
               ctx ? "made a context" : "refused");
        if (ctx) weft_fini(ctx);
        MPI_Finalize();
        return ctx != NULL;
    }
    if (argc > 1 && strcmp(argv[1], "body") == 0) return finalize_in_body(&argc, &argv);
    int user = argc > 1 && strcmp(argv[1], "user") == 0, provided = 0;
    if (user) MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (user && argc > 2 && strcmp(argv[2], "two") == 0) return two_contexts(&argc, &argv);
    weft_context_t *ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL);
    int me = weft_rank(ctx), R = weft_nranks(ctx);
    double x = 0;
    weft_data_t *d = weft_data_register(ctx, WEFT_DOUBLE, me == 0 ? &x : NULL, 1, 1, 1, 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "before");
    for (int k = 0; k < 4; k++)
        CHECK(weft_insert_task(tp, &inc_class, WEFT_RW, d, WEFT_ON_RANK, k % R, 0) == 0);
    CHECK(weft_taskpool_wait(tp) == WEFT_SUCCESS);
    if (me == 0) CHECK(x == 4);
    /* "inflight" (argument 2): tasks not waited for when MPI ends, on
     * workers and devices (one rank has no comm engine: its threads were
     * not stopped, and weft_fini freed the scheduler under them). */
    int inflight = argc > 2 && strcmp(argv[2], "inflight") == 0;
    for (int k = 0; inflight && k < 200; k++)
        CHECK(weft_insert_task(tp, &inc_class, WEFT_RW, d, WEFT_ON_RANK, k % R, 0) == 0);
    /* "one" (argument 2): only the last rank calls MPI_Finalize here; the
     * others wait for a taskpool of their own tasks, then end as told.
     * Their wait and weft_fini fail, naming the last rank's MPI_Finalize
     * (they waited for ever in the wait's agreement). */
    if (argc > 2 && strcmp(argv[2], "one") == 0 && me != R - 1) {
        for (int k = 0; k < 4; k++)
            CHECK(weft_insert_task(tp, &inc_class, WEFT_RW, d, WEFT_ON_RANK, 0, 0) == 0);
        capture_begin();
        int w = weft_taskpool_wait(tp);
        weft_taskpool_free(tp);
        weft_data_release(d);
        int f = weft_fini(ctx);
        capture_end();
        CHECK(w != WEFT_SUCCESS && f != WEFT_SUCCESS);
        char line[96];
        snprintf(line, sizeof line, "rank %d: in MPI_Finalize, called before weft_fini", R - 1);
        CHECK(captured(line));
        printf("test_mpi_end rank %d: wait %d, fini %d: %s\n", me, w, f,
               check_report("test_mpi_end") ? "FAILED" : "ok");
        fflush(stdout);
        if (user) MPI_Finalize();
        return 0;
    }
    capture_begin();
    MPI_Finalize();
    /* "nofini" (argument 2): the process leaves without weft_fini. The
     * tasks not waited for were dropped, and it exited 0. */
    if (argc > 2 && strcmp(argv[2], "nofini") == 0) {
        capture_end();
        printf("test_mpi_end rank %d: leaving without weft_fini\n", me);
        fflush(stdout);
        return 0;
    }
    CHECK(weft_insert_task(tp, &inc_class, WEFT_RW, d, WEFT_ON_RANK, R - 1, 0) == WEFT_ERR_MPI);
    CHECK(weft_insert_task(tp, &inc_class, WEFT_RW, d, WEFT_ON_RANK, R - 1, 0) == WEFT_ERR_MPI);
    CHECK(weft_taskpool_wait(tp) != WEFT_SUCCESS);
    weft_taskpool_free(tp);
    weft_data_release(d);
    CHECK(weft_fini(ctx) == WEFT_ERR_MPI);
    capture_end();
    CHECK(captured("MPI_Finalize was called before weft_fini: weft stops this rank's threads"));
    /* Said once for the taskpool, however many insertions follow. */
    CHECK(captured_count("weft_insert_task: taskpool ") == 1);
    CHECK(captured("MPI was finalized before weft_fini: no task is inserted any more"));
    printf("test_mpi_end rank %d: %s\n", me, check_report("test_mpi_end") ? "FAILED" : "ok");
    return 0;
}
