/* A matrix creation that succeeds on some ranks only must not pass
 * unnoticed, and one that is valid must not be taken for a divergence.
 * argv[1] names the case:
 *
 *   hetero   a distribution whose device function homes every tile on
 *            device 1, run with an emu device on rank 0 only: each tile's
 *            device is its owner's business (a rank without devices
 *            ignores it), so the matrix is made on every rank and the
 *            wait and weft_fini return 0 (they returned WEFT_ERR_MISMATCH:
 *            the owners' hash folded in each rank's own device answers).
 *   nullone  weft_matrix_wrap with a NULL pointer on rank 1 only: rank 1
 *            refuses it; the next wait names the refusal on every rank and
 *            returns WEFT_ERR_MISMATCH, as weft_fini does (they returned 0:
 *            rank 0 went on with a matrix rank 1 does not have).
 *
 *   sethome  weft_data_set_device(d, 1) on every rank for a data of rank 0,
 *            run with an emu device on rank 0 only: the home device is its
 *            owner's, so rank 1 takes it too (it refused it, "device 1 is
 *            not in [0, 0]", returning an error on that rank only); a
 *            refusal makes the line read "set=RC".
 *
 *   sethomebad  weft_data_set_device(d, 2) on every rank for a data of
 *            rank 0, run with one emu device on rank 0 and three on rank
 *            1: the owner refuses it ("device 2 is not in [0, 1]"), rank 1
 *            takes it; the next wait names the refusal on every rank and
 *            returns WEFT_ERR_MISMATCH, as weft_fini does (rank 1's wait
 *            and fini returned 0 before, knowing nothing of it). Every
 *            rank then creates a data: rank 1's creation #1 is named as
 *            the one it made after the call it accepted, which left no
 *            entry (it was said to follow "the entry before", which only
 *            a refused creation has).
 *   sethometwice  the same, then weft_data_set_device(d, -1), which every
 *            rank refuses: each rank's refusal there is named with its
 *            call (rank 1's refusal of -1 lined up with rank 0's of 2 as
 *            the same entry, and the report named -1 alone, said that
 *            rank 1 made no entry and had "accepted the call refused
 *            there").
 *
 *   gathernull  weft_matrix_wrap with a NULL pointer on rank 1 only, then
 *            weft_matrix_gather of it on every rank: rank 1's handle is
 *            NULL, so its gather fails at once and it goes on to the wait,
 *            while rank 0 is in the gather. Both log that the ranks are out
 *            of step and, now, rank 1's refusal with its reason (they only
 *            logged where each rank was before).
 *
 *   nullnotile  weft_matrix_wrap over a (nranks - 1) x 1 grid with a NULL
 *            pointer on the last rank, which holds no tile: accepted on
 *            every rank (the last rank refused "NULL pointer" although it
 *            references no element), each tile bumped by a task.
 *
 *   regnull  weft_data_register with a NULL pointer everywhere, owner rank
 *            1: only the owner reads it and refuses; named on every rank at
 *            the wait (returned 0 on every rank before).
 *
 *   hostmem  a matrix of 65536 x 65536 in 64 x 64 tiles over 1 x nranks,
 *            run with host_memory_use=1: every rank refuses it for host
 *            memory (before any tile: its tiles need more than its share;
 *            before, each at its own first tile past its share), then makes
 *            a small matrix and bumps each tile by a task. The wait returns
 *            0 (it returned WEFT_ERR_MISMATCH: the ranks had spent
 *            different numbers of data keys on the refused matrix, so the
 *            small matrix's tiles had different keys on each rank) and
 *            each tile's first element reads 1 (gathered on rank 0).
 *   hostone  a matrix of 2^20 x 2^20 in 4096 x 4096 tiles (8 TiB) whose rank
 *            function gives every tile to rank 0, run with
 *            host_memory_use=1: rank 0 refuses it before allocating any tile,
 *            naming its bytes and its share (it zeroed tiles up to its share
 *            first, then refused one, "a tile of N bytes"); rank 1, which
 *            holds no tile, makes it. The wait names rank 0's refusal on
 *            every rank and returns WEFT_ERR_MISMATCH, as weft_fini does: no
 *            rank waits for ever.
 *   keysteps  the same with every rank refusing a wrap at another step, run
 *            with an emu device on rank 1 only: rank 0's overlaps its own
 *            first wrap (the span), rank 1's device function names device
 *            99 (the tiles' mapping); each spends the matrix's keys, so the
 *            tasks on the next matrix agree (the keys spent differed when
 *            only the tiles' step spent them).
 *
 * Each rank prints "test_matrix_refused rank R: <case> wait=W fini=F" and
 * exits non-zero when W or F is not 0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elapsed.h"
#include "weft/weft.h"

#define N 12
#define NB 4

static int rank_of(int i, int j, void *arg)
{
    (void)j;
    return i % *(int *)arg;
}

static int on_rank0(int i, int j, void *arg)
{
    (void)i, (void)j, (void)arg;
    return 0;
}

static int bump(weft_task_t *t)
{
    *(double *)weft_task_ptr(t, 0) += 1;
    return 0;
}

static const weft_task_class_t bump_class = {.name = "bump", .body = {[WEFT_DEV_CPU] = bump}};

static int device_99(int i, int j, void *arg)
{
    (void)i, (void)j, (void)arg;
    return 99;
}

static int device_one(int i, int j, void *arg)
{
    (void)i, (void)j, (void)arg;
    return 1;
}

int main(int argc, char **argv)
{
    elapsed_start();
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 1;
    int me = weft_rank(ctx), nr = weft_nranks(ctx);
    const char *c = argc > 1 ? argv[1] : "hetero";
    static double buf[N * N];
    weft_matrix_t *A = NULL;
    weft_data_t *d = NULL, *e = NULL;
    if (strcmp(c, "hetero") == 0) {
        weft_dist_t dist = {.rank = rank_of, .device = device_one, .arg = &nr};
        A = weft_matrix_new_dist(ctx, WEFT_DOUBLE, N, N, NB, NB, &dist);
    } else if (strncmp(c, "sethome", 7) == 0) {
        d = weft_data_new(ctx, WEFT_DOUBLE, 4, 4, 0);
        int rc = d ? weft_data_set_device(d, strcmp(c, "sethome") == 0 ? 1 : 2) : -99;
        if (rc != 0) printf("test_matrix_refused rank %d: %s set=%d\n", me, c, rc);
        if (strcmp(c, "sethometwice") == 0)
            printf("test_matrix_refused rank %d: %s set -1=%d\n", me, c,
                   weft_data_set_device(d, -1));
        /* The creation each rank makes next: rank 1's #1, rank 0's #2. */
        if (strcmp(c, "sethomebad") == 0) e = weft_data_new(ctx, WEFT_DOUBLE, 1, 1, 0);
    } else if (strcmp(c, "hostmem") == 0) {
        weft_matrix_t *big = weft_matrix_new(ctx, WEFT_DOUBLE, 65536, 65536, 64, 64, 1, nr);
        printf("test_matrix_refused rank %d: %s big=%s\n", me, c, big ? "made" : "refused");
        if (big) weft_matrix_free(big);
        A = weft_matrix_new(ctx, WEFT_DOUBLE, N, N, NB, NB, 1, nr);
    } else if (strcmp(c, "hostone") == 0) {
        weft_dist_t all0 = {.rank = on_rank0};
        A = weft_matrix_new_dist(ctx, WEFT_DOUBLE, 1 << 20, 1 << 20, 4096, 4096, &all0);
        printf("test_matrix_refused rank %d: %s big=%s\n", me, c, A ? "made" : "refused");
    } else if (strcmp(c, "keysteps") == 0) {
        static double other[N * N];
        weft_dist_t bad = {.rank = rank_of, .device = device_99, .arg = &nr};
        weft_matrix_t *first = weft_matrix_wrap(ctx, WEFT_DOUBLE, buf, N, N, N, NB, NB, 1, nr);
        weft_matrix_t *big =
            weft_matrix_wrap_dist(ctx, WEFT_DOUBLE, me == 0 ? buf : other, N, N, N, NB, NB, &bad);
        printf("test_matrix_refused rank %d: %s big=%s\n", me, c, big ? "made" : "refused");
        if (big) weft_matrix_free(big);
        if (first) weft_matrix_free(first);
        A = weft_matrix_new(ctx, WEFT_DOUBLE, N, N, NB, NB, 1, nr);
    } else if (strcmp(c, "nullnotile") == 0) {
        A = weft_matrix_wrap(ctx, WEFT_DOUBLE, me == nr - 1 ? NULL : buf, N, N, N, NB, NB, nr - 1,
                             1);
    } else if (strcmp(c, "regnull") == 0) {
        d = weft_data_register(ctx, WEFT_DOUBLE, NULL, 4, 4, 4, 1);
    } else {
        A = weft_matrix_wrap(ctx, WEFT_DOUBLE, me == 1 ? NULL : buf, N, N, N, NB, NB, nr, 1);
        int grc = strcmp(c, "gathernull") == 0 ? weft_matrix_gather(A, 0, buf, N) : 0;
        if (grc != 0) printf("test_matrix_refused rank %d: %s gather=%d\n", me, c, grc);
    }
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "after");
    int bad = 0;
    int bump_all =
        strcmp(c, "hostmem") == 0 || strcmp(c, "keysteps") == 0 || strcmp(c, "nullnotile") == 0;
    if (bump_all && A)
        for (int j = 0; j < N / NB; j++)
            for (int i = 0; i < N / NB; i++)
                bad += weft_insert_task(tp, &bump_class, WEFT_RW, weft_tile(A, i, j), 0) != 0;
    int w = weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    if (bump_all && A && w == 0) {
        /* Each tile's first element bumped once, the others still 0. */
        bad += weft_matrix_gather(A, 0, buf, N) != 0;
        for (int k = 0; me == 0 && k < N * N; k++)
            bad += buf[k] != ((k % N) % NB == 0 && (k / N) % NB == 0 ? 1.0 : 0.0);
    }
    if (bad) printf("test_matrix_refused rank %d: %s %d elements wrong\n", me, c, bad);
    if (A) weft_matrix_free(A);
    if (d) weft_data_release(d);
    if (e) weft_data_release(e);
    int f = weft_fini(ctx);
    printf("test_matrix_refused rank %d: %s wait=%d fini=%d\n", me, c, w, f);
    return w != 0 || f != 0 || bad != 0;
}
