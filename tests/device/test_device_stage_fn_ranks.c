/* Stage functions across ranks (docs/SEMANTICS.md 1, "Stage functions"): 2 ranks, one emu
 * device each. A data owned by rank 1 keeps a row-major host layout (element (i,j) at
 * i*cols + j); its stage functions, set on every rank's handle, transpose it into the
 * devices' column-major copies and back.
 *
 * (a) a task placed on rank 0's device updates it: rank 0 must receive the owner's host
 *     bytes into a host copy and stage them in, and stage the result out before it goes
 *     home;
 * (b) a task on the owner's device updates it, then a CPU task on rank 0 reads it: the
 *     owner must send its host layout (stage_out first), not its device copy.
 *
 * Each runs with a small tile (an eager activation) and a large one (a rendezvous). weft
 * used to move device copies straight between ranks (GPU-aware receive into the device,
 * send from it): neither function ran on rank 0, the device read the host layout as its
 * own and rank 0's CPU task saw the device layout. Wrong values, no error. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "weft/weft.h"

enum { OWNER = 1 };

static atomic_int nin, nout;
static int upd_device = -1, rd_device = -1;
static double *seen; /* what rank 0's CPU task read, in the host layout */

static int to_device(const weft_stage_t *s, void *arg)
{
    (void)arg;
    const double *src = s->src;
    double *dst = s->dst;
    for (int i = 0; i < s->rows; i++)
        for (int j = 0; j < s->cols; j++) dst[i + j * s->dst_ld] = src[i * s->cols + j];
    atomic_fetch_add(&nin, 1);
    return 0;
}

static int to_host(const weft_stage_t *s, void *arg)
{
    (void)arg;
    const double *src = s->src;
    double *dst = s->dst;
    for (int i = 0; i < s->rows; i++)
        for (int j = 0; j < s->cols; j++) dst[i * s->cols + j] = src[i + j * s->src_ld];
    atomic_fetch_add(&nout, 1);
    return 0;
}

/* Not symmetric in i and j, so that a transposed or unstaged tile shows. */
static double step(double v, int i, int j) { return 2 * v + i - 3 * j; }

static int upd_body(weft_task_t *t) /* device layout: column-major */
{
    double *a = weft_task_ptr(t, 0);
    int64_t ld = weft_task_ld(t, 0);
    for (int j = 0; j < weft_task_cols(t, 0); j++)
        for (int i = 0; i < weft_task_rows(t, 0); i++) a[i + j * ld] = step(a[i + j * ld], i, j);
    upd_device = weft_task_device(t);
    return 0;
}

static int rd_body(weft_task_t *t) /* host layout: row-major, contiguous */
{
    const double *a = weft_task_ptr(t, 0);
    for (int k = 0; k < weft_task_rows(t, 0) * weft_task_cols(t, 0); k++) seen[k] = a[k];
    rd_device = weft_task_device(t);
    return 0;
}

static const weft_task_class_t upd = {.name = "upd", .body = {[WEFT_DEV_EMU] = upd_body}};
static const weft_task_class_t rd = {.name = "rd", .body = {[WEFT_DEV_CPU] = rd_body}};

static void advance(double *ref, int rows, int cols)
{
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) ref[i * cols + j] = step(ref[i * cols + j], i, j);
}

static int same(const double *a, const double *b, int n)
{
    for (int k = 0; k < n; k++)
        if (a[k] != b[k]) return 0;
    return 1;
}

/* (a) then (b) on one rows x cols data; rank 0 checks what its CPU task saw, the owner its
 * host memory after each wait. */
