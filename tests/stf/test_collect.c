/* Local tiles and the collective gather/scatter (issue 15 item 6). An
 * M x N matrix in MB x NB tiles, block-cyclic over the ranks: each rank
 * fills its own tiles through weft_matrix_local_count/_local_tile (their
 * number checked against weft_matrix_tile_rank), tasks add 1 to every
 * tile (on emu devices too: the newest versions are then there), the last
 * rank gathers into a padded buffer, compared with the formula; rank 0
 * scatters other values, tasks add 1, the gather compares again; a vector
 * goes the same way. Bad input: a root that is not a rank, a NULL buffer
 * on the root, a tile still in an open taskpool on rank 0 only, ranks
 * that name different roots: every rank returns the error and nothing
 * moves. With --skip 1, rank 1 skips a
 * gather: every rank is told the ranks are out of step; with --skip 1
 * --null, rank 0's gather is refused on its own too (a NULL buffer on the
 * root), and it still learns that the ranks are out of step (it returned
 * its own error, went on to its next collective and waited there for
 * ever). Built with
 * COLLECT_ROUND_BYTES (test_collect_rounds, linked with weft's internals),
 * the collectives move in rounds of that many bytes a rank, as a matrix of
 * 2 GiB and more does (it was refused). */
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "elapsed.h"
#include "weft/weft.h"
#ifdef COLLECT_ROUND_BYTES
#include "collections/matrix_int.h"
#endif

#define M 11
#define N 7
#define MB 4
#define NB 3
#define LDB (M + 2)

static int R, me;

static int add_one(weft_task_t *t)
{
    double *x = weft_task_ptr(t, 0);
    int64_t ld = weft_task_ld(t, 0);
    for (int c = 0; c < weft_task_cols(t, 0); c++)
        for (int r = 0; r < weft_task_rows(t, 0); r++) x[r + c * ld] += 1;
    return 0;
}

static const weft_task_class_t add_class = {.name = "add1", .body = {[WEFT_DEV_CPU] = add_one}};

static double first(int gi, int gj) { return gi + 100.0 * gj; }
static double second(int gi, int gj) { return -(gi * 7.0 + gj) / 4; }

/* Adds 1 to every tile; this rank's task count checked. */
static void add_all(weft_context_t *ctx, weft_matrix_t *A)
{
    weft_stats_t s0, s1;
    CHECK(weft_stats_get(ctx, &s0) == 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "add");
    for (int j = 0; j < weft_matrix_nt(A); j++)
        for (int i = 0; i < weft_matrix_mt(A); i++)
            CHECK(weft_insert_task(tp, &add_class, WEFT_RW | WEFT_AFFINITY, weft_tile(A, i, j),
                                   0) == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    weft_taskpool_free(tp);
    CHECK(weft_stats_get(ctx, &s1) == 0);
    CHECK(s1.tasks_run - s0.tasks_run == weft_matrix_local_count(A));
}

/* Gathers A (m x n) on root and compares it with f + 1; the padding rows
 * must stay untouched. */
static void gather_check(weft_matrix_t *A, int m, int n, int root, double (*f)(int, int))
{
    static double buf[LDB * N];
    for (int e = 0; e < LDB * N; e++) buf[e] = -1e9;
    CHECK(weft_matrix_gather(A, root, me == root ? buf : NULL, me == root ? LDB : 0) == 0);
    if (me != root) return;
    for (int gj = 0; gj < n; gj++)
        for (int gi = 0; gi < LDB; gi++)
            CHECK(buf[gi + gj * LDB] == (gi < m ? f(gi, gj) + 1 : -1e9));
}

/* Fills this rank's tiles with f through the local iteration. */
static void fill_local(weft_matrix_t *A, double (*f)(int, int))
{
    int count = 0;
    for (int j = 0; j < weft_matrix_nt(A); j++)
        for (int i = 0; i < weft_matrix_mt(A); i++) count += weft_matrix_tile_rank(A, i, j) == me;
    CHECK(weft_matrix_local_count(A) == count);
    for (int k = 0; k < weft_matrix_local_count(A); k++) {
        int i = -1, j = -1;
        weft_data_t *t = weft_matrix_local_tile(A, k, &i, &j);
        CHECK(t == weft_tile(A, i, j) && weft_matrix_tile_rank(A, i, j) == me);
        int64_t ld = 0;
        double *p = weft_data_host_ptr(t, &ld);
        for (int c = 0; c < weft_matrix_tile_cols(A, j); c++)
            for (int r = 0; r < weft_matrix_tile_rows(A, i); r++)
                p[r + c * ld] = f(i * MB + r, j * NB + c);
    }
}

static void bad_input(weft_context_t *ctx, weft_matrix_t *A)
{
    static double buf[LDB * N];
    capture_begin();
    CHECK(weft_matrix_gather(A, R, buf, LDB) == WEFT_ERR_INVALID);
    /* An ldb whose columns wrap the address space: it wrote every column
     * at the buffer's start (2^62) or crashed (INT64_MAX). */
    CHECK(weft_matrix_gather(A, 0, buf, (int64_t)1 << 62) == WEFT_ERR_INVALID);
    CHECK(weft_matrix_gather(A, 0, buf, INT64_MAX) == WEFT_ERR_INVALID);
    CHECK(weft_matrix_scatter(A, 0, NULL, LDB) == WEFT_ERR_INVALID);
    CHECK(weft_matrix_local_tile(A, weft_matrix_local_count(A), NULL, NULL) == NULL);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "open");
    CHECK(weft_insert_task(tp, &add_class, WEFT_RW, weft_tile(A, 0, 0), 0) == 0);
    CHECK(weft_matrix_gather(A, 0, buf, LDB) == WEFT_ERR_INVALID);
    capture_end();
    CHECK(captured("weft_matrix_gather: root ") && captured(" is not a rank in [0, "));
    CHECK(captured(me == 0 ? "weft_matrix_scatter: NULL buffer" : "rank 0 failed ("));
    CHECK(captured("weft_matrix_local_tile: index"));
    CHECK(captured(me == 0 ? "runs past the end of the address space on the root rank 0"
                           : "rank 0 failed ("));
    /* Named by the call the user made, not by the host acquire behind it. */
    CHECK(captured(me == 0 ? "weft_matrix_gather: data 0 is used by taskpool \"open\""
                           : "nothing was moved"));
    CHECK(weft_taskpool_wait(tp) == 0);
    weft_taskpool_free(tp);
    if (R == 1) return;
    /* Each rank names itself the root: a gather hung, a scatter moved each
     * rank's own buffer. Refused on every rank, the ranks still in step. */
    capture_begin();
    CHECK(weft_matrix_gather(A, me, buf, LDB) == WEFT_ERR_INVALID);
    CHECK(weft_matrix_scatter(A, me, buf, LDB) == WEFT_ERR_INVALID);
    capture_end();
    CHECK(captured("weft_matrix_gather: the ranks passed different roots or matrices"));
    CHECK(captured("weft_matrix_scatter: the ranks passed different roots or matrices"));
}

