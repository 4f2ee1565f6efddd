/* The reduction tree of weft-geqrf's panels: which tiles of column k are
 * reduced into which, the T factors and diagonal copies that records, and
 * the insertion of the factorization and of Q's application (--check) in
 * that order. Header-only, included by weft-geqrf.c only.
 *
 * Panel k is split into at most D domains (qr_factors_t.dom): a domain
 * holds tile rows m >= k, its head is the first of them, and the heads
 * are numbered in row order (head 0 is row k). Each domain is reduced by
 * the flat chain (GEQRT on its head, TSQRT of each of its other tiles into
 * the head, in order), then the heads' R factors are merged by TTQRT
 * (qr_kernels.h).
 * - flat (D = 1): one domain, the flat-tree tile QR of Buttari et al.
 * - hier (D = P): a domain is the tiles of column k that one grid row owns
 *   (the rows whose tile of column 0 is on the same rank, whatever the
 *   deal: cyclic or reflected), so its chain never leaves the rank, and
 *   only the TT merges cross between ranks: P - 1 of them a panel, where
 *   the flat chain crosses at every tile row. With P = 1 it is flat.
 * The heads are merged by a binary tree (qr_tree_merge): level by level,
 * head i takes head i + d for i a multiple of 2d, d = 1, 2, 4, ... A flat
 * tree over the heads would merge them one by one into row k: as many
 * merges and crossings (P - 1 a column), but P - 1 in a row on the
 * critical path where the binary tree has ceil(log2 P), and every
 * trailing column's top tile would visit the P - 1 other ranks in turn.
 *
 * A TTQRT writes its V into the upper triangle of the lower head, whose
 * strict lower part keeps that head's GEQRT V: so a head other than k has
 * two T factors, T(h,k) of its GEQRT and TT(i,k) of its merge (i its head
 * number). */
#ifndef WEFT_APPS_QR_TREE_H
#define WEFT_APPS_QR_TREE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <weft/weft.h>

#include "qr_kernels.h"

enum { QR_TREE_FLAT = 0, QR_TREE_HIER = 1 };

/* The TT tasks run on the host, whatever the accelerators (qr_kernels.h
 * says why): device 0 as their WEFT_DEVICE_HINT. */
#define QR_TT_DEVICE 0

typedef struct qr_factors {
    weft_matrix_t *A;
    int mt, nt;
    int dom;          /* domains a panel: 1 (flat) or P (hier) */
    int *next, *prev; /* the next and previous tile row of m's domain (mt, -1: none) */
    int *head;        /* head[i + k * dom]: panel k's head i, a tile row */
    int *nheads;      /* nheads[k]: panel k's heads */
    weft_data_t **t;  /* T(m,k) at m + k * mt, m >= k: of GEQRT (heads) or TSQRT */
    weft_data_t **tt; /* TT(i,k) at i + k * dom, heads i > 0: of TTQRT */
    weft_data_t **d;  /* D(i,k) at i + k * dom: head i factored, read by gemqrt */
} qr_factors_t;

static weft_data_t *qr_t(const qr_factors_t *f, int m, int k)
{
    return f->t[m + (size_t)k * f->mt];
}

static weft_data_t *qr_tt(const qr_factors_t *f, int i, int k)
{
    return f->tt[i + (size_t)k * f->dom];
}

static weft_data_t *qr_d(const qr_factors_t *f, int i, int k)
{
    return f->d[i + (size_t)k * f->dom];
}

static int qr_heads(const qr_factors_t *f, int k) { return f->nheads[k]; }

/* Tile row of panel k's head i. */
static int qr_head(const qr_factors_t *f, int k, int i) { return f->head[i + (size_t)k * f->dom]; }

/* Merge s (0 .. nh - 2) of the binary tree over nh heads, as head indices:
 * head *a takes head *b. Levels d = 1, 2, 4, ... in turn, pairs (i, i + d)
 * for i = 0, 2d, 4d, ... with i + d < nh, in increasing i. */
static void qr_tree_merge(int nh, int s, int *a, int *b)
{
    for (int d = 1; d < nh; d *= 2) {
        int pairs = (nh - d - 1) / (2 * d) + 1;
        if (s < pairs) {
            *a = 2 * d * s;
            *b = *a + d;
            return;
        }
        s -= pairs;
    }
    *a = *b = 0; /* not reached for s < nh - 1 */
}

static void qr_tiles_release(weft_data_t **v, size_t n)
{
    for (size_t i = 0; v != NULL && i < n; i++)
        if (v[i] != NULL) weft_data_release(v[i]);
    free(v);
}

