/* Tiled matrices: 2D block-cyclic over a P x Q grid of ranks, or any
 * distribution a user function gives (owner rank and home device of each
 * tile); vectors are n x 1 matrices of blocks. Every rank holds a data
 * handle for every tile (the insertion sequence names remote tiles too)
 * but memory only for its own tiles. */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#include "api/data_api.h"
#include "collections/matrix_home.h"
#include "collections/matrix_int.h"
#include "collections/matrix_room.h"
#include "data/hostmem.h"
#include "stf/insert.h"
#include "stf/seqcheck.h"
#include "util/inbody.h"
#include "util/hash.h"
#include "util/log.h"

/* The tiles of an m x n matrix in mb x nb tiles, in *mt x *nt; 0 when the
 * sizes are not positive or the counts do not fit an int (tile indices and
 * a rank's count of tiles are ints). */
static int tile_counts(int64_t m, int64_t n, int mb, int nb, int64_t *mt, int64_t *nt)
{
    if (m <= 0 || n <= 0 || mb <= 0 || nb <= 0) return 0;
    *mt = (m - 1) / mb + 1; /* m + mb - 1 may overflow */
    *nt = (n - 1) / nb + 1;
    return *mt <= INT_MAX && *nt <= INT_MAX && *mt * *nt <= INT_MAX;
}

/* With user_dist there is no grid: the distribution is checked tile by
 * tile. */
static int check_shape(weft_context_t *ctx, const char *call, weft_dtype_t type, int64_t m,
                       int64_t n, int mb, int nb, int P, int Q, int user_dist)
{
    if (weft_dtype_check(call, type) != WEFT_SUCCESS) return WEFT_ERR_INVALID;
    if (m <= 0 || n <= 0) {
        weft_error("%s: size %lld x %lld must be positive (no empty matrix or vector)", call,
                   (long long)m, (long long)n);
        return WEFT_ERR_INVALID;
    }
    if (mb <= 0 || nb <= 0) {
        weft_error("%s: tile size %d x %d must be positive", call, mb, nb);
        return WEFT_ERR_INVALID;
    }
    /* Counts that do not fit an int (tile indices and the count of a
     * rank's tiles are ints) or a tile of
     * more bytes than size_t holds would make a wrong matrix, not a
     * refused one. */
    int64_t mt = 0, nt = 0, rows = m < mb ? m : mb, cols = n < nb ? n : nb, bytes = 0;
    if (!tile_counts(m, n, mb, nb, &mt, &nt) ||
        __builtin_mul_overflow(rows * cols, (int64_t)weft_dtype_size(type), &bytes)) {
        weft_error("%s: %lld x %lld in tiles of %d x %d makes %lld x %lld tiles of %lld x %lld "
                   "elements: at most %d tiles a dimension and in all, and %lld bytes a tile",
                   call, (long long)m, (long long)n, mb, nb, (long long)mt, (long long)nt,
                   (long long)rows, (long long)cols, INT_MAX, (long long)PTRDIFF_MAX);
        return WEFT_ERR_INVALID;
    }
    if (!user_dist && (P <= 0 || Q <= 0 || (int64_t)P * Q != ctx->nranks)) {
        weft_error("%s: process grid %d x %d does not match the %d ranks (P*Q must equal "
                   "the number of ranks)",
                   call, P, Q, ctx->nranks);
        return WEFT_ERR_INVALID;
    }
    return WEFT_SUCCESS;
}

static weft_matrix_t *matrix_alloc(weft_context_t *ctx, const char *call, weft_dtype_t type,
                                   int64_t m, int64_t n, int mb, int nb, int P, int Q,
                                   int user_dist)
{
    weft_matrix_t *A = calloc(1, sizeof *A);
    if (!A) {
        weft_error("%s: out of host memory for its handle", call);
        return NULL;
    }
    *A = (weft_matrix_t){.tag = WEFT_HANDLE_MATRIX,
                         .ctx = ctx,
                         .type = type,
                         .m = m,
                         .n = n,
                         .mb = mb,
                         .nb = nb,
                         .P = P,
                         .Q = Q};
    A->mt = (int)((m + mb - 1) / mb);
    A->nt = (int)((n + nb - 1) / nb);
    A->tiles = calloc((size_t)A->mt * (size_t)A->nt, sizeof *A->tiles);
    A->local = calloc((size_t)A->mt * (size_t)A->nt, sizeof *A->local);
    if (!A->tiles || !A->local || weft_vec_push(&ctx->matrices, &A) != WEFT_SUCCESS) {
        weft_error("%s: out of host memory for the handles of %d x %d tiles", call, A->mt, A->nt);
        free(A->tiles);
        free(A->local);
        free(A);
        return NULL;
    }
    return A;
}

