/* Two live registrations of the same bytes on one rank are refused,
 * naming both (docs/SEMANTICS.md section 1): dependencies are inferred per
 * handle, so their tasks ran at once and each wait wrote its own version
 * back, silently. argv[1] names the case:
 *
 *   twice    data 0 registers x[0..15], owner rank 0; data 1 registers
 *            x[4..19] (it overlaps), owner rank 0: rank 0 refuses it,
 *            naming data 1 and data 0; the other ranks (no memory) take it,
 *            and the next wait names the refusal on every rank
 *            (WEFT_ERR_MISMATCH, as weft_fini).
 *   inside   a 12 x 12 matrix wrapped over buf (data 0..8 on a 1 x 1 grid
 *            or n x 1), then data 9 registers 2 x 2 elements inside it,
 *            owner the last rank: refused there, named on every rank.
 *   wraps    two matrices wrapped over overlapping parts of buf: every rank
 *            refuses the second alike (each names it), so the ranks stay in
 *            step: the wait and weft_fini return 0, the program fails for
 *            the NULL handle.
 *   tile2    data 0 registers a 4 x 4 tile of buf with its leading
 *            dimension N (strided), owner rank 0; data 1 the same tile:
 *            refused on rank 0, named on every rank.
 *   cross    data 0 the tile of rows 0..3, columns 0..3 of buf (ld N);
 *            data 1 rows 2..5, columns 2..5 (they share 2 x 2 elements),
 *            owner the last rank: refused there, named on every rank.
 *   ldiff    data 0 the tile of rows 0..3, columns 0..3 of buf (ld N);
 *            data 1 4 x 4 elements from column 1 with ld N + 1 (its first
 *            column is data 0's second), owner the last rank: refused.
 *   tiles    (a control) every tile of a 10 x 9 array of doubles, ld 13,
 *            in 3 x 4 tiles, and of a 7 x 5 array of floats, ld 9, in
 *            2 x 2 tiles (partial edge tiles; ld not a multiple of the
 *            tile rows), registered one by one with the array's ld, owners
 *            dealt round the ranks: all taken, a task on each (each owner
 *            checks that only the first element of its tiles moved).
 *   busy     data 0 registers x[0..15], a task on it, then its release
 *            while that task waits to run; data 1 registers x[0..15]:
 *            refused (the released handle's task still uses the bytes);
 *            after the wait the bytes are free: registered again (taken).
 *   busyw    the same with a 12 x 12 matrix wrapped over buf: freed while
 *            a task on its first tile waits to run, wrapped again: refused;
 *            after the wait wrapped again: taken.
 *   busyredux (1 rank) the same with three REDUX tasks on data 0 (the
 *            combines that write x come at the wait): refused; x[0] is 3
 *            after the wait; registered again then: taken.
 *   busyremote data 0 (rank 0's x[0..15]) written (not read: rank 0 has
 *            no task on it) by a task on the last rank, released: the final version comes home into
 * x at the wait, so data 1 over x is refused on rank 0 (the ranks then disagree: every wait and
 * weft_fini return the mismatch). busyremotew the same with the 12 x 12 matrix wrapped over buf
 * (its tiles dealt round the ranks), tile (0, 0) written on the last rank: every rank refuses the
 * second wrap (a rank holding no tile written elsewhere accepted it), wait and fini 0. oom (run
 * with fault_inject span_alloc:1) data 0 registers x[0..15], owner rank 0, then a 12 x 12 matrix is
 * wrapped over buf: the first registration each rank notes finds no memory (rank 0's data, the
 * other ranks' matrix): refused naming out of host memory, named on every rank at the wait; one
 * rank: the wait and weft_fini return 0. ok       (the control) adjacent registrations, a wrap
 * beside them, x[0..15] registered again once its first handle is released, and two tiles of one
 * array registered one by one with its leading dimension (interleaved spans, no byte shared): all
 *            taken, a task on each, wait and fini 0.
 *
 * Each rank prints "test_register_overlap rank R: <case> refused=N wait=W
 * fini=F" (N: the registrations this rank refused) and exits non-zero
 * when any is not 0. */
