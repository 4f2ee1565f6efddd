/* Checked collectives (coll.h). */
#include "context/coll.h"

#include <stdio.h>
#include <string.h>

#include "util/ending.h"
#include "util/fault.h"
#include "util/log.h"

int weft_coll_check(weft_context_t *ctx, int mpi_rc, const char *what)
{
    if (mpi_rc != MPI_SUCCESS) return weft_coll_failed_end(ctx, what, mpi_rc);
    if (!weft_fault_hit(ctx->fault, WEFT_FAULT_MPI_COLL, NULL)) return WEFT_SUCCESS;
    weft_error("%s: the collective between ranks failed in MPI (injected: fault_inject "
               "mpi_coll): no collective follows on this context, its later waits and "
               "weft_fini fail",
               what);
    weft_context_diverge(ctx, WEFT_ERR_MPI);
    return WEFT_ERR_MPI;
}

int weft_coll_failed_end(weft_context_t *ctx, const char *what, int mpi_rc)
{
    if (atomic_load(&ctx->mpi_gone)) {
        weft_error("%s: MPI was finalized under the collective: no collective follows on this "
                   "context",
                   what);
        weft_context_diverge(ctx, WEFT_ERR_MPI);
        return WEFT_ERR_MPI;
    }
    char words[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(mpi_rc, words, &len) != MPI_SUCCESS)
        snprintf(words, sizeof words, "MPI error %d", mpi_rc);
    weft_error("%s: the collective between ranks failed in MPI on this rank (%s): the other "
               "ranks may wait in it for ever and cannot be told: ending the run",
               what, words);
    weft_abort_job(ctx->comm, 1);
}

int weft_coll_all(weft_context_t *ctx, int *ok, const char *what)
{
    return weft_coll_check(ctx, MPI_Allreduce(MPI_IN_PLACE, ok, 1, MPI_INT, MPI_MIN, ctx->comm),
                           what);
}

int weft_coll_share_failure(weft_context_t *ctx, int root, int *status, char *text, size_t len,
                            const char *what)
{
    struct {
        int status;
        char text[WEFT_LOG_LINE];
    } w = {.status = *status};
    size_t n = len < sizeof w.text ? len : sizeof w.text;
    if (ctx->rank == root) memcpy(w.text, text, n);
    int rc = weft_coll_check(ctx, MPI_Bcast(&w, (int)sizeof w, MPI_BYTE, root, ctx->comm), what);
    if (rc != WEFT_SUCCESS) return rc;
    *status = w.status;
    if (n == 0) return rc;
    memcpy(text, w.text, n);
    text[n - 1] = '\0';
    return rc;
}
