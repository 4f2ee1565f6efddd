/* Host access to data between taskpools (docs/SEMANTICS.md section 1) on
 * the host alone and across ranks: acquire/release pairs and their errors,
 * weft_data_host_ptr refused while a taskpool that uses the data was not
 * waited for (issue 13 item 6), tiles of other ranks refused, a NEW data
 * given its contents by a write acquire (on 2 ranks: refused alike on
 * both). Runs on 1 and 2 ranks. */
#include <stdlib.h>

#include "../check.h"
#include "weft/weft.h"

static weft_context_t *ctx;

/* flow 0: src (R), flow 1: dst (RW): dst += src */
static int add(weft_task_t *t)
{
    const double *s = weft_task_ptr(t, 0);
    double *d = weft_task_ptr(t, 1);
    for (int i = 0; i < weft_task_rows(t, 1); i++) d[i] += s[i];
    return 0;
}

static const weft_task_class_t add_class = {.name = "add", .body = {[WEFT_DEV_CPU] = add}};

/* flow 0: src (R), flow 1: dst (W): dst = src */
static int copy(weft_task_t *t)
{
    const double *s = weft_task_ptr(t, 0);
    double *d = weft_task_ptr(t, 1);
    for (int i = 0; i < weft_task_rows(t, 1); i++) d[i] = s[i];
    return 0;
}

static const weft_task_class_t copy_class = {.name = "copy", .body = {[WEFT_DEV_CPU] = copy}};

static int run_add(weft_data_t *src, weft_data_t *dst)
{
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "add");
    int rc = weft_insert_task(tp, &add_class, WEFT_R, src, WEFT_RW, dst, 0);
    int wrc = weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    return rc ? rc : wrc;
}

/* Item 6: the host may not touch a data whose taskpool is still open. */
static void busy(void)
{
    double a[2] = {1, 2}, b[2] = {10, 20};
    weft_data_t *da = weft_data_register(ctx, WEFT_DOUBLE, a, 2, 1, 2, 0);
    weft_data_t *db = weft_data_register(ctx, WEFT_DOUBLE, b, 2, 1, 2, 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "still open");
    CHECK(weft_insert_task(tp, &add_class, WEFT_R, da, WEFT_RW, db, 0) == 0);
    void *p = NULL;
    capture_begin();
    CHECK(weft_data_host_ptr(db, NULL) == NULL);
    CHECK(weft_data_host_ptr(da, NULL) == NULL); /* read by the task: still in use */
    CHECK(weft_data_host_acquire(db, WEFT_R, &p, NULL) == WEFT_ERR_INVALID && p == NULL);
    capture_end();
    CHECK(captured("weft_data_host_ptr: data") &&
          captured("is used by taskpool \"still open\", which was not waited for"));
    CHECK(captured("weft_data_host_acquire: data"));
    CHECK(weft_taskpool_wait(tp) == 0);
    weft_taskpool_free(tp);
    double *h = weft_data_host_ptr(db, NULL);
    CHECK(h == b && b[0] == 11 && b[1] == 22);
    weft_data_release(da);
    weft_data_release(db);
}

/* The pair's own errors, and tasks held off while the host holds the data. */
static void pairs(void)
{
    double a[2] = {1, 1}, b[2] = {0, 0};
    weft_data_t *da = weft_data_register(ctx, WEFT_DOUBLE, a, 2, 1, 2, 0);
    weft_data_t *db = weft_data_register(ctx, WEFT_DOUBLE, b, 2, 1, 2, 0);
    double *p = NULL;
    int64_t ld = 0;
    capture_begin();
    CHECK(weft_data_host_acquire(da, 0x10, (void **)&p, NULL) == WEFT_ERR_INVALID);
    CHECK(weft_data_host_acquire(da, WEFT_R, NULL, NULL) == WEFT_ERR_INVALID);
    CHECK(weft_data_host_release(da) == WEFT_ERR_INVALID);
    capture_end();
    CHECK(captured("mode 0x10 is not WEFT_R, WEFT_W or WEFT_RW"));
    CHECK(captured("is not acquired: call weft_data_host_acquire first"));
    CHECK(weft_data_host_acquire(da, WEFT_RW, (void **)&p, &ld) == 0 && p == a && ld == 2);
    p[1] = 5;
    capture_begin();
    CHECK(weft_data_host_acquire(da, WEFT_R, (void **)&p, NULL) == WEFT_ERR_INVALID);
    CHECK(weft_data_host_ptr(da, NULL) == NULL);
    CHECK(run_add(da, db) == WEFT_ERR_INVALID);
    capture_end();
    CHECK(captured("is acquired by the host already"));
    CHECK(
        captured("is acquired by the host (weft_data_host_acquire): call weft_data_host_release"));
    CHECK(b[0] == 0 && b[1] == 0); /* nothing ran */
    CHECK(weft_data_host_release(da) == 0);
    CHECK(run_add(da, db) == 0 && b[0] == 1 && b[1] == 5);
    weft_data_release(da);
    weft_data_release(db);
}

