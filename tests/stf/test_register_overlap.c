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
 *   ok       (the control) adjacent registrations, a wrap beside them,
 *            x[0..15] registered again once its first handle is released,
 *            and two tiles of one array registered one by one with its
 *            leading dimension (interleaved spans, no byte shared): all
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

static double x[32], buf[2 * N * N];

/* The handles a case made (NULL: refused), released at the end. */
typedef struct {
    weft_data_t *d[4];
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

static void make(weft_context_t *ctx, const char *c, made_t *m, weft_taskpool_t *tp)
{
    int nr = weft_nranks(ctx);
    if (strcmp(c, "twice") == 0) {
        reg(ctx, m, 0, x, 4, 4, 0);
        reg(ctx, m, 1, x + 4, 4, 4, 0);
    } else if (strcmp(c, "inside") == 0) {
        wrap(ctx, m, 0, buf, N);
        reg(ctx, m, 0, buf + 2 * N + 5, 2, N, nr - 1);
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
    int me = weft_rank(ctx);
    const char *c = argc > 1 ? argv[1] : "ok";
    made_t m = {0};
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "after");
    make(ctx, c, &m, tp);
    int w = weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    for (int k = 0; k < 4; k++)
        if (m.d[k]) weft_data_release(m.d[k]);
    for (int k = 0; k < 2; k++)
        if (m.A[k]) weft_matrix_free(m.A[k]);
    int f = weft_fini(ctx);
    if (strcmp(c, "ok") == 0 && me == 0 && (x[0] != 1 || x[16] != 1 || buf[0] != 1 || buf[4] != 1))
        m.refused = 99;
    printf("test_register_overlap rank %d: %s refused=%d wait=%d fini=%d\n", me, c, m.refused, w,
           f);
    return m.refused != 0 || w != 0 || f != 0;
}
