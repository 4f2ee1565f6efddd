/* A program built outside weft's tree against an installed weft (by
 * find_package and by pkg-config, tests/install/install_check.sh): each
 * task fills its tile of a block-cyclic matrix with its row and column
 * index, and each rank checks the tiles it holds. It starts MPI itself and
 * gives weft its communicator (weft/weft_mpi.h): the package must bring
 * the MPI libweft was built with, headers and library. It checks that the
 * library is the version of the headers. */
#include <stdio.h>
#include <weft/weft.h>
#include <weft/weft_mpi.h>

static int fill(weft_task_t *t)
{
    int ij[2];
    if (weft_task_value_get(t, 0, ij, sizeof ij) != 0) return -1;
    double *a = weft_task_ptr(t, 0);
    int64_t ld = weft_task_ld(t, 0);
    for (int j = 0; j < weft_task_cols(t, 0); j++)
        for (int i = 0; i < weft_task_rows(t, 0); i++) a[i + j * ld] = ij[0] * 1000 + ij[1];
    return 0;
}

static const weft_task_class_t fill_class = {.name = "fill", .body = {[WEFT_DEV_CPU] = fill}};

/* Tiles of this rank that do not hold their indices; -1 for an error. */
static int wrong_tiles(weft_matrix_t *A)
{
    int wrong = 0;
    for (int i = 0; i < weft_matrix_mt(A); i++)
        for (int j = 0; j < weft_matrix_nt(A); j++) {
            int64_t ld;
            double *a = weft_data_host_ptr(weft_tile(A, i, j), &ld);
            if (a == NULL) continue; /* another rank's tile */
            wrong += a[0] != i * 1000 + j || a[ld + 1] != i * 1000 + j;
        }
    return wrong;
}

int main(int argc, char **argv)
{
    int major, minor, patch, provided;
    const char *line = weft_version(&major, &minor, &patch);
    if (major != WEFT_VERSION_MAJOR || minor != WEFT_VERSION_MINOR || patch != WEFT_VERSION_PATCH) {
        fprintf(stderr, "consumer: headers %d.%d.%d, library %s\n", WEFT_VERSION_MAJOR,
                WEFT_VERSION_MINOR, WEFT_VERSION_PATCH, line);
        return 1;
    }
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) return 1;
    weft_context_t *ctx = weft_init_comm(MPI_COMM_WORLD, &argc, &argv);
    if (ctx == NULL) {
        MPI_Finalize();
        return 1;
    }
    weft_matrix_t *A = weft_matrix_new(ctx, WEFT_DOUBLE, 64, 64, 16, 16, weft_nranks(ctx), 1);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "fill");
    int rc = 0;
    for (int i = 0; i < 4 && rc == 0; i++)
        for (int j = 0; j < 4 && rc == 0; j++) {
            int ij[2] = {i, j};
            rc = weft_insert_task(tp, &fill_class, WEFT_W | WEFT_AFFINITY, weft_tile(A, i, j),
                                  WEFT_VALUE, ij, sizeof ij, 0);
        }
    if (rc == 0) rc = weft_taskpool_wait(tp);
    int wrong = rc == 0 ? wrong_tiles(A) : -1;
    printf("consumer rank %d: %lld tasks, %d wrong tiles (%s)\n", weft_rank(ctx),
           (long long)weft_taskpool_ntasks_run(tp), wrong, line);
    weft_taskpool_free(tp);
    weft_matrix_free(A);
    int frc = weft_fini(ctx);
    MPI_Finalize(); /* the program started MPI: weft_fini left it running */
    return rc != 0 || wrong != 0 || frc != 0;
}
