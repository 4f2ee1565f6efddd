/* Tiled matrices in 2D block-cyclic layout over a P x Q grid of ranks.
 * Every rank holds a data handle for every tile (the insertion sequence
 * names remote tiles too) but memory only for its own tiles. */
#include <stdlib.h>

#include "api/data_api.h"
#include "stf/seqcheck.h"
#include "util/log.h"

struct weft_matrix {
    uint32_t tag; /* util/handle.h: WEFT_HANDLE_MATRIX; first field */
    weft_context_t *ctx;
    weft_dtype_t type;
    int64_t m, n;
    int mb, nb, mt, nt, P, Q;
    weft_data_t **tiles; /* column-major, mt x nt */
};

static int check_shape(weft_context_t *ctx, weft_dtype_t type, int64_t m, int64_t n, int mb, int nb,
                       int P, int Q)
{
    if (weft_dtype_size(type) == 0) {
        weft_error("matrix: unknown element type %d", (int)type);
        return WEFT_ERR_INVALID;
    }
    if (m <= 0 || n <= 0) {
        weft_error("matrix: size %lld x %lld must be positive", (long long)m, (long long)n);
        return WEFT_ERR_INVALID;
    }
    if (mb <= 0 || nb <= 0) {
        weft_error("matrix: tile size %d x %d must be positive", mb, nb);
        return WEFT_ERR_INVALID;
    }
    if (P <= 0 || Q <= 0 || (int64_t)P * Q != ctx->nranks) {
        weft_error("matrix: process grid %d x %d does not match the %d ranks (P*Q must equal "
                   "the number of ranks)",
                   P, Q, ctx->nranks);
        return WEFT_ERR_INVALID;
    }
    return WEFT_SUCCESS;
}

static weft_matrix_t *matrix_alloc(weft_context_t *ctx, weft_dtype_t type, int64_t m, int64_t n,
                                   int mb, int nb, int P, int Q)
{
    if (check_shape(ctx, type, m, n, mb, nb, P, Q) != 0) return NULL;
    weft_matrix_t *A = calloc(1, sizeof *A);
    if (!A) return NULL;
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
    if (!A->tiles) {
        free(A);
        return NULL;
    }
    return A;
}

