/* weft-gemm-stress --ptg: the GEMM chains as a parameterized task graph
 * (include/weft/ptg.h, docs/PTG.md). The same steps, on the same ranks,
 * with the same transfers:
 *
 *   STEP(c, s)  C_s = A[c][s] * C_{s-1} + B[c][s]    on rank (c + s) % nranks
 *   RA(c, s)    reads tile (c, s-1) of A on its owner and passes it to STEP(c, s)
 *   RB(c, s)    the same for B
 *   RC(c)       reads C_0 of chain c (the NEW tile X0[c]) on its owner, rank c,
 *               and passes it to STEP(c, 1)
 *
 * A graph moves the versions it made or passed on; the operands were made
 * before it, on their owners, so the read tasks (forwarders: their
 * consumers' producer functions answer 2) pass them on, as PaRSEC's READ
 * tasks do. Instead of a NEW tile a step, each chain alternates between two
 * NEW tiles Y[c][0], Y[c][1]: step s writes Y[c][s % 2], replacing the
 * version step s-2 wrote (read by step s-1), and each Y is owned by the rank
 * of the last step that writes it, where its final version stays. The
 * classes' local ranges give a rank only the steps it runs.
 *
 * The fill of A and B is a graph too (gs_ptg_fill, a wave before the
 * chains): by insertion every rank would walk every fill, 2 x width x depth
 * of them, to keep the few of its own tiles. Header-only. */
#ifndef WEFT_APPS_GEMM_STRESS_PTG_H
#define WEFT_APPS_GEMM_STRESS_PTG_H

#include <weft/ptg.h>
#include <weft/weft.h>

#include "gemm_stress_kernels.h"

enum { GP_STEP = 0, GP_RA = 1, GP_RB = 2, GP_RC = 3 };

typedef struct gs_ptg {
    int width, depth, nranks, p, q, dev;
    uint64_t seed; /* the operands' fill (gs_ptg_fill) */
    int nb;
    weft_matrix_t *A, *B;
    weft_data_t **x0; /* C_0 of each chain, owned by rank c */
    weft_data_t **y;  /* Y[c][k] at y[2 c + k] */
} gs_ptg_t;

/* The last step of 1..depth with the parity k (0: none). */
static int gp_last_step(int depth, int k) { return depth % 2 == k ? depth : depth - 1; }

/* The owner of Y[c][k]: the rank of its last writer (rank c when none). */
static int gp_y_owner(int width_c, int depth, int k, int nranks)
{
    int s = gp_last_step(depth, k);
    return (int)(((int64_t)width_c + (s > 0 ? s : 0)) % nranks);
}

static int gp_step_rank(const gs_ptg_t *g, int c, int s)
{
    return (int)(((int64_t)c + s) % g->nranks);
}

/* Tile (c, s-1) of A and B: the 2D block-cyclic owner (weft_matrix_new). */
static int gp_tile_rank(const gs_ptg_t *g, int c, int s)
{
    return (c % g->p) * g->q + (s - 1) % g->q;
}

static weft_ptg_ref_t gp_ref(int cls, int flow, int c, int s)
{
    weft_ptg_ref_t r = {.cls = cls, .flow = flow, .idx = {c, s, 0, 0}};
    return r;
}

/* ---- index spaces: c in [0, width), s in [1, depth] (RC: c only) ---- */

static void gp_range(const int *idx, int dim, int *lo, int *hi, const void *arg)
{
    (void)idx;
    const gs_ptg_t *g = arg;
    *lo = dim == 0 ? 0 : 1;
    *hi = dim == 0 ? g->width - 1 : g->depth;
}

/* A rank's steps: s = rank - c (mod nranks). */
static void gp_local_step(const int *idx, int dim, int rank, int *lo, int *hi, int *step,
                          const void *arg)
{
    const gs_ptg_t *g = arg;
    gp_range(idx, dim, lo, hi, arg);
    *step = 1;
    if (dim == 0) return;
    int r = (int)((((int64_t)rank - idx[0]) % g->nranks + g->nranks) % g->nranks);
    *lo = r >= 1 ? r : r + g->nranks;
    *step = g->nranks;
}

/* A rank's tiles of A and B: c = its grid row (mod P), s - 1 = its column
 * (mod Q). */
