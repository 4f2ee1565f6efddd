/* Every rank must insert the same sequence and create the same data. Each
 * rank keeps a running hash of what it inserted (class, data, modes,
 * shapes, owners, the rank each task runs on) and of its data and matrix
 * creations; the agreement at the start of weft_taskpool_wait and of
 * weft_fini compares them, before any transfer is waited for, and names
 * the first entry that differs instead of a receive that never comes. */
#ifndef WEFT_STF_SEQCHECK_H
#define WEFT_STF_SEQCHECK_H

#include "sched/task.h"
#include "stf/agree.h"
#include "stf/taskpool.h"

/* The 64-bit FNV-1a hash of a string: what the ranks compare of a text. */
uint64_t weft_seqcheck_hash_str(const char *s);
/* This rank's running hash after its entry k, a value >= 0, or -1 past
 * its last entry (a rank without the entry differs). */
typedef int64_t weft_seqcheck_at_fn(const void *arg, long k);
/* The first position where the ranks' running hashes differ, n this
 * rank's entries; *maxn (when not NULL) gets the most entries a rank has
 * (the answer when none differs). By bisection, since once two running hashes differ every
 * later one does: a few allreduces of two numbers, never a gather of the
 * logs, which at thousands of ranks would not fit rank 0. Collective; -1
 * when one of its collectives failed in MPI (weft_coll_check: said with
 * `what`, the context diverged, no further collective). */
long weft_seqcheck_first_difference(weft_context_t *ctx, long n, weft_seqcheck_at_fn *at,
                                    const void *arg, long *maxn, const char *what);
/* Every rank's text of `width` bytes (mine, NUL-terminated), rank r's at
 * r * width; what: the words of the message that ends the run when the
 * memory for them is missing (the other ranks are in the collective
 * already). Free the result. Collective; NULL when the gather failed in
 * MPI (said with `what`, the context diverged). */
char *weft_seqcheck_gather_text(weft_context_t *ctx, const char *mine, size_t width,
                                const char *what);
/* Folds t, to run on exec_rank, into tp's sequence (main thread); with
 * seqcheck_detail the log keeps t's fields too (a record of
 * weft_seqcheck_task_rec_size() bytes) to print them in a report. */
int weft_seqcheck_log(weft_taskpool_t *tp, const weft_task_t *t, int exec_rank);
size_t weft_seqcheck_task_rec_size(void);

/* Arguments of a creation that the ranks compare. */
#define WEFT_SEQCALL_ARGS 7

struct weft_seqcall_kind;
/* Writes the text of a creation of `kind` with arguments arg into text (n
 * bytes): called only to report a divergence. */
typedef void weft_seqcall_describe_fn(const struct weft_seqcall_kind *kind, const int64_t *arg,
                                      char *text, size_t n);

/* A kind of creation (weft_data_new, a matrix call ...): a static constant
 * of the module that makes it. */
typedef struct weft_seqcall_kind {
    const char *name; /* the call; hashed with the arguments */
    weft_seqcall_describe_fn *describe;
} weft_seqcall_kind_t;

/* A creation as the context's log keeps it: binary, since every rank
 * logs every creation of the run and text is needed only to name a
 * divergence (docs/SCALE.md). */
typedef struct weft_seqcall {
    const weft_seqcall_kind_t *kind;
    int64_t arg[WEFT_SEQCALL_ARGS];
} weft_seqcall_t;

/* Folds a data or matrix creation of `kind` into the context's creations:
 * arg holds every argument that must match across ranks, unused ones zero
 * (main thread). */
void weft_seqcheck_call(weft_context_t *ctx, const weft_seqcall_kind_t *kind,
                        const int64_t arg[WEFT_SEQCALL_ARGS]);
/* Folds in, after a creation this rank refused (NULL returned, logged),
 * that it refused it, keeping the call and this rank's error line with
 * it: ranks that refused alike stay in step, and a refusal on some ranks
 * only (an argument read on one rank, its devices, memory) is named on
 * every rank at the next agreement, with the refusing rank's reason. */
void weft_seqcheck_refused(weft_context_t *ctx);
/* The same for a call that is no creation and that only some ranks check
 * (weft_data_set_device: the data's owner, against its devices), after
 * its error was logged: what names the call and its arguments. The ranks
 * that accepted it log nothing, so the next agreement names the refusal
 * on every rank. */
void weft_seqcheck_refused_call(weft_context_t *ctx, const char *what);
/* The same for an insertion of a task of class cls_name that this rank
 * refused with status (its error logged), into tp's sequence (nranks > 1). */
void weft_seqcheck_refused_task(weft_taskpool_t *tp, const char *cls_name, int status);

/* The same for a task logged already (weft_seqcheck_log) that this rank
 * could not set up: the entry differs on every rank, so that the wait
 * fails on all even when all refused it (their transfers for it are half
 * made). */
void weft_seqcheck_refused_logged(weft_taskpool_t *tp, const char *cls_name, int status);
/* Names on every rank the first data creation where the ranks' creations
 * since the last check differ (weft_agree, once every rank knows they do),
 * each rank's entry there and a refusal's reason; where: the point's words.
 * WEFT_ERR_MISMATCH. Collective. */
int weft_seqcheck_report_made(weft_context_t *ctx, const char *where);
/* The agreement at the start of weft_taskpool_wait: collective over the
 * context's ranks. WEFT_ERR_MISMATCH (logged on every rank, context marked
 * diverged) when ranks are at different points or their sequences or
 * creations differ. */
int weft_seqcheck_verify(weft_taskpool_t *tp);
/* The same at the start of weft_ptg_insert, before the graph is built:
 * a task refused on some ranks since the last wait (its wave is open on
 * every rank, weft_taskpool_unwaited) or a creation refused on some ranks
 * is named on every rank with the refusing rank's reason, instead of the
 * ranks parting ways (one refusing the graph, another building it). */
int weft_seqcheck_graph(weft_taskpool_t *tp);
/* The same at the start of weft_fini. */
int weft_seqcheck_fini(weft_context_t *ctx);
/* Begins the agreement a rank joins from its MPI_Finalize before
 * weft_fini, failed (WEFT_ERR_MPI): the ranks waiting in an agreement of
 * their own (a wait, weft_fini) learn it there instead of waiting for ever.
 * The caller completes op (weft_agree_end once op->req is done); the
 * outcome is the others' to act on. */
int weft_seqcheck_mpi_end_begin(weft_context_t *ctx, weft_agree_op_t *op)
    __attribute__((warn_unused_result));
/* Forgets tp's log (after a successful wait). */
void weft_seqcheck_reset(weft_taskpool_t *tp);

#endif