/* The owner of tile (i, j), for tiles inside the matrix. */
static int tile_rank(const weft_matrix_t *A, int i, int j)
{
    if (A->cyclic) return weft_dist_block_cyclic_rank(i, j, &(weft_grid_t){A->P, A->Q});
    return A->tiles[(size_t)j * A->mt + i]->owner_rank;
}

/* One of weft's own grid rank functions (dist.c) given a bad grid:
 * refused once by the creation rather than once a tile by the function. */
static int bad_weft_grid(const weft_dist_t *dist)
{
    if (!dist ||
        (dist->rank != weft_dist_block_cyclic_rank && dist->rank != weft_dist_block_reflected_rank))
        return 0;
    const weft_grid_t *g = dist->arg;
    return !g || g->P < 1 || g->Q < 1;
}

int weft_matrix_tile_rank(const weft_matrix_t *A, int i, int j)
{
    if (!weft_handle_check(A, WEFT_HANDLE_MATRIX, "weft_matrix_tile_rank", 1)) return -1;
    if (i < 0 || j < 0 || i >= A->mt || j >= A->nt) {
        weft_error("weft_matrix_tile_rank: tile (%d, %d) outside the %d x %d tiles", i, j, A->mt,
                   A->nt);
        return -1;
    }
    return tile_rank(A, i, j);
}

int weft_matrix_mt(const weft_matrix_t *A)
{
    return weft_handle_check(A, WEFT_HANDLE_MATRIX, "weft_matrix_mt", 1) ? A->mt : -1;
}

int weft_matrix_nt(const weft_matrix_t *A)
{
    return weft_handle_check(A, WEFT_HANDLE_MATRIX, "weft_matrix_nt", 1) ? A->nt : -1;
}

/* The elements of block i of an extent cut into blocks of b (the last may
 * be shorter); -1 after a message naming call for i outside the blocks. */
static int block_extent(const char *call, const char *what, int64_t extent, int b, int nblocks,
                        int i)
{
    if (i < 0 || i >= nblocks) {
        weft_error("%s: tile %s %d outside [0, %d)", call, what, i, nblocks);
        return -1;
    }
    int64_t r = extent - (int64_t)i * b;
    return r < b ? (int)r : b;
}

int weft_matrix_tile_rows(const weft_matrix_t *A, int i)
{
    if (!weft_handle_check(A, WEFT_HANDLE_MATRIX, "weft_matrix_tile_rows", 1)) return -1;
    return block_extent("weft_matrix_tile_rows", "row", A->m, A->mb, A->mt, i);
}

int weft_matrix_tile_cols(const weft_matrix_t *A, int j)
{
    if (!weft_handle_check(A, WEFT_HANDLE_MATRIX, "weft_matrix_tile_cols", 1)) return -1;
    return block_extent("weft_matrix_tile_cols", "column", A->n, A->nb, A->nt, j);
}

weft_data_t *weft_tile(weft_matrix_t *A, int i, int j)
{
    if (!weft_handle_check(A, WEFT_HANDLE_MATRIX, "weft_tile", 1)) return NULL;
    if (i < 0 || j < 0 || i >= A->mt || j >= A->nt) {
        weft_error("weft_tile: tile (%d, %d) outside the %d x %d tiles", i, j, A->mt, A->nt);
        return NULL;
    }
    return A->tiles[(size_t)j * A->mt + i];
}

/* Creates every handle; `attach` gives local tiles their memory. The
 * owner of each tile is owners[k] (k = j * mt + i), its home device
 * devices[k] when devices is not NULL, else weft's rule (matrix_home.h). */
