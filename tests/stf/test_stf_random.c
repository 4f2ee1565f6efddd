/* A stranger's random graph generator (2026-12-04), kept as a test for
 * the runs it made crash: with seed 43 on 3-4 ranks with emu devices,
 * eager limit 0 and comm_post:7, a taskpool whose wait found the ranks
 * disagreeing (-8) was freed in weft_fini after the devices had closed,
 * and its last reference freed a reduction's device copy through a
 * manager already gone (SIGSEGV on 2-3 ranks, 6 runs of 6).
 *
 * Random STF graph generator for weft: registered, NEW and matrix-tile data,
 * R/W/RW/REDUX flows, placements, several taskpools with host access between,
 * optional deterministic failing tasks ("boom"), checked against a sequential
 * model on the owners.
 * args (after weft ones): seed=S ntp=N ntasks=N ndata=N boom=PCT redux=0/1
 *   inj=1 (failing task is class "inj", failure via fault_inject rule, body normal)
 *   lenient=1 (unpredictable faults: only check every wait fails alike & data is some good version)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include "weft/weft.h"

#define MAXD 16
#define MAXT 400
#define MAXF 16
#define MAXHIST 2048

enum { K_REG, K_NEW, K_TILE };
typedef struct {
    int kind, rows, cols, owner, redux, hasinit, initv, key, keep, gone;
    int64_t ld;    /* user ld for REG */
    int64_t *user; /* REG memory on owner */
    weft_data_t *d;
    uint64_t *ref;   /* model contents, ld = rows */
    int hasver;      /* model: has contents (NEW) */
    int taskwritten; /* some task wrote it (ever, successfully) */
    int lost;        /* within taskpool */
    /* history of good versions in the current taskpool */
    uint64_t hist[MAXHIST];
    int nhist;
    uint64_t *pre_redux; /* value before current reduction group */
    int in_redux, redux_bad;
} dat_t;

static unsigned long long rs;
static unsigned rnd(void)
{
    rs = rs * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)(rs >> 33);
}
static int rr(int n) { return (int)(rnd() % (unsigned)n); }

static dat_t D[MAXD];
static int nd, nranks, rank, ndev;
static int errors;

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdULL;
}

typedef struct {
    int nf;
    uint8_t mode[MAXF];
} spec_t;

/* generic apply: ptrs, lds, rows, cols */
static void apply(int64_t v, const spec_t *s, uint64_t **p, const int64_t *ld, const int *r,
                  const int *c)
{
    uint64_t h = (uint64_t)v;
    for (int f = 0; f < s->nf; f++)
        if (s->mode[f] == WEFT_R || s->mode[f] == WEFT_RW)
            for (int j = 0; j < c[f]; j++)
                for (int i = 0; i < r[f]; i++) h = mix(h, p[f][i + j * ld[f]]);
    for (int f = 0; f < s->nf; f++)
        for (int j = 0; j < c[f]; j++)
            for (int i = 0; i < r[f]; i++) {
                uint64_t *x = &p[f][i + j * ld[f]];
                uint64_t k = (uint64_t)(i + 1000 * j + 17 * f);
                if (s->mode[f] == WEFT_W)
                    *x = mix(h, k);
                else if (s->mode[f] == WEFT_RW)
                    *x = *x * 7 + mix(h, k);
                else if (s->mode[f] == WEFT_REDUX)
                    *x += mix(h, k + 5);
            }
}

static int body(weft_task_t *t)
{
    int64_t v;
    spec_t s;
    if (weft_task_value_get(t, 0, &v, sizeof v) || weft_task_value_get(t, 1, &s, sizeof s))
        return -1;
    if (s.nf != weft_task_nflows(t)) return -2;
    uint64_t *p[MAXF];
    int64_t ld[MAXF];
    int r[MAXF], c[MAXF];
    for (int f = 0; f < s.nf; f++) {
        p[f] = weft_task_ptr(t, f);
        ld[f] = weft_task_ld(t, f);
        r[f] = weft_task_rows(t, f);
        c[f] = weft_task_cols(t, f);
        if (!p[f]) return -3;
    }
    apply(v, &s, p, ld, r, c);
    return 0;
}
static int boom_body(weft_task_t *t)
{
    (void)t;
    return -42;
}
static int emu_body(weft_task_t *t)
{
    if (weft_task_device(t) <= 0) return -7;
    return body(t);
}

