/* The counters are "any thread" (weft_stats.h): a monitor thread that
 * polls weft_stats_get and weft_device_counters_get while the main thread
 * runs weft_fini must get values or a refusal, never a crash. Before, the
 * device counters were read from a device weft_fini was closing (a
 * stranger's monitor died of SIGSEGV in 2 runs of 10). MPI is the
 * program's, so that 20 contexts are made and ended in turn, each with an
 * emu device, 64 tasks on it and its monitor. The last counters a monitor
 * read while the context lived must be whole: 64 device tasks. The
 * parameters come from the environment (the first weft_init takes the
 * command line's). */
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>

#include "../check.h"
#include "weft/weft.h"
#include "weft/weft_stats.h"

static int bump(weft_task_t *t)
{
    *(double *)weft_task_ptr(t, 0) += 1;
    return 0;
}

static const weft_task_class_t bump_class = {
    .name = "bump", .body = {[WEFT_DEV_CPU] = bump, [WEFT_DEV_EMU] = bump}};

typedef struct {
    weft_context_t *ctx;
    atomic_int ending; /* weft_fini called: from then on a read may be refused */
    atomic_int done;   /* weft_fini returned: the handle is ended */
    long long tasks;   /* the most device tasks a read saw */
    int reads, failed; /* reads made, reads refused while the context lived */
} monitor_t;

static void *monitor(void *arg)
{
    monitor_t *m = arg;
    while (!atomic_load(&m->done)) {
        weft_stats_t s;
        weft_device_counters_t c;
        int rs = weft_stats_get(m->ctx, &s), rd = weft_device_counters_get(m->ctx, 1, &c);
        /* Read after the calls: a refusal is allowed only once weft_fini
         * was called (it ends the handle before it returns; the test
         * counted a refusal in that window a failure, 1 run in CI). */
        int ending = atomic_load(&m->ending);
        if (rs != 0 || rd != 0) {
            m->failed += !ending;
            continue;
        }
        m->reads++;
        if (c.tasks > m->tasks) m->tasks = c.tasks;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = 0;
    REQUIRE(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) == MPI_SUCCESS);
    for (int round = 0; round < 20; round++) {
        weft_context_t *ctx = weft_init(NULL, NULL);
        REQUIRE(ctx != NULL && weft_ndevices(ctx) == 1);
        static double x;
        weft_data_t *d = weft_data_register(ctx, WEFT_DOUBLE, &x, 1, 1, 1, 0);
        weft_taskpool_t *tp = weft_taskpool_new(ctx, "bumps");
        for (int k = 0; k < 64; k++)
            CHECK(weft_insert_task(tp, &bump_class, WEFT_RW, d, WEFT_DEVICE_HINT, 1, 0) == 0);
        CHECK(weft_taskpool_wait(tp) == 0);
        weft_taskpool_free(tp);
        weft_data_release(d);
        monitor_t m = {.ctx = ctx};
        pthread_t th;
        REQUIRE(pthread_create(&th, NULL, monitor, &m) == 0);
        atomic_store(&m.ending, 1);
        CHECK(weft_fini(ctx) == 0);
        atomic_store(&m.done, 1);
        pthread_join(th, NULL);
        CHECK(m.failed == 0);
        CHECK(m.reads == 0 || m.tasks == 64);
    }
    MPI_Finalize();
    return check_report("test_counters_fini");
}