typedef int (*attach_fn)(weft_matrix_t *A, weft_data_t *d, int i, int j, void *arg);
static int attach_runtime(weft_matrix_t *A, weft_data_t *d, int i, int j, void *arg);

static int make_tiles(weft_matrix_t *A, const int *owners, const int *devices, attach_fn attach,
                      void *arg)
{
    weft_context_t *ctx = A->ctx;
    weft_matrix_deal_t deal = {0};
    int rc = !devices && ctx->ndevices > 0
                 ? weft_matrix__deal_plan(&deal, A, owners, ctx->rank, ctx->ndevices)
                 : WEFT_SUCCESS;
    for (int j = 0; j < A->nt && rc == WEFT_SUCCESS; j++) {
        for (int i = 0; i < A->mt; i++) {
            size_t k = (size_t)j * A->mt + i;
            int rank = owners[k];
            weft_data_t *d = weft_data_make(ctx, A->type, weft_matrix_tile_rows(A, i),
                                            weft_matrix_tile_cols(A, j), rank);
            if (!d) {
                rc = WEFT_ERR_NOMEM;
                break;
            }
            A->tiles[k] = d;
            d->flags |= WEFT_DATA_TILE;
            if (rank == ctx->rank) A->local[A->nlocal++] = (int)k;
            /* A simulation gives tiles no memory (docs/SCALE.md). */
            int attached = rank == ctx->rank && !(ctx->sim && attach == attach_runtime);
            rc = attached ? attach(A, d, i, j, arg) : WEFT_SUCCESS;
            if (rc != WEFT_SUCCESS) break;
            if (rank == ctx->rank && ctx->ndevices > 0) {
                d->home_device = devices ? devices[k] : weft_matrix__deal_device(&deal, i, j);
                d->flags |= WEFT_DATA_HOMED;
            }
            if (weft_context_track(ctx, d) != 0) {
                rc = WEFT_ERR_NOMEM;
                break;
            }
        }
    }
    weft_matrix__deal_free(&deal);
    return rc;
}

static int attach_runtime(weft_matrix_t *A, weft_data_t *d, int i, int j, void *arg)
{
    void *alloc;
    /* Zeros, so that a tile read before any write reads the same on every
     * rank and setup (it held a freed matrix's bytes on one, zeros on
     * another). */
    void *p = weft_hostmem_alloc_zero(A->ctx->hostmem, d->bytes, &alloc);
    if (!p) return WEFT_ERR_NOMEM;
    if (!weft_data_copy_attach(d, 0, p, d->rows, WEFT_MEM_RUNTIME, weft_hostmem_free, alloc)) {
        weft_hostmem_free(alloc, p, d->bytes);
        return WEFT_ERR_NOMEM;
    }
    weft_data_copy_set_initial_locked(d, 0);
    return WEFT_SUCCESS;
}

typedef struct {
    char *base;
    int64_t lda;
    const char *call; /* for the message of a NULL base */
} wrap_arg_t;

/* A rank that holds no tile may pass NULL: it references no element (a
 * stranger's vector on more ranks than blocks was refused there, "NULL
 * pointer", although the calls say only this rank's tiles are used). */
static int attach_user(weft_matrix_t *A, weft_data_t *d, int i, int j, void *arg)
{
    wrap_arg_t *w = arg;
    if (!w->base) {
        weft_error("%s: NULL pointer on rank %d, which holds tile (%d, %d): only a rank that "
                   "holds no tile may pass NULL",
                   w->call, A->ctx->rank, i, j);
        return WEFT_ERR_INVALID;
    }
    char *p = w->base + ((int64_t)i * A->mb + (int64_t)j * A->nb * w->lda) * (int64_t)d->elem;
    if (!weft_data_copy_attach(d, 0, p, w->lda, WEFT_MEM_MANAGED, NULL, NULL))
        return WEFT_ERR_NOMEM;
    weft_data_copy_set_initial_locked(d, 0);
    return WEFT_SUCCESS;
}

