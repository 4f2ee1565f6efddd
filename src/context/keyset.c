/* Data named by key across ranks (keyset.h). */
#include "context/keyset.h"

#include <stdlib.h>
#include <string.h>

#include "data/data.h"

int weft_keyset_allgather(weft_context_t *ctx, const uint64_t *mine, int n, uint64_t **all,
                          int *total)
{
    int R = ctx->nranks;
    int *counts = malloc((size_t)R * sizeof *counts), *displs = malloc((size_t)R * sizeof *displs);
    /* Every rank has its arrays, or none gathers (a rank without them
     * could not take part in the gather of the counts). */
    int ok = counts && displs && n >= 0;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, ctx->comm);
    *all = NULL;
    *total = 0;
    if (!ok) {
        free(counts);
        free(displs);
        return WEFT_ERR_NOMEM;
    }
    MPI_Allgather(&n, 1, MPI_INT, counts, 1, MPI_INT, ctx->comm);
    int sum = 0;
    for (int r = 0; r < R; r++) {
        displs[r] = sum;
        sum += counts[r];
    }
    /* Every rank saw the same counts: they decide alike. */
    if (sum == 0) { /* the common case: nothing to say, no more collectives */
        free(counts);
        free(displs);
        return WEFT_SUCCESS;
    }
    *all = malloc(((size_t)sum + 1) * sizeof **all);
    int have = *all != NULL;
    MPI_Allreduce(MPI_IN_PLACE, &have, 1, MPI_INT, MPI_MIN, ctx->comm);
    if (have) MPI_Allgatherv(mine, n, MPI_UINT64_T, *all, counts, displs, MPI_UINT64_T, ctx->comm);
    free(counts);
    free(displs);
    if (have) {
        *total = sum;
        return WEFT_SUCCESS;
    }
    free(*all);
    *all = NULL;
    return WEFT_ERR_NOMEM;
}

static int by_key(const void *a, const void *b)
{
    uint64_t x = (*(weft_data_t *const *)a)->key, y = (*(weft_data_t *const *)b)->key;
    return x < y ? -1 : x > y;
}

weft_data_t **weft_keyset_live(weft_context_t *ctx, size_t *n)
{
    pthread_mutex_lock(&ctx->live_lock);
    *n = ctx->live.n;
    weft_data_t **v = malloc((*n + 1) * sizeof *v);
    if (v) memcpy(v, ctx->live.data, *n * sizeof *v);
    pthread_mutex_unlock(&ctx->live_lock);
    if (v) qsort(v, *n, sizeof *v, by_key);
    return v;
}

weft_data_t *weft_keyset_find(weft_data_t *const *live, size_t n, uint64_t key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (live[mid]->key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && live[lo]->key == key ? live[lo] : NULL;
}