static void qr_factors_free(qr_factors_t *f)
{
    qr_tiles_release(f->t, (size_t)f->mt * f->nt);
    qr_tiles_release(f->tt, (size_t)f->dom * f->nt);
    qr_tiles_release(f->d, (size_t)f->dom * f->nt);
    free(f->next);
    free(f->prev);
    free(f->head);
    free(f->nheads);
    f->t = f->tt = f->d = NULL;
    f->next = f->prev = f->head = f->nheads = NULL;
}

static int qr_min(int a, int b) { return a < b ? a : b; }

/* The NEW tiles of panel k, each held at the end by the rank of the tile
 * of A it belongs to. A T tile has as many rows as the inner block of its
 * step, at most its reflectors (LAPACK's rule): min(ib, n), and for a
 * head's GEQRT also at most the head's rows (a short last tile row). */
static int qr_factors_panel(weft_context_t *ctx, qr_factors_t *f, int k, int ib)
{
    weft_matrix_t *A = f->A;
    int nk = weft_matrix_tile_cols(A, k), i = 0;
    for (int m = k; m < f->mt; m++) {
        int rows = weft_matrix_tile_rows(A, m), rank = weft_matrix_tile_rank(A, m, k);
        int head = i < qr_heads(f, k) && qr_head(f, k, i) == m;
        int ibt = qr_min(ib, qr_min(nk, head ? rows : nk));
        size_t h = (size_t)i + (size_t)k * f->dom;
        f->t[m + (size_t)k * f->mt] = weft_data_new(ctx, WEFT_DOUBLE, ibt, nk, rank);
        if (f->t[m + (size_t)k * f->mt] == NULL) return -1;
        if (!head) continue;
        if ((f->d[h] = weft_data_new(ctx, WEFT_DOUBLE, rows, nk, rank)) == NULL) return -1;
        if (i > 0 && (f->tt[h] = weft_data_new(ctx, WEFT_DOUBLE, qr_min(ib, nk), nk, rank)) == NULL)
            return -1;
        i++;
    }
    return 0;
}

/* The domains' chains and each panel's heads. A domain is the rows whose
 * tile of column 0 one rank holds (hier) or every row (flat, dom 1); it
 * is the same set of ranks in every column (one grid row). 0, or -1 out
 * of memory or with more domains than dom (a deal that is no grid's). */
static int qr_factors_domains(qr_factors_t *f)
{
    int mt = f->mt, *key = calloc((size_t)mt, sizeof *key);
    f->next = malloc((size_t)mt * sizeof *f->next);
    f->prev = malloc((size_t)mt * sizeof *f->prev);
    f->head = calloc((size_t)f->dom * f->nt, sizeof *f->head);
    f->nheads = calloc((size_t)f->nt, sizeof *f->nheads);
    int rc = key && f->next && f->prev && f->head && f->nheads ? 0 : -1;
    for (int m = 0; m < mt && rc == 0; m++) {
        key[m] = f->dom == 1 ? 0 : weft_matrix_tile_rank(f->A, m, 0);
        f->next[m] = mt;
        f->prev[m] = -1;
        for (int p = m - 1; p >= 0; p--)
            if (key[p] == key[m]) {
                f->prev[m] = p;
                f->next[p] = m;
                break;
            }
    }
    /* A row starts a domain of panel k when no row of its domain lies in
     * [k, m): its previous row is above k. */
    for (int k = 0; k < f->nt && rc == 0; k++)
        for (int m = k; m < mt && rc == 0; m++) {
            if (f->prev[m] >= k) continue;
            if (f->nheads[k] == f->dom)
                rc = -1;
            else
                f->head[f->nheads[k]++ + (size_t)k * f->dom] = m;
        }
    free(key);
    return rc;
}

/* Every rank creates the same NEW tiles in the same order. dom: 1 (flat)
 * or the grid's P (hier). */
static int qr_factors_new(weft_context_t *ctx, qr_factors_t *f, weft_matrix_t *A, int ib, int dom)
{
    f->A = A;
    f->mt = weft_matrix_mt(A);
    f->nt = weft_matrix_nt(A);
    f->dom = dom;
    f->t = calloc((size_t)f->mt * f->nt, sizeof *f->t);
    f->tt = calloc((size_t)f->dom * f->nt, sizeof *f->tt);
    f->d = calloc((size_t)f->dom * f->nt, sizeof *f->d);
    int rc = f->t == NULL || f->tt == NULL || f->d == NULL ? -1 : qr_factors_domains(f);
    for (int k = 0; k < f->nt && rc == 0; k++) rc = qr_factors_panel(ctx, f, k, ib);
    if (rc == 0) return 0;
    if (weft_rank(ctx) == 0) fprintf(stderr, "weft-geqrf: cannot create the T tiles\n");
    qr_factors_free(f);
    return -1;
}

