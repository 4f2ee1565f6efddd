/* Gather and scatter of a whole matrix to or from one rank, for checks
 * and I/O, not the hot path: every tile goes through host memory and
 * MPI_Gatherv / MPI_Scatterv on the context's communicator (one, or rounds
 * of at most INT_MAX bytes for a larger matrix). The ranks
 * first meet in an agreement (stf/agree.h), so a bad argument on one rank,
 * a tile that cannot be acquired, or a rank that is elsewhere in the
 * program is reported on every rank instead of leaving the others in the
 * collective. */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collections/matrix_int.h"
#include "stf/agree.h"
#include "stf/taskrun.h"
#include "util/cols.h"
#include "util/hash.h"
#include "util/ending.h"
#include "util/log.h"

typedef struct {
    const char *call;
    int root, scatter;
    char *buf; /* the root's column-major matrix */
    int64_t ldb;
} collect_t;

static size_t tile_bytes(const weft_matrix_t *A, int k) { return A->tiles[k]->bytes; }

/* Bytes each rank contributes and where they sit in the root's packed
 * buffer; the same on every rank (owners are known everywhere). */
static void layout(const weft_matrix_t *A, int64_t *counts, int64_t *displs)
{
    int R = A->ctx->nranks;
    for (int r = 0; r < R; r++) counts[r] = 0;
    for (int k = 0; k < A->mt * A->nt; k++)
        counts[A->tiles[k]->owner_rank] += (int64_t)tile_bytes(A, k);
    int64_t off = 0;
    for (int r = 0; r < R; r++) {
        displs[r] = off;
        off += counts[r];
    }
}

/* Copies tile k between its host copy and the packed buffer p. */
static void pack_tile(weft_data_t *d, char *p, int to_packed)
{
    weft_data_copy_t *h = d->copies[0];
    if (to_packed)
        weft_copy_cols(p, d->rows, h->ptr, h->ld, d->rows, d->cols, d->elem);
    else
        weft_copy_cols(h->ptr, h->ld, p, d->rows, d->rows, d->cols, d->elem);
}

/* Copies tile k between the root's matrix and the packed buffer p. */
static void place_tile(const weft_matrix_t *A, const collect_t *c, int k, char *p, int to_packed)
{
    const weft_data_t *d = A->tiles[k];
    int i = k % A->mt, j = k / A->mt;
    /* Unsigned: the bytes past buf fit the address space (ldb_fits). */
    uint64_t at = (uint64_t)j * (uint64_t)A->nb * (uint64_t)c->ldb + (uint64_t)i * (uint64_t)A->mb;
    char *t = c->buf + at * d->elem;
    if (to_packed)
        weft_copy_cols(p, d->rows, t, c->ldb, d->rows, d->cols, d->elem);
    else
        weft_copy_cols(t, c->ldb, p, d->rows, d->rows, d->cols, d->elem);
}

/* Walks the root's side: every tile in rank order, then tile order. */
static void root_walk(const weft_matrix_t *A, const collect_t *c, char *packed,
                      const int64_t *displs)
{
    for (int r = 0; r < A->ctx->nranks; r++) {
        char *p = packed + displs[r];
        for (int k = 0; k < A->mt * A->nt; k++) {
            if (A->tiles[k]->owner_rank != r) continue;
            place_tile(A, c, k, p, c->scatter);
            p += tile_bytes(A, k);
        }
    }
}

static void local_walk(const weft_matrix_t *A, char *packed, int to_packed)
{
    for (int k = 0; k < A->nlocal; k++) {
        weft_data_t *d = A->tiles[A->local[k]];
        pack_tile(d, packed, to_packed);
        packed += d->bytes;
    }
}

int weft_collect__round_bytes = 0;

#define COLLECT_SLABS ((int64_t)256 << 20)
#define COLLECT_MIN_CHUNK ((int64_t)64 << 10)

/* One round: bytes [at, at + chunk) of each rank's packed part, through
 * the root's slab of chunk bytes a rank (the counts and offsets of one
 * round fit an int). */
static int round_trip(const weft_matrix_t *A, const collect_t *c, const int64_t *counts,
                      const int64_t *displs, char *mine, char *all, char *slabs, int64_t at,
                      int chunk, int *n, int *d)
{
    weft_context_t *ctx = A->ctx;
    int me = ctx->rank, R = ctx->nranks;
    for (int r = 0; r < R; r++) {
        int64_t left = counts[r] > at ? counts[r] - at : 0;
        n[r] = (int)(left < chunk ? left : chunk);
        d[r] = r * chunk;
    }
    /* The root's own part is in place in `all` (mine points there): it
     * stays out of the slab's copies, and out of the scatter's receive. */
    int rc;
    if (c->scatter) {
        for (int r = 0; all && r < R; r++)
            if (r != me) memcpy(slabs + d[r], all + displs[r] + at, (size_t)n[r]);
        rc = MPI_Scatterv(slabs, n, d, MPI_BYTE, all ? MPI_IN_PLACE : mine + at, n[me], MPI_BYTE,
                          c->root, ctx->comm);
    } else {
        rc = MPI_Gatherv(mine + at, n[me], MPI_BYTE, slabs, n, d, MPI_BYTE, c->root, ctx->comm);
        for (int r = 0; all && rc == MPI_SUCCESS && r < R; r++)
            if (r != me) memcpy(all + displs[r] + at, slabs + d[r], (size_t)n[r]);
    }
    return rc;
}

