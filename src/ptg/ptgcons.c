/* A producer's list of consumers (docs/PTG.md), as its function gives it:
 * asked again with room for all, each entry's class and flow checked and
 * its unused indices cleared, no entry twice. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "ptg/ptg.h"

static int cmp_ref(const void *a, const void *b) { return memcmp(a, b, sizeof(weft_ptg_ref_t)); }

/* No consumer listed twice: on this rank the list is checked by its count
 * against the tasks that name p, and a task listed twice with another left
 * out passed (the other's next-writer and final-version checks read the
 * list). Short lists pairwise, longer ones sorted. */
static int listed_once(weft_ptg_build_t *b, const weft_ptg_ref_t *p, const weft_ptg_ref_t *to,
                       size_t n)
{
    const weft_ptg_ref_t *twice = NULL;
    weft_ptg_ref_t *sorted = NULL;
    if (n <= 16) {
        for (size_t i = 1; i < n && !twice; i++)
            for (size_t j = 0; j < i && !twice; j++)
                if (weft_ptg__same_ref(&to[i], &to[j])) twice = &to[i];
    } else {
        sorted = malloc(n * sizeof *sorted);
        if (!sorted)
            return weft_ptg__fail(b, p, "no host memory to check its %zu consumers (flow %d)", n,
                                  p->flow);
        memcpy(sorted, to, n * sizeof *sorted);
        qsort(sorted, n, sizeof *sorted, cmp_ref);
        for (size_t i = 1; i < n && !twice; i++)
            if (weft_ptg__same_ref(&sorted[i], &sorted[i - 1])) twice = &sorted[i];
    }
    int rc = WEFT_SUCCESS;
    if (twice) {
        char name[160];
        weft_ptg__ref_text(b, twice, name, sizeof name);
        rc = weft_ptg__fail(b, p,
                            "its consumers function lists %s (flow %d) twice for flow %d: list "
                            "each consumer once",
                            name, twice->flow, p->flow);
    }
    free(sorted);
    return rc;
}

int weft_ptg__unwritten_consumer(const weft_ptg_build_t *b, const weft_ptg_ref_t *p, int got,
                                 int flow, int entry)
{
    return weft_ptg__fail(b, p,
                          "its consumers function returned %d for flow %d but did not write "
                          "entry %d: write each entry it counts",
                          got, flow, entry);
}

int weft_ptg__consumers_of(weft_ptg_build_t *b, const weft_ptg_ref_t *p, size_t *n)
{
    const weft_ptg_class_t *k = &b->g->classes[p->cls];
    size_t room = b->refs_room > 16 ? b->refs_room : 16;
    int asked = -1, first = 0; /* the first call's want and room, when it had too little */
    for (;;) {
        int max = room > INT_MAX ? INT_MAX : (int)room;
        if (weft_vec_reserve(&b->refs, (size_t)max) != WEFT_SUCCESS) {
            (void)weft_ptg__fail(b, p, "no host memory for %d entries of its consumers (flow %d)",
                                 max, p->flow);
            return WEFT_ERR_NOMEM;
        }
        weft_ptg_ref_t *to = b->refs.data;
        weft_ptg__unwrite(to, (size_t)max);
        int got = k->consumers(p->idx, p->flow, to, max, b->g->arg);
        if (got < 0)
            return weft_ptg__fail(b, p, "its consumers function returned %d for flow %d", got,
                                  p->flow);
        if (got > max) {
            /* Called again with room for all it asked: a count that grows
             * with the room given is a function that depends on max (it
             * kept weft doubling until the host ran out, then said only
             * "out of host memory"). */
            if (asked >= 0)
                return weft_ptg__fail(b, p,
                                      "its consumers function for flow %d asked for %d entries "
                                      "with room for %d, then for %d with room for %d (the count "
                                      "must not depend on max)",
                                      p->flow, asked, first, got, max);
            asked = got;
            first = max;
            room = (size_t)got;
            continue;
        }
        /* Each a task of the graph before any of its functions is called
         * for it (its rank and args functions were called with indices
         * outside its class's range, and a user's args indexing an array
         * by them read past it). */
        b->refs_room = (size_t)got;
        for (int c = 0; c < got; c++) {
            if (to[c].cls == WEFT_PTG_UNWRITTEN)
                return weft_ptg__unwritten_consumer(b, p, got, p->flow, c);
            to[c] = weft_ptg__norm(b, to[c]);
            if (weft_ptg__check_ref(b, p, &to[c]) != WEFT_SUCCESS) return WEFT_ERR_INVALID;
        }
        *n = (size_t)got;
        return listed_once(b, p, to, *n);
    }
}
