/* A tile moves between ranks intact whatever its size against the MPI
 * operations that carry it: the mpi transport sends a tile of more than
 * comm_mpi_piece bytes in pieces of whole columns, each its own message
 * (one message of 2 GiB or more crashed Open MPI 4.1's shared-memory path:
 * the length cut to 32 bits, the sender's segfault in MPI_Testsome).
 *
 * X (rows x cols doubles, leading dimension rows + pad) is owned by rank
 * 0, which writes it; a task on rank 1 reads it and checks every value
 * there. Usage: test_comm_pieces ROWS COLS PAD [--weft-...]. A tile of
 * more than 1 GiB needs free memory for its two copies, else the test is
 * skipped (77). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <mpi.h>
#include <weft/weft.h>

static double value(int64_t i, int64_t j) { return (double)(i + 7 * j) + 0.25; }

static int set_body(weft_task_t *t)
{
    double *x = weft_task_ptr(t, 0);
    int64_t ld = weft_task_ld(t, 0), rows = weft_task_rows(t, 0);
    for (int64_t j = 0; j < weft_task_cols(t, 0); j++)
        for (int64_t i = 0; i < rows; i++) x[i + j * ld] = value(i, j);
    return 0;
}

static int check_body(weft_task_t *t)
{
    const double *x = weft_task_ptr(t, 0);
    int64_t ld = weft_task_ld(t, 0), rows = weft_task_rows(t, 0), bad = 0;
    for (int64_t j = 0; j < weft_task_cols(t, 0); j++)
        for (int64_t i = 0; i < rows; i++) bad += x[i + j * ld] != value(i, j);
    if (bad) printf("test_comm_pieces: %lld wrong values read on rank 1\n", (long long)bad);
    return bad ? 1 : 0;
}

static const weft_task_class_t set_class = {.name = "set", .body = {[WEFT_DEV_CPU] = set_body}};
static const weft_task_class_t check_class = {.name = "check",
                                              .body = {[WEFT_DEV_CPU] = check_body}};

/* MemAvailable of /proc/meminfo in bytes, 0 when unknown. */
static size_t available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    unsigned long long kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) break;
    if (f) fclose(f);
    return (size_t)kb << 10;
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 1;
    int me = weft_rank(ctx);
    if (weft_nranks(ctx) != 2 || argc != 4) {
        fprintf(stderr, "usage: mpiexec -n 2 test_comm_pieces ROWS COLS PAD\n");
        weft_fini(ctx);
        return 1;
    }
    int rows = atoi(argv[1]), cols = atoi(argv[2]), pad = atoi(argv[3]);
    int64_t ld = (int64_t)rows + pad;
    size_t bytes = ((size_t)ld * (size_t)(cols - 1) + (size_t)rows) * sizeof(double);
    /* Every rank decides alike: rank 0's view of the node's memory. */
    int skip = bytes > ((size_t)1 << 30) && available() < 3 * bytes + ((size_t)1 << 30);
    MPI_Bcast(&skip, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (skip) {
        if (me == 0)
            printf("test_comm_pieces: skipped: %zu bytes a copy, too little memory\n", bytes);
        weft_fini(ctx);
        return 77;
    }
    double *mine = NULL;
    if (me == 0) {
        void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        mine = p == MAP_FAILED ? NULL : p;
        if (!mine) perror("test_comm_pieces: mmap");
    }
    weft_data_t *x = weft_data_register(ctx, WEFT_DOUBLE, mine, rows, cols, ld, 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "pieces");
    int rc = x && tp ? weft_insert_task(tp, &set_class, WEFT_W, x, WEFT_ON_RANK, 0, 0)
                     : WEFT_ERR_INVALID;
    if (rc == WEFT_SUCCESS) rc = weft_insert_task(tp, &check_class, WEFT_R, x, WEFT_ON_RANK, 1, 0);
    int wrc = tp ? weft_taskpool_wait(tp) : WEFT_ERR_INVALID;
    weft_stats_t s;
    int64_t got = weft_stats_get(ctx, &s) == WEFT_SUCCESS ? s.net_bytes_received : -1;
    int ok = rc == WEFT_SUCCESS && wrc == WEFT_SUCCESS &&
             (me == 0 || got == (int64_t)rows * cols * (int64_t)sizeof(double));
    printf("test_comm_pieces rank %d: %s: insert %d, wait %d, %lld bytes received\n", me,
           ok ? "ok" : "FAILED", rc, wrc, (long long)got);
    if (tp) weft_taskpool_free(tp);
    if (x) weft_data_release(x);
    int frc = weft_fini(ctx);
    if (mine) munmap(mine, bytes);
    return ok && frc == WEFT_SUCCESS ? 0 : 1;
}