/* The owner (and, for this rank's tiles with devices on this rank and a
 * device function, the home device) of every tile, k = j * mt + i. A
 * value out of range is logged naming the tile: every rank calls the same
 * rank function, so every rank refuses the same owners. A device is
 * checked against the devices of its owner, the rank it names a device
 * of (ranks may have different numbers of devices); a refusal on some
 * ranks only is named on every rank at the next agreement (build). */
static int map_tiles_marked(const weft_matrix_t *A, const char *call, const weft_dist_t *dist,
                            int *owners, int *devices)
{
    weft_context_t *ctx = A->ctx;
    for (int j = 0; j < A->nt; j++)
        for (int i = 0; i < A->mt; i++) {
            size_t k = (size_t)j * A->mt + i;
            owners[k] = dist->rank(i, j, dist->arg);
            if (owners[k] < 0 || owners[k] >= ctx->nranks) {
                weft_error("%s: the distribution's rank function gives tile (%d, %d) rank %d, "
                           "not in [0, %d)",
                           call, i, j, owners[k], ctx->nranks);
                return WEFT_ERR_INVALID;
            }
            if (!devices || owners[k] != ctx->rank) continue;
            devices[k] = dist->device(i, j, dist->arg);
            if (devices[k] < 0 || devices[k] > ctx->ndevices) {
                weft_error("%s: the distribution's device function gives tile (%d, %d) device "
                           "%d, not in [0, %d]",
                           call, i, j, devices[k], ctx->ndevices);
                return WEFT_ERR_INVALID;
            }
        }
    return WEFT_SUCCESS;
}

/* The user's functions run inside the matrix's creation: a call from them
 * into weft (another creation, a wait, weft_fini) is refused as from a
 * body, and the creation fails. */
static void dist_fn_enter(weft_inbody_t *saved, atomic_int *misuse)
{
    weft_inbody_enter_callback(saved, misuse, "the rank or device function of a weft_dist_t", 0, 0,
                               "the matrix's creation");
}

static int map_tiles(const weft_matrix_t *A, const char *call, const weft_dist_t *dist, int *owners,
                     int *devices)
{
    atomic_int misuse = 0;
    weft_inbody_t saved;
    dist_fn_enter(&saved, &misuse);
    int rc = map_tiles_marked(A, call, dist, owners, devices);
    weft_inbody_leave(&saved);
    return atomic_load(&misuse) ? WEFT_ERR_INVALID : rc;
}

/* The tiles of A with their owners and devices from dist; A freed on
 * failure. */
static weft_matrix_t *fill(weft_matrix_t *A, const char *call, const weft_dist_t *dist,
                           attach_fn attach, void *arg)
{
    size_t n = (size_t)A->mt * (size_t)A->nt;
    int use_dev = dist->device && A->ctx->ndevices > 0;
    int *owners = malloc(n * sizeof *owners),
        *devices = use_dev ? malloc(n * sizeof *devices) : NULL;
    int rc = !owners || (use_dev && !devices) ? WEFT_ERR_NOMEM
                                              : map_tiles(A, call, dist, owners, devices);
    /* weft's memory for this rank's tiles, weighed before any is made
     * (a refusal says its own line). */
    int room = WEFT_SUCCESS;
    if (rc == WEFT_SUCCESS && attach == attach_runtime)
        rc = room = weft_matrix__check_room(A, call, owners);
    if (rc == WEFT_SUCCESS) rc = make_tiles(A, owners, devices, attach, arg);
    if (rc == WEFT_ERR_NOMEM && room == WEFT_SUCCESS) weft_error("%s: out of host memory", call);
    free(owners);
    free(devices);
    if (rc == WEFT_SUCCESS) return A;
    weft_matrix_free(A);
    return NULL;
}

/* The hash of the owners a distribution gives, which the ranks compare
 * with the data creations (a function that differs between ranks). Not
 * the home devices: each is its owner's own, and a rank without devices
 * (or with fewer) answers otherwise for the same matrix. */
static uint64_t dist_hash(const weft_dist_t *d, int mt, int nt)
{
    uint64_t h = WEFT_HASH_INIT;
    atomic_int misuse = 0; /* refused again, and failed, by map_tiles */
    weft_inbody_t saved;
    dist_fn_enter(&saved, &misuse);
    for (int j = 0; j < nt; j++)
        for (int i = 0; i < mt; i++) h = weft_hash_step(h, (unsigned)d->rank(i, j, d->arg));
    weft_inbody_leave(&saved);
    return h;
}

