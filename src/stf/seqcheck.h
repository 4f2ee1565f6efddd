/* Every rank must insert the same sequence and create the same data. Each
 * rank keeps a running hash of what it inserted (class, data, modes,
 * shapes, owners, the rank each task runs on) and of its data and matrix
 * creations; the agreement at the start of weft_taskpool_wait and of
 * weft_fini compares them, before any transfer is waited for, and names
 * the first entry that differs instead of a receive that never comes. */
#ifndef WEFT_STF_SEQCHECK_H
#define WEFT_STF_SEQCHECK_H

#include "sched/task.h"
#include "stf/taskpool.h"

/* Folds t, to run on exec_rank, into tp's sequence (main thread). */
/* The 64-bit FNV-1a hash of a string: what the ranks compare of a text. */
uint64_t weft_seqcheck_hash_str(const char *s);
int weft_seqcheck_log(weft_taskpool_t *tp, const weft_task_t *t, int exec_rank);
/* Folds a data or matrix creation, described by a printf format whose
 * text holds every argument that must match across ranks (main thread). */
void weft_seqcheck_call(weft_context_t *ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The agreement at the start of weft_taskpool_wait: collective over the
 * context's ranks. WEFT_ERR_MISMATCH (logged on every rank, context marked
 * diverged) when ranks are at different points or their sequences or
 * creations differ. */
int weft_seqcheck_verify(weft_taskpool_t *tp);
/* The same at the start of weft_fini. */
int weft_seqcheck_fini(weft_context_t *ctx);
/* Forgets tp's log (after a successful wait). */
void weft_seqcheck_reset(weft_taskpool_t *tp);

#endif
