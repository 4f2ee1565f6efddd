/* A running hash of what a rank did, entry by entry (the tasks it inserted,
 * the data and matrices it created), so that ranks can compare theirs and
 * name the first entry where they differ. Every rank logs every task of
 * the whole sequence, so an entry is small: 32 bits of the running hash
 * and the index of its name in a table of distinct names (docs/SCALE.md).
 * A log may also keep a fixed-size binary record an entry (the arguments
 * of a data creation), from which its owner makes text only to report a
 * divergence. */
#ifndef WEFT_CONTEXT_SEQLOG_H
#define WEFT_CONTEXT_SEQLOG_H

#include <stdint.h>

#include "context/meta.h"
#include "util/vec.h"

/* The words kept with the entries that name a refusal (what was refused
 * and why), so that every rank can be told them. Refusals every rank makes
 * alike may come before the one that differs (a loop of insertions refused
 * for an argument): when each took a note of its own, the first 64 spent
 * them and the one that mattered lost its words. Now alike words are kept
 * once, with a count, and each refusal entry is marked as one, in runs of
 * entries with the same words: at most WEFT_SEQLOG_NOTES different words
 * between clears (a refusal past them is still known as one, its words
 * said not kept), and a run costs a mark only where the words change.
 * They take memory only when a refusal is made. */
#define WEFT_SEQLOG_NOTE 512
#define WEFT_SEQLOG_NOTES 64

typedef struct weft_seqlog_note {
    long count; /* refusals with these words since the last clear */
    char text[WEFT_SEQLOG_NOTE];
} weft_seqlog_note_t;

/* Refusal entries first..last with the same words: the entries between
 * them named as the first is (a refusal's marker name) are refusals too. */
typedef struct weft_seqlog_mark {
    long first, last;
    int note;         /* index into notes; -1: words not kept */
    uint16_t name_ix; /* the name of the run's entries */
} weft_seqlog_mark_t;

typedef struct weft_seqlog {
    uint64_t hash;           /* after the last entry; 0 when empty */
    weft_vec_t log;          /* uint32_t: low 32 bits of the running hash after each entry */
    weft_vec_t name_ix;      /* uint16_t: each entry's name, an index into names */
    weft_vec_t names;        /* const char *: the distinct static names (task classes), at
                                most 65535; later ones are not kept */
    const char *last_name;   /* the name last logged and its index */
    int last_ix;             /* (tasks of a class come in runs) */
    const char *hashed_name; /* the name its owner hashed last, and the hash */
    uint64_t name_hash;      /* (entries of one name come in runs) */
    weft_vec_t rec;          /* the entries' records, when the log keeps them (elem > 0) */
    int lost;                /* entries that could not be kept (out of memory) */
    weft_meta_t *meta;       /* where its bytes are counted, NULL: nowhere */
    weft_vec_t notes;        /* weft_seqlog_note_t, at most WEFT_SEQLOG_NOTES */
    weft_vec_t marks;        /* weft_seqlog_mark_t, in entry order */
} weft_seqlog_t;

/* Makes l an empty log that keeps a record of rec_size bytes an entry (0:
 * none), its bytes counted in meta (NULL: nowhere); a zeroed log is not
 * one (its arrays need their element sizes). */
void weft_seqlog_init(weft_seqlog_t *l, size_t rec_size, weft_meta_t *meta);
/* Entries since the last clear. */
static inline long weft_seqlog_count(const weft_seqlog_t *l) { return (long)l->log.n; }
/* Keeps an entry for l->hash as it is now (the caller folded the entry
 * into it), named by a static name, with its record (rec_size bytes
 * copied; ignored by a log without records). WEFT_ERR_NOMEM: not kept,
 * counted as lost. */
int weft_seqlog_push(weft_seqlog_t *l, const char *name, const void *rec);
/* Entry k's 32 bits of running hash, -1 past the last entry. */
int64_t weft_seqlog_at(const weft_seqlog_t *l, long k);
/* Entry k's name; NULL past the last entry. */
const char *weft_seqlog_name(const weft_seqlog_t *l, long k);
/* Entry k's record; NULL past the last entry or in a log without them. */
const void *weft_seqlog_rec(const weft_seqlog_t *l, long k);
/* Marks the last entry as a refusal with words `text` (kept once for all
 * the refusals that have them). Without memory for new words (or when
 * fault's refusal_note fires; fault may be NULL) the entry is still marked
 * a refusal, its words said not kept. */
struct weft_fault;
void weft_seqlog_note(weft_seqlog_t *l, const char *text, struct weft_fault *fault);
/* Entry k's refusal words (for a refusal whose words could not be kept,
 * out of memory or past the notes, a sentence saying so); NULL when entry
 * k is no refusal. */
const char *weft_seqlog_note_at(const weft_seqlog_t *l, long k);
/* What weft_seqlog_note_at returns for a refusal whose words were not
 * kept (compared by address). */
extern const char weft_seqlog_words_lost[];
/* Forgets the entries, their notes and the table of names. */
void weft_seqlog_clear(weft_seqlog_t *l);
/* Frees l's memory; l is empty afterwards (and may log again). */
void weft_seqlog_free(weft_seqlog_t *l);

#endif