static int zero_body(weft_task_t *t)
{
    uint64_t *p = weft_task_ptr(t, 0);
    int64_t ld = weft_task_ld(t, 0);
    for (int j = 0; j < weft_task_cols(t, 0); j++)
        for (int i = 0; i < weft_task_rows(t, 0); i++) p[i + j * ld] = 0;
    return 0;
}
static int add_body(weft_task_t *t)
{
    uint64_t *p = weft_task_ptr(t, 0);
    int64_t ld = weft_task_ld(t, 0);
    const uint64_t *q = weft_task_ptr(t, 1);
    int64_t lq = weft_task_ld(t, 1);
    for (int j = 0; j < weft_task_cols(t, 0); j++)
        for (int i = 0; i < weft_task_rows(t, 0); i++) p[i + j * ld] += q[i + j * lq];
    return 0;
}

static const weft_task_class_t cls_cpu = {.name = "cpu", .body = {[WEFT_DEV_CPU] = body}};
static const weft_task_class_t cls_both = {.name = "both",
                                           .body = {[WEFT_DEV_CPU] = body, [WEFT_DEV_EMU] = body}};
static const weft_task_class_t cls_emu = {.name = "emu", .body = {[WEFT_DEV_EMU] = emu_body}};
static const weft_task_class_t cls_boom = {
    .name = "boom", .body = {[WEFT_DEV_CPU] = boom_body, [WEFT_DEV_EMU] = boom_body}};
static const weft_task_class_t cls_inj = {.name = "inj",
                                          .body = {[WEFT_DEV_CPU] = body, [WEFT_DEV_EMU] = body}};
static const weft_task_class_t cls_zero = {
    .name = "rzero", .body = {[WEFT_DEV_CPU] = zero_body, [WEFT_DEV_EMU] = zero_body}};
static const weft_task_class_t cls_add = {
    .name = "radd", .body = {[WEFT_DEV_CPU] = add_body, [WEFT_DEV_EMU] = add_body}};

static void init_fn(void *ptr, int64_t ld, int rows, int cols, void *arg)
{
    uint64_t *p = ptr;
    uint64_t a = (uint64_t)(intptr_t)arg;
    for (int j = 0; j < cols; j++)
        for (int i = 0; i < rows; i++) p[i + j * ld] = a * 1000003 + (uint64_t)(i * 31 + j);
}

static uint64_t hash_ref(dat_t *d)
{
    uint64_t h = 1;
    for (int k = 0; k < d->rows * d->cols; k++) h = mix(h, d->ref[k]);
    return h;
}
static uint64_t hash_mem(const int64_t *p, int64_t ld, int rows, int cols)
{
    uint64_t h = 1;
    for (int j = 0; j < cols; j++)
        for (int i = 0; i < rows; i++) h = mix(h, (uint64_t)p[i + j * ld]);
    return h;
}
static void push_hist(dat_t *d)
{
    if (d->nhist < MAXHIST) d->hist[d->nhist++] = hash_ref(d);
}

