/* Tiles whose leading dimension spans 2 GiB or more move between ranks
 * intact (the MPI datatype's stride was an int: it wrapped negative, and
 * the sender crashed reading before the tile, a receive wrote there).
 *
 * X is owned by rank 0 in a sparse mapping with ld = 2^28 + 8 doubles
 * (a 2 GiB + 64 B stride): rank 0 writes it, rank 1 reads and checks it.
 * Y is owned by rank 1 the same way: rank 0 writes it, it goes home to
 * rank 1 at the wait, which checks it there. 96 KiB a tile: past the eager
 * limit, so the bytes move by the transport. The transport is the
 * command line's comm_transport; it passes when every value arrives. */
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>

#include <weft/weft.h>

#define ROWS 4096
#define COLS 3
#define LD (((int64_t)1 << 28) + 8)

static double value(int i, int j) { return 1000.0 * j + i + 0.5; }

static int set_body(weft_task_t *t)
{
    double *x = weft_task_ptr(t, 0);
    int64_t ld = weft_task_ld(t, 0);
    for (int j = 0; j < weft_task_cols(t, 0); j++)
        for (int i = 0; i < weft_task_rows(t, 0); i++) x[i + j * ld] = value(i, j);
    return 0;
}

static int wrong(const double *x, int64_t ld)
{
    int bad = 0;
    for (int j = 0; j < COLS; j++)
        for (int i = 0; i < ROWS; i++) bad += x[i + j * ld] != value(i, j);
    return bad;
}

static int check_body(weft_task_t *t)
{
    int bad = wrong(weft_task_ptr(t, 0), weft_task_ld(t, 0));
    if (bad) printf("test_comm_wide_ld: %d wrong values read on rank 1\n", bad);
    return bad ? 1 : 0;
}

static const weft_task_class_t set_class = {.name = "set", .body = {[WEFT_DEV_CPU] = set_body}};
static const weft_task_class_t check_class = {.name = "check",
                                              .body = {[WEFT_DEV_CPU] = check_body}};

static double *wide(void)
{
    size_t len = ((size_t)LD * (COLS - 1) + ROWS) * sizeof(double);
    void *p =
        mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 1;
    int me = weft_rank(ctx);
    if (weft_nranks(ctx) != 2) {
        fprintf(stderr, "test_comm_wide_ld: needs 2 ranks\n");
        weft_fini(ctx);
        return 1;
    }
    double *mine = wide();
    if (!mine) {
        perror("test_comm_wide_ld: mmap");
        return 1;
    }
    /* Each rank's own tile lives in its mapping; the other's is NULL. */
    weft_data_t *x = weft_data_register(ctx, WEFT_DOUBLE, me == 0 ? mine : NULL, ROWS, COLS, LD, 0);
    weft_data_t *y = weft_data_register(ctx, WEFT_DOUBLE, me == 1 ? mine : NULL, ROWS, COLS, LD, 1);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "wide");
    int rc = weft_insert_task(tp, &set_class, WEFT_W, x, WEFT_ON_RANK, 0, 0);
    if (rc == WEFT_SUCCESS) rc = weft_insert_task(tp, &check_class, WEFT_R, x, WEFT_ON_RANK, 1, 0);
    if (rc == WEFT_SUCCESS) rc = weft_insert_task(tp, &set_class, WEFT_W, y, WEFT_ON_RANK, 0, 0);
    int wrc = weft_taskpool_wait(tp);
    int bad = me == 1 && wrc == WEFT_SUCCESS ? wrong(mine, LD) : 0;
    printf("test_comm_wide_ld rank %d: %s: insert %d, wait %d, %d wrong values at home\n", me,
           rc == WEFT_SUCCESS && wrc == WEFT_SUCCESS && bad == 0 ? "ok" : "FAILED", rc, wrc, bad);
    weft_taskpool_free(tp);
    weft_data_release(x);
    weft_data_release(y);
    int frc = weft_fini(ctx);
    return rc == WEFT_SUCCESS && wrc == WEFT_SUCCESS && bad == 0 && frc == WEFT_SUCCESS ? 0 : 1;
}
