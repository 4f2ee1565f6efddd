/* A matrix of weft's own memory is refused before any tile is allocated
 * when this rank's tiles would take its host copies past their limit
 * (host_memory_use). The pool refuses such a tile anyway, but only once it
 * is reached: weft-potrf -N 2000000 zeroed 11.8 GiB a rank for 98 s before
 * the refusal came. */
#include "collections/matrix_room.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "collections/matrix_int.h"
#include "data/hostmem.h"
#include "util/log.h"

/* The bytes of this rank's tiles (owners[k] for tile k = j * mt + i),
 * SIZE_MAX past a size_t. */
static size_t rank_bytes(const weft_matrix_t *A, const int *owners)
{
    size_t sum = 0, elem = weft_dtype_size(A->type), tile;
    for (int j = 0; j < A->nt && sum != SIZE_MAX; j++) {
        size_t col = (size_t)weft_matrix_tile_cols(A, j) * elem;
        for (int i = 0; i < A->mt && sum != SIZE_MAX; i++) {
            if (owners[(size_t)j * A->mt + i] != A->ctx->rank) continue;
            if (__builtin_mul_overflow((size_t)weft_matrix_tile_rows(A, i), col, &tile) ||
                __builtin_add_overflow(sum, tile, &sum))
                sum = SIZE_MAX;
        }
    }
    return sum;
}

static double gib(size_t bytes) { return (double)bytes / (double)(1 << 30); }

int weft_matrix__check_room(const weft_matrix_t *A, const char *call, const int *owners)
{
    weft_context_t *ctx = A->ctx;
    size_t limit, used;
    weft_hostmem_room(ctx->hostmem, &limit, &used);
    if (ctx->sim || !limit) return WEFT_SUCCESS;
    size_t bytes = rank_bytes(A, owners);
    /* No tile here, nothing to refuse: received copies may have taken
     * this rank past its share (they are never refused). */
    if (bytes == 0 || (used <= limit && bytes <= limit - used)) return WEFT_SUCCESS;
    char need[64];
    if (bytes == SIZE_MAX)
        snprintf(need, sizeof need, "more bytes than a size_t holds");
    else
        snprintf(need, sizeof need, "%zu bytes (%.2f GiB)", bytes, gib(bytes));
    /* Said on this rank alone when others have room: the next agreement
     * names the refusal on every rank (build in matrix.c). */
    weft_error("%s: the %lld x %lld %s (tiles %d x %d) needs %s for its tiles on rank %d, past "
               "the rank's share of the node's memory for weft's host copies: %zu bytes (%.2f "
               "GiB), %zu (%.2f GiB) in use (parameter host_memory_use, 0 = no limit): refused "
               "before any tile was allocated (out of host memory)",
               call, (long long)A->m, (long long)A->n, strstr(call, "vector") ? "vector" : "matrix",
               A->mb, A->nb, need, ctx->rank, limit, gib(limit), used, gib(used));
    return WEFT_ERR_NOMEM;
}
