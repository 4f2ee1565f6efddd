/* Two application threads each make, use and end a context of their own,
 * their weft_init calls at the same instant. weft_init tested whether MPI
 * ran and then started it without holding anything between the two steps:
 * both threads started it (Open MPI aborted the process, weft silent), or,
 * with MPI started by the application, both duplicated MPI_COMM_WORLD at
 * once (MPI forbids two collectives on one communicator at a time: a crash
 * in MPI_Comm_dup). weft_init now makes its contexts one at a time.
 *
 * Contexts pair across ranks in the order their weft_init calls complete,
 * which two racing threads do not fix: both threads here make the same
 * data and tasks, so either pairing computes the same, and each checks
 * its own. argv[1] "app": the application starts MPI itself. */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include <mpi.h>

#include "../check.h"
#include "weft/weft.h"

#define WAVES 20
#define CHAIN 30
#define MOD 1000000007LL

static int step(weft_task_t *t)
{
    int64_t k = 0;
    if (weft_task_value_get(t, 0, &k, sizeof k) != 0) return -1;
    int64_t *x = weft_task_ptr(t, 0);
    *x = (*x * 3 + k) % MOD;
    return 0;
}

static const weft_task_class_t step_class = {.name = "step", .body = {[WEFT_DEV_CPU] = step}};

static int g_argc;
static char **g_argv;
static pthread_barrier_t start;
static int failed[2];

static void *thread_main(void *arg)
{
    int id = (int)(intptr_t)arg;
    int argc = g_argc;
    char *argv_copy[64];
    int n = argc < 63 ? argc : 63;
    memcpy(argv_copy, g_argv, sizeof(char *) * (size_t)n);
    argv_copy[n] = NULL;
    char **argv = argv_copy;
    pthread_barrier_wait(&start);
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) {
        fprintf(stderr, "test_init_threads: thread %d: weft_init failed\n", id);
        failed[id] = 1;
        return NULL;
    }
    int me = weft_rank(ctx), nr = weft_nranks(ctx), bad = 0;
    int64_t x = 1, want = 1;
    weft_data_t *d = weft_data_register(ctx, WEFT_INT64, &x, 1, 1, 1, 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "chain");
    bad |= d == NULL || tp == NULL;
    for (int w = 0; w < WAVES && !bad; w++) {
        int rc = 0;
        for (int64_t k = 0; k < CHAIN && rc == 0; k++) {
            rc = weft_insert_task(tp, &step_class, WEFT_RW, d, WEFT_VALUE, &k, sizeof k,
                                  WEFT_ON_RANK, (int)((k + w) % nr), 0);
            want = (want * 3 + k) % MOD;
        }
        int wrc = weft_taskpool_wait(tp);
        if (rc != 0 || wrc != 0) {
            fprintf(stderr, "thread %d wave %d: insert %d, wait %d\n", id, w, rc, wrc);
            bad = 1;
        } else if (me == 0 && x != want) {
            fprintf(stderr, "thread %d wave %d: %lld, expected %lld\n", id, w, (long long)x,
                    (long long)want);
            bad = 1;
        }
    }
    if (tp) weft_taskpool_free(tp);
    if (d) weft_data_release(d);
    if (weft_fini(ctx) != 0) bad = 1;
    failed[id] = bad;
    return NULL;
}

int main(int argc, char **argv)
{
    int app_mpi = argc > 1 && strcmp(argv[1], "app") == 0, provided = 0;
    if (app_mpi) {
        REQUIRE(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) == MPI_SUCCESS);
        REQUIRE(provided == MPI_THREAD_MULTIPLE);
    }
    g_argc = argc;
    g_argv = argv;
    REQUIRE(pthread_barrier_init(&start, NULL, 2) == 0);
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        REQUIRE(pthread_create(&th[i], NULL, thread_main, (void *)(intptr_t)i) == 0);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    CHECK(failed[0] == 0);
    CHECK(failed[1] == 0);
    if (app_mpi) MPI_Finalize();
    return check_report(app_mpi ? "stf_init_threads app" : "stf_init_threads");
}