/* A matrix creation as the ranks compare it (described only to report a
 * divergence). arg: type, m, n, mb, nb, then P and Q for a grid, or -1 and
 * the hash of the owners a user distribution gives. */
static void describe_matrix(const weft_seqcall_kind_t *kind, const int64_t *arg, char *text,
                            size_t n)
{
    char grid[64];
    if (arg[5] >= 0)
        snprintf(grid, sizeof grid, "grid %d x %d", (int)arg[5], (int)arg[6]);
    else
        snprintf(grid, sizeof grid, "owners %016llx", (unsigned long long)arg[6]);
    snprintf(text, n, "%s(type %d, %lld x %lld, tiles %d x %d, %s)", kind->name, (int)arg[0],
             (long long)arg[1], (long long)arg[2], (int)arg[3], (int)arg[4], grid);
}

static const weft_seqcall_kind_t seq_matrix_new = {"weft_matrix_new", describe_matrix};
static const weft_seqcall_kind_t seq_matrix_wrap = {"weft_matrix_wrap", describe_matrix};
static const weft_seqcall_kind_t seq_matrix_new_dist = {"weft_matrix_new_dist", describe_matrix};
static const weft_seqcall_kind_t seq_matrix_wrap_dist = {"weft_matrix_wrap_dist", describe_matrix};
static const weft_seqcall_kind_t seq_vector_new = {"weft_vector_new", describe_matrix};
static const weft_seqcall_kind_t seq_vector_wrap = {"weft_vector_wrap", describe_matrix};

typedef struct {
    const weft_seqcall_kind_t *kind; /* the call */
    weft_dtype_t type;
    int wrap; /* the user's matrix at ptr (lda) rather than weft's memory */
    void *ptr;
    int64_t lda, m, n;
    int mb, nb;
    const weft_dist_t *dist; /* NULL: block-cyclic over P x Q */
    int P, Q;
} shape_t;

/* The creation as the ranks compare it: the grid, or the owners that a
 * user distribution gives (a function that differs between ranks). */
static void log_creation(weft_context_t *ctx, const shape_t *s)
{
    int64_t mt = 0, nt = 0;
    int64_t arg[WEFT_SEQCALL_ARGS] = {(int64_t)s->type, s->m, s->n, s->mb, s->nb, s->P, s->Q};
    if (s->dist) {
        /* A shape check_shape refuses is not walked: its tile counts may
         * be past an int (the walk of 2^62 tiles never ended). */
        arg[5] = -1;
        arg[6] = (int64_t)(s->dist->rank && !bad_weft_grid(s->dist) &&
                                   tile_counts(s->m, s->n, s->mb, s->nb, &mt, &nt)
                               ? dist_hash(s->dist, (int)mt, (int)nt)
                               : 0ULL);
    }
    weft_seqcheck_call(ctx, s->kind, arg);
}

static weft_matrix_t *build_logged(weft_context_t *ctx, const shape_t *s);
static void matrix_destroy(void *p);
static void matrix_untrack(weft_matrix_t *A);

/* The whole of a wrapped matrix's memory, on every rank (each passes its
 * array): the tiles interleave in it, so it is one span. Its tiles get the
 * keys that follow: they are named by them. */
static int claim_span(weft_matrix_t *A, const shape_t *s)
{
    uint64_t first = A->ctx->next_key, n = (uint64_t)A->mt * (uint64_t)A->nt;
    weft_span_block_t blk = weft_span_block(s->ptr, s->m, s->n, s->lda, weft_dtype_size(s->type));
    return weft_spans_claim(&A->ctx->spans, &blk, s->kind->name, first, first + n - 1, &A->span);
}

