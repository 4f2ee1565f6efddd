/* A running hash of what a rank did, entry by entry (the tasks it inserted,
 * the data and matrices it created), so that ranks can compare theirs and
 * name the first entry where they differ. Every rank logs every task of
 * the whole sequence, so an entry is small: 32 bits of the running hash
 * and the index of its name in a table of distinct names (docs/SCALE.md). */
#ifndef WEFT_CONTEXT_SEQLOG_H
#define WEFT_CONTEXT_SEQLOG_H

#include <stdint.h>

#include "context/meta.h"
#include "util/vec.h"

#define WEFT_SEQ_DETAIL 96

typedef struct weft_seqlog {
    uint64_t hash;         /* after the last entry; 0 when empty */
    weft_vec_t log;        /* uint32_t: low 32 bits of the running hash after each entry */
    weft_vec_t name_ix;    /* uint16_t: each entry's name, an index into names */
    weft_vec_t names;      /* const char *: the distinct static names (task classes), at
                              most 65535; later ones are not kept */
    const char *last_name; /* the name last logged and its index */
    int last_ix;           /* (tasks of a class come in runs) */
    weft_vec_t detail;     /* char[WEFT_SEQ_DETAIL]: or a description, when entries have one */
    int lost;              /* entries that could not be kept (out of memory) */
    weft_meta_t *meta;     /* where its bytes are counted, NULL: nowhere */
} weft_seqlog_t;

/* Makes l an empty log whose bytes are counted in meta (NULL: nowhere);
 * a zeroed one is not (its arrays need their element sizes). */
void weft_seqlog_init(weft_seqlog_t *l, weft_meta_t *meta);
/* Entries since the last clear. */
static inline long weft_seqlog_count(const weft_seqlog_t *l) { return (long)l->log.n; }
/* Keeps an entry for l->hash as it is now (the caller folded the entry
 * into it), named by a static name or described by detail (copied).
 * WEFT_ERR_NOMEM: not kept, counted as lost. */
int weft_seqlog_push(weft_seqlog_t *l, const char *name, const char *detail);
/* Entry k's 32 bits of running hash, -1 past the last entry. */
int64_t weft_seqlog_at(const weft_seqlog_t *l, long k);
/* Entry k's description or name; NULL past the last entry. */
const char *weft_seqlog_text(const weft_seqlog_t *l, long k);
/* Forgets the entries (the names stay). */
void weft_seqlog_clear(weft_seqlog_t *l);
/* Frees l's memory; l is empty afterwards (and may log again). */
void weft_seqlog_free(weft_seqlog_t *l);

#endif