/* A simulation has no tile memory and one process: both calls are
 * refused, named (the gather crashed on a tile without a copy, the
 * scatter passed a root outside MPI's one-process communicator). */
static int simulated(weft_context_t *ctx)
{
    static double buf[LDB * N];
    weft_matrix_t *A = weft_matrix_new(ctx, WEFT_DOUBLE, M, N, MB, NB, 2, R / 2);
    REQUIRE(A != NULL);
    capture_begin();
    CHECK(weft_matrix_gather(A, 0, buf, LDB) == WEFT_ERR_INVALID);
    CHECK(weft_matrix_scatter(A, R - 1, buf, LDB) == WEFT_ERR_INVALID);
    capture_end();
    CHECK(captured("weft_matrix_gather: a simulation (sim_nranks=4) moves no data"));
    CHECK(captured("weft_matrix_scatter: a simulation (sim_nranks=4) moves no data"));
    weft_matrix_free(A);
    CHECK(weft_fini(ctx) == 0);
    return check_report("test_collect");
}

int main(int argc, char **argv)
{
    elapsed_start();
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 2;
    R = weft_nranks(ctx), me = weft_rank(ctx);
#ifdef COLLECT_ROUND_BYTES
    weft_collect__round_bytes = COLLECT_ROUND_BYTES;
#endif
    int skip = argc > 2 && !strcmp(argv[1], "--skip") ? atoi(argv[2]) : -1;
    int64_t sim = 0;
    int P = R == 4 ? 2 : 1;
    CHECK(weft_param_get_int(ctx, "sim_nranks", &sim) == 0);
    if (sim) return simulated(ctx);
    weft_matrix_t *A = weft_matrix_new(ctx, WEFT_DOUBLE, M, N, MB, NB, P, R / P);
    REQUIRE(A != NULL);
    fill_local(A, first);
    if (skip >= 0) {
        static double buf[LDB * N];
        int null = argc > 3 && !strcmp(argv[3], "--null");
        int g = me == skip ? 0 : weft_matrix_gather(A, 0, null && me == 0 ? NULL : buf, LDB);
        weft_matrix_free(A);
        int f = weft_fini(ctx);
        printf("test_collect rank %d: gather=%d fini=%d\n", me, g, f);
        return me == skip ? f != 0 : g != 0; /* non-zero: the disagreement was told */
    }
    add_all(ctx, A);
    gather_check(A, M, N, R - 1, first);
    static double src[LDB * N];
    for (int gj = 0; gj < N; gj++)
        for (int gi = 0; gi < M; gi++) src[gi + gj * LDB] = second(gi, gj);
    CHECK(weft_matrix_scatter(A, 0, me == 0 ? src : NULL, LDB) == 0);
    add_all(ctx, A);
    gather_check(A, M, N, 0, second);
    bad_input(ctx, A);
    weft_matrix_free(A);
    weft_matrix_t *V = weft_vector_new(ctx, WEFT_DOUBLE, M, MB);
    REQUIRE(V != NULL);
    fill_local(V, first);
    add_all(ctx, V);
    gather_check(V, M, 1, R / 2, first);
    weft_matrix_free(V);
    CHECK(weft_fini(ctx) == 0);
    return check_report("test_collect");
}