static void run(weft_context_t *ctx, int rows, int cols)
{
    int rank = weft_rank(ctx), n = rows * cols;
    double *host = calloc((size_t)n, sizeof *host), *ref = calloc((size_t)n, sizeof *ref);
    seen = calloc((size_t)n, sizeof *seen);
    REQUIRE(host && ref && seen);
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) host[i * cols + j] = ref[i * cols + j] = i + 100 * j;
    weft_data_t *d =
        weft_data_register(ctx, WEFT_DOUBLE, rank == OWNER ? host : NULL, rows, cols, rows, OWNER);
    REQUIRE(d && weft_data_set_stage(d, to_device, to_host, NULL) == WEFT_SUCCESS);

    weft_taskpool_t *tp = weft_taskpool_new(ctx, "stage-a");
    CHECK(weft_insert_task(tp, &upd, WEFT_RW, d, WEFT_ON_RANK, 0, WEFT_DEVICE_HINT, 1, 0) == 0);
    CHECK(weft_taskpool_wait(tp) == WEFT_SUCCESS);
    weft_taskpool_free(tp);
    advance(ref, rows, cols);
    if (rank == 0) CHECK(upd_device == 1);
    if (rank == OWNER) CHECK(same(host, ref, n));

    tp = weft_taskpool_new(ctx, "stage-b");
    CHECK(weft_insert_task(tp, &upd, WEFT_RW, d, WEFT_ON_RANK, OWNER, WEFT_DEVICE_HINT, 1, 0) == 0);
    CHECK(weft_insert_task(tp, &rd, WEFT_R, d, WEFT_ON_RANK, 0, WEFT_DEVICE_HINT, 0, 0) == 0);
    CHECK(weft_taskpool_wait(tp) == WEFT_SUCCESS);
    weft_taskpool_free(tp);
    advance(ref, rows, cols);
    if (rank == 0) CHECK(rd_device == 0 && same(seen, ref, n));
    if (rank == OWNER) CHECK(upd_device == 1 && same(host, ref, n));

    weft_data_release(d);
    free(seen);
    free(ref);
    free(host);
}

/* --one-sided: only the owner sets the functions. The other rank would
 * move the data in device layout: the next wait names the difference on
 * both ranks (WEFT_ERR_MISMATCH) before anything moves. */
static int one_sided(weft_context_t *ctx)
{
    int rank = weft_rank(ctx);
    double host[12] = {0};
    weft_data_t *d =
        weft_data_register(ctx, WEFT_DOUBLE, rank == OWNER ? host : NULL, 4, 3, 4, OWNER);
    REQUIRE(d != NULL);
    if (rank == OWNER) CHECK(weft_data_set_stage(d, to_device, to_host, NULL) == WEFT_SUCCESS);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "one-sided");
    CHECK(weft_insert_task(tp, &upd, WEFT_RW, d, WEFT_ON_RANK, 0, WEFT_DEVICE_HINT, 1, 0) == 0);
    int w = weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    weft_data_release(d);
    int f = weft_fini(ctx);
    printf("test_device_stage_fn_ranks rank %d: wait=%d fini=%d\n", rank, w, f);
    return w != WEFT_ERR_MISMATCH;
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL);
    if (weft_nranks(ctx) != 2 || weft_ndevices(ctx) < 1) {
        printf("test_device_stage_fn_ranks: needs 2 ranks with an emu device each\n");
        weft_fini(ctx);
        return 1;
    }
    if (argc > 1 && strcmp(argv[1], "--one-sided") == 0) return one_sided(ctx);
    run(ctx, 4, 3);    /* 96 bytes: eager */
    run(ctx, 200, 90); /* 140 KiB: above comm_eager_limit, a rendezvous */
    int rank = weft_rank(ctx);
    CHECK(weft_fini(ctx) == WEFT_SUCCESS);
    /* Both ranks ran a device task on the data, so both staged it in and out. */
    CHECK(atomic_load(&nin) >= 2 && atomic_load(&nout) >= 2);
    printf("rank %d: stage-in %d, stage-out %d calls\n", rank, atomic_load(&nin),
           atomic_load(&nout));
    return check_report("test_device_stage_fn_ranks");
}
