/* A matrix of weft's own memory is refused before any tile is allocated
 * when this rank's tiles would take its host copies past their limit
 * (host_memory_use). The pool refuses such a tile anyway, but only once it
 * is reached: weft-potrf -N 2000000 zeroed 11.8 GiB a rank for 98 s before
 * the refusal came. */
#include "collections/matrix_room.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "collections/matrix_int.h"
#include "data/hostmem.h"
#include "util/log.h"

/* The extent of block i of `extent` elements cut in blocks of b. */
static int64_t block_extent(int64_t extent, int b, int64_t i)
{
    int64_t left = extent - i * b;
    return left < b ? left : b;
}

/* The bytes of the tiles dist gives this rank, SIZE_MAX past a size_t. The
 * rank function runs as in the tiles' mapping; a call into weft from it
 * stops the count at 0 (the mapping refuses it, named once, there). */
static size_t rank_bytes(const weft_context_t *ctx, size_t elem, int64_t m, int64_t n, int mb,
                         int nb, const weft_dist_t *dist)
{
    int64_t mt = (m - 1) / mb + 1, nt = (n - 1) / nb + 1;
    size_t sum = 0;
    atomic_int misuse = 0;
    weft_inbody_t saved;
    weft_matrix__dist_enter(&saved, &misuse);
    for (int64_t j = 0; j < nt && sum != SIZE_MAX && !atomic_load(&misuse); j++) {
        size_t col = (size_t)block_extent(n, nb, j) * elem, tile;
        for (int64_t i = 0; i < mt && sum != SIZE_MAX && !atomic_load(&misuse); i++) {
            if (dist->rank((int)i, (int)j, dist->arg) != ctx->rank) continue;
            if (__builtin_mul_overflow((size_t)block_extent(m, mb, i), col, &tile) ||
                __builtin_add_overflow(sum, tile, &sum))
                sum = SIZE_MAX;
        }
    }
    weft_inbody_leave(&saved);
    return atomic_load(&misuse) ? 0 : sum;
}

static double gib(size_t bytes) { return (double)bytes / (double)(1 << 30); }

int weft_matrix__check_room(weft_context_t *ctx, const char *call, weft_dtype_t type, int64_t m,
                            int64_t n, int mb, int nb, const weft_dist_t *dist)
{
    size_t limit, used;
    weft_hostmem_room(ctx->hostmem, &limit, &used);
    if (ctx->sim || !limit) return WEFT_SUCCESS;
    size_t bytes = rank_bytes(ctx, weft_dtype_size(type), m, n, mb, nb, dist);
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
               call, (long long)m, (long long)n, strstr(call, "vector") ? "vector" : "matrix", mb,
               nb, need, ctx->rank, limit, gib(limit), used, gib(used));
    return WEFT_ERR_NOMEM;
}
