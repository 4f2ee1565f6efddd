/* Data named by key across ranks (keyset.h). */
#include "context/keyset.h"

#include <stdlib.h>
#include <string.h>

#include "context/coll.h"
#include "data/data.h"

/* Every rank's count, or none (a rank out of memory: WEFT_ERR_NOMEM on
 * every rank); WEFT_ERR_MPI after a failed collective. */
static int gather_counts(weft_context_t *ctx, int n, int *counts, const char *where)
{
    /* Every rank has its arrays, or none gathers (a rank without them
     * could not take part in the gather of the counts). */
    int ok = counts && n >= 0;
    int rc = weft_coll_all(ctx, &ok, where);
    if (rc != WEFT_SUCCESS) return rc;
    if (!ok) return WEFT_ERR_NOMEM;
    return weft_coll_check(ctx, MPI_Allgather(&n, 1, MPI_INT, counts, 1, MPI_INT, ctx->comm),
                           where);
}

/* The keys themselves into all (sum of them, displs per rank). */
static int gather_keys(weft_context_t *ctx, const uint64_t *mine, int n, const int *counts,
                       const int *displs, int sum, uint64_t **all, const char *where)
{
    *all = malloc(((size_t)sum + 1) * sizeof **all);
    int have = *all != NULL;
    int rc = weft_coll_all(ctx, &have, where);
    if (rc == WEFT_SUCCESS && !have) rc = WEFT_ERR_NOMEM;
    if (rc == WEFT_SUCCESS)
        rc = weft_coll_check(
            ctx,
            MPI_Allgatherv(mine, n, MPI_UINT64_T, *all, counts, displs, MPI_UINT64_T, ctx->comm),
            where);
    if (rc == WEFT_SUCCESS) return WEFT_SUCCESS;
    free(*all);
    *all = NULL;
    return rc;
}

int weft_keyset_allgather(weft_context_t *ctx, const uint64_t *mine, int n, uint64_t **all,
                          int *total, const char *where)
{
    int R = ctx->nranks;
    int *counts = malloc((size_t)R * sizeof *counts), *displs = malloc((size_t)R * sizeof *displs);
    *all = NULL;
    *total = 0;
    int rc = gather_counts(ctx, displs ? n : -1, counts, where);
    int sum = 0;
    for (int r = 0; rc == WEFT_SUCCESS && r < R; r++) {
        displs[r] = sum;
        sum += counts[r];
    }
    /* Every rank saw the same counts: they decide alike. Nothing to say
     * (the common case): no more collectives. */
    if (rc == WEFT_SUCCESS && sum > 0)
        rc = gather_keys(ctx, mine, n, counts, displs, sum, all, where);
    if (rc == WEFT_SUCCESS) *total = sum;
    free(counts);
    free(displs);
    return rc;
}

static int by_key(const void *a, const void *b)
{
    uint64_t x = (*(weft_data_t *const *)a)->key, y = (*(weft_data_t *const *)b)->key;
    return x < y ? -1 : x > y;
}

weft_data_t **weft_keyset_live(weft_context_t *ctx, weft_data_t *const *extra, size_t nextra,
                               size_t *n)
{
    pthread_mutex_lock(&ctx->live_lock);
    size_t nlive = ctx->live.n;
    weft_data_t **v = malloc((nlive + nextra + 1) * sizeof *v);
    if (v) memcpy(v, ctx->live.data, nlive * sizeof *v);
    pthread_mutex_unlock(&ctx->live_lock);
    if (!v) return NULL;
    if (nextra) memcpy(v + nlive, extra, nextra * sizeof *v);
    *n = nlive + nextra;
    qsort(v, *n, sizeof *v, by_key);
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
