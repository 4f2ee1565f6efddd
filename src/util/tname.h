/* How every message names a task: a task of a graph by the class name and
 * index tuple the user gave it ("gemm(4,2,1)"), an inserted task by its
 * class and insertion number ("gemm #12"). A graph's numbers follow the
 * build, which the user never sees: only the indices say which task it is. */
#ifndef WEFT_UTIL_TNAME_H
#define WEFT_UTIL_TNAME_H

/* The most indices a name carries (WEFT_PTG_MAX_DIMS). */
#define WEFT_TNAME_MAX_IDX 4

typedef struct weft_tname {
    char text[112];
} weft_tname_t;

/* Returned by value so that a message can use it in place, for the length
 * of the full expression: weft_error("task %s ...", weft_tname(...).text).
 * nidx 0: named by seq. */
weft_tname_t weft_tname(const char *cls, unsigned long long seq, const int *idx, int nidx);

#endif