/* The collective itself, after the agreement: the root's packed buffer
 * moves in rounds of at most INT_MAX bytes in all (a matrix of 2 GiB and
 * more was refused: "gather it in parts", which the API cannot do). */
static int move(const weft_matrix_t *A, const collect_t *c, const int64_t *counts,
                const int64_t *displs)
{
    weft_context_t *ctx = A->ctx;
    int me = ctx->rank, R = ctx->nranks;
    int64_t total = displs[R - 1] + counts[R - 1], most = 0;
    for (int r = 0; r < R; r++) most = counts[r] > most ? counts[r] : most;
    /* The root's slabs (chunk bytes a rank) stay within COLLECT_SLABS in
     * all: a round as wide as the largest part doubled the root's memory
     * on top of the packed matrix (a stranger measured 4.9 times the
     * matrix on one rank with the root's own part packed apart). */
    int64_t limit = weft_collect__round_bytes > 0 ? weft_collect__round_bytes : INT_MAX / R;
    if (weft_collect__round_bytes <= 0 && COLLECT_SLABS / R < limit) {
        int64_t floor = COLLECT_MIN_CHUNK < limit ? COLLECT_MIN_CHUNK : limit; /* R x it fits int */
        limit = COLLECT_SLABS / R > floor ? COLLECT_SLABS / R : floor;
    }
    int chunk = (int)(most < limit ? (most > 0 ? most : 1) : limit);
    char *all = me == c->root ? malloc(total ? (size_t)total : 1) : NULL;
    char *mine = all ? all + displs[me] : malloc(counts[me] ? (size_t)counts[me] : 1);
    char *slabs = me == c->root ? malloc((size_t)chunk * (size_t)R) : NULL;
    int *n = malloc(2 * sizeof(int) * (size_t)R);
    if (!mine || !n || (me == c->root && (!all || !slabs))) {
        weft_error("%s: out of host memory for %lld bytes: ending the run", c->call,
                   (long long)total);
        weft_abort_job(ctx->comm, 1); /* the other ranks are in the collective already */
    }
    if (c->scatter && all) root_walk(A, c, all, displs);
    if (!c->scatter) local_walk(A, mine, 1);
    int rc = MPI_SUCCESS;
    for (int64_t at = 0; rc == MPI_SUCCESS && (at == 0 || at < most); at += chunk)
        rc = round_trip(A, c, counts, displs, mine, all, slabs, at, chunk, n, n + R);
    if (c->scatter && rc == MPI_SUCCESS) local_walk(A, mine, 0);
    if (!c->scatter && all && rc == MPI_SUCCESS) root_walk(A, c, all, displs);
    free(n);
    free(slabs);
    if (!all) free(mine);
    free(all);
    if (rc == MPI_SUCCESS) return WEFT_SUCCESS;
    weft_error("%s: MPI failed moving the tiles", c->call);
    return WEFT_ERR_MPI;
}

/* Whether the root's n columns of ldb elements fit in the address space
 * from buf: an ldb no memory has would wrap it. */
static int ldb_fits(const weft_matrix_t *A, const collect_t *c)
{
    uint64_t room = (uint64_t)(UINTPTR_MAX - (uintptr_t)c->buf) / A->tiles[0]->elem;
    return (uint64_t)c->ldb <= room / (uint64_t)A->n;
}

/* This rank's checks of the arguments, then its tiles held for the host. */
static int prepare(weft_matrix_t *A, const collect_t *c)
{
    weft_context_t *ctx = A->ctx;
    if (c->root < 0 || c->root >= ctx->nranks) {
        weft_error("%s: root %d is not a rank in [0, %d)", c->call, c->root, ctx->nranks);
        return WEFT_ERR_INVALID;
    }
    if (ctx->rank == c->root && (!c->buf || c->ldb < A->m)) {
        weft_error("%s: %s on the root rank %d", c->call,
                   !c->buf ? "NULL buffer: pass the whole matrix's memory"
                           : "ldb is smaller than the matrix's rows",
                   c->root);
        return WEFT_ERR_INVALID;
    }
    if (ctx->rank == c->root && !ldb_fits(A, c)) {
        weft_error("%s: ldb %lld for a %lld x %lld matrix at %p runs past the end of the address "
                   "space on the root rank %d",
                   c->call, (long long)c->ldb, (long long)A->m, (long long)A->n, (void *)c->buf,
                   c->root);
        return WEFT_ERR_INVALID;
    }
    if (A->nlocal == 0) return WEFT_SUCCESS;
    return weft_matrix__host_acquire_for(A, c->scatter ? WEFT_W : WEFT_R, c->call);
}

