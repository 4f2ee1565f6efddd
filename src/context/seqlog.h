/* A running hash of what a rank did, entry by entry (the tasks it inserted,
 * the data and matrices it created), so that ranks can compare theirs and
 * name the first entry where they differ. */
#ifndef WEFT_CONTEXT_SEQLOG_H
#define WEFT_CONTEXT_SEQLOG_H

#include <stdint.h>

#include "util/vec.h"

#define WEFT_SEQ_DETAIL 96

/* Entry i (since the last clear) is log[i], name[i] and, when entries have
 * one, detail[i]; the three grow together. */
typedef struct weft_seqlog {
    uint64_t hash;     /* after the last entry; 0 when empty */
    weft_vec_t log;    /* uint64_t: running hash after each entry */
    weft_vec_t name;   /* const char *: static name of each entry (task class) */
    weft_vec_t detail; /* char[WEFT_SEQ_DETAIL]: or a description, when entries have one */
    int lost;          /* entries whose name could not be kept (out of memory) */
} weft_seqlog_t;

#endif