#include <stdio.h>
#include <string.h>

#include "elapsed.h"
#include "weft/weft.h"

#define N 12

static int body(weft_task_t *t)
{
    double *p = weft_task_ptr(t, 0);
    p[0] += 1;
    return 0;
}
static const weft_task_class_t bump = {.name = "bump", .body = {[WEFT_DEV_CPU] = body}};
static int body_float(weft_task_t *t)
{
    float *p = weft_task_ptr(t, 0);
    p[0] += 1;
    return 0;
}
static const weft_task_class_t bumpf = {.name = "bumpf", .body = {[WEFT_DEV_CPU] = body_float}};
/* The reduction of the busyredux case, on 4 x 4 tiles of doubles. */
static int body_zero(weft_task_t *t)
{
    double *p = weft_task_ptr(t, 0);
    for (int i = 0; i < 16; i++) p[i] = 0;
    return 0;
}
static int body_add(weft_task_t *t)
{
    double *p = weft_task_ptr(t, 0);
    const double *q = weft_task_ptr(t, 1);
    for (int i = 0; i < 16; i++) p[i] += q[i];
    return 0;
}
static const weft_task_class_t zero = {.name = "zero", .body = {[WEFT_DEV_CPU] = body_zero}};
/* A writer that reads nothing: run on another rank, the owner sends no
 * copy (it has no task of its own on the data). */
static const weft_task_class_t setz = {.name = "setz", .body = {[WEFT_DEV_CPU] = body_zero}};
static const weft_task_class_t add = {.name = "add", .body = {[WEFT_DEV_CPU] = body_add}};

static double x[32], buf[2 * N * N];

/* The arrays of the tiles case: m x n elements, ld apart, mb x nb tiles. */
#define DM 10
#define DN 9
#define DLD 13
#define FM 7
#define FN 5
#define FLD 9
static double da[DLD * DN];
static float fa[FLD * FN];
#define HANDLES 32

/* The handles a case made (NULL: refused), released at the end. */
typedef struct {
    weft_data_t *d[HANDLES];
    weft_matrix_t *A[2];
    int refused;
} made_t;

static weft_data_t *reg(weft_context_t *ctx, made_t *m, int k, double *p, int rows, int64_t ld,
                        int owner)
{
    int me = weft_rank(ctx);
    m->d[k] = weft_data_register(ctx, WEFT_DOUBLE, me == owner ? p : NULL, rows, rows, ld, owner);
    m->refused += m->d[k] == NULL;
    return m->d[k];
}

static void wrap(weft_context_t *ctx, made_t *m, int k, double *p, int64_t cols)
{
    int nr = weft_nranks(ctx);
    m->A[k] = weft_matrix_wrap(ctx, WEFT_DOUBLE, p, N, N, cols, 4, 4, nr, 1);
    m->refused += m->A[k] == NULL;
}

/* Every mb x nb tile of the m x n array p of elem-byte elements, ld
 * apart, registered one by one from handle *k on, owners round the ranks;
 * a task on each. */
static void tiles(weft_context_t *ctx, made_t *m, int *k, char *p, size_t elem, int rows, int cols,
                  int mb, int nb, int64_t ld, weft_taskpool_t *tp)
{
    int me = weft_rank(ctx), nr = weft_nranks(ctx);
    weft_dtype_t type = elem == sizeof(double) ? WEFT_DOUBLE : WEFT_FLOAT;
    for (int j = 0; j < cols; j += nb)
        for (int i = 0; i < rows; i += mb, (*k)++) {
            int owner = *k % nr, r = rows - i < mb ? rows - i : mb,
                c = cols - j < nb ? cols - j : nb;
            char *t = p + ((size_t)j * (size_t)ld + (size_t)i) * elem;
            m->d[*k] = weft_data_register(ctx, type, me == owner ? t : NULL, r, c, ld, owner);
            m->refused += m->d[*k] == NULL;
            if (m->d[*k] && weft_insert_task(tp, type == WEFT_DOUBLE ? &bump : &bumpf, WEFT_RW,
                                             m->d[*k], 0) != 0)
                m->refused++;
        }
}