static void gp_local_tile(const int *idx, int dim, int rank, int *lo, int *hi, int *step,
                          const void *arg)
{
    const gs_ptg_t *g = arg;
    gp_range(idx, dim, lo, hi, arg);
    *lo = dim == 0 ? rank / g->q : rank % g->q + 1;
    *step = dim == 0 ? g->p : g->q;
}

static int gp_rank_step(const int *i, const void *arg) { return gp_step_rank(arg, i[0], i[1]); }
static int gp_rank_tile(const int *i, const void *arg) { return gp_tile_rank(arg, i[0], i[1]); }
static int gp_rank_rc(const int *i, const void *arg)
{
    return i[0] % ((const gs_ptg_t *)arg)->nranks;
}

/* ---- arguments ---- */

static int gp_args_step(const int *i, weft_arg_t *a, int max, const void *arg)
{
    (void)max;
    const gs_ptg_t *g = arg;
    int c = i[0], s = i[1];
    weft_data_t *prev = s == 1 ? g->x0[c] : g->y[2 * c + (s - 1) % 2];
    a[0] = weft_arg_data(WEFT_R, weft_tile(g->A, c, s - 1));
    a[1] = weft_arg_data(WEFT_R, prev);
    a[2] = weft_arg_data(WEFT_R, weft_tile(g->B, c, s - 1));
    a[3] = weft_arg_data(WEFT_W, g->y[2 * c + s % 2]);
    a[4] = weft_arg_int(WEFT_ON_RANK, gp_step_rank(g, c, s));
    return 5;
}

static int gp_args_ra(const int *i, weft_arg_t *a, int max, const void *arg)
{
    (void)max;
    a[0] = weft_arg_data(WEFT_R | WEFT_AFFINITY, weft_tile(((const gs_ptg_t *)arg)->A, i[0], i[1] - 1));
    return 1;
}

static int gp_args_rb(const int *i, weft_arg_t *a, int max, const void *arg)
{
    (void)max;
    a[0] = weft_arg_data(WEFT_R | WEFT_AFFINITY, weft_tile(((const gs_ptg_t *)arg)->B, i[0], i[1] - 1));
    return 1;
}

static int gp_args_rc(const int *i, weft_arg_t *a, int max, const void *arg)
{
    (void)max;
    a[0] = weft_arg_data(WEFT_R | WEFT_AFFINITY, ((const gs_ptg_t *)arg)->x0[i[0]]);
    return 1;
}

/* ---- producers ---- */

static int gp_prod_step(const int *i, int flow, weft_ptg_ref_t *p, const void *arg)
{
    (void)arg;
    int c = i[0], s = i[1];
    if (flow == 0 || flow == 2) {
        *p = gp_ref(flow == 0 ? GP_RA : GP_RB, 0, c, s);
        return 2;
    }
    if (flow == 1) {
        *p = s == 1 ? gp_ref(GP_RC, 0, c, 0) : gp_ref(GP_STEP, 3, c, s - 1);
        return s == 1 ? 2 : 1;
    }
    /* Y[c][s % 2] as step s-2 left it (none before step 3). */
    if (s < 3) return 0;
    *p = gp_ref(GP_STEP, 3, c, s - 2);
    return 1;
}

static int gp_prod_none(const int *i, int flow, weft_ptg_ref_t *p, const void *arg)
{
    (void)i, (void)flow, (void)p, (void)arg;
    return 0;
}

/* ---- consumers ---- */

static int gp_put(weft_ptg_ref_t *to, int max, int n, weft_ptg_ref_t r)
{
    if (n < max) to[n] = r;
    return n + 1;
}

static int gp_cons_step(const int *i, int flow, weft_ptg_ref_t *to, int max, const void *arg)
{
    const gs_ptg_t *g = arg;
    int c = i[0], s = i[1], n = 0;
    if (flow != 3) return 0;
    if (s < g->depth) n = gp_put(to, max, n, gp_ref(GP_STEP, 1, c, s + 1));
    if (s + 2 <= g->depth) n = gp_put(to, max, n, gp_ref(GP_STEP, 3, c, s + 2));
    return n;
}

static int gp_cons_ra(const int *i, int flow, weft_ptg_ref_t *to, int max, const void *arg)
{
    (void)flow, (void)arg;
    return gp_put(to, max, 0, gp_ref(GP_STEP, 0, i[0], i[1]));
}