/* ---- task insertion -------------------------------------------------- */

/* Priority of a task writing column col: earlier columns first, so the
 * panel of step k+1 overtakes the trailing update of step k; within a
 * column the factorizations (bonus 3) before the updates. */
static int qr_prio(int nt, int col, int bonus) { return 4 * (nt - col) + bonus; }

/* C(h,j) := op(Q_hk) C(h,j), head i's GEQRT (h its row), for the columns
 * j >= j0 of C. */
static int qr_insert_gemqrt(weft_taskpool_t *tp, const qr_factors_t *f, weft_matrix_t *C, int k,
                            int i, int j0, char trans)
{
    int rc = 0, nt = weft_matrix_nt(C), h = qr_head(f, k, i);
    for (int j = j0; j < nt && rc >= 0; j++)
        rc = weft_insert_task(tp, &qr_class_gemqrt, WEFT_R, qr_d(f, i, k), WEFT_R, qr_t(f, h, k),
                              WEFT_RW | WEFT_AFFINITY, weft_tile(C, h, j), WEFT_VALUE, &trans,
                              sizeof trans, WEFT_PRIORITY, qr_prio(f->nt, j < f->nt ? j : 0, 2), 0);
    return rc;
}

/* (C(h,j), C(m,j)) := op(Q_mk) (C(h,j), C(m,j)), m's TSQRT into head h,
 * for the columns j >= j0. */
static int qr_insert_tsmqr(weft_taskpool_t *tp, const qr_factors_t *f, weft_matrix_t *C, int k,
                           int h, int m, int j0, char trans)
{
    int rc = 0, nt = weft_matrix_nt(C);
    for (int j = j0; j < nt && rc >= 0; j++)
        rc = weft_insert_task(tp, &qr_class_tsmqr, WEFT_R, weft_tile(f->A, m, k), WEFT_R,
                              qr_t(f, m, k), WEFT_RW, weft_tile(C, h, j), WEFT_RW | WEFT_AFFINITY,
                              weft_tile(C, m, j), WEFT_VALUE, &trans, sizeof trans, WEFT_PRIORITY,
                              qr_prio(f->nt, j < f->nt ? j : 0, 1), 0);
    return rc;
}

/* (C(ha,j), C(hb,j)) := op(Q) of head b's TTQRT into head a (ha, hb their
 * rows), for j >= j0; run where C(hb,j) is, as tsmqr: V and TT are there
 * already. */
static int qr_insert_ttmqr(weft_taskpool_t *tp, const qr_factors_t *f, weft_matrix_t *C, int k,
                           int a, int b, int j0, char trans)
{
    int rc = 0, nt = weft_matrix_nt(C), ha = qr_head(f, k, a), hb = qr_head(f, k, b);
    for (int j = j0; j < nt && rc >= 0; j++)
        rc = weft_insert_task(tp, &qr_class_ttmqr, WEFT_R, weft_tile(f->A, hb, k), WEFT_R,
                              qr_tt(f, b, k), WEFT_RW, weft_tile(C, ha, j), WEFT_RW | WEFT_AFFINITY,
                              weft_tile(C, hb, j), WEFT_VALUE, &trans, sizeof trans, WEFT_PRIORITY,
                              qr_prio(f->nt, j < f->nt ? j : 0, 1), WEFT_DEVICE_HINT, QR_TT_DEVICE,
                              0);
    return rc;
}

/* Domain of head i in panel k: its flat chain and the row updates. */
static int qr_insert_domain(weft_taskpool_t *tp, const qr_factors_t *f, int k, int i)
{
    weft_matrix_t *A = f->A;
    int h = qr_head(f, k, i);
    weft_data_t *ahk = weft_tile(A, h, k);
    int rc =
        weft_insert_task(tp, &qr_class_geqrt, WEFT_RW | WEFT_AFFINITY, ahk, WEFT_W, qr_t(f, h, k),
                         WEFT_W, qr_d(f, i, k), WEFT_PRIORITY, qr_prio(f->nt, k, 3), 0);
    if (rc >= 0) rc = qr_insert_gemqrt(tp, f, A, k, i, k + 1, 'T');
    for (int m = f->next[h]; m < f->mt && rc >= 0; m = f->next[m]) {
        rc = weft_insert_task(tp, &qr_class_tsqrt, WEFT_RW, ahk, WEFT_RW | WEFT_AFFINITY,
                              weft_tile(A, m, k), WEFT_W, qr_t(f, m, k), WEFT_PRIORITY,
                              qr_prio(f->nt, k, 3), 0);
        if (rc >= 0) rc = qr_insert_tsmqr(tp, f, A, k, h, m, k + 1, 'T');
    }
    return rc;
}

