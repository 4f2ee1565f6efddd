// A C++ program on an installed weft (tests/install/install_check.sh): it
// starts MPI, makes a context on MPI_COMM_WORLD, runs one task on each
// rank's tile and checks it.
#include <cstdio>

#include <weft/weft.h>
#include <weft/weft_mpi.h>

static int fill(weft_task_t *t)
{
    static_cast<double *>(weft_task_ptr(t, 0))[0] = 42.0;
    return 0;
}

int main(int argc, char **argv)
{
    int provided = 0;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) return 1;
    weft_context_t *ctx = weft_init_comm(MPI_COMM_WORLD, &argc, &argv);
    if (ctx == nullptr) {
        MPI_Finalize();
        return 1;
    }
    weft_task_class_t cls = {};
    cls.name = "fill";
    cls.body[WEFT_DEV_CPU] = fill;
    int rank = weft_rank(ctx);
    double x = 0.0;
    int rc = 0;
    // Every rank registers every rank's 1x1 tile in rank order (its own
    // with its memory) and inserts the task on each: the same sequence.
    weft_data_t *tiles[64];
    int n = weft_nranks(ctx) < 64 ? weft_nranks(ctx) : 64;
    for (int r = 0; r < n; r++)
        tiles[r] = weft_data_register(ctx, WEFT_DOUBLE, r == rank ? &x : nullptr, 1, 1, 1, r);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "cxx");
    for (int r = 0; r < n && rc == 0; r++) rc = weft_insert_task(tp, &cls, WEFT_W, tiles[r], 0);
    if (rc == 0) rc = weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    for (int r = 0; r < n; r++) weft_data_release(tiles[r]);
    int frc = weft_fini(ctx);
    std::printf("consumer_cxx rank %d: %s (%s)\n", rank,
                rc == 0 && frc == 0 && x == 42.0 ? "tile right" : "FAILED",
                weft_version(nullptr, nullptr, nullptr));
    MPI_Finalize();
    return rc != 0 || frc != 0 || x != 42.0;
}