/* end a reduction group in the model */
static void end_redux(dat_t *d)
{
    if (!d->in_redux) return;
    if (d->redux_bad) {
        memcpy(d->ref, d->pre_redux, sizeof(uint64_t) * d->rows * d->cols);
        d->lost = 1;
    } else {
        push_hist(d);
    }
    d->in_redux = 0;
    d->redux_bad = 0;
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) {
        fprintf(stderr, "init failed\n");
        return 2;
    }
    unsigned seed = 1;
    int ntp = 3, ntasks = 20, ndata = 6, boom = 0, redux = 1, inj = 0, lenient = 0, arr = 1,
        verbose = 0, big = 1, conc = 0, rereg = 0, maxf = 3, cont = 0;
    for (int i = 1; i < argc; i++) {
        sscanf(argv[i], "seed=%u", &seed);
        sscanf(argv[i], "ntp=%d", &ntp);
        sscanf(argv[i], "ntasks=%d", &ntasks);
        sscanf(argv[i], "ndata=%d", &ndata);
        sscanf(argv[i], "boom=%d", &boom);
        sscanf(argv[i], "redux=%d", &redux);
        sscanf(argv[i], "inj=%d", &inj);
        sscanf(argv[i], "lenient=%d", &lenient);
        sscanf(argv[i], "arr=%d", &arr);
        sscanf(argv[i], "v=%d", &verbose);
        sscanf(argv[i], "big=%d", &big);
        sscanf(argv[i], "conc=%d", &conc);
        sscanf(argv[i], "rereg=%d", &rereg);
        sscanf(argv[i], "maxf=%d", &maxf);
        sscanf(argv[i], "cont=%d", &cont);
    }
    {
        int lvl;
        MPI_Query_thread(&lvl);
        if (lvl != MPI_THREAD_MULTIPLE && weft_rank(ctx) == 0)
            fprintf(stderr, "note: MPI thread level %d\n", lvl);
    }
    rank = weft_rank(ctx);
    nranks = weft_nranks(ctx);
    ndev = weft_ndevices(ctx);
    rs = seed * 7919ULL + 13;
    if (ndata > MAXD) ndata = MAXD;
    /* a matrix with odd sizes */
    int m = (3 + rr(9)) * big, n = 2 + rr(9), mb = (2 + rr(4)) * big, nb = 1 + rr(4);
    int P = nranks, Q = 1;
    if (nranks == 4 && rr(2)) {
        P = 2;
        Q = 2;
    } else if (rr(2)) {
        P = 1;
        Q = nranks;
    }
    weft_matrix_t *A = weft_matrix_new(ctx, WEFT_INT64, m, n, mb, nb, P, Q);
    if (!A) {
        fprintf(stderr, "matrix_new failed\n");
        return 2;
    }
    int mt = (m + mb - 1) / mb, ntl = (n + nb - 1) / nb;
    int tile_used[64] = {0}, nnt = 0;
    nd = ndata;
    for (int k = 0; k < nd; k++) {
        dat_t *d = &D[k];
        d->kind = rr(3);
        if (d->kind == K_TILE) {
            int i = rr(mt), j = rr(ntl);
            if (tile_used[i * 8 + j])
                d->kind = K_NEW;
            else {
                tile_used[i * 8 + j] = 1;
                d->d = weft_tile(A, i, j);
                d->key = i + j * mt;
                d->rows = (i == mt - 1) ? m - i * mb : mb;
                d->cols = (j == ntl - 1) ? n - j * nb : nb;
                d->owner = weft_data_owner(d->d);
                d->hasver = 1;
            }
        }
        if (d->kind != K_TILE) {
            d->rows = (1 + rr(7)) * big;
            d->cols = 1 + rr(5);
            d->owner = rr(nranks);
        }
        if (d->kind != K_TILE) d->key = mt * ntl + nnt++;
        d->ref = calloc((size_t)d->rows * d->cols, 8);
        d->pre_redux = calloc((size_t)d->rows * d->cols, 8);
        if (d->kind == K_REG) {
            d->ld = d->rows + rr(3);
            if (rank == d->owner) {
                d->user = calloc((size_t)d->ld * d->cols, 8);
                for (int j = 0; j < d->cols; j++)
                    for (int i = 0; i < d->rows; i++)
                        d->user[i + j * d->ld] = (int64_t)(k * 100 + i + 10 * j);
            }
            for (int j = 0; j < d->cols; j++)
                for (int i = 0; i < d->rows; i++)
                    d->ref[i + j * d->rows] = (uint64_t)(k * 100 + i + 10 * j);
            d->d = weft_data_register(ctx, WEFT_INT64, rank == d->owner ? d->user : NULL, d->rows,
                                      d->cols, rank == d->owner ? d->ld : 0, d->owner);
            d->hasver = 1;
        } else if (d->kind == K_NEW) {
            d->d = weft_data_new(ctx, WEFT_INT64, d->rows, d->cols, d->owner);
            if (rr(2)) {
                d->hasinit = 1 + rr(2);
                d->initv = k + 1;
                if (weft_data_set_init(d->d, d->hasinit == 1 ? NULL : init_fn,
                                       (void *)(intptr_t)d->initv)) {
                    fprintf(stderr, "set_init failed\n");
                    errors++;
                }
                if (d->hasinit == 2)
                    init_fn(d->ref, d->rows, d->rows, d->cols, (void *)(intptr_t)d->initv);
            }
        }
        if (!d->d) {
            fprintf(stderr, "data %d create failed\n", k);
            return 2;
        }
        if (redux && rr(4) == 0) {
            d->redux = 1;
            if (weft_data_set_reduction(d->d, &cls_zero, &cls_add)) {
                fprintf(stderr, "set_reduction failed\n");
                errors++;
            }
        }
        if (verbose && rank == 0)
            printf("data %d kind %d %dx%d owner %d redux %d init %d\n", k, d->kind, d->rows,
                   d->cols, d->owner, d->redux, d->hasinit);
    }
    weft_taskpool_t *tps[3] = {weft_taskpool_new(ctx, "tpA"), weft_taskpool_new(ctx, "tpB"), NULL};
    int any_fail = 0, stop = 0;
    for (int tpi = 0; tpi < ntp && !stop; tpi++) {
        weft_taskpool_t *tp = tps[rr(2)];
        int part[MAXD], cnt[2] = {0, 0};
        int pswap = rr(2);
        for (int k = 0; k < nd; k++) {
            part[k] = conc ? rr(2) : 0;
            cnt[part[k]]++;
        }
        if (conc && (cnt[0] == 0 || cnt[1] == 0)) {
            for (int k = 0; k < nd; k++) part[k] = k & 1;
            cnt[0] = (nd + 1) / 2;
            cnt[1] = nd / 2;
        }
        int pool_of_boom = -1;
        for (int k = 0; k < nd; k++) {
            D[k].lost = 0;
            D[k].nhist = 0;
            push_hist(&D[k]);
            D[k].in_redux = 0;
        }
        int boom_at = (boom && rr(100) < boom) ? rr(ntasks) : -1;
        int nt = 0;
        for (int t = 0; t < ntasks; t++) {
            spec_t s;
            memset(&s, 0, sizeof s);
            int idx[MAXF];
            int pl = conc ? rr(2) : 0;
            weft_taskpool_t *tpx = conc ? tps[pl ^ pswap] : tp;
            s.nf = 1 + rr(maxf);
            if (s.nf > cnt[pl]) s.nf = cnt[pl];
            for (int f = 0; f < s.nf; f++) {
                int again;
                do {
                    again = 0;
                    idx[f] = rr(nd);
                    if (part[idx[f]] != pl) {
                        again = 1;
                        continue;
                    }
                    for (int g = 0; g < f; g++)
                        if (idx[g] == idx[f]) again = 1;
                } while (again);
                dat_t *d = &D[idx[f]];
                int mo = (int[]){WEFT_R, WEFT_W, WEFT_RW}[rr(3)];
                if (d->redux && rr(2)) mo = WEFT_REDUX;
                /* avoid the known lane cascade (repro_1): no REDUX after a bad contribution */
                if (mo == WEFT_REDUX && ((d->in_redux && d->redux_bad) || d->lost)) mo = WEFT_RW;
                if (!d->hasver && !d->hasinit && mo != WEFT_REDUX) mo = WEFT_W;
                s.mode[f] = (uint8_t)mo;
            }
            int64_t v = (int64_t)rnd() * 7 + t;
            int isboom = (t == boom_at);
            if (isboom) pool_of_boom = pl;
            const weft_task_class_t *cls;
            int c = rr(ndev > 0 ? 3 : 2);
            cls = c == 0 ? &cls_cpu : c == 1 ? &cls_both : &cls_emu;
            if (isboom) cls = inj ? &cls_inj : &cls_boom;
            weft_arg_t a[32];
            int na = 0;
            int aff = rr(s.nf + 1) - 1;
            for (int f = 0; f < s.nf; f++)
                a[na++] = weft_arg_data(s.mode[f] | (f == aff ? WEFT_AFFINITY : 0), D[idx[f]].d);
            a[na++] = weft_arg_value(&v, sizeof v);
            a[na++] = weft_arg_value(&s, sizeof s);
            if (rr(3) == 0) a[na++] = weft_arg_int(WEFT_PRIORITY, rr(20) - 5);
            if (aff < 0 && rr(2)) a[na++] = weft_arg_int(WEFT_ON_RANK, rr(nranks));
            if (ndev > 0 && rr(3) == 0) a[na++] = weft_arg_int(WEFT_DEVICE_HINT, rr(ndev + 1));
            int rc;
            if (arr || s.nf != 1)
                rc = weft_insert_task_array(tpx, cls, a, na);
            else {
                /* variadic form for 1 flow, same args */
                rc = weft_insert_task(tpx, cls, a[0].tag, a[0].data, WEFT_VALUE, &v, sizeof v,
                                      WEFT_VALUE, &s, sizeof s, 0);
            }
            if (rc) {
                /* acceptable only if it reads NEW data with no version after a failure */
                int excuse = 0;
                for (int f = 0; f < s.nf; f++)
                    if (D[idx[f]].kind == K_NEW && any_fail) excuse = 1;
                if (!excuse) {
                    fprintf(stderr, "[%d] ERROR insert refused tp %d task %d rc %d\n", rank, tpi, t,
                            rc);
                    errors++;
                }
                continue;
            }
            nt++;
            /* model */
            int cancelled = 0;
            for (int f = 0; f < s.nf; f++) {
                dat_t *d = &D[idx[f]];
                if (s.mode[f] != WEFT_REDUX) end_redux(d);
                if ((s.mode[f] == WEFT_R || s.mode[f] == WEFT_RW) && d->lost) cancelled = 1;
            }
            int failed = isboom || cancelled;
            if (failed) {
                for (int f = 0; f < s.nf; f++) {
                    dat_t *d = &D[idx[f]];
                    if (s.mode[f] == WEFT_W || s.mode[f] == WEFT_RW) d->lost = 1;
                    if (s.mode[f] == WEFT_REDUX) {
                        if (!d->in_redux) {
                            memcpy(d->pre_redux, d->ref, 8 * d->rows * d->cols);
                            d->in_redux = 1;
                            if (d->lost) d->redux_bad = 1;
                        }
                        d->redux_bad = 1;
                    }
                }
            } else {
                uint64_t *p[MAXF];
                int64_t ld[MAXF];
                int r[MAXF], cc[MAXF];
                for (int f = 0; f < s.nf; f++) {
                    dat_t *d = &D[idx[f]];
                    if (s.mode[f] == WEFT_REDUX && !d->in_redux) {
                        memcpy(d->pre_redux, d->ref, 8 * d->rows * d->cols);
                        d->in_redux = 1;
                        if (d->lost) d->redux_bad = 1;
                    }
                    p[f] = d->ref;
                    ld[f] = d->rows;
                    r[f] = d->rows;
                    cc[f] = d->cols;
                }
                apply(v, &s, p, ld, r, cc);
                for (int f = 0; f < s.nf; f++) {
                    dat_t *d = &D[idx[f]];
                    if (s.mode[f] == WEFT_W || s.mode[f] == WEFT_RW) {
                        d->lost = 0;
                        d->hasver = 1;
                        d->taskwritten = 1;
                        push_hist(d);
                    }
                    if (s.mode[f] == WEFT_REDUX) {
                        d->hasver = 1;
                        d->taskwritten = 1;
                    }
                }
            }
            if (verbose && rank == 0)
                printf("tp %d task %d cls %s nf %d [%d:%d %d:%d %d:%d] %s\n", tpi, t, cls->name,
                       s.nf, idx[0], s.mode[0], s.nf > 1 ? idx[1] : -1, s.mode[1],
                       s.nf > 2 ? idx[2] : -1, s.mode[2],
                       failed ? (isboom ? "BOOM" : "cancel") : "");
        }
        for (int k = 0; k < nd; k++) end_redux(&D[k]);
        int expect_fail = 0;
        for (int t = 0; t < 1; t++) expect_fail = (boom_at >= 0 && boom_at < ntasks);
        int rc;
        if (conc) {
            int first = rr(2), rcs[2];
            rcs[first] = weft_taskpool_wait(tps[first ^ pswap]);
            rcs[!first] = weft_taskpool_wait(tps[!first ^ pswap]);
            for (int q = 0; q < 2; q++) {
                int exp = (q == pool_of_boom) ? WEFT_ERR_TASK : 0;
                if (!lenient && rcs[q] != exp) {
                    fprintf(stderr, "[%d] ERROR tp %d pool %d wait rc %d expected %d\n", rank, tpi,
                            q, rcs[q], exp);
                    errors++;
                }
            }
            rc = rcs[0] ? rcs[0] : rcs[1];
            if (!lenient) rc = expect_fail ? WEFT_ERR_TASK : 0;
        } else
            rc = weft_taskpool_wait(tp);
        if (lenient) {
            int mn, mx;
            MPI_Allreduce(&rc, &mn, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
            MPI_Allreduce(&rc, &mx, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
            if (mn != mx) {
                fprintf(stderr, "[%d] ERROR tp %d ranks' wait rc differ: min %d max %d (mine %d)\n",
                        rank, tpi, mn, mx, rc);
                errors++;
            }
            if (rc != 0) {
                any_fail = 1;
                stop = !cont;
            }
        } else if (expect_fail ? rc != WEFT_ERR_TASK : rc != 0) {
            fprintf(stderr, "[%d] ERROR tp %d wait rc %d expected %d\n", rank, tpi, rc,
                    expect_fail ? WEFT_ERR_TASK : 0);
            errors++;
        }
        if (expect_fail) any_fail = 1;
        /* check on owners */
        for (int k = 0; k < nd; k++) {
            dat_t *d = &D[k];
            int pick = rr(2);
            if (d->lost) d->lost = 0;
            /* NEW data never good: no version */
            if (d->kind == K_NEW && !d->hasver) continue;
            if (d->kind == K_NEW && !d->taskwritten && d->hasinit && nranks > 1) {
                if (rank != d->owner) continue;
            }
            if (rank != d->owner) continue;
            const int64_t *p;
            int64_t ld;
            void *vp = NULL;
            int acq = 0;
            if (d->kind == K_REG && pick == 0) {
                p = d->user;
                ld = d->ld;
            } else {
                int arc = weft_data_host_acquire(d->d, WEFT_R, &vp, &ld);
                if (arc) {
                    if (!(lenient && (rc != 0 || d->gone))) {
                        fprintf(stderr, "[%d] ERROR tp %d data %d acquire R rc %d\n", rank, tpi, k,
                                arc);
                        errors++;
                    } else
                        fprintf(stderr,
                                "[%d] note: tp %d data %d acquire R rc %d after failed wait\n",
                                rank, tpi, k, arc);
                    d->gone = 1;
                    continue;
                }
                p = vp;
                acq = 1;
            }
            uint64_t h = hash_mem(p, ld, d->rows, d->cols);
            if (h != hash_ref(d)) {
                int found = -1;
                for (int q = 0; q < d->nhist; q++)
                    if (d->hist[q] == h) found = q;
                if (lenient && rc != 0 && found >= 0) {
                    /* resync */
                    for (int j = 0; j < d->cols; j++)
                        for (int i = 0; i < d->rows; i++)
                            d->ref[i + j * d->rows] = (uint64_t)p[i + j * ld];
                } else {
                    fprintf(stderr,
                            "[%d] ERROR tp %d data %d (kind %d %dx%d owner %d redux %d) mismatch: "
                            "history index %d of %d key %d\n",
                            rank, tpi, k, d->kind, d->rows, d->cols, d->owner, d->redux, found,
                            d->nhist, d->key);
                    errors++;
                    for (int j = 0; j < d->cols; j++)
                        for (int i = 0; i < d->rows; i++)
                            d->ref[i + j * d->rows] = (uint64_t)p[i + j * ld];
                }
            }
            if (acq && weft_data_host_release(d->d)) {
                fprintf(stderr, "[%d] ERROR release\n", rank);
                errors++;
            }
        }
        if (expect_fail || lenient) {
            for (int k = 0; k < nd; k++) {
                dat_t *d = &D[k];
                if (d->kind == K_NEW && !d->hasver) continue;
                MPI_Bcast(d->ref, d->rows * d->cols, MPI_UINT64_T, d->owner, MPI_COMM_WORLD);
            }
        }
        if (stop) break;
        /* release and register again (same user memory), set home devices */
        for (int k = 0; k < nd && rereg; k++) {
            dat_t *d = &D[k];
            int what = rr(6);
            if (d->kind == K_REG && what == 0) {
                weft_data_release(d->d);
                d->d = weft_data_register(ctx, WEFT_INT64, rank == d->owner ? d->user : NULL,
                                          d->rows, d->cols, rank == d->owner ? d->ld : 0, d->owner);
                d->key = -1;
                if (!d->d) {
                    fprintf(stderr, "[%d] ERROR re-register %d failed\n", rank, k);
                    errors++;
                    return 1;
                }
                if (d->redux && weft_data_set_reduction(d->d, &cls_zero, &cls_add)) {
                    fprintf(stderr, "[%d] ERROR set_reduction again\n", rank);
                    errors++;
                }
            } else if (what == 1 && ndev > 0) {
                int dv = rr(ndev + 1);
                if (weft_data_set_device(d->d, dv)) {
                    fprintf(stderr, "[%d] ERROR set_device %d %d\n", rank, k, dv);
                    errors++;
                }
            } else if (what == 2 && d->kind == K_REG) {
                int keep = rr(2);
                if (weft_data_set_keep_device_copies(d->d, keep)) {
                    fprintf(stderr, "[%d] ERROR keep\n", rank);
                    errors++;
                }
                d->keep = keep;
            }
        }
        /* host modifications between taskpools */
        for (int k = 0; k < nd; k++) {
            dat_t *d = &D[k];
            int what = rr(4);
            if (what == 0) continue;
            uint64_t add = rnd();
            if (d->kind == K_REG && what == 1 && !d->keep) {
                if (rank == d->owner)
                    for (int j = 0; j < d->cols; j++)
                        for (int i = 0; i < d->rows; i++)
                            d->user[i + j * d->ld] += (int64_t)(add + i);
                for (int j = 0; j < d->cols; j++)
                    for (int i = 0; i < d->rows; i++) d->ref[i + j * d->rows] += add + i;
            } else if (what >= 2 && d->hasver && (d->kind == K_TILE || d->taskwritten)) {
                int mode = what == 2 ? WEFT_RW : WEFT_W;
                if (rank == d->owner) {
                    void *vp;
                    int64_t ld;
                    int arc = weft_data_host_acquire(d->d, mode, &vp, &ld);
                    if (arc) {
                        fprintf(stderr, "[%d] ERROR tp %d data %d acquire %d rc %d\n", rank, tpi, k,
                                mode, arc);
                        errors++;
                        continue;
                    }
                    int64_t *p = vp;
                    for (int j = 0; j < d->cols; j++)
                        for (int i = 0; i < d->rows; i++) {
                            if (mode == WEFT_RW)
                                p[i + j * ld] += (int64_t)(add + i);
                            else
                                p[i + j * ld] = (int64_t)(add * 3 + i + j);
                        }
                    if (weft_data_host_release(d->d)) {
                        fprintf(stderr, "[%d] ERROR release2\n", rank);
                        errors++;
                    }
                }
                for (int j = 0; j < d->cols; j++)
                    for (int i = 0; i < d->rows; i++) {
                        if (mode == WEFT_RW)
                            d->ref[i + j * d->rows] += add + i;
                        else
                            d->ref[i + j * d->rows] = add * 3 + i + j;
                    }
            }
        }
    }
    weft_taskpool_free(tps[0]);
    weft_taskpool_free(tps[1]);
    for (int k = 0; k < nd; k++)
        if (D[k].kind != K_TILE) weft_data_release(D[k].d);
    weft_matrix_free(A);
    int frc = weft_fini(ctx);
    int fexp = any_fail ? WEFT_ERR_TASK : 0;
    if (lenient) {
        if (any_fail && frc == 0) {
            fprintf(stderr, "[%d] ERROR fini 0 after failure\n", rank);
            errors++;
        }
    } else if (frc != fexp) {
        fprintf(stderr, "[%d] ERROR fini rc %d expected %d\n", rank, frc, fexp);
        errors++;
    }
    if (errors)
        fprintf(stderr, "[%d] FAIL seed %u errors %d\n", rank, seed, errors);
    else if (rank == 0)
        printf("OK seed %u\n", seed);
    return errors ? 1 : 0;
}
