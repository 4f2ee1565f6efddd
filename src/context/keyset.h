/* Data named by key across ranks: a collective that gathers every rank's
 * list of keys, and the lookup of a key among this rank's live data. The
 * ranks number data alike (the order of creations), so a key names the
 * same data everywhere; each rank holds a handle of every data it did not
 * release (and of released ones that a taskpool not waited for uses).
 * Used after a wait, when some ranks know something of a data that every
 * rank must learn (api/recover.c, ptg/ptgsettle.c). */
#ifndef WEFT_CONTEXT_KEYSET_H
#define WEFT_CONTEXT_KEYSET_H

#include <stddef.h>
#include <stdint.h>

#include "context/context.h"

/* Collective: every rank's n keys (mine), in rank order, into *all
 * (malloc'ed, free it; NULL when no rank has any), their count *total. n < 0 (this rank ran out of
 * memory) is told to every rank: all return WEFT_ERR_NOMEM alike. A
 * collective that fails in MPI returns WEFT_ERR_MPI after an error line
 * that starts with `where`, the context diverged (context/coll.h). */
int weft_keyset_allgather(weft_context_t *ctx, const uint64_t *mine, int n, uint64_t **all,
                          int *total, const char *where) __attribute__((warn_unused_result));

/* This rank's live data and the nextra handles of extra (released data
 * a caller still holds; none of them live) sorted by key (malloc'ed; NULL
 * when out of memory), their count *n, for weft_keyset_find. */
weft_data_t **weft_keyset_live(weft_context_t *ctx, weft_data_t *const *extra, size_t nextra,
                               size_t *n);
weft_data_t *weft_keyset_find(weft_data_t *const *live, size_t n, uint64_t key);

#endif
