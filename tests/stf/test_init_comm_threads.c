/* Two threads a rank, each making a context with weft_init_comm on a
 * communicator of its own (two duplicates of MPI_COMM_WORLD: every rank in
 * both), rank 0 starting thread A's first and rank 1 thread B's. MPI lets
 * the two duplications run at once from two threads; weft held a
 * process-wide lock inside each, so rank 0 held it in A's and waited for
 * B's while rank 1 did the opposite: both hung (3 of 3 runs of a
 * stranger's program). Each context then runs a chain of tasks across the
 * ranks and checks its value. */
#include <pthread.h>
#include <unistd.h>

#include "../check.h"
#include "weft/weft_mpi.h"

static MPI_Comm comms[2];
static int world_rank;

static int bump(weft_task_t *t)
{
    double *x = weft_task_ptr(t, 0);
    x[0] += 1;
    return 0;
}

static const weft_task_class_t bump_class = {.name = "bump", .body = {[WEFT_DEV_CPU] = bump}};

static void *one_context(void *arg)
{
    int which = (int)(long)arg;
    if (which != world_rank % 2) usleep(200000); /* the other's first */
    int argc = 0;
    char **argv = NULL;
    weft_context_t *ctx = weft_init_comm(comms[which], &argc, &argv);
    REQUIRE(ctx != NULL);
    double x = 0;
    int n = weft_nranks(ctx), hops = 6;
    weft_data_t *d = weft_data_register(ctx, WEFT_DOUBLE, &x, 1, 1, 1, 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, which ? "B" : "A");
    for (int h = 0; h < hops; h++)
        CHECK(weft_insert_task(tp, &bump_class, WEFT_RW, d, WEFT_ON_RANK, h % n, 0) == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    weft_taskpool_free(tp);
    weft_data_release(d);
    if (weft_rank(ctx) == 0) CHECK(x == hops);
    CHECK(weft_fini(ctx) == 0);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = 0;
    REQUIRE(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) == MPI_SUCCESS);
    REQUIRE(provided == MPI_THREAD_MULTIPLE);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[0]);
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]);
    pthread_t t[2];
    for (long i = 0; i < 2; i++) REQUIRE(pthread_create(&t[i], NULL, one_context, (void *)i) == 0);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    MPI_Comm_free(&comms[0]);
    MPI_Comm_free(&comms[1]);
    int rc = check_report("stf_init_comm_threads");
    MPI_Finalize();
    return rc;
}
