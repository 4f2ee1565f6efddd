/* A running hash of what a rank did, entry by entry (the tasks it inserted,
 * the data and matrices it created), so that ranks can compare theirs and
 * name the first entry where they differ. */
#ifndef WEFT_CONTEXT_SEQLOG_H
#define WEFT_CONTEXT_SEQLOG_H

#include <stdint.h>

#include "context/meta.h"

#define WEFT_SEQ_DETAIL 96

typedef struct weft_seqlog {
    uint64_t hash;                   /* after the last entry; 0 when empty */
    long n, cap;                     /* entries since the last clear */
    uint64_t *log;                   /* running hash after each entry */
    const char **name;               /* static name of each entry (task class) */
    char (*detail)[WEFT_SEQ_DETAIL]; /* or a description, when entries have one */
    int lost;                        /* entries whose name could not be kept (out of memory) */
    weft_meta_t *meta;               /* where its bytes are counted, NULL: nowhere */
} weft_seqlog_t;

#endif