/* A NEW data: nothing to read until written; a write acquire gives it its
 * contents, which the next task reads. Single rank: on other ranks the data
 * would still be unwritten for the insertion check. */
static void new_data(void)
{
    weft_data_t *n = weft_data_new(ctx, WEFT_DOUBLE, 2, 1, 0);
    double b[2] = {0, 0};
    weft_data_t *db = weft_data_register(ctx, WEFT_DOUBLE, b, 2, 1, 2, 0);
    double *p = NULL;
    capture_begin();
    CHECK(weft_data_host_acquire(n, WEFT_R, (void **)&p, NULL) == WEFT_ERR_INVALID);
    capture_end();
    CHECK(captured("has no contents yet (a NEW data that no task wrote)"));
    CHECK(weft_data_host_acquire(n, WEFT_W, (void **)&p, NULL) == 0 && p);
    p[0] = 3;
    p[1] = 4;
    CHECK(weft_data_host_release(n) == 0);
    CHECK(run_add(n, db) == 0 && b[0] == 3 && b[1] == 4);
    weft_data_release(n);
    weft_data_release(db);
}

/* Tiles of a 2 x 1 grid: each rank acquires its own, not the other's. */
static void other_ranks(void)
{
    int rank = weft_rank(ctx), other = 1 - rank;
    weft_matrix_t *A = weft_matrix_new(ctx, WEFT_DOUBLE, 4, 1, 2, 1, 2, 1);
    double *mine = weft_data_host_ptr(weft_tile(A, rank, 0), NULL);
    CHECK(mine != NULL);
    if (mine) mine[0] = mine[1] = 10.0 * (rank + 1);
    void *p = NULL;
    capture_begin();
    CHECK(weft_data_host_acquire(weft_tile(A, other, 0), WEFT_R, &p, NULL) == WEFT_ERR_INVALID);
    CHECK(weft_data_host_ptr(weft_tile(A, other, 0), NULL) == NULL);
    capture_end();
    CHECK(captured("is held by rank") && captured("acquire it on its owner"));
    CHECK(run_add(weft_tile(A, 0, 0), weft_tile(A, 1, 0)) == 0); /* tile 1 += tile 0 */
    CHECK(weft_matrix_host_acquire(A, WEFT_R) == 0);
    CHECK(weft_data_host_acquire(weft_tile(A, rank, 0), WEFT_R, &p, NULL) == WEFT_ERR_INVALID);
    CHECK(weft_matrix_host_release(A) == 0);
    double *h = weft_data_host_ptr(weft_tile(A, rank, 0), NULL);
    CHECK(h && h[0] == (rank == 0 ? 10.0 : 30.0) && h[1] == h[0]);
    weft_matrix_free(A);
}

/* On 2 ranks a write acquire of a NEW data is rank 0's own act: a task
 * that reads it is refused on both ranks alike, each naming why (rank 0
 * accepted it, rank 1 refused: the ranks parted and every later wait and
 * weft_fini returned WEFT_ERR_MISMATCH); the context goes on, and a task
 * that writes the data gives it contents every rank knows of. */
static void new_data_two_ranks(void)
{
    int rank = weft_rank(ctx);
    weft_data_t *n = weft_data_new(ctx, WEFT_DOUBLE, 2, 1, 0);
    double b[2] = {1, 2};
    weft_data_t *db = weft_data_register(ctx, WEFT_DOUBLE, rank == 0 ? b : NULL, 2, 1, 2, 0);
    double *p = NULL;
    if (rank == 0) {
        CHECK(weft_data_host_acquire(n, WEFT_W, (void **)&p, NULL) == 0 && p);
        if (p) p[0] = p[1] = 5;
        CHECK(weft_data_host_release(n) == 0);
    }
    capture_begin();
    CHECK(run_add(n, db) == WEFT_ERR_INVALID);
    capture_end();
    CHECK(captured(rank == 0 ? "whose contents only this rank wrote outside tasks (a host "
                               "write, or a device registration with current contents): the "
                               "other ranks cannot see that write"
                             : "before any task wrote it"));
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "write");
    CHECK(weft_insert_task(tp, &copy_class, WEFT_R, db, WEFT_W, n, 0) == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    weft_taskpool_free(tp);
    CHECK(run_add(n, db) == 0); /* b += b */
    CHECK(rank != 0 || (b[0] == 2 && b[1] == 4));
    weft_data_release(n);
    weft_data_release(db);
}

int main(int argc, char **argv)
{
    ctx = weft_init(&argc, &argv);
    if (!ctx) return 1;
    /* The registered data here is owned by rank 0 with memory there only:
     * these checks are a single rank's. */
    if (weft_nranks(ctx) == 1) {
        busy();
        pairs();
        new_data();
    }
    if (weft_nranks(ctx) == 2) {
        other_ranks();
        new_data_two_ranks();
    }
    CHECK(weft_fini(ctx) == 0);
    return check_report("data_acquire");
}
