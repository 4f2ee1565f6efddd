/* A matrix's tiles on this rank: the loop over them, and their host
 * access between taskpools (all tiles or none). */
#include <stdint.h>

#include "api/data_api.h"
#include "collections/matrix_int.h"
#include "data/data.h"
#include "util/log.h"

/* ---- this rank's tiles ---------------------------------------------------- */

int weft_matrix_local_count(const weft_matrix_t *A)
{
    return weft_handle_check(A, WEFT_HANDLE_MATRIX, "weft_matrix_local_count", 1) ? A->nlocal : -1;
}

weft_data_t *weft_matrix_local_tile(weft_matrix_t *A, int k, int *i, int *j)
{
    if (!weft_handle_check(A, WEFT_HANDLE_MATRIX, "weft_matrix_local_tile", 1)) return NULL;
    if (k < 0 || k >= A->nlocal) {
        weft_error("weft_matrix_local_tile: index %d is not in [0, %d): this rank holds %d tiles",
                   k, A->nlocal, A->nlocal);
        return NULL;
    }
    int t = A->local[k];
    if (i) *i = t % A->mt;
    if (j) *j = t / A->mt;
    return A->tiles[t];
}

/* ---- host access to the local tiles between taskpools ----------------- */

static int local_tile(const weft_matrix_t *A, size_t k)
{
    return A->tiles[k]->owner_rank == A->ctx->rank;
}

int weft_matrix_host_acquire(weft_matrix_t *A, int mode)
{
    if (!weft_handle_check_main(A, WEFT_HANDLE_MATRIX, "weft_matrix_host_acquire", 1))
        return WEFT_ERR_INVALID;
    return weft_matrix__host_acquire_for(A, mode, "weft_matrix_host_acquire");
}

int weft_matrix__host_acquire_for(weft_matrix_t *A, int mode, const char *call)
{
    size_t n = (size_t)A->mt * (size_t)A->nt, k;
    int rc = WEFT_SUCCESS;
    /* Said alike on every rank: a rank that holds no tile acquired nothing
     * and accepted a second acquire where the others refused it. */
    if (A->host_acquired) {
        weft_error("%s: the matrix is acquired by the host already: call "
                   "weft_matrix_host_release first",
                   call);
        return WEFT_ERR_INVALID;
    }
    if (weft_acquire_check_mode(mode, call) != WEFT_SUCCESS) return WEFT_ERR_INVALID;
    /* A tile in a taskpool not waited for is known on every rank (each
     * inserted the same tasks): refused on every rank, not only on the
     * tile's owner, which alone would look at it below. */
    for (k = 0; k < n; k++)
        if (weft_data_check_between(A->tiles[k], call) != WEFT_SUCCESS) return WEFT_ERR_INVALID;
    for (k = 0; k < n && rc == WEFT_SUCCESS; k++) {
        void *p;
        int64_t ld;
        if (local_tile(A, k)) rc = weft_acquire_host(A->tiles[k], mode, call, &p, &ld);
    }
    if (rc == WEFT_SUCCESS) {
        A->host_acquired = 1;
        return rc;
    }
    /* All or nothing: the tiles acquired before the failing one go back
     * untouched (not a release: a write release would make their host
     * copies current, and the user wrote nothing). */
    for (size_t u = 0; u + 1 < k; u++)
        if (local_tile(A, u)) A->tiles[u]->host_access = 0;
    return rc;
}

int weft_matrix_host_release(weft_matrix_t *A)
{
    if (!weft_handle_check_main(A, WEFT_HANDLE_MATRIX, "weft_matrix_host_release", 1))
        return WEFT_ERR_INVALID;
    size_t n = (size_t)A->mt * (size_t)A->nt;
    /* The matrix's own acquire, not its tiles' state: a tile the program
     * acquired alone (weft_data_host_acquire) was released here, without
     * any matrix acquire, and the program's own release of it then failed;
     * a rank holding no tile (more ranks than tiles) releases alike. */
    int held = A->host_acquired;
    A->host_acquired = 0;
    if (!held) {
        weft_error("weft_matrix_host_release: the matrix is not acquired (no "
                   "weft_matrix_host_acquire succeeded since its last release; tiles acquired "
                   "alone are released alone): call weft_matrix_host_acquire first");
        return WEFT_ERR_INVALID;
    }
    int rc = WEFT_SUCCESS;
    for (size_t k = 0; k < n; k++) {
        if (!local_tile(A, k)) continue;
        if (weft_acquire_check_read(A->tiles[k], "weft_matrix_host_release") != WEFT_SUCCESS)
            rc = WEFT_ERR_INVALID;
        weft_acquire_end(A->tiles[k]);
    }
    return rc;
}

int weft_matrix_set_keep_device_copies(weft_matrix_t *A, int keep)
{
    if (!weft_handle_check_main(A, WEFT_HANDLE_MATRIX, "weft_matrix_set_keep_device_copies", 1))
        return WEFT_ERR_INVALID;
    size_t n = (size_t)A->mt * (size_t)A->nt;
    for (size_t k = 0; k < n; k++) {
        int rc = weft_data_set_keep_device_copies(A->tiles[k], keep);
        if (rc != WEFT_SUCCESS) return rc;
    }
    return WEFT_SUCCESS;
}