/* 1 when the tiles case left its mark on this rank's tiles only: the
 * first element of each tile this rank owns is 1, every other is 0. */
static int tiles_right(int me, int nr)
{
    int k = 0, bad = 0;
    for (int j = 0; j < DN; j += 4)
        for (int i = 0; i < DM; i += 3, k++)
            for (int e = 0; e < (DM - i < 3 ? DM - i : 3); e++)
                bad += da[j * DLD + i + e] != (e == 0 && k % nr == me ? 1 : 0);
    for (int j = 0; j < FN; j += 2)
        for (int i = 0; i < FM; i += 2, k++)
            for (int e = 0; e < (FM - i < 2 ? FM - i : 2); e++)
                bad += fa[j * FLD + i + e] != (e == 0 && k % nr == me ? 1.0f : 0.0f);
    return bad == 0;
}

/* Two strided registrations of shared bytes (tile2, cross, ldiff). */
static int make_strided(weft_context_t *ctx, const char *c, made_t *m)
{
    int last = weft_nranks(ctx) - 1;
    if (strcmp(c, "tile2") == 0) {
        reg(ctx, m, 0, buf, 4, N, 0);
        reg(ctx, m, 1, buf, 4, N, 0);
    } else if (strcmp(c, "cross") == 0) {
        reg(ctx, m, 0, buf, 4, N, last);
        reg(ctx, m, 1, buf + 2 * N + 2, 4, N, last);
    } else if (strcmp(c, "ldiff") == 0) {
        reg(ctx, m, 0, buf, 4, N, last);
        reg(ctx, m, 1, buf + N, 4, N + 1, last);
    } else {
        return 0;
    }
    return 1;
}

