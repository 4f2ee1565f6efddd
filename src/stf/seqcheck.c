#include "stf/seqcheck.h"

#include <stdlib.h>
#include <string.h>

#include "util/log.h"

static uint64_t fold(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdULL;
}

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

int weft_seqcheck_log(weft_taskpool_t *tp, const weft_task_t *t)
{
    if (tp->nseq == tp->seq_cap) {
        long cap = tp->seq_cap ? tp->seq_cap * 2 : 1024;
        uint64_t *l = realloc(tp->seq_log, sizeof *l * (size_t)cap);
        if (l) tp->seq_log = l;
        const char **n = realloc(tp->seq_name, sizeof *n * (size_t)cap);
        if (n) tp->seq_name = n;
        if (!l || !n) return WEFT_ERR_NOMEM;
        tp->seq_cap = cap;
    }
    uint64_t h = fold(tp->seq_hash, hash_str(t->cls->name));
    for (int i = 0; i < t->nflows; i++)
        h = fold(h, t->flow[i].data->key * 4 + (uint64_t)t->flow[i].mode);
    tp->seq_hash = h;
    tp->seq_log[tp->nseq] = h;
    tp->seq_name[tp->nseq] = t->cls->name;
    tp->nseq++;
    return WEFT_SUCCESS;
}

/* Rank 0 finds the first position where a rank's running hash differs
 * from its own; every rank then names its task at that position. */
static long first_divergence(weft_taskpool_t *tp, MPI_Comm comm, int rank, int nranks)
{
    long n = tp->nseq, maxn = 0;
    MPI_Allreduce(&n, &maxn, 1, MPI_LONG, MPI_MAX, comm);
    uint64_t *mine = calloc((size_t)maxn + 1, sizeof *mine);
    uint64_t *all = rank == 0 ? calloc(((size_t)maxn + 1) * (size_t)nranks, sizeof *all) : NULL;
    if (n) memcpy(mine, tp->seq_log, sizeof *mine * (size_t)n);
    MPI_Gather(mine, (int)maxn + 1, MPI_UINT64_T, all, (int)maxn + 1, MPI_UINT64_T, 0, comm);
    long first = maxn;
    for (int r = 1; rank == 0 && r < nranks; r++)
        for (long k = 0; k < first; k++)
            if (all[(size_t)r * (maxn + 1) + k] != all[k]) {
                first = k;
                break;
            }
    MPI_Bcast(&first, 1, MPI_LONG, 0, comm);
    free(mine);
    free(all);
    return first;
}

int weft_seqcheck_verify(weft_taskpool_t *tp)
{
    weft_context_t *ctx = tp->ctx;
    uint64_t v[2] = {tp->seq_hash, ~tp->seq_hash}, m[2];
    long n[2] = {tp->nseq, -tp->nseq}, nm[2];
    MPI_Allreduce(v, m, 2, MPI_UINT64_T, MPI_MAX, ctx->comm);
    MPI_Allreduce(n, nm, 2, MPI_LONG, MPI_MAX, ctx->comm);
    if (m[0] == ~m[1] && nm[0] == -nm[1]) return WEFT_SUCCESS;
    long k = first_divergence(tp, ctx->comm, ctx->rank, ctx->nranks);
    if (k < tp->nseq)
        weft_error("taskpool %s: ranks inserted different task sequences; first divergent task "
                   "is #%ld, which this rank inserted as '%s'",
                   tp->name, k, tp->seq_name[k]);
    else
        weft_error("taskpool %s: ranks inserted different task sequences; first divergent task "
                   "is #%ld, which this rank never inserted (it inserted %ld tasks)",
                   tp->name, k, tp->nseq);
    return WEFT_ERR_MISMATCH;
}

void weft_seqcheck_reset(weft_taskpool_t *tp)
{
    tp->nseq = 0;
    tp->seq_hash = 0;
}
