/* weft: tiled matrices and vectors, their distributions over the ranks,
 * their local tiles, and gathering them on one rank. Part of the public
 * API, included by weft/weft.h (include that one); the conventions of
 * weft/weft.h (handle checks, status values, the main thread) apply. */
#ifndef WEFT_WEFT_MATRIX_H
#define WEFT_WEFT_MATRIX_H

#ifndef WEFT_WEFT_H
#error "include weft/weft.h, which includes this header"
#endif

/* ---- tiled matrices (2D block-cyclic over a P x Q grid of ranks) ------ */

typedef struct weft_matrix weft_matrix_t;

/* An m x n matrix cut into mb x nb tiles (the last row/column of tiles may
 * be partial), tile (i,j) owned by rank (i%P)*Q + (j%Q). P*Q must equal the
 * number of ranks. Local tiles are allocated by weft (contiguous, ld = rows
 * of the tile) and hold zeros until written. NULL with an error naming the
 * call on bad input: m, n, mb or nb below 1 (no empty matrix: a program
 * with a zero dimension skips the matrix), a grid that is not the ranks'.
 * The same for every creation below. weft_matrix_new, weft_matrix_new_dist
 * and weft_vector_new (never the wraps, which take the user's memory) are
 * NULL too, before any tile is allocated, when this rank's tiles need more
 * host memory than its share left (parameter host_memory_use;
 * docs/SEMANTICS.md 5.6): the error names the matrix, the rank's bytes and
 * the share. Refused on some ranks only, it is named on every rank at the
 * next agreement (WEFT_ERR_MISMATCH). */
WEFT_API weft_matrix_t *weft_matrix_new(weft_context_t *ctx, weft_dtype_t type, int64_t m,
                                        int64_t n, int mb, int nb, int P, int Q);

/* Wraps a user matrix in LAPACK column-major layout (lda >= m) as MANAGED
 * strided tiles; weft never frees it. Only the tiles of this rank are
 * referenced (a rank that holds no tile may pass ptr NULL; a NULL ptr on
 * a rank that holds one is refused, naming the tile); with P*Q == 1 the
 * whole matrix is local. Like
 * weft_data_register memory, the user may read and write it between
 * taskpools without any call (device copies are dropped at each wait).
 * Its memory, from the first to the last element, must not overlap that of
 * a live registration or wrapped matrix: NULL after an error naming both
 * (docs/SEMANTICS.md 1). */
WEFT_API weft_matrix_t *weft_matrix_wrap(weft_context_t *ctx, weft_dtype_t type, void *ptr,
                                         int64_t lda, int64_t m, int64_t n, int mb, int nb, int P,
                                         int Q);

/* ---- vectors and user distributions ---------------------------------- */

/* A vector of n elements cut into blocks of nb (the last may be shorter),
 * block i held by rank i % nranks: an n x 1 weft_matrix_t whose tiles are
 * the blocks (weft_tile(V, i, 0), weft_matrix_mt(V) blocks, block i has
 * weft_matrix_tile_rows(V, i) elements), so every matrix call applies.
 * Dealt so, a block's neighbours live on other ranks: for halos, give
 * contiguous runs of blocks a rank with weft_matrix_new_dist (GUIDE.md).
 * The _wrap form uses the user's array of n elements as MANAGED memory (as
 * weft_matrix_wrap). NULL after logging on bad input, as the matrix calls. */
WEFT_API weft_matrix_t *weft_vector_new(weft_context_t *ctx, weft_dtype_t type, int64_t n, int nb);
WEFT_API weft_matrix_t *weft_vector_wrap(weft_context_t *ctx, weft_dtype_t type, void *ptr,
                                         int64_t n, int nb);

/* Where each tile of a matrix lives, from user functions of the tile's
 * coordinates: rank (required) gives its owner rank in [0, nranks), device
 * (optional) its home device on that rank (0 = host, 1..weft_ndevices;
 * NULL: weft's rule, devices dealt by the rank's own tile rows, or its
 * columns or tiles where it has fewer rows than devices; a rank without
 * accelerators does not call it: its tiles live on the host). They are
 * called at creation only (arg need not outlive it): rank for every tile
 * on every rank, and it must give the same answers on every rank (the
 * owners are compared with the data creations at the next agreement);
 * device for the tiles of the rank that calls it, checked against that
 * rank's devices (ranks may have different numbers). */
typedef int (*weft_tile_map_fn)(int i, int j, void *arg);
typedef struct weft_dist {
    weft_tile_map_fn rank;
    weft_tile_map_fn device;
    void *arg;
} weft_dist_t;

/* 2D block-cyclic as a distribution: arg is a weft_grid_t; tile (i, j) is
 * owned by rank (i % P) * Q + (j % Q), as weft_matrix_new places it; -1
 * after a message for arg NULL, P or Q < 1, P x Q past INT_MAX, or a
 * negative index. */
typedef struct weft_grid {
    int P, Q;
} weft_grid_t;
WEFT_API int weft_dist_block_cyclic_rank(int i, int j, void *arg);

/* The same grid dealt back and forth: tile row i goes to grid row i % P
 * in even rounds of P rows (i / P even) and P - 1 - i % P in odd ones,
 * columns likewise over Q (2 x 1: rows to ranks 0 1 1 0 0 1 1 0 ...).
 * In LU, QR and Cholesky the trailing matrix of step k starts at row k,
 * and the plain deal leaves the extra rows of every step to the same grid
 * rows: over 16 tile rows on 2 ranks, one rank does 4.7% more of LU's
 * work than the mean, 0.6% dealt so (docs/RESULTS.md). arg and errors as
 * weft_dist_block_cyclic_rank; with P = Q = 1 the two are one. */
