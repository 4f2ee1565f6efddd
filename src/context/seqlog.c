/* The storage of a rank's sequence log: entries of 32 bits of running
 * hash and a name index, the table of names, descriptions for the logs
 * that have them, and the bytes they take (context/meta.h). */
#include "context/seqlog.h"

#include <stdlib.h>
#include <string.h>

#include "weft/weft.h"

#define SEQ_NO_NAME 0xffff /* a name past the table's 65535 */

static size_t entry_bytes(const weft_seqlog_t *l)
{
    return sizeof *l->log + sizeof *l->name_ix + (l->detail ? sizeof *l->detail : 0);
}

static int grow(weft_seqlog_t *l, int with_detail)
{
    long cap = l->cap ? l->cap * 2 : 256;
    uint32_t *h = realloc(l->log, sizeof *h * (size_t)cap);
    if (h) l->log = h;
    uint16_t *ix = realloc(l->name_ix, sizeof *ix * (size_t)cap);
    if (ix) l->name_ix = ix;
    char(*d)[WEFT_SEQ_DETAIL] = l->detail;
    if (with_detail) {
        d = realloc(l->detail, sizeof *d * (size_t)cap);
        if (d) l->detail = d;
    }
    if (!h || !ix || (with_detail && !d)) return -1;
    weft_meta_add(l->meta, WEFT_META_SEQ, (long long)(entry_bytes(l) * (size_t)(cap - l->cap)));
    l->cap = cap;
    return 0;
}

/* The index of a static name, added to the table when new. */
static int name_index(weft_seqlog_t *l, const char *name)
{
    if (name == l->last_name && l->last_name) return l->last_ix;
    int ix = SEQ_NO_NAME;
    for (int i = 0; i < l->nnames && ix == SEQ_NO_NAME; i++)
        if (l->names[i] == name) ix = i;
    if (ix == SEQ_NO_NAME && l->nnames < SEQ_NO_NAME) {
        if (l->nnames == l->names_cap) {
            int cap = l->names_cap ? l->names_cap * 2 : 16;
            const char **v = realloc(l->names, sizeof *v * (size_t)cap);
            if (!v) return SEQ_NO_NAME;
            weft_meta_add(l->meta, WEFT_META_SEQ,
                          (long long)(sizeof *v * (size_t)(cap - l->names_cap)));
            l->names = v;
            l->names_cap = cap;
        }
        ix = l->nnames++;
        l->names[ix] = name;
    }
    l->last_name = name;
    l->last_ix = ix;
    return ix;
}

int weft_seqlog_push(weft_seqlog_t *l, const char *name, const char *detail)
{
    if (l->n == l->cap && grow(l, detail != NULL) != 0) {
        l->lost++;
        return WEFT_ERR_NOMEM;
    }
    l->log[l->n] = (uint32_t)l->hash;
    l->name_ix[l->n] = (uint16_t)(name ? name_index(l, name) : SEQ_NO_NAME);
    if (detail) {
        size_t len = strnlen(detail, WEFT_SEQ_DETAIL - 1);
        memcpy(l->detail[l->n], detail, len);
        l->detail[l->n][len] = '\0';
    }
    l->n++;
    return WEFT_SUCCESS;
}

int64_t weft_seqlog_at(const weft_seqlog_t *l, long k)
{
    return k >= 0 && k < l->n ? (int64_t)l->log[k] : -1;
}

const char *weft_seqlog_text(const weft_seqlog_t *l, long k)
{
    if (k < 0 || k >= l->n) return NULL;
    if (l->detail) return l->detail[k];
    int ix = l->name_ix[k];
    return ix < l->nnames ? l->names[ix] : "(a task class past the 65535 the check names)";
}

void weft_seqlog_clear(weft_seqlog_t *l)
{
    l->n = 0;
    l->hash = 0;
    l->lost = 0;
}

void weft_seqlog_free(weft_seqlog_t *l)
{
    weft_meta_add(
        l->meta, WEFT_META_SEQ,
        -(long long)(entry_bytes(l) * (size_t)l->cap + sizeof *l->names * (size_t)l->names_cap));
    weft_meta_t *meta = l->meta;
    free(l->log);
    free(l->name_ix);
    free(l->names);
    free(l->detail);
    *l = (weft_seqlog_t){.meta = meta};
}