/* The owner of tile (i, j), for tiles inside the matrix. */
static int tile_rank(const weft_matrix_t *A, int i, int j)
{
    return (i % A->P) * A->Q + (j % A->Q);
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

int weft_matrix_tile_rows(const weft_matrix_t *A, int i)
{
    if (!weft_handle_check(A, WEFT_HANDLE_MATRIX, "weft_matrix_tile_rows", 1)) return -1;
    int64_t r = A->m - (int64_t)i * A->mb;
    return r < A->mb ? (int)r : A->mb;
}

int weft_matrix_tile_cols(const weft_matrix_t *A, int j)
{
    if (!weft_handle_check(A, WEFT_HANDLE_MATRIX, "weft_matrix_tile_cols", 1)) return -1;
    int64_t c = A->n - (int64_t)j * A->nb;
    return c < A->nb ? (int)c : A->nb;
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

/* The home device of the tiles of local tile row r: a tile's updates run
 * where it lives, and each device gets whole rows, dealt out back and
 * forth (devices 1 2 .. g g .. 2 1 1 2 ..) rather than round robin: in a
 * lower-triangular factorization the work of a row grows with its index,
 * and plain round robin gives the last device the largest row of every
 * round (55% of the work to one of two devices with 16 tile rows; the
 * reflected order 50.6%). */
static int home_device(int r, int g)
{
    int k = r % (2 * g);
    return 1 + (k < g ? k : 2 * g - 1 - k);
}

/* Creates every handle; `attach` gives local tiles their memory. */
typedef int (*attach_fn)(weft_matrix_t *A, weft_data_t *d, int i, int j, void *arg);
static int attach_runtime(weft_matrix_t *A, weft_data_t *d, int i, int j, void *arg);

static int make_tiles(weft_matrix_t *A, attach_fn attach, void *arg)
{
    weft_context_t *ctx = A->ctx;
    for (int j = 0; j < A->nt; j++) {
        for (int i = 0; i < A->mt; i++) {
            int rank = tile_rank(A, i, j);
            weft_data_t *d = weft_data_make(ctx, A->type, weft_matrix_tile_rows(A, i),
                                            weft_matrix_tile_cols(A, j), rank);
            if (!d) return WEFT_ERR_NOMEM;
            A->tiles[(size_t)j * A->mt + i] = d;
            /* A simulation gives tiles no memory (docs/SCALE.md). */
            int attached = rank == ctx->rank && !(ctx->sim && attach == attach_runtime);
            if (attached && attach(A, d, i, j, arg) != 0) return WEFT_ERR_NOMEM;
            if (rank == ctx->rank && ctx->ndevices > 0) {
                d->home_device = home_device(i / A->P, ctx->ndevices);
                d->flags |= WEFT_DATA_HOMED;
            }
            if (weft_context_track(ctx, d) != 0) return WEFT_ERR_NOMEM;
        }
    }
    return WEFT_SUCCESS;
}

static int attach_runtime(weft_matrix_t *A, weft_data_t *d, int i, int j, void *arg)
{
    void *p = weft_host_alloc(d->bytes);
    if (!p) return WEFT_ERR_NOMEM;
    if (!weft_data_copy_attach(d, 0, p, d->rows, WEFT_MEM_RUNTIME, weft_host_free, NULL)) {
        weft_host_free(NULL, p, d->bytes);
        return WEFT_ERR_NOMEM;
    }
    weft_data_copy_set_initial_locked(d, 0);
    return WEFT_SUCCESS;
}

typedef struct {
    char *base;
    int64_t lda;
} wrap_arg_t;

static int attach_user(weft_matrix_t *A, weft_data_t *d, int i, int j, void *arg)
{
    wrap_arg_t *w = arg;
    char *p = w->base + ((int64_t)i * A->mb + (int64_t)j * A->nb * w->lda) * (int64_t)d->elem;
    if (!weft_data_copy_attach(d, 0, p, w->lda, WEFT_MEM_MANAGED, NULL, NULL))
        return WEFT_ERR_NOMEM;
    weft_data_copy_set_initial_locked(d, 0);
    return WEFT_SUCCESS;
}

weft_matrix_t *weft_matrix_new(weft_context_t *ctx, weft_dtype_t type, int64_t m, int64_t n, int mb,
                               int nb, int P, int Q)
{
    if (!weft_handle_check(ctx, WEFT_HANDLE_CONTEXT, "weft_matrix_new", 1)) return NULL;
    weft_seqcheck_call(ctx, "weft_matrix_new(type %d, %lld x %lld, tiles %d x %d, grid %d x %d)",
                       (int)type, (long long)m, (long long)n, mb, nb, P, Q);
    weft_matrix_t *A = matrix_alloc(ctx, type, m, n, mb, nb, P, Q);
    if (!A) return NULL;
    if (make_tiles(A, attach_runtime, NULL) != 0) {
        weft_error("matrix %lld x %lld: out of host memory", (long long)m, (long long)n);
        weft_matrix_free(A);
        return NULL;
    }
    return A;
}

weft_matrix_t *weft_matrix_wrap(weft_context_t *ctx, weft_dtype_t type, void *ptr, int64_t lda,
                                int64_t m, int64_t n, int mb, int nb, int P, int Q)
{
    if (!weft_handle_check(ctx, WEFT_HANDLE_CONTEXT, "weft_matrix_wrap", 1)) return NULL;
    weft_seqcheck_call(ctx, "weft_matrix_wrap(type %d, %lld x %lld, tiles %d x %d, grid %d x %d)",
                       (int)type, (long long)m, (long long)n, mb, nb, P, Q);
    if (!ptr || lda < m) {
        weft_error("matrix wrap: %s", !ptr ? "NULL pointer" : "lda is smaller than m");
        return NULL;
    }
    weft_matrix_t *A = matrix_alloc(ctx, type, m, n, mb, nb, P, Q);
    if (!A) return NULL;
    wrap_arg_t w = {.base = ptr, .lda = lda};
    if (make_tiles(A, attach_user, &w) != 0) {
        weft_matrix_free(A);
        return NULL;
    }
    return A;
}

static void matrix_destroy(void *p)
{
    weft_matrix_t *A = p;
    free(A->tiles);
    free(A);
}

void weft_matrix_free(weft_matrix_t *A)
{
    if (!weft_handle_check(A, WEFT_HANDLE_MATRIX, "weft_matrix_free", 1)) return;
    size_t n = (size_t)A->mt * (size_t)A->nt;
    for (size_t k = 0; k < n; k++)
        if (A->tiles[k]) weft_data_release(A->tiles[k]);
    /* Kept a while: a call with the freed matrix reads a released tag. */
    A->tag = weft_handle_released(WEFT_HANDLE_MATRIX);
    weft_quarantine_put(&A->ctx->quarantine, A, matrix_destroy);
}

/* ---- host access to the local tiles between taskpools ----------------- */

static int local_tile(const weft_matrix_t *A, size_t k)
{
    return tile_rank(A, (int)(k % (size_t)A->mt), (int)(k / (size_t)A->mt)) == A->ctx->rank;
}

int weft_matrix_host_acquire(weft_matrix_t *A, int mode)
{
    if (!weft_handle_check(A, WEFT_HANDLE_MATRIX, "weft_matrix_host_acquire", 1))
        return WEFT_ERR_INVALID;
    size_t n = (size_t)A->mt * (size_t)A->nt, k;
    int rc = WEFT_SUCCESS;
    for (k = 0; k < n && rc == WEFT_SUCCESS; k++) {
        void *p;
        int64_t ld;
        if (local_tile(A, k))
            rc = weft_acquire_host(A->tiles[k], mode, "weft_matrix_host_acquire", &p, &ld);
    }
    if (rc == WEFT_SUCCESS) return rc;
    /* All or nothing: the tiles acquired before the failing one go back
     * untouched (not a release: a write release would make their host
     * copies current, and the user wrote nothing). */
    for (size_t u = 0; u + 1 < k; u++)
        if (local_tile(A, u)) A->tiles[u]->host_access = 0;
    return rc;
}

int weft_matrix_host_release(weft_matrix_t *A)
{
    if (!weft_handle_check(A, WEFT_HANDLE_MATRIX, "weft_matrix_host_release", 1))
        return WEFT_ERR_INVALID;
    size_t n = (size_t)A->mt * (size_t)A->nt;
    int acquired = 0;
    for (size_t k = 0; k < n; k++) acquired += local_tile(A, k) && A->tiles[k]->host_access;
    if (acquired == 0) {
        weft_error("weft_matrix_host_release: no tile of the matrix is acquired: call "
                   "weft_matrix_host_acquire first");
        return WEFT_ERR_INVALID;
    }
    for (size_t k = 0; k < n; k++)
        if (local_tile(A, k)) weft_acquire_end(A->tiles[k]);
    return WEFT_SUCCESS;
}

int weft_matrix_set_keep_device_copies(weft_matrix_t *A, int keep)
{
    if (!weft_handle_check(A, WEFT_HANDLE_MATRIX, "weft_matrix_set_keep_device_copies", 1))
        return WEFT_ERR_INVALID;
    size_t n = (size_t)A->mt * (size_t)A->nt;
    for (size_t k = 0; k < n; k++) {
        int rc = weft_data_set_keep_device_copies(A->tiles[k], keep);
        if (rc != WEFT_SUCCESS) return rc;
    }
    return WEFT_SUCCESS;
}