static weft_matrix_t *build(weft_context_t *ctx, const shape_t *s)
{
    log_creation(ctx, s);
    /* Every rank checks the shape alike: the creation's entry (with these
     * arguments) is what the ranks compare, and a refusal entry would only
     * spend one of the few notes that keep the words of a refusal made on
     * some ranks only (seqlog.h). */
    if (check_shape(ctx, s->kind->name, s->type, s->m, s->n, s->mb, s->nb, s->dist ? 0 : s->P,
                    s->dist ? 0 : s->Q, s->dist != NULL) != 0)
        return NULL;
    uint64_t first_key = ctx->next_key;
    weft_matrix_t *A = build_logged(ctx, s);
    if (A) return A;
    weft_seqcheck_refused(ctx);
    /* The keys of all its tiles are spent, however far the creation got
     * before its refusal (a check, the span, or memory at some tile): a
     * rank refused at another step or tile than the others (or not at
     * all) names its next data as they do. The shape passed check_shape. */
    int64_t mt = 0, nt = 0;
    (void)tile_counts(s->m, s->n, s->mb, s->nb, &mt, &nt);
    ctx->next_key = first_key + (uint64_t)(mt * nt);
    return NULL;
}

static weft_matrix_t *build_logged(weft_context_t *ctx, const shape_t *s)
{
    const char *bad = NULL;
    if (s->dist && !s->dist->rank)
        bad = "no rank function in the weft_dist_t";
    else if (bad_weft_grid(s->dist))
        bad = s->dist->rank == weft_dist_block_cyclic_rank
                  ? "weft_dist_block_cyclic_rank's arg is no weft_grid_t of P, Q >= 1"
                  : "weft_dist_block_reflected_rank's arg is no weft_grid_t of P, Q >= 1";
    else if (s->wrap && s->lda < s->m)
        bad = "lda is smaller than m";
    if (bad) {
        weft_error("%s: %s", s->kind->name, bad);
        return NULL;
    }
    /* A user distribution: no grid to check; weft's home-device rule then
     * deals devices by the rank's own tile rows (matrix_home.h). */
    weft_matrix_t *A = matrix_alloc(ctx, s->kind->name, s->type, s->m, s->n, s->mb, s->nb,
                                    s->dist ? 0 : s->P, s->dist ? 0 : s->Q, s->dist != NULL);
    if (!A) return NULL;
    if (s->dist) A->P = A->Q = 1;
    A->cyclic = !s->dist;
    /* A NULL ptr (a rank that holds no tile: fill checks) claims nothing. */
    if (s->wrap && s->ptr && claim_span(A, s) != WEFT_SUCCESS) {
        /* Refused: weft_fini must not end a matrix that is gone. */
        matrix_untrack(A);
        matrix_destroy(A);
        return NULL;
    }
    weft_grid_t g = {s->P, s->Q};
    weft_dist_t cyclic = {.rank = weft_dist_block_cyclic_rank, .arg = &g};
    wrap_arg_t w = {.base = s->ptr, .lda = s->lda, .call = s->kind->name};
    return fill(A, s->kind->name, s->dist ? s->dist : &cyclic,
                s->wrap ? attach_user : attach_runtime, &w);
}

weft_matrix_t *weft_matrix_new(weft_context_t *ctx, weft_dtype_t type, int64_t m, int64_t n, int mb,
                               int nb, int P, int Q)
{
    if (!weft_handle_check_main(ctx, WEFT_HANDLE_CONTEXT, "weft_matrix_new", 1)) return NULL;
    shape_t s = {&seq_matrix_new, type, 0, NULL, 0, m, n, mb, nb, NULL, P, Q};
    return build(ctx, &s);
}

weft_matrix_t *weft_matrix_wrap(weft_context_t *ctx, weft_dtype_t type, void *ptr, int64_t lda,
                                int64_t m, int64_t n, int mb, int nb, int P, int Q)
{
    if (!weft_handle_check_main(ctx, WEFT_HANDLE_CONTEXT, "weft_matrix_wrap", 1)) return NULL;
    shape_t s = {&seq_matrix_wrap, type, 1, ptr, lda, m, n, mb, nb, NULL, P, Q};
    return build(ctx, &s);
}