static int gp_cons_rb(const int *i, int flow, weft_ptg_ref_t *to, int max, const void *arg)
{
    (void)flow, (void)arg;
    return gp_put(to, max, 0, gp_ref(GP_STEP, 2, i[0], i[1]));
}

static int gp_cons_rc(const int *i, int flow, weft_ptg_ref_t *to, int max, const void *arg)
{
    (void)flow, (void)arg;
    return gp_put(to, max, 0, gp_ref(GP_STEP, 1, i[0], 1));
}

/* RC has one dimension; the others two. */
static void gp_range_rc(const int *idx, int dim, int *lo, int *hi, const void *arg)
{
    gp_range(idx, dim, lo, hi, arg);
}

/* The read tasks run no kernel: they only hand their tile on. */
static int gs_cpu_pass(weft_task_t *t)
{
    (void)t;
    return 0;
}

static const weft_task_class_t gs_class_pass = {
    .name = "pass", .body = {[WEFT_DEV_CPU] = gs_cpu_pass, [WEFT_DEV_EMU] = gs_cpu_pass}};

/* The chains of g through the graph; the steps run on accelerators only
 * when dev is set (gs_class_step_dev). */
static int gs_ptg_chains(weft_taskpool_t *tp, const gs_ptg_t *g)
{
    weft_ptg_class_t classes[4] = {
        [GP_STEP] = {g->dev ? &gs_class_step_dev : &gs_class_step, 2, gp_range, gp_rank_step,
                     gp_args_step, gp_prod_step, gp_cons_step, gp_local_step},
        [GP_RA] = {&gs_class_pass, 2, gp_range, gp_rank_tile, gp_args_ra, gp_prod_none,
                   gp_cons_ra, gp_local_tile},
        [GP_RB] = {&gs_class_pass, 2, gp_range, gp_rank_tile, gp_args_rb, gp_prod_none,
                   gp_cons_rb, gp_local_tile},
        [GP_RC] = {&gs_class_pass, 1, gp_range_rc, gp_rank_rc, gp_args_rc, gp_prod_none,
                   gp_cons_rc, NULL},
    };
    weft_ptg_t graph = {.classes = classes, .nclasses = 4, .arg = g};
    return weft_ptg_insert(tp, &graph);
}

/* ---- the fill of A and B: FA(c, s), FB(c, s) write tile (c, s-1) ---- */

/* weft copies a value while it parses the arguments, before it calls an
 * args function again: one buffer a thread is enough. */
static int gf_args(const int *i, weft_arg_t *a, int which, const gs_ptg_t *g)
{
    static _Thread_local gs_tile_arg_t v;
    v = (gs_tile_arg_t){
        .seed = g->seed, .which = which, .chain = i[0], .step = i[1], .nb = g->nb};
    a[0] = weft_arg_data(WEFT_W | WEFT_AFFINITY,
                         weft_tile(which == GS_GEN_A ? g->A : g->B, i[0], i[1] - 1));
    a[1] = weft_arg_value(&v, sizeof v);
    return 2;
}

static int gf_args_a(const int *i, weft_arg_t *a, int max, const void *arg)
{
    (void)max;
    return gf_args(i, a, GS_GEN_A, arg);
}

static int gf_args_b(const int *i, weft_arg_t *a, int max, const void *arg)
{
    (void)max;
    return gf_args(i, a, GS_GEN_B, arg);
}

/* A fill's version is final in its wave: it stays on the tile's owner. */
static int gf_cons_none(const int *i, int flow, weft_ptg_ref_t *to, int max, const void *arg)
{
    (void)i, (void)flow, (void)to, (void)max, (void)arg;
    return 0;
}

/* A and B of g filled where their tiles live, each rank walking only its
 * own tiles (gp_local_tile). */
static int gs_ptg_fill(weft_taskpool_t *tp, const gs_ptg_t *g)
{
    weft_ptg_class_t classes[2] = {
        {&gs_class_fill, 2, gp_range, gp_rank_tile, gf_args_a, gp_prod_none, gf_cons_none,
         gp_local_tile},
        {&gs_class_fill, 2, gp_range, gp_rank_tile, gf_args_b, gp_prod_none, gf_cons_none,
         gp_local_tile},
    };
    weft_ptg_t graph = {.classes = classes, .nclasses = 2, .arg = g};
    return weft_ptg_insert(tp, &graph);
}

#endif /* WEFT_APPS_GEMM_STRESS_PTG_H */