WEFT_API int weft_dist_block_reflected_rank(int i, int j, void *arg);

/* weft_matrix_new and weft_matrix_wrap with tiles placed by dist. NULL
 * after logging for dist NULL or without a rank function, a rank or device
 * out of range (naming the tile), or the matrix calls' own errors. A
 * creation of any of these calls refused on some ranks only (a NULL ptr
 * on one that holds a tile, a device beyond its owner's) is named on every rank at the next
 * agreement (wait, gather, weft_fini: WEFT_ERR_MISMATCH). */
WEFT_API weft_matrix_t *weft_matrix_new_dist(weft_context_t *ctx, weft_dtype_t type, int64_t m,
                                             int64_t n, int mb, int nb, const weft_dist_t *dist);
WEFT_API weft_matrix_t *weft_matrix_wrap_dist(weft_context_t *ctx, weft_dtype_t type, void *ptr,
                                              int64_t lda, int64_t m, int64_t n, int mb, int nb,
                                              const weft_dist_t *dist);

/* Releases every tile (as weft_data_release does; the user may not release
 * a tile alone) and the matrix handle. */
WEFT_API void weft_matrix_free(weft_matrix_t *A);

/* weft_data_host_acquire / weft_data_host_release of every tile this rank
 * holds: the memory of a wrapped matrix (weft_matrix_wrap) is then the
 * user's array to read or write as the mode allows. A matrix of
 * weft_matrix_new has no array of the user's: acquire its tiles one by
 * one (weft_data_host_acquire gives each tile's pointer) or gather it
 * (weft_matrix_gather); this call would only hold them. All or nothing: on
 * an error no tile stays acquired and the error of the first failing tile
 * is returned. A second acquire before the release is refused, and a
 * release without an acquire, on every rank alike (also on a rank that
 * holds no tile, more ranks than tiles, where the pair otherwise succeeds
 * doing nothing): the same loop runs on every rank. */
WEFT_API WEFT_NODISCARD int weft_matrix_host_acquire(weft_matrix_t *A, int mode);
WEFT_API WEFT_NODISCARD int weft_matrix_host_release(weft_matrix_t *A);
/* weft_data_set_keep_device_copies for every tile. */
WEFT_API int weft_matrix_set_keep_device_copies(weft_matrix_t *A, int keep);

/* The tiles this rank holds, for loops over them: weft_matrix_local_count
 * of them (-1 after logging for a bad handle), and the k-th in column-major
 * tile order (0 <= k < count), its coordinates in *i and *j when not
 * NULL; NULL after logging for k out of range. Any time, any thread (the
 * list is fixed when the matrix is made).
 *   for (int k = 0; k < weft_matrix_local_count(A); k++) {
 *       int i, j;
 *       weft_data_t *t = weft_matrix_local_tile(A, k, &i, &j);
 *       ...
 *   } */
WEFT_API int weft_matrix_local_count(const weft_matrix_t *A);
WEFT_API weft_data_t *weft_matrix_local_tile(weft_matrix_t *A, int k, int *i, int *j);

/* Collective, between taskpools; for checks and I/O, not for the hot
 * path (every tile goes through host memory and MPI_Gatherv or
 * MPI_Scatterv, in rounds of at most 256 MiB at the root; the root holds
 * a packed copy of the matrix besides buf and its own tiles, and each
 * other rank a packed copy of its tiles). weft_matrix_gather copies the newest version of every
 * tile into buf on rank root (the whole m x n matrix, column-major,
 * leading dimension ldb >= m, in elements); weft_matrix_scatter sets every
 * tile from buf on rank root (the tiles' device copies become stale, as
 * after a write acquire). buf and ldb are read on the root only. The
 * ranks first agree: a root that is not a rank, a NULL buf or ldb < m on
 * the root, a tile in a taskpool not waited for or acquired by the host,
 * on any rank, is logged on that rank, and every other rank logs "rank R
 * failed (...): nothing was moved"; all return that rank's status
 * (WEFT_ERR_INVALID) and nothing moves. Ranks that pass different roots
 * or matrices each log theirs and return WEFT_ERR_INVALID, nothing moved. Ranks at different points
 * of the program (one in a gather, another in a wait) are told, as at a wait, and get
 * WEFT_ERR_MISMATCH. */
WEFT_API WEFT_NODISCARD int weft_matrix_gather(weft_matrix_t *A, int root, void *buf, int64_t ldb);
WEFT_API WEFT_NODISCARD int weft_matrix_scatter(weft_matrix_t *A, int root, const void *buf,
                                                int64_t ldb);

WEFT_API int weft_matrix_mt(const weft_matrix_t *A); /* tile rows */
WEFT_API int weft_matrix_nt(const weft_matrix_t *A); /* tile columns */
/* Rows of tile row i and columns of tile column j (the last may be
 * shorter); -1 after a message for an index outside the tiles. */
WEFT_API int weft_matrix_tile_rows(const weft_matrix_t *A, int i);
WEFT_API int weft_matrix_tile_cols(const weft_matrix_t *A, int j);
/* The rank holding tile (i, j); -1 after logging for a tile outside. */
WEFT_API int weft_matrix_tile_rank(const weft_matrix_t *A, int i, int j);
/* The handle of tile (i, j), to pass to weft_insert_task; NULL after
 * logging for a tile outside the matrix. */
WEFT_API weft_data_t *weft_tile(weft_matrix_t *A, int i, int j);

#endif /* WEFT_WEFT_MATRIX_H */
