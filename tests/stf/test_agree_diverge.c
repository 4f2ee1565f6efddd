/* Ranks that disagree must all be told, and all return
 * WEFT_ERR_MISMATCH from the wait and from weft_fini instead of hanging:
 *   --grid PxQ   the matrix's process grid (ranks may be given different ones)
 *   --runs N     taskpools run one after the other before weft_fini
 *   --extra 1    one more task in each run (a flag that changes the sequence)
 *   --scratch R  a NEW 4 x 4 data owned by rank R, made after the matrix
 *                (ranks given different owners make different creations)
 *   --fail R     a task that fails on rank R first in each run, done before
 *                the wait (with --extra on some ranks only: a failure, then
 *                a disagreement; weft_fini returned the failure on rank R
 *                and the disagreement on the others)
 * Each run sets tile (0,0) to the run number (doubled with --extra) and
 * adds it to every other tile. When the ranks agree, every local tile must
 * hold the sum over the runs; run_expect.sh checks the messages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elapsed.h"
#include "weft/weft.h"

#define NB 8
#define MT 4

/* Element (i,j) of flow f. */
static double *at(weft_task_t *t, int f, int i, int j)
{
    return (double *)weft_task_ptr(t, f) + i + j * weft_task_ld(t, f);
}

static int set_body(weft_task_t *t)
{
    double v;
    weft_task_value(t, 0, &v);
    for (int j = 0; j < NB; j++)
        for (int i = 0; i < NB; i++) *at(t, 0, i, j) = v;
    return 0;
}

static int twice_body(weft_task_t *t)
{
    for (int j = 0; j < NB; j++)
        for (int i = 0; i < NB; i++) *at(t, 0, i, j) *= 2;
    return 0;
}

static int add_body(weft_task_t *t)
{
    for (int j = 0; j < NB; j++)
        for (int i = 0; i < NB; i++) *at(t, 1, i, j) += *at(t, 0, i, j);
    return 0;
}

static int fail_body(weft_task_t *t)
{
    (void)t;
    return -42;
}

static const weft_task_class_t fail_cls = {.name = "fail", .body = {[WEFT_DEV_CPU] = fail_body}};
static const weft_task_class_t set_cls = {.name = "set", .body = {[WEFT_DEV_CPU] = set_body}};
static const weft_task_class_t twice_cls = {.name = "twice", .body = {[WEFT_DEV_CPU] = twice_body}};
static const weft_task_class_t add_cls = {.name = "add", .body = {[WEFT_DEV_CPU] = add_body}};

static int run(weft_context_t *ctx, weft_matrix_t *A, int k, int extra, int fail)
{
    char name[32];
    snprintf(name, sizeof name, "run %d", k);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, name);
    double v = k;
    int rc = 0;
    if (fail >= 0)
        rc |= weft_insert_task(tp, &fail_cls, WEFT_RW, weft_tile(A, MT - 1, MT - 1), WEFT_ON_RANK,
                               fail, 0);
    rc |= weft_insert_task(tp, &set_cls, WEFT_W | WEFT_AFFINITY, weft_tile(A, 0, 0), WEFT_VALUE, &v,
                           sizeof v, 0);
    if (extra)
        rc |= weft_insert_task(tp, &twice_cls, WEFT_RW | WEFT_AFFINITY, weft_tile(A, 0, 0), 0);
    for (int i = 0; i < MT; i++)
        for (int j = 0; j < MT; j++)
            if (i || j)
                rc |= weft_insert_task(tp, &add_cls, WEFT_R, weft_tile(A, 0, 0),
                                       WEFT_RW | WEFT_AFFINITY, weft_tile(A, i, j), 0);
    if (fail >= 0) usleep(300000); /* the failure comes first */
    int w = weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    return rc ? rc : w;
}

/* Every local tile but (0,0) holds sum_k k (times 2 with --extra). */
static int check(weft_context_t *ctx, weft_matrix_t *A, int runs, int extra)
{
    double want = (extra ? 2.0 : 1.0) * runs * (runs + 1) / 2;
    for (int i = 0; i < MT; i++)
        for (int j = 0; j < MT; j++) {
            if ((!i && !j) || weft_matrix_tile_rank(A, i, j) != weft_rank(ctx)) continue;
            int64_t ld = 0;
            const double *x = weft_data_host_ptr(weft_tile(A, i, j), &ld);
            if (!x || x[0] != want || x[(NB - 1) + (NB - 1) * ld] != want) return 1;
        }
    return 0;
}

int main(int argc, char **argv)
{
    elapsed_start();
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 2;
    int rank = weft_rank(ctx), P = 1, Q = weft_nranks(ctx), runs = 1, extra = 0, scratch = -1,
        fail = -1, pools = 0, late_pools = 0;
    for (int a = 1; a + 1 < argc; a += 2) {
        if (!strcmp(argv[a], "--grid")) sscanf(argv[a + 1], "%dx%d", &P, &Q);
        if (!strcmp(argv[a], "--runs")) runs = atoi(argv[a + 1]);
        if (!strcmp(argv[a], "--extra")) extra = atoi(argv[a + 1]);
        if (!strcmp(argv[a], "--scratch")) scratch = atoi(argv[a + 1]);
        if (!strcmp(argv[a], "--fail")) fail = atoi(argv[a + 1]);
        if (!strcmp(argv[a], "--pools")) pools = atoi(argv[a + 1]);
        if (!strcmp(argv[a], "--late-pools")) late_pools = atoi(argv[a + 1]);
    }
    /* Empty taskpools made and freed at once: on some ranks only, the
     * ranks number the next ones otherwise. */
    for (int k = 0; k < pools; k++) weft_taskpool_free(weft_taskpool_new(ctx, "scratch pool"));
    static double mem[MT * NB * MT * NB]; /* zeros: the sums start there */
    weft_matrix_t *A =
        weft_matrix_wrap(ctx, WEFT_DOUBLE, mem, MT * NB, MT * NB, MT * NB, NB, NB, P, Q);
    weft_data_t *S = scratch >= 0 ? weft_data_new(ctx, WEFT_DOUBLE, 4, 4, scratch) : NULL;
    int w = A && (scratch < 0 || S) ? 0 : 1;
    for (int k = 1; k <= runs && w == 0; k++) w = run(ctx, A, k, extra, fail);
    int wrong = w == 0 && check(ctx, A, runs, extra);
    /* The same after the last wait: weft_fini is where it shows. */
    for (int k = 0; k < late_pools; k++)
        weft_taskpool_free(weft_taskpool_new(ctx, "late scratch pool"));
    if (S) weft_data_release(S);
    weft_matrix_free(A);
    int f = weft_fini(ctx);
    printf("test_agree_diverge rank %d: wait=%d fini=%d%s\n", rank, w, f,
           wrong ? " (wrong values)" : "");
    return w != 0 || f != 0 || wrong;
}