/* Step k of the factorization: every domain, then the merges of its heads. */
static int qr_insert_step(weft_taskpool_t *tp, const qr_factors_t *f, int k)
{
    weft_matrix_t *A = f->A;
    int rc = 0, nh = qr_heads(f, k);
    for (int i = 0; i < nh && rc >= 0; i++) rc = qr_insert_domain(tp, f, k, i);
    for (int s = 0; s < nh - 1 && rc >= 0; s++) {
        int a, b;
        qr_tree_merge(nh, s, &a, &b);
        rc = weft_insert_task(tp, &qr_class_ttqrt, WEFT_RW, weft_tile(A, qr_head(f, k, a), k),
                              WEFT_RW | WEFT_AFFINITY, weft_tile(A, qr_head(f, k, b), k), WEFT_W,
                              qr_tt(f, b, k), WEFT_PRIORITY, qr_prio(f->nt, k, 3), WEFT_DEVICE_HINT,
                              QR_TT_DEVICE, 0);
        if (rc >= 0) rc = qr_insert_ttmqr(tp, f, A, k, a, b, k + 1, 'T');
    }
    return rc < 0 ? rc : 0;
}

/* Panel k's reflectors on the columns j0 on of C: Q_k^T C (trans 'T': the
 * factorization's order) or Q_k C ('N': the same blocks in reverse). */
static int qr_insert_apply_panel(weft_taskpool_t *tp, const qr_factors_t *f, weft_matrix_t *C,
                                 int k, int j0, char trans)
{
    int rc = 0, nh = qr_heads(f, k), fwd = trans == 'T';
    for (int s = 0; s < nh && rc >= 0; s++) {
        int i = fwd ? s : nh - 1 - s, h = qr_head(f, k, i), last = h;
        while (f->next[last] < f->mt) last = f->next[last];
        if (fwd) rc = qr_insert_gemqrt(tp, f, C, k, i, j0, trans);
        /* The chain's TSQRTs in order, or in reverse from its last row. */
        for (int m = fwd ? f->next[h] : last; m != h && m < f->mt && rc >= 0;
             m = fwd ? f->next[m] : f->prev[m])
            rc = qr_insert_tsmqr(tp, f, C, k, h, m, j0, trans);
        if (!fwd && rc >= 0) rc = qr_insert_gemqrt(tp, f, C, k, i, j0, trans);
    }
    return rc;
}

/* C := Q^T C ('T': the panels in order, each's domains then its merges) or
 * C := Q C ('N': everything undone in reverse order), C with A's row
 * tiling. The merges of one level touch disjoint rows, so only their
 * levels' order matters; it is reversed exactly all the same. from_panel:
 * panel k leaves C's tile columns left of k alone (C := Q^T A0, where the
 * earlier panels made them zero below their diagonal: applied there, a
 * task changed rounding only, and the check could not tell it skipped). */
static int qr_insert_apply(weft_taskpool_t *tp, const qr_factors_t *f, weft_matrix_t *C, char trans,
                           int from_panel)
{
    int rc = 0, fwd = trans == 'T';
    for (int s = 0; s < f->nt && rc >= 0; s++) {
        int k = fwd ? s : f->nt - 1 - s, nh = qr_heads(f, k), j0 = from_panel ? k : 0;
        if (fwd) rc = qr_insert_apply_panel(tp, f, C, k, j0, trans);
        for (int r = 0; r < nh - 1 && rc >= 0; r++) {
            int a, b;
            qr_tree_merge(nh, fwd ? r : nh - 2 - r, &a, &b);
            rc = qr_insert_ttmqr(tp, f, C, k, a, b, j0, trans);
        }
        if (!fwd && rc >= 0) rc = qr_insert_apply_panel(tp, f, C, k, j0, trans);
    }
    return rc < 0 ? rc : 0;
}

#endif /* WEFT_APPS_QR_TREE_H */