/* The tiles go back untouched: no release, which after a write acquire
 * would make host memory that nothing filled the current version. */
static void unhold(weft_matrix_t *A)
{
    for (int k = 0; k < A->nlocal; k++) A->tiles[A->local[k]]->host_access = 0;
    A->host_acquired = 0; /* the matrix is the user's to acquire again */
}

/* The arguments every rank must pass alike (the root, the matrix: its
 * shape and its first tile's data key, which names it across ranks): ranks
 * that passed different ones would enter collectives of different roots
 * or sizes (a hang, or a scatter from the wrong rank's buffer). */
static uint64_t collect_hash(const weft_matrix_t *A, const collect_t *c)
{
    const uint64_t f[] = {(uint64_t)(uint32_t)c->root,
                          (uint64_t)A->m,
                          (uint64_t)A->n,
                          (uint64_t)(uint32_t)A->mb,
                          (uint64_t)(uint32_t)A->nb,
                          (uint64_t)(uint32_t)A->type,
                          A->tiles[0]->key};
    return weft_hash_words(WEFT_HASH_INIT, f, sizeof f / sizeof f[0]);
}

static int collect(weft_matrix_t *A, const collect_t *c)
{
    weft_context_t *ctx = A->ctx;
    if (ctx->sim) {
        /* One process stands for all the ranks: no tile holds data and
         * there is nobody to collect from (docs/SCALE.md). */
        weft_error("%s: a simulation (sim_nranks=%d) moves no data: there is nothing to %s",
                   c->call, ctx->nranks, c->scatter ? "scatter" : "gather");
        return WEFT_ERR_INVALID;
    }
    if (ctx->diverged) {
        weft_error("%s: %s: no collective is made", c->call, weft_context_diverged_why(ctx));
        return WEFT_ERR_MISMATCH;
    }
    int64_t *counts = calloc((size_t)ctx->nranks, sizeof *counts);
    int64_t *displs = calloc((size_t)ctx->nranks, sizeof *displs);
    int status = !counts || !displs ? WEFT_ERR_NOMEM : prepare(A, c);
    int held = status == WEFT_SUCCESS && A->nlocal > 0;
    if (status == WEFT_SUCCESS) layout(A, counts, displs);
    /* A gather on one rank and a scatter on another are at different
     * points; different roots or matrices are different arguments. */
    weft_agree_vote_t v = {.point = WEFT_AGREE_COLLECT,
                           .ordinal = c->scatter,
                           .status = status,
                           .task_hash = collect_hash(A, c),
                           .ntasks = 1};
    snprintf(v.where, sizeof v.where, "%s (root %d)", c->call, c->root);
    weft_agree_outcome_t out;
    int rc = weft_agree(ctx, &v, &out);
    if (rc == WEFT_SUCCESS && !out.same_tasks) {
        weft_error("%s: the ranks passed different roots or matrices (this rank: root %d, a "
                   "%lld x %lld matrix in %d x %d tiles, first tile data %llu): nothing was moved",
                   c->call, c->root, (long long)A->m, (long long)A->n, A->mb, A->nb,
                   (unsigned long long)A->tiles[0]->key);
        rc = WEFT_ERR_INVALID;
    }
    if (rc == WEFT_SUCCESS) rc = move(A, c, counts, displs);
    if (rc == WEFT_ERR_MISMATCH || rc == WEFT_ERR_MPI) {
        weft_taskrun_diverge(ctx, rc);
    } else if (rc != WEFT_SUCCESS && out.failed_rank >= 0 && out.failed_rank != ctx->rank) {
        weft_error("%s: rank %d failed (%s): nothing was moved", c->call, out.failed_rank,
                   out.failed_msg);
    }
    if (held && rc == WEFT_SUCCESS && weft_matrix_host_release(A) != WEFT_SUCCESS)
        rc = WEFT_ERR_INTERNAL;
    if (held && rc != WEFT_SUCCESS) unhold(A);
    free(counts);
    free(displs);
    return rc;
}

int weft_matrix_gather(weft_matrix_t *A, int root, void *buf, int64_t ldb)
{
    if (!weft_handle_check_main(A, WEFT_HANDLE_MATRIX, "weft_matrix_gather", 1))
        return WEFT_ERR_INVALID;
    collect_t c = {"weft_matrix_gather", root, 0, buf, ldb};
    return collect(A, &c);
}

int weft_matrix_scatter(weft_matrix_t *A, int root, const void *buf, int64_t ldb)
{
    if (!weft_handle_check_main(A, WEFT_HANDLE_MATRIX, "weft_matrix_scatter", 1))
        return WEFT_ERR_INVALID;
    collect_t c = {"weft_matrix_scatter", root, 1, (char *)buf, ldb};
    return collect(A, &c);
}