weft_matrix_t *weft_matrix_new_dist(weft_context_t *ctx, weft_dtype_t type, int64_t m, int64_t n,
                                    int mb, int nb, const weft_dist_t *dist)
{
    if (!weft_handle_check_main(ctx, WEFT_HANDLE_CONTEXT, "weft_matrix_new_dist", 1)) return NULL;
    static const weft_dist_t none = {0};
    shape_t s = {&seq_matrix_new_dist, type, 0, NULL, 0, m, n, mb, nb, dist ? dist : &none, 0, 0};
    return build(ctx, &s);
}

weft_matrix_t *weft_matrix_wrap_dist(weft_context_t *ctx, weft_dtype_t type, void *ptr, int64_t lda,
                                     int64_t m, int64_t n, int mb, int nb, const weft_dist_t *dist)
{
    if (!weft_handle_check_main(ctx, WEFT_HANDLE_CONTEXT, "weft_matrix_wrap_dist", 1)) return NULL;
    static const weft_dist_t none = {0};
    shape_t s = {&seq_matrix_wrap_dist, type, 1, ptr, lda, m, n, mb, nb, dist ? dist : &none, 0, 0};
    return build(ctx, &s);
}

weft_matrix_t *weft_vector_new(weft_context_t *ctx, weft_dtype_t type, int64_t n, int nb)
{
    if (!weft_handle_check_main(ctx, WEFT_HANDLE_CONTEXT, "weft_vector_new", 1)) return NULL;
    shape_t s = {&seq_vector_new, type, 0, NULL, 0, n, 1, nb, 1, NULL, ctx->nranks, 1};
    return build(ctx, &s);
}

weft_matrix_t *weft_vector_wrap(weft_context_t *ctx, weft_dtype_t type, void *ptr, int64_t n,
                                int nb)
{
    if (!weft_handle_check_main(ctx, WEFT_HANDLE_CONTEXT, "weft_vector_wrap", 1)) return NULL;
    shape_t s = {&seq_vector_wrap, type, 1, ptr, n, n, 1, nb, 1, NULL, ctx->nranks, 1};
    return build(ctx, &s);
}

/* Takes A off the context's list of live matrices (weft_fini ends those
 * the user still holds): before any free of A. */
static void matrix_untrack(weft_matrix_t *A)
{
    weft_matrix_t **mats = A->ctx->matrices.data;
    for (size_t i = A->ctx->matrices.n; i-- > 0;)
        if (mats[i] == A) {
            weft_vec_swap_remove(&A->ctx->matrices, i);
            return;
        }
}

static void matrix_destroy(void *p)
{
    weft_matrix_t *A = p;
    free(A->tiles);
    free(A->local);
    free(A);
}

void weft_matrix_free(weft_matrix_t *A)
{
    if (!weft_handle_check_void(A, WEFT_HANDLE_MATRIX, "weft_matrix_free")) return;
    size_t n = (size_t)A->mt * (size_t)A->nt;
    /* While a taskpool not waited for still uses a tile of this rank's
     * memory, the wrapped memory stays claimed: the block goes with that
     * tile, whose taskpool's wait gives it back (as a released
     * registration's, and for the same reasons: api/data_api.c). Only a
     * tile this rank owns (its bytes are in this rank's buffer, and its
     * taskpool touched it here): a tile of another rank used by a task
     * elsewhere held the block for good, never touched here. */
    weft_data_t *holder = NULL;
    for (size_t k = 0; k < n && !holder && A->span; k++) {
        weft_data_t *t = A->tiles[k];
        if (t && t->owner_rank == A->ctx->rank && weft_insert_busy_pool_name(t)) holder = t;
    }
    if (holder) {
        weft_span_mark_released(A->span);
        weft_span_chain(&holder->span, A->span);
    } else {
        weft_spans_release(&A->ctx->spans, A->span);
    }
    A->span = NULL;
    for (size_t k = 0; k < n; k++)
        if (A->tiles[k]) weft_data__release(A->tiles[k]);
    /* Kept a while: a call with the freed matrix reads a released tag
     * (and goes no further, so its tile arrays go now). */
    A->tag = weft_handle_released(WEFT_HANDLE_MATRIX);
    matrix_untrack(A);
    free(A->tiles);
    free(A->local);
    A->tiles = NULL;
    A->local = NULL;
    weft_quarantine_put(&A->ctx->quarantine, A, sizeof *A, free);
}
