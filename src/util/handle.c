/* Type tags of the public handles, checked at each API call. */
#include "util/handle.h"

#include <stdint.h>
#include <stdio.h>

#include "util/log.h"

static const weft_handle_kind_t all_kinds[] = {WEFT_HANDLE_CONTEXT, WEFT_HANDLE_DATA,
                                               WEFT_HANDLE_MATRIX, WEFT_HANDLE_TASKPOOL};

const char *weft_handle_type_name(weft_handle_kind_t kind)
{
    switch (kind) {
    case WEFT_HANDLE_CONTEXT:
        return "weft_context_t";
    case WEFT_HANDLE_DATA:
        return "weft_data_t";
    case WEFT_HANDLE_MATRIX:
        return "weft_matrix_t";
    case WEFT_HANDLE_TASKPOOL:
        return "weft_taskpool_t";
    }
    return "handle";
}

/* What the user most likely meant, for the pairs that are easy to mix up. */
static const char *hint(weft_handle_kind_t want, uint32_t got)
{
    if (got & WEFT_HANDLE_ENDED)
        return " (weft_fini ended the context and its handles: make every call on them before "
               "weft_fini)";
    if (want == WEFT_HANDLE_DATA && got == WEFT_HANDLE_MATRIX) return ": pass weft_tile(A, i, j)";
    if (got == weft_handle_released(WEFT_HANDLE_DATA))
        return " (weft_data_release or weft_matrix_free gave it back; create a new one)";
    if (got == weft_handle_released(WEFT_HANDLE_MATRIX))
        return " (weft_matrix_free gave it back; create a new one)";
    if (got == weft_handle_released(WEFT_HANDLE_TASKPOOL))
        return " (weft_taskpool_free gave it back; create a new one)";
    return "";
}

/* "a weft_matrix_t", "a released weft_data_t" or "not a weft handle". */
static void describe(uint32_t tag, char *buf, size_t len)
{
    for (size_t k = 0; k < sizeof all_kinds / sizeof all_kinds[0]; k++) {
        if (tag == (uint32_t)all_kinds[k]) {
            snprintf(buf, len, "a %s", weft_handle_type_name(all_kinds[k]));
            return;
        }
        if (tag == weft_handle_released(all_kinds[k])) {
            snprintf(buf, len, "a released %s", weft_handle_type_name(all_kinds[k]));
            return;
        }
        if (tag == weft_handle_ended(all_kinds[k])) {
            snprintf(buf, len,
                     all_kinds[k] == WEFT_HANDLE_CONTEXT ? "an ended %s"
                                                         : "a %s of an ended context",
                     weft_handle_type_name(all_kinds[k]));
            return;
        }
    }
    snprintf(buf, len, "not a weft handle (tag 0x%08x)", (unsigned)tag);
}

int weft_handle_check(const void *h, weft_handle_kind_t want, const char *call, int pos)
{
    if ((uintptr_t)h >= WEFT_SMALLEST_ADDRESS && weft_handle_tag(h) == (uint32_t)want) return 1;
    char what[64];
    int small = weft_address_is_small(h);
    uint32_t tag = h && !small ? weft_handle_tag(h) : 0;
    if (!h)
        snprintf(what, sizeof what, "NULL");
    else if (small)
        snprintf(what, sizeof what, "the small integer %lu (no address)",
                 (unsigned long)(uintptr_t)h);
    else
        describe(tag, what, sizeof what);
    /* A released or ended handle of the kind asked for is named once
     * ("is a released weft_data_t", not "..., not a weft_data_t"). */
    int same_kind =
        h && !small && (tag == weft_handle_released(want) || tag == weft_handle_ended(want));
    if (same_kind)
        weft_error("argument %d of %s is %s%s", pos, call, what, hint(want, tag));
    else
        weft_error("argument %d of %s is %s, not a %s%s", pos, call, what,
                   weft_handle_type_name(want), h && !small ? hint(want, tag) : "");
    return 0;
}
