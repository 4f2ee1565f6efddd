/* What weft_fini does with the taskpools the context still holds: waits for
 * those the user did not wait for, frees those the user did not free. */
#include <stdlib.h>

#include "runtime/livepools.h"

#include "stf/taskpool.h"
#include "util/log.h"

/* Tasks inserted (or refused) since the last wait: the same answer on
 * every rank, unlike the count of tasks still pending here. */
static int has_unwaited(const weft_taskpool_t *tp)
{
    return weft_taskpool_unwaited(tp) && !tp->mismatch;
}

int weft_context_wait_forgotten(weft_context_t *ctx)
{
    int forgotten = 0;
    for (size_t i = 0; i < ctx->taskpools.n; i++) {
        weft_taskpool_t *tp = *(weft_taskpool_t **)weft_vec_at(&ctx->taskpools, i);
        if (!has_unwaited(tp)) continue;
        /* A refused insertion counts (its wait names the refusal on every
         * rank), so the count here may be 0: the words say both. */
        weft_error("weft_fini: taskpool %s has insertions not waited for (tasks inserted or "
                   "refused since its last wait; %ld not finished on this rank, weft's sends "
                   "and receives included): waiting for them now; call weft_taskpool_wait "
                   "before weft_fini",
                   tp->name, (long)atomic_load(&tp->pending));
        weft_context_misuse(ctx, WEFT_ERR_INVALID);
        forgotten++;
        int rc = weft_taskpool_wait(tp);
        if (rc != WEFT_SUCCESS)
            weft_error("weft_fini: the wait for taskpool %s returned: %s", tp->name,
                       weft_strerror(rc));
    }
    return forgotten ? WEFT_ERR_INVALID : WEFT_SUCCESS;
}

void weft_context_free_taskpools(weft_context_t *ctx, int mismatched)
{
    for (size_t i = ctx->taskpools.n; i-- > 0;) {
        weft_taskpool_t *tp = *(weft_taskpool_t **)weft_vec_at(&ctx->taskpools, i);
        if (tp->mismatch != mismatched) continue;
        if (mismatched)
            weft_taskpool_destroy(tp);
        else
            weft_taskpool_free(tp);
    }
    if (ctx->taskpools.n > 0) return;
    weft_vec_fini(&ctx->taskpools);
}