static void make(weft_context_t *ctx, const char *c, made_t *m, weft_taskpool_t *tp)
{
    int nr = weft_nranks(ctx);
    if (make_strided(ctx, c, m)) return;
    if (strcmp(c, "tiles") == 0) {
        int k = 0;
        tiles(ctx, m, &k, (char *)da, sizeof(double), DM, DN, 3, 4, DLD, tp);
        tiles(ctx, m, &k, (char *)fa, sizeof(float), FM, FN, 2, 2, FLD, tp);
    } else if (strcmp(c, "twice") == 0) {
        reg(ctx, m, 0, x, 4, 4, 0);
        reg(ctx, m, 1, x + 4, 4, 4, 0);
    } else if (strcmp(c, "inside") == 0) {
        wrap(ctx, m, 0, buf, N);
        reg(ctx, m, 0, buf + 2 * N + 5, 2, N, nr - 1);
    } else if (strcmp(c, "busy") == 0) {
        if (reg(ctx, m, 0, x, 4, 4, 0) && weft_insert_task(tp, &bump, WEFT_RW, m->d[0], 0) != 0)
            m->refused += 10;
        weft_data_release(m->d[0]);
        m->d[0] = NULL;
        reg(ctx, m, 1, x, 4, 4, 0);
    } else if (strcmp(c, "busyredux") == 0) {
        if (!reg(ctx, m, 0, x, 4, 4, 0) || weft_data_set_reduction(m->d[0], &zero, &add) != 0)
            m->refused += 10;
        for (int k = 0; k < 3 && m->d[0]; k++)
            if (weft_insert_task(tp, &bump, WEFT_REDUX, m->d[0], 0) != 0) m->refused += 10;
        weft_data_release(m->d[0]);
        m->d[0] = NULL;
        reg(ctx, m, 1, x, 4, 4, 0);
    } else if (strcmp(c, "busyremote") == 0) {
        if (reg(ctx, m, 0, x, 4, 4, 0) &&
            weft_insert_task(tp, &setz, WEFT_W, m->d[0], WEFT_ON_RANK, nr - 1, 0) != 0)
            m->refused += 10;
        weft_data_release(m->d[0]);
        m->d[0] = NULL;
        reg(ctx, m, 1, x, 4, 4, 0);
    } else if (strcmp(c, "busyremotew") == 0) {
        wrap(ctx, m, 0, buf, N);
        if (m->A[0] && weft_insert_task(tp, &setz, WEFT_W, weft_tile(m->A[0], 0, 0), WEFT_ON_RANK,
                                        nr - 1, 0) != 0)
            m->refused += 10;
        weft_matrix_free(m->A[0]);
        m->A[0] = NULL;
        wrap(ctx, m, 1, buf, N);
    } else if (strcmp(c, "freew") == 0) {
        wrap(ctx, m, 0, buf, N);
        if (m->A[0] && weft_insert_task(tp, &bump, WEFT_RW, weft_tile(m->A[0], nr - 1, 0),
                                        WEFT_ON_RANK, nr - 1, 0) != 0)
            m->refused += 10;
        weft_matrix_free(m->A[0]);
        m->A[0] = NULL;
    } else if (strcmp(c, "busyw") == 0) {
        wrap(ctx, m, 0, buf, N);
        if (m->A[0] && weft_insert_task(tp, &bump, WEFT_RW, weft_tile(m->A[0], 0, 0), 0) != 0)
            m->refused += 10;
        weft_matrix_free(m->A[0]);
        m->A[0] = NULL;
        wrap(ctx, m, 1, buf, N);
    } else if (strcmp(c, "oom") == 0) {
        reg(ctx, m, 0, x, 4, 4, 0);
        wrap(ctx, m, 0, buf, N);
    } else if (strcmp(c, "wraps") == 0) {
        wrap(ctx, m, 0, buf, N);
        wrap(ctx, m, 1, buf + 6 * N, N);
    } else {
        reg(ctx, m, 0, x, 4, 4, 0);
        reg(ctx, m, 1, x + 16, 4, 4, 0);
        wrap(ctx, m, 0, buf + N * N, N);
        weft_data_release(m->d[0]);
        reg(ctx, m, 0, x, 4, 4, 0);
        /* Two tiles of buf one above the other, each with buf's leading
         * dimension: interleaved spans, no byte shared. */
        reg(ctx, m, 2, buf, 4, N, 0);
        reg(ctx, m, 3, buf + 4, 4, N, 0);
        for (int k = 0; k < 4; k++)
            if (m->d[k] && weft_insert_task(tp, &bump, WEFT_RW, m->d[k], 0) != 0) m->refused++;
    }
}

int main(int argc, char **argv)
{
    elapsed_start();
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 1;
    int me = weft_rank(ctx), nr = weft_nranks(ctx);
    const char *c = argc > 1 ? argv[1] : "ok";
    made_t m = {0};
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "after");
    make(ctx, c, &m, tp);
    int w = weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    if ((strcmp(c, "busy") == 0 || strcmp(c, "busyredux") == 0) && !reg(ctx, &m, 2, x, 4, 4, 0))
        m.refused += 100;
    if (strcmp(c, "busyredux") == 0 && x[0] != 3) m.refused += 1000;
    if (strcmp(c, "busyw") == 0 || strcmp(c, "freew") == 0) {
        wrap(ctx, &m, 0, buf, N);
        m.refused += m.A[0] == NULL ? 100 : 0;
    }
    for (int k = 0; k < HANDLES; k++)
        if (m.d[k]) weft_data_release(m.d[k]);
    for (int k = 0; k < 2; k++)
        if (m.A[k]) weft_matrix_free(m.A[k]);
    int f = weft_fini(ctx);
    if (strcmp(c, "ok") == 0 && me == 0 && (x[0] != 1 || x[16] != 1 || buf[0] != 1 || buf[4] != 1))
        m.refused = 99;
    if (strcmp(c, "tiles") == 0 && !tiles_right(me, nr)) m.refused = 98;
    printf("test_register_overlap rank %d: %s refused=%d wait=%d fini=%d\n", me, c, m.refused, w,
           f);
    return m.refused != 0 || w != 0 || f != 0;
}
