/* A task's name in messages (tname.h). */
#include "util/tname.h"

#include <stdio.h>

weft_tname_t weft_tname(const char *cls, unsigned long long seq, const int *idx, int nidx)
{
    weft_tname_t n;
    size_t cap = sizeof n.text;
    if (nidx <= 0) {
        snprintf(n.text, cap, "%s #%llu", cls, seq);
        return n;
    }
    size_t len = (size_t)snprintf(n.text, cap, "%s(", cls);
    for (int d = 0; d < nidx && d < WEFT_TNAME_MAX_IDX && len < cap; d++)
        len += (size_t)snprintf(n.text + len, cap - len, d ? ",%d" : "%d", idx[d]);
    if (len < cap) snprintf(n.text + len, cap - len, ")");
    return n;
}
